"""Misconceptions: the catalogue of named wrong methods, and naming the one a wrong answer matches.

Each ``Misconception`` is one classic step done wrong; ``diagnose_all`` names the ones a wrong
answer matches. This module imports no family: the families import it.
Details: docs/internals.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from generator.model import units
from generator.problems.problem import Problem

GIB_PER_GB = units.GIB_PER_GB  # 1.0737...: a GiB is 7.4% more than a GB (the one constant, in units)


@dataclass(frozen=True)
class Misconception:
    """A named wrong method. ``explanation`` says what it does and why it is wrong."""

    id: str
    name: str
    families: tuple[str, ...]
    explanation: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "families": list(self.families), "explanation": self.explanation}


@dataclass(frozen=True)
class WrongAnswer:
    """The answer a misconception gives to one problem, and the one step that differs."""

    misconception: Misconception
    value: float | str
    step: str


_OPS = ("intensity", "floor", "bound")
CATALOGUE: tuple[Misconception, ...] = (
    Misconception("elements-not-bytes", "counting elements instead of bytes",
                  _OPS + ("critical_batch", "interconnect", "vmem_fit", "transformer_step", "collective", "transfer",
                          "host_link"),
                  "Bytes are elements times bytes per element (bf16: 2, f32: 4, int8: 1). Counting elements "
                  "makes a bf16 op look twice as intense and its memory time half as long."),
    Misconception("forgot-output-write", "forgetting the output write",
                  _OPS + ("host_link",),
                  "An op's HBM traffic is its inputs read *and* its output written back. Leaving the write out "
                  "undercounts bytes: a square matmul moves 3 arrays, not 2."),
    Misconception("sparse-peak", "using the sparse datasheet peak",
                  ("ridge", "floor", "bound", "critical_batch", "transformer_step"),
                  "GPU spec sheets quote FLOP/s with 2:4 structured sparsity, twice the dense figure. Dense "
                  "matmuls get the dense peak (the scaling book's tables). TPUs publish no sparse figure: a doubled "
                  "TPU peak is the same slip."),
    Misconception("sum-not-max", "adding T_math and T_comms for the floor",
                  ("floor", "transformer_step", "collective", "host_link"),
                  "The floor is max(T_math, T_comms): compute and memory traffic overlap. Their sum is the "
                  "upper bound (no overlap at all), not the floor."),
    Misconception("wrong-dtype-peak", "the peak of the wrong dtype",
                  ("ridge", "floor", "bound", "critical_batch", "transformer_step", "pod", "host_link"),
                  "The peak FLOP/s depends on the dtype the multiply runs in: int8 OP/s is about twice bf16 on "
                  "most TPUs. Using bf16's peak for int8 work (or the reverse) is off by that factor."),
    Misconception("macs-not-flops", "a multiply-add counted as one FLOP",
                  ("ridge",) + _OPS + ("critical_batch", "transformer_step"),
                  "A matmul does 2·B·D·F FLOPs: each multiply-accumulate is two FLOPs (a multiply and an add). "
                  "Counting MACs halves the FLOPs and the intensity."),
    Misconception("gb-gib", "mixing GB and GiB",
                  ("ridge", "floor", "interconnect", "vmem_fit", "transformer_step", "pod", "host_link", "collective",
                   "transfer"),
                  "Datasheet bandwidths are decimal (1 GB = 1e9 B); memory sizes are often binary "
                  "(1 GiB = 2^30 B). Mixing the two is a 7.4% error per conversion."),
    Misconception("unit-slip-1000", "a unit slip of 1000 (ms for µs and kin)",
                  ("floor", "interconnect", "transformer_step", "collective", "transfer", "sharded_matmul",
                   "miss_reason", "host_link", "vmem_fit", "pod"),
                  "Each SI prefix step is 1000x: 87.2 µs is 0.0872 ms, not 87.2 ms, and 24 MB is 0.024 GB, "
                  "not 24 GB. Check the exponent."),
    Misconception("one-way-vs-bidirectional", "one-way and bidirectional ICI bandwidth swapped",
                  ("interconnect", "collective", "transfer", "sharded_matmul"),
                  "An ICI link's bidirectional figure counts both directions; one array sent one way gets the "
                  "one-way bandwidth, half of it."),
    Misconception("wrong-hops", "wraparound ignored or assumed",
                  ("interconnect", "collective", "transfer", "sharded_matmul"),
                  "With wraparound links an axis is a ring: hops = min(|a-b|, N-|a-b|). Without them it is a "
                  "line: hops = |a-b|. v5e/v6e only wrap on an axis of 16."),
    Misconception("forgot-latency", "leaving out the per-hop latency",
                  ("interconnect", "collective", "transfer", "sharded_matmul"),
                  "Each ICI hop adds latency (the scaling book's ~1 µs): small transfers across many hops are "
                  "latency-bound."),
    Misconception("causal-halving", "the other attention convention (causal halving)",
                  ("transformer_step",),
                  "The model counts attention over the full context (no causal saving); halving it for the "
                  "causal mask is the other convention, and the prompt says which one is used."),
    Misconception("shortcut-not-exact", "the B << D shortcut where the exact count was asked",
                  ("critical_batch",),
                  "B* ≈ ridge (bf16) assumes the activations' bytes vanish next to the weights'. With the exact "
                  "byte count, the per-row bytes raise B*; the question asked for the exact form."),
    Misconception("wrong-dtype-size", "bytes per element of the wrong dtype",
                  ("critical_batch", "intensity", "floor", "transformer_step"),
                  "Each dtype has its own bytes per element: bf16 is 2 (not 4, f32's), int8 weights are 1 even when "
                  "the activations are bf16 (that halves the weight bytes and B*: the scaling book's ridge / 2)."),
    Misconception("forgot-buffers", "forgetting double buffering",
                  ("vmem_fit",),
                  "A pipelined kernel keeps two copies of each input block in VMEM (the next one streams in "
                  "while the MXU works); one copy undercounts the footprint."),
    Misconception("packing-ignored", "the 32-bit lattice for a packed dtype",
                  ("lattice",),
                  "Narrower dtypes pack more rows per sublane: bf16's native tile is (16, 128), int8's (32, 128); "
                  "(8, 128) is the 32-bit tile."),
    Misconception("max-not-sum", "overlap assumed where the prompt says there is none",
                  ("sharded_matmul",),
                  "When the prompt says the collective and the matmul do not overlap (one after the other), the "
                  "time is their sum; the max is the best case with perfect overlap."),
    Misconception("unsupported-reason", "naming a reason the record's own numbers contradict",
                  ("miss_reason",),
                  "A miss reason is a claim about numbers the lab recorded: which way the run missed, the fixed "
                  "cost against the floor, the fraction of peak on the side the op is bound by, XLA's bytes "
                  "against the hand count, the dtype's arithmetic on the device. Name the one those numbers "
                  "support (`drill miss-reasons` says what each needs), not the first that sounds right."),
    Misconception("bits-for-bytes", "bits taken for bytes in a rate",
                  ("interconnect", "collective", "transfer", "host_link", "sharded_matmul", "floor"),
                  "Link rates are often quoted in bits per second (Gbps) and the model's in bytes per second: a "
                  "byte is 8 bits, so a bit rate read as a byte rate (or the reverse) is off by 8x. The same holds "
                  "for HBM: its bandwidth is in bytes per second."),
    Misconception("one-operand-bytes", "only one operand's bytes counted",
                  ("intensity", "floor"),
                  "An op with two inputs reads both: a matmul moves lhs, rhs and the output, an add both arrays. "
                  "Counting one input leaves the other's bytes out of T_comms and the intensity."),
    Misconception("ridge-inverted", "the ridge inverted (bytes per FLOP)",
                  ("ridge", "host_link"),
                  "The ridge is peak FLOP/s divided by bandwidth (FLOPs per byte, hundreds on a TPU); bandwidth over "
                  "peak is its inverse, bytes per FLOP."),
    Misconception("per-chip-not-pod", "one chip's figure given for the whole slice",
                  ("pod",),
                  "A slice's FLOP/s, HBM and TensorCores are the per-chip figure times the number of chips."),
    Misconception("chips-as-hosts", "chips counted as hosts",
                  ("pod",),
                  "A host drives several chips (4 or 8, its host_topology): hosts = ceil(chips / chips per host)."),
    Misconception("training-flops", "6·P training FLOPs for a forward pass",
                  ("transformer_step",),
                  "Training does 6·P FLOPs per token (forward and backward); a forward pass, prefill or decode, "
                  "does 2·P."),
    Misconception("attention-left-out", "P-only FLOPs (attention left out)",
                  ("transformer_step",),
                  "2·P counts the weight matmuls only; prefill also multiplies Q by K and the scores by V over the "
                  "context, which grows with the sequence."),
    Misconception("not-the-stated-figure", "a link figure other than the one the prompt gives",
                  ("host_link", "interconnect"),
                  "Link rates differ by chip and by edition of the book (PCIe about 1.6e10 B/s, a v6e's 3.2e10; DCN "
                  "per chip or per host): use the figure the prompt states."),
    Misconception("wrong-verdict", "the other verdict",
                  ("bound", "host_link", "collective", "sharded_matmul", "vmem_fit", "pod", "lattice", "ridge"),
                  "A yes/no or either/or answer follows from one comparison (the intensity against the ridge, the "
                  "footprint against VMEM, T_math against T_comms): the solution says which numbers decide it."),
    Misconception("hbm-per-core", "HBM bandwidth read per TensorCore",
                  ("floor", "ridge"),
                  "A chip's HBM bandwidth is the whole chip's: on a megacore chip (v4p, v5p) its two TensorCores "
                  "share it, and the roofline of the chip uses all of it. Halving it per core doubles T_comms and "
                  "the ridge."),
    Misconception("one-term-floor", "one term of the floor given alone",
                  ("floor",),
                  "The floor is the larger of T_math and T_comms. On a compute-bound op it is T_math; giving "
                  "T_comms (or T_math on a memory-bound one) answers the smaller term, the one that is hidden."),
    Misconception("ridge-as-intensity", "the chip's ridge given as the op's intensity",
                  ("intensity",),
                  "An op's intensity is its own FLOPs over its own bytes and does not depend on the chip; the "
                  "ridge (peak / bandwidth) is the chip's, the line the intensity is compared with."),
    Misconception("allreduce-as-allgather", "AllReduce timed as one AllGather",
                  ("collective",),
                  "An AllReduce is a ReduceScatter then an AllGather: twice an AllGather's bytes and hops, not one."),
    Misconception("alltoall-as-allgather", "AllToAll timed as an AllGather",
                  ("collective",),
                  "In an AllToAll each chip keeps its own share and sends each other chip only theirs: a quarter "
                  "of an AllGather's time on a bidirectional ring, not the whole of it."),
    Misconception("store-and-forward", "store-and-forward ICI (the array crosses each hop in turn)",
                  ("transfer", "interconnect"),
                  "ICI forwards the bytes as they arrive: the array's time on the wire is paid once and each hop "
                  "adds only its latency. Paying bytes / bandwidth at every hop is store-and-forward."),
    Misconception("ici-for-offchip", "ICI's bandwidth used for a PCIe or DCN transfer",
                  ("interconnect", "host_link"),
                  "ICI links chips inside a slice; bytes to the host go over PCIe and bytes between slices or pods "
                  "over DCN, each with its own, lower rate: the prompt gives it."),
    Misconception("kv-cache-left-out", "the K/V cache's bytes left out",
                  ("transformer_step",),
                  "A step also moves the K/V cache: 2·L·B·S·kv·bytes, written by prefill and read by every decode "
                  "step. At long contexts it can outweigh the weights."),
    Misconception("one-core-per-chip", "one TensorCore per chip where there are two",
                  ("pod",),
                  "v2, v3, v4p and v5p chips have two TensorCores each (megacore on v4p and v5p); v5e and v6e "
                  "have one. TensorCores = chips x cores per chip."),
    Misconception("term-confusion", "two neighbouring terms swapped",
                  ("vocabulary", "interconnect"),
                  "Pairs that are easy to swap: MXU (matmuls) vs VPU (elementwise); VMEM (on-chip scratchpad) vs "
                  "HBM (off-chip memory) vs SMEM (scalars); ICI (inside a pod) vs DCN (between pods)."),
)
BY_ID = {m.id: m for m in CATALOGUE}

# Terms learners swap (both directions).
CONFUSABLE = {frozenset(p) for p in (("MXU", "VPU"), ("VMEM", "HBM"), ("VMEM", "SMEM"), ("HBM", "SMEM"),
                                      ("ICI", "DCN"), ("DCN", "PCIe"), ("ICI", "PCIe"))}


def find(mid: str) -> Misconception:
    """The catalogue entry ``mid`` (a KeyError names an id the catalogue lacks)."""
    return BY_ID[mid]


def outside_key(problem: Problem, found: Iterable[WrongAnswer]) -> list[WrongAnswer]:
    """The wrong answers of ``found`` that differ from the key: a choice other than the key's, or a
    finite number outside the problem's tolerance of it."""
    out = []
    for wrong in found:
        if problem.answer.is_choice:
            if wrong.value != problem.answer.choice:
                out.append(wrong)
        elif isinstance(wrong.value, float | int) and math.isfinite(wrong.value):
            if _beyond(problem, rel(wrong.value, problem.answer.number)):
                out.append(wrong)
    return out


def _beyond(problem: Problem, distance: float) -> bool:
    """A numeric wrong answer this relative distance from the key is outside the problem's tolerance:
    a mistake, even near another edition's answer (grading takes whichever of the two an answer is
    closer to: drills.quiz.grading.grade's ``mistakes``)."""
    return distance > max(problem.tolerance, 1e-9)


def outside_key_measured(problem: Problem, measured: Iterable[tuple[WrongAnswer, float]]) -> list[WrongAnswer]:
    """``outside_key`` of a numeric problem from its ``distances`` (every finite numeric wrong answer
    with its distance from the key, already worked out): the same answers in the same order."""
    return [wrong for wrong, distance in measured if _beyond(problem, distance)]


def distances(problem: Problem, found: Iterable[WrongAnswer]) -> list[tuple[WrongAnswer, float]]:
    """Each numeric wrong answer of ``found`` with its relative distance from the key, none filtered
    out (the fair-draw rule and the solution's notes read this). Choices: empty."""
    return list(iter_distances(problem, found))


def iter_distances(problem: Problem, found: Iterable[WrongAnswer]) -> Iterator[tuple[WrongAnswer, float]]:
    """``distances`` one at a time, each worked out as it is asked for (``found`` may be lazy too)."""
    if problem.answer.is_choice:
        return
    key = problem.answer.number
    for w in found:
        if isinstance(w.value, float | int) and math.isfinite(w.value):
            yield w, rel(float(w.value), key)


def inside_tolerance(problem: Problem, measured: Iterable[tuple[WrongAnswer, float]]
                     ) -> list[tuple[WrongAnswer, float]]:
    """Of ``distances``' pairs, the named mistakes whose answer differs from the key yet lands within the
    problem's tolerance: graded right although the method is wrong (one per id)."""
    out: dict[str, tuple[WrongAnswer, float]] = {}
    for wrong, d in measured:
        if 1e-9 < d <= problem.tolerance and wrong.misconception.id not in out:
            out[wrong.misconception.id] = (wrong, d)
    return list(out.values())


def rel(a: float, b: float) -> float:
    """The relative distance of ``a`` from ``b`` (infinite from 0 unless ``a`` is 0 too)."""
    return abs(a - b) / abs(b) if b else (0.0 if a == 0 else math.inf)


# Two mistakes whose answers lie this close (relative) to the given one are a tie: an answer written to four
# figures can not tell them apart (bytes doubled and HBM halved per core give one number).
SAME_REL = 0.001


def diagnose_all(problem: Problem, given: float | str, wrong: Iterable[WrongAnswer]) -> list[WrongAnswer]:
    """Every misconception of ``wrong`` (the problem's named wrong answers, ``outside_key``) that a
    wrong answer matches (within the problem's tolerance), one per id, the closest first (ties in
    the family's order, which puts the likelier mistake first); empty when the answer matches the key or
    no named mistake.

    Two mistakes can give the same number (on a v5e, int8's peak and counting a
    multiply-add as one FLOP both halve T_math): then both are named.
    """
    if problem.answer.is_choice:
        if given == problem.answer.choice:
            return []
        matches = [w for w in wrong if w.value == given]
    else:
        key = problem.answer.number
        tolerance = problem.tolerance or 0.05
        if rel(float(given), key) <= tolerance:
            return []
        matches = [w for w in wrong if not isinstance(w.value, str)
                   and rel(float(given), float(w.value)) <= tolerance]
        # the closest candidate is named first (a GB/GiB slip 7% off is not a "sum" that happens to land near);
        # those as close as it (``SAME_REL``) keep the family's order, the likelier first
        away = {id(w): rel(float(given), float(w.value)) for w in matches}
        best = min(away.values(), default=0.0)
        tied = [w for w in matches if away[id(w)] <= best + SAME_REL]
        matches = tied + sorted((w for w in matches if away[id(w)] > best + SAME_REL), key=lambda w: away[id(w)])
    unique: dict[str, WrongAnswer] = {}
    for match in matches:
        unique.setdefault(match.misconception.id, match)
    return list(unique.values())


def diagnose(problem: Problem, given: float | str, wrong: Iterable[WrongAnswer]) -> WrongAnswer | None:
    """The first misconception a wrong answer matches (see ``diagnose_all``), or None."""
    found = diagnose_all(problem, given, wrong)
    return found[0] if found else None
