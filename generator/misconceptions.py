"""Misconceptions: named wrong methods, and the answer each one gives to a problem.

A learner's wrong answer is rarely random: it is usually the right method with
one classic step done wrong (bytes counted as elements, a multiply-add counted
as one FLOP, the floor taken as T_math + T_comms ...). Each ``Misconception``
here is such a step, written as a *tweak* of the one model: the family's own
formula (``generator.costs`` / ``roofline`` / ``transformer`` / ``links``) is
re-evaluated with that one step changed, so the wrong answer is derived, never
typed in. ``diagnose`` compares a learner's answer with every wrong answer that
applies to the problem and names the mistake it matches (within the problem's
tolerance) when it does not match the key.

The catalogue (``CATALOGUE``) is data for ``drill misconceptions``; which ones apply to a problem,
and what each changes, is its family module's hook (``generator.families.base`` lists them): most
call one of the shared wrong methods below (``op_answers`` ...).

One module for one job (over 400 lines): the catalogue and the shared wrong methods that
price it, each next to the others that tweak the same model.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Iterator

from generator import catalogue as catalogue_mod
from generator import costs, links, transformer
from generator.catalogue import Catalogue, Chip
from generator.problem import Problem
from generator.units import DTYPE_BYTES, fmt
from generator.units import sci as _sci
from generator.units import si as _si

# Every draw prices its named mistakes (fair draws, the solution's notes), and their steps repeat the
# same few constants: the one formatter, memoised here (pure functions of their arguments).
sci = functools.lru_cache(maxsize=8192)(_sci)
si = functools.lru_cache(maxsize=8192)(_si)

GIB_PER_GB = 2**30 / 1e9  # 1.0737...: a GiB is 7.4% more than a GB


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
                  "matmuls get the dense peak (the scaling book's tables)."),
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
                  ("floor", "interconnect", "transformer_step"),
                  "Each SI prefix step is 1000x: 87.2 µs is 0.0872 ms, not 87.2 ms. Check the exponent."),
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
                  ("critical_batch",),
                  "int8 weights are 1 byte per element even when the activations are bf16: that halves the "
                  "weight bytes and halves B* (the scaling book: ridge / 2)."),
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
    Misconception("term-confusion", "two neighbouring terms swapped",
                  ("vocabulary", "interconnect"),
                  "Pairs that are easy to swap: MXU (matmuls) vs VPU (elementwise); VMEM (on-chip scratchpad) vs "
                  "HBM (off-chip memory) vs SMEM (scalars); ICI (inside a pod) vs DCN (between pods)."),
)
BY_ID = {m.id: m for m in CATALOGUE}

# Terms learners swap (both directions).
CONFUSABLE = {frozenset(p) for p in (("MXU", "VPU"), ("VMEM", "HBM"), ("VMEM", "SMEM"), ("HBM", "SMEM"),
                                      ("ICI", "DCN"), ("DCN", "PCIe"), ("ICI", "PCIe"))}


def _m(mid: str) -> Misconception:
    return BY_ID[mid]


def _elements_cost(cost: costs.OpCost) -> costs.OpCost:
    """The same op with every operand 1 byte per element: its ``bytes`` is the element count
    (embedding's int32 indices stay 4 bytes, a rounding next to the rows)."""
    return costs.cost(cost.op, cost.shape, "int8")


def _other_peaks(chip: Chip, dtype: str) -> Iterator[tuple[str, float]]:
    mine = float(chip.peak_flops[dtype].value)
    for other, fig in chip.peak_flops.items():
        if other != dtype and float(fig.value) != mine:
            yield other, float(fig.value)


def _evaluate(quantity: str, flops: float, nbytes: float, peak: float, bw: float) -> float | str:
    t_math, t_comms = flops / peak, nbytes / bw
    if quantity == "intensity":
        return flops / nbytes
    if quantity == "bound":
        return "compute" if flops / nbytes >= peak / bw else "memory"
    return {"t_math": t_math, "t_comms": t_comms, "floor": max(t_math, t_comms)}[quantity]


def _op_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    chip = cat.get(p["chip"])
    cost = costs.cost(p["op"], tuple(p["shape"]), p["dtype"])
    quantity = {"intensity": "intensity", "bound": "bound"}.get(problem.family, p.get("quantity", "floor"))
    peak, bw = float(chip.peak_flops[cost.dtype].value), chip.hbm_bytes_per_s
    flops, nbytes = cost.flops, cost.bytes

    def ev(f=flops, b=nbytes, pk=peak, w=bw):
        return _evaluate(quantity, f, b, pk, w)

    elements = _elements_cost(cost).bytes
    if elements != nbytes:
        yield WrongAnswer(_m("elements-not-bytes"), ev(b=elements),
                          f"bytes = {sci(elements)} (elements) instead of {sci(nbytes)} B ({cost.dtype}: "
                          f"{DTYPE_BYTES[cost.dtype]} bytes per element)")
    if cost.bytes_written:
        yield WrongAnswer(_m("forgot-output-write"), ev(b=nbytes - cost.bytes_written),
                          f"bytes = {sci(nbytes - cost.bytes_written)} (inputs only) instead of {sci(nbytes)} "
                          f"(+ {sci(cost.bytes_written)} B of output written)")
    if chip.kind == "gpu" and flops:
        yield WrongAnswer(_m("sparse-peak"), ev(pk=2 * peak),
                          f"peak = {sci(2 * peak)} FLOP/s (sparse) instead of {sci(peak)} (dense)")
    if flops:
        for other, other_peak in _other_peaks(chip, cost.dtype):
            yield WrongAnswer(_m("wrong-dtype-peak"), ev(pk=other_peak),
                              f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({cost.dtype})")
        yield WrongAnswer(_m("macs-not-flops"), ev(f=flops / 2),
                          f"FLOPs = {sci(flops / 2)} (multiply-adds) instead of {sci(flops)} (2 per multiply-add)")
    if quantity == "floor":
        t_math, t_comms = flops / peak, nbytes / bw
        yield WrongAnswer(_m("sum-not-max"), t_math + t_comms,
                          f"floor = T_math + T_comms = {si(t_math + t_comms, 's')} instead of "
                          f"max({si(t_math, 's')}, {si(t_comms, 's')})")
    if quantity in ("floor", "t_comms"):
        yield from _time_slips(problem, memory_side=quantity == "t_comms" or nbytes / bw >= flops / peak)


def _time_slips(problem: Problem, memory_side: bool) -> Iterator[WrongAnswer]:
    key = float(problem.answer.value)  # type: ignore[arg-type]
    if memory_side:
        for factor, how in ((GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s"),
                            (1 / GIB_PER_GB, "a size in GB taken as GiB")):
            yield WrongAnswer(_m("gb-gib"), key * factor, f"{how}: x{factor:.4f}")
    for factor, how in ((1e3, "1000x too large"), (1e-3, "1000x too small")):
        yield WrongAnswer(_m("unit-slip-1000"), key * factor, f"{si(key * factor, 's')}: {how}")


def _ridge_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    if "dtype" not in p or problem.answer.is_choice:
        return
    chip = cat.get(p["chip"])
    peak, bw = float(chip.peak_flops[p["dtype"]].value), chip.hbm_bytes_per_s
    if chip.kind == "gpu":
        yield WrongAnswer(_m("sparse-peak"), 2 * peak / bw, f"peak = {sci(2 * peak)} (sparse) instead of {sci(peak)}")
    for other, other_peak in _other_peaks(chip, p["dtype"]):
        yield WrongAnswer(_m("wrong-dtype-peak"), other_peak / bw,
                          f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({p['dtype']})")
    yield WrongAnswer(_m("macs-not-flops"), peak / 2 / bw, f"peak counted in multiply-adds: {sci(peak / 2)}")
    yield WrongAnswer(_m("gb-gib"), peak / (bw / GIB_PER_GB), "HBM bandwidth read as GiB/s: x1.0737")
    yield WrongAnswer(_m("gb-gib"), peak / (bw * GIB_PER_GB), "HBM bandwidth in GB/s converted as if GiB/s: ÷1.0737")


def _critical_batch_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    from generator.families import FAMILIES

    _parts, critical_batch = FAMILIES["critical_batch"]._parts, FAMILIES["critical_batch"].critical_batch

    p = problem.params
    chip = cat.get(p["chip"])
    dtype = _parts(p)[3].dtype
    ridge = chip.ridge_flops_per_byte(dtype)
    form = p["form"]

    def b_star(r=ridge, params=p, f=form):
        return critical_batch(r, params, f)

    if form == "exact":
        yield WrongAnswer(_m("shortcut-not-exact"), b_star(f="approx"),
                          f"B* = ridge·bytes_fixed / flops_row = {b_star(f='approx'):.1f} (per-row bytes dropped)")
    if chip.kind == "gpu":
        yield WrongAnswer(_m("sparse-peak"), b_star(r=2 * ridge), f"ridge from the sparse peak: {2 * ridge:.1f}")
    for other, other_peak in _other_peaks(chip, dtype):
        r = other_peak / chip.hbm_bytes_per_s
        yield WrongAnswer(_m("wrong-dtype-peak"), b_star(r=r), f"ridge from the {other} peak: {r:.1f} "
                                                                f"instead of {ridge:.1f}")
    yield WrongAnswer(_m("macs-not-flops"), b_star(r=2 * ridge), "FLOPs per row counted as D·F instead of 2·D·F")
    ones = {**p, "activations": "int8", "weights": "int8"}
    if (p["activations"], p["weights"]) != ("int8", "int8"):
        yield WrongAnswer(_m("elements-not-bytes"), b_star(params=ones), "bytes counted as elements (1 each)")
    if p["weights"] != p["activations"]:
        same = {**p, "weights": p["activations"]}
        yield WrongAnswer(_m("wrong-dtype-size"), b_star(params=same),
                          f"weights counted as {p['activations']} ({DTYPE_BYTES[p['activations']]} bytes) "
                          f"instead of {p['weights']} ({DTYPE_BYTES[p['weights']]} byte)")


def _interconnect_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    from generator.families import FAMILIES

    FIGURE, HOP_LATENCY_FACT = FAMILIES["interconnect"].FIGURE, FAMILIES["interconnect"].HOP_LATENCY_FACT

    p = problem.params
    if problem.answer.is_choice:  # which link: ICI, DCN or PCIe
        yield from _term_confusions(problem)
        return
    chip = cat.get(p["chip"])
    rows, cols = p["shape"]
    nbytes = rows * cols * DTYPE_BYTES[p["dtype"]]
    bw = float(chip.figure(FIGURE[p["variant"]]).value)
    hop_count, latency = 0, 0.0
    if p["variant"] == "ici":
        hop_count = links.hops(p["axis"], p["src"], p["dst"], p["wrap"])
        latency = float(cat.facts[HOP_LATENCY_FACT].value)
        other_hops = links.hops(p["axis"], p["src"], p["dst"], not p["wrap"])
        if other_hops != hop_count:
            yield WrongAnswer(_m("wrong-hops"), links.transfer_seconds(nbytes, bw, other_hops, latency),
                              f"{other_hops} hops ({'no ' if p['wrap'] else ''}wraparound assumed) instead of "
                              f"{hop_count}")
        yield WrongAnswer(_m("forgot-latency"), links.transfer_seconds(nbytes, bw),
                          f"latency left out: {hop_count} hops x {si(latency, 's')}")
        yield WrongAnswer(_m("one-way-vs-bidirectional"),
                          links.transfer_seconds(nbytes, 2 * bw, hop_count, latency),
                          f"bandwidth {sci(2 * bw)} B/s (bidirectional) instead of {sci(bw)} (one way)")
    if DTYPE_BYTES[p["dtype"]] != 1:
        yield WrongAnswer(_m("elements-not-bytes"),
                          links.transfer_seconds(rows * cols, bw, hop_count, latency),
                          f"bytes = {sci(rows * cols)} elements instead of {sci(nbytes)} B")
    yield from _time_slips(problem, memory_side=True)


def _vmem_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    chip = cat.get(p["chip"])
    bm, bk, bn = p["block"]
    vmem = float(chip.figure("vmem_bytes").value)
    need = costs.vmem_footprint_bytes(bm, bk, bn, p["dtype"], p["buffers"])
    variants = [("forgot-buffers", costs.vmem_footprint_bytes(bm, bk, bn, p["dtype"], 1),
                 "one copy of each input block instead of two")]
    if DTYPE_BYTES[p["dtype"]] != 1:
        variants.append(("elements-not-bytes", costs.vmem_footprint_bytes(bm, bk, bn, "int8", p["buffers"]),
                         "footprint counted in elements"))
    for mid, wrong_need, step in variants:
        value: float | str = float(wrong_need)
        if problem.answer.is_choice:
            value = "yes" if wrong_need <= vmem else "no"
        yield WrongAnswer(_m(mid), value, f"{step}: {si(wrong_need, 'B')} instead of {si(need, 'B')}")
    if problem.answer.is_choice:
        fits_decimal = need <= vmem / GIB_PER_GB  # "128 MiB" read as 128e6 bytes
        yield WrongAnswer(_m("gb-gib"), "yes" if fits_decimal else "no",
                          f"VMEM {vmem / 2**20:.0f} MiB read as {vmem / 2**20:.0f} MB = {si(vmem / GIB_PER_GB, 'B')}")
    else:
        for factor in (GIB_PER_GB, 1 / GIB_PER_GB):
            yield WrongAnswer(_m("gb-gib"), need * factor, f"MiB and MB mixed: x{factor:.4f}")


def _transformer_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    chip = cat.get(p["chip"])
    model = transformer.Model(params=p["params"], layers=p["layers"], d_model=p["d_model"],
                              kv_d_model=p.get("kv_d_model"))
    step = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], p["dtype"])
    peak, bw = float(chip.peak_flops[step.dtype].value), chip.hbm_bytes_per_s
    flops, nbytes = step.flops, step.bytes

    def floor(f=flops, b=nbytes, pk=peak):
        return max(f / pk, b / bw)

    yield WrongAnswer(_m("sum-not-max"), flops / peak + nbytes / bw, "floor = T_math + T_comms instead of the max")
    yield WrongAnswer(_m("macs-not-flops"), floor(f=flops / 2), "2·params FLOPs per token counted as params")
    if p["phase"] == "prefill" and step.flops_attention:
        yield WrongAnswer(_m("causal-halving"), floor(f=step.flops_weights + step.flops_attention / 2),
                          f"attention FLOPs halved for the causal mask: {sci(step.flops_attention / 2)} "
                          f"instead of {sci(step.flops_attention)}")
    if chip.kind == "gpu":
        yield WrongAnswer(_m("sparse-peak"), floor(pk=2 * peak), "the sparse peak")
    for other, other_peak in _other_peaks(chip, step.dtype):
        yield WrongAnswer(_m("wrong-dtype-peak"), floor(pk=other_peak), f"the {other} peak")
    if DTYPE_BYTES[step.dtype] != 1:
        yield WrongAnswer(_m("elements-not-bytes"), floor(b=nbytes / DTYPE_BYTES[step.dtype]),
                          "bytes counted as elements (params, not params x bytes)")
    yield from _time_slips(problem, memory_side=nbytes / bw >= flops / peak)


def _lattice_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    if p["dtype"] not in ("bf16", "int8", "fp8"):
        return
    r, c = p["block"]
    sub32, lanes = (int(v) for v in cat.facts["tiling_lattice_32bit"].value)
    if p["variant"] == "legal":
        value: str = "yes" if r % sub32 == 0 and c % lanes == 0 else "no"
    else:
        value = f"{-(-r // sub32) * sub32}x{-(-c // lanes) * lanes}"
    yield WrongAnswer(_m("packing-ignored"), value, f"rows checked against {sub32} ({sub32}, {lanes}) instead of "
                                                    f"the packed {p['dtype']} tile")


def _term_confusions(problem: Problem) -> Iterator[WrongAnswer]:
    """The choices that are the key's easily swapped neighbour (``CONFUSABLE``)."""
    key = problem.answer.choice
    for other in problem.answer.choices:
        if frozenset((other, key)) in CONFUSABLE:
            yield WrongAnswer(_m("term-confusion"), other, f"{other} instead of {key}")


def _vocabulary_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    yield from _term_confusions(problem)


# The shared wrong methods, for the family modules' ``wrong_answers`` hooks.
op_answers, ridge_answers, critical_batch_answers = _op_answers, _ridge_answers, _critical_batch_answers
interconnect_answers, vmem_answers, transformer_answers = _interconnect_answers, _vmem_answers, _transformer_answers
lattice_answers, vocabulary_answers = _lattice_answers, _vocabulary_answers


def _family_hook(problem: Problem, cat: Catalogue, every: bool = False) -> Iterator[WrongAnswer]:
    """The wrong answers the problem's family module names (``generator.families.base``):
    ``wrong_answers(problem, cat)``, or its own formulas' ``misconceptions(spec, cat, params) ->
    {id: value}`` (``every``: also those a hook drops for landing within its tolerance), or a choice
    family's ``wrong_choices``; plus the GB/GiB slips where its ``gb_gib_moves(cat, params)`` says so."""
    import dataclasses

    from generator import families

    module = families.FAMILIES.get(problem.family)
    direct = getattr(module, "wrong_answers", None)
    if direct is not None:
        yield from direct(problem, cat)
        return
    choices = getattr(module, "wrong_choices", None)
    if choices is not None:  # a choice family names each wrong choice's flaw: [(id, choice, step)]
        for mid, choice, step in choices(families.spec(problem.family), cat, problem.params):
            yield WrongAnswer(BY_ID[mid], choice, step)
        return
    hook = getattr(module, "misconceptions", None)
    if hook is None:
        return
    spec = families.spec(problem.family)
    if every:
        spec = dataclasses.replace(spec, tolerance=0.0)
    for name, value in hook(spec, cat, problem.params).items():
        mid = name.split("/")[0]  # "gb-gib/" : a second direction of the same mistake
        if mid in BY_ID:
            shown = fmt(float(value), problem.answer.unit)
            yield WrongAnswer(BY_ID[mid], float(value), f"{BY_ID[mid].name} gives {shown}")
    moves = getattr(module, "gb_gib_moves", None)
    if not problem.answer.is_choice and moves is not None and moves(cat, problem.params):
        # a bandwidth (or a size) in GB taken as GiB, or the reverse: the answer off by 1.0737 either way
        key = float(problem.answer.value)  # type: ignore[arg-type]
        for factor, how in ((GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s"),
                            (1 / GIB_PER_GB, "a bandwidth in GB/s taken as GiB/s")):
            yield WrongAnswer(_m("gb-gib"), key * factor, f"{how}: x{factor:.4f}")


def wrong_answers(problem: Problem, cat: Catalogue | None = None) -> list[WrongAnswer]:
    """Every named wrong answer to ``problem`` that differs from its key (may be empty)."""
    out = []
    for wrong in _family_hook(problem, cat or catalogue_mod.load()):
        if problem.answer.is_choice:
            if wrong.value != problem.answer.choice:
                out.append(wrong)
        elif isinstance(wrong.value, float | int) and math.isfinite(wrong.value):
            key = float(problem.answer.value)  # type: ignore[arg-type]
            tolerance = max(problem.tolerance, 1e-9)
            # an answer worked with another edition's figure is right (with a note), never a mistake
            rights = [key, *(float(a["value"]) for a in problem.also_right)]
            if all(_rel(wrong.value, r) > tolerance for r in rights):
                out.append(wrong)
    return out


def distances(problem: Problem, cat: Catalogue | None = None) -> list[tuple[WrongAnswer, float]]:
    """Every named numeric mistake with its relative distance from the key, none filtered out
    (the fair-draw rule and the solution's notes read this). Choices: empty."""
    if problem.answer.is_choice:
        return []
    cat = cat or catalogue_mod.load()
    found = _family_hook(problem, cat, every=True)
    key = float(problem.answer.value)  # type: ignore[arg-type]
    return [(w, _rel(float(w.value), key)) for w in found
            if isinstance(w.value, float | int) and math.isfinite(w.value)]


def inside_tolerance(problem: Problem, cat: Catalogue | None = None) -> list[tuple[WrongAnswer, float]]:
    """Named mistakes whose answer differs from the key yet lands within the problem's tolerance,
    with their relative distance from the key: graded right although the method is wrong.
    (Choices: none; a mistake that gives the same choice can not be told apart.)"""
    out: dict[str, tuple[WrongAnswer, float]] = {}
    for wrong, d in distances(problem, cat):
        if 1e-9 < d <= problem.tolerance and wrong.misconception.id not in out:
            out[wrong.misconception.id] = (wrong, d)
    return list(out.values())


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else (0.0 if a == 0 else math.inf)


def diagnose_all(problem: Problem, given: float | str, cat: Catalogue | None = None) -> list[WrongAnswer]:
    """Every misconception a wrong answer matches (within the problem's tolerance), one per id, the
    closest first (ties in catalogue order); empty when the answer matches the key or no named mistake.

    Two mistakes can give the same number (on a v5e, int8's peak and counting a
    multiply-add as one FLOP both halve T_math): then both are named.
    """
    if problem.answer.is_choice:
        if given == problem.answer.choice:
            return []
        matches = [w for w in wrong_answers(problem, cat) if w.value == given]
    else:
        key = float(problem.answer.value)  # type: ignore[arg-type]
        tolerance = problem.tolerance or 0.05
        if _rel(float(given), key) <= tolerance:
            return []
        matches = [w for w in wrong_answers(problem, cat) if _rel(float(given), float(w.value)) <= tolerance]
        # the closest candidate is named first (a GB/GiB slip 7% off is not a "sum" that happens to land near)
        matches.sort(key=lambda w: _rel(float(given), float(w.value)))
    unique: dict[str, WrongAnswer] = {}
    for wrong in matches:
        unique.setdefault(wrong.misconception.id, wrong)
    return list(unique.values())


def diagnose(problem: Problem, given: float | str, cat: Catalogue | None = None) -> WrongAnswer | None:
    """The first misconception a wrong answer matches (see ``diagnose_all``), or None."""
    found = diagnose_all(problem, given, cat)
    return found[0] if found else None
