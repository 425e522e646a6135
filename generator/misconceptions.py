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

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Iterator

from generator import catalogue as catalogue_mod
from generator import costs, roofline, units
from generator.catalogue import Catalogue, Chip
from generator.problem import Problem
from generator.units import DTYPE_BYTES, fmt
from generator.units import sci as _sci
from generator.units import si as _si

# Every draw prices its named mistakes (fair draws, the solution's notes), and their steps repeat the
# same few constants: the one formatter, memoised here (pure functions of their arguments).
sci = functools.lru_cache(maxsize=8192)(_sci)
si = functools.lru_cache(maxsize=8192)(_si)

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


SPARSE_FACTOR = 2  # a 2:4-sparse datasheet peak is twice the dense one


def _other_peaks(chip: Chip, dtype: str) -> Iterator[tuple[str, float]]:
    mine = float(chip.peak_flops[dtype].value)
    for other, fig in chip.peak_flops.items():
        if other != dtype and float(fig.value) != mine:
            yield other, float(fig.value)


def _sparse_step(chip: Chip, peak: float) -> str:
    why = "sparse" if chip.kind == "gpu" else f"doubled: the {chip.display} publishes no sparse figure"
    return f"peak = {sci(SPARSE_FACTOR * peak)} FLOP/s ({why}) instead of {sci(peak)} (dense)"


def _op_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Each mistake is ``roofline.estimate`` on a tweaked cost (``costs.as_elements`` ...) or tweaked ceilings."""
    p = problem.params
    chip = cat.get(p["chip"])
    cost = costs.cost(p["op"], tuple(p["shape"]), p["dtype"])
    quantity = {"intensity": "intensity", "bound": "bound"}.get(problem.family, p.get("quantity", "floor"))
    ceil = roofline.Ceilings.from_chip(chip, cost.dtype)
    right = roofline.estimate(ceil, cost)
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s

    def ev(c: costs.OpCost = cost, k: roofline.Ceilings = ceil) -> float | str:
        return roofline.estimate(k, c).quantity(quantity)

    elements = costs.as_elements(cost)
    if elements.bytes != cost.bytes:
        yield WrongAnswer(_m("elements-not-bytes"), ev(c=elements),
                          f"bytes = {sci(elements.bytes)} (elements) instead of {sci(cost.bytes)} B ({cost.dtype}: "
                          f"{DTYPE_BYTES[cost.dtype]} bytes per element)")
    if cost.bytes_written:
        inputs = costs.inputs_only(cost)
        yield WrongAnswer(_m("forgot-output-write"), ev(c=inputs),
                          f"bytes = {sci(inputs.bytes)} (inputs only) instead of {sci(cost.bytes)} "
                          f"(+ {sci(cost.bytes_written)} B of output written)")
    if cost.flops:
        yield WrongAnswer(_m("sparse-peak"), ev(k=ceil.with_peak(SPARSE_FACTOR * peak)), _sparse_step(chip, peak))
        for other, other_peak in _other_peaks(chip, cost.dtype):
            yield WrongAnswer(_m("wrong-dtype-peak"), ev(k=ceil.with_peak(other_peak, other)),
                              f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({cost.dtype})")
        macs = costs.in_macs(cost)
        yield WrongAnswer(_m("macs-not-flops"), ev(c=macs),
                          f"FLOPs = {sci(macs.flops)} (multiply-adds) instead of {sci(cost.flops)} "
                          f"({costs.FLOPS_PER_MAC} per multiply-add)")
    if quantity == "floor":
        yield WrongAnswer(_m("sum-not-max"), right.upper_s,
                          f"floor = T_math + T_comms = {si(right.upper_s, 's')} instead of "
                          f"max({si(right.t_math_s, 's')}, {si(right.t_comms_s, 's')})")
    if quantity in ("floor", "t_comms"):
        yield from _gib_slips(lambda w: ev(k=ceil.with_bandwidth(w)), bw)
    if quantity in ("floor", "t_comms", "t_math"):
        yield from _unit_slips(problem)


def _gib_slips(answer_with: Any, bytes_per_s: float) -> Iterator[WrongAnswer]:
    """The GB/GiB mix-ups, as the model's answer with the bandwidth (bytes/s) mis-converted either way."""
    for w, how in ((bytes_per_s / GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s: the bandwidth ÷1.0737"),
                   (bytes_per_s * GIB_PER_GB, "a bandwidth in GB/s taken as GiB/s: the bandwidth x1.0737")):
        yield WrongAnswer(_m("gb-gib"), answer_with(w), how)


def _unit_slips(problem: Problem) -> Iterator[WrongAnswer]:
    """The key read with its SI prefix one step off (a slip in writing the answer, not in the model)."""
    key = problem.answer.number
    for factor, how in ((1e3, "1000x too large"), (1e-3, "1000x too small")):
        yield WrongAnswer(_m("unit-slip-1000"), key * factor, f"{si(key * factor, 's')}: {how}")


def _ridge_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    if "dtype" not in p or problem.answer.is_choice:
        return
    chip = cat.get(p["chip"])
    ceil = roofline.Ceilings.from_chip(chip, p["dtype"])
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s
    yield WrongAnswer(_m("sparse-peak"), ceil.with_peak(SPARSE_FACTOR * peak).ridge_flops_per_byte,
                      _sparse_step(chip, peak))
    for other, other_peak in _other_peaks(chip, p["dtype"]):
        yield WrongAnswer(_m("wrong-dtype-peak"), ceil.with_peak(other_peak, other).ridge_flops_per_byte,
                          f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({p['dtype']})")
    macs = peak / costs.FLOPS_PER_MAC
    yield WrongAnswer(_m("macs-not-flops"), ceil.with_peak(macs).ridge_flops_per_byte,
                      f"peak counted in multiply-adds: {sci(macs)}")
    yield from _gib_slips(lambda w: ceil.with_bandwidth(w).ridge_flops_per_byte, bw)


def _critical_batch_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    from generator.families import FAMILIES

    _parts, critical_batch = FAMILIES["critical_batch"]._parts, FAMILIES["critical_batch"].critical_batch

    p = problem.params
    chip = cat.get(p["chip"])
    dtype = _parts(p)[3].dtype
    ceil = roofline.Ceilings.from_chip(chip, dtype)
    ridge, peak = ceil.ridge_flops_per_byte, ceil.peak_flops_per_s
    form = p["form"]

    def b_star(r: float = ridge, params: dict[str, Any] = p, f: str = form, tweak: Any = None) -> float:
        return float(critical_batch(r, params, f, tweak))

    if form == "exact":
        yield WrongAnswer(_m("shortcut-not-exact"), b_star(f="approx"),
                          f"B* = ridge·bytes_fixed / flops_row = {b_star(f='approx'):.1f} (per-row bytes dropped)")
    sparse = ceil.with_peak(SPARSE_FACTOR * peak).ridge_flops_per_byte
    yield WrongAnswer(_m("sparse-peak"), b_star(r=sparse), f"ridge from a {_sparse_step(chip, peak)}: {sparse:.1f}")
    for other, other_peak in _other_peaks(chip, dtype):
        r = ceil.with_peak(other_peak, other).ridge_flops_per_byte
        yield WrongAnswer(_m("wrong-dtype-peak"), b_star(r=r), f"ridge from the {other} peak: {r:.1f} "
                                                                f"instead of {ridge:.1f}")
    yield WrongAnswer(_m("macs-not-flops"), b_star(tweak=costs.in_macs),
                      f"FLOPs per row counted as D·F instead of {costs.FLOPS_PER_MAC}·D·F")
    ones = {**p, "activations": "int8", "weights": "int8"}
    if (p["activations"], p["weights"]) != ("int8", "int8"):
        yield WrongAnswer(_m("elements-not-bytes"), b_star(params=ones), "bytes counted as elements (1 each)")
    if p["weights"] != p["activations"]:
        same = {**p, "weights": p["activations"]}
        yield WrongAnswer(_m("wrong-dtype-size"), b_star(params=same),
                          f"weights counted as {p['activations']} ({DTYPE_BYTES[p['activations']]} bytes) "
                          f"instead of {p['weights']} ({DTYPE_BYTES[p['weights']]} byte)")


def _interconnect_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """The slips are the family's own ``interconnect.slip_times`` (one model, ``generator.links``)."""
    from generator.families import FAMILIES

    interconnect = FAMILIES["interconnect"]

    p = problem.params
    if problem.answer.is_choice:  # which link: ICI, DCN or PCIe
        yield from _term_confusions(problem)
        return
    chip = cat.get(p["chip"])
    t = interconnect.slip_times(chip, cat, p)
    nbytes = costs.array_bytes(p["shape"], p["dtype"])
    if "other_hops" in t:
        yield WrongAnswer(_m("wrong-hops"), t["other_hops"],
                          f"{t['other_hop_count']:.0f} hops ({'no ' if p['wrap'] else ''}wraparound assumed) "
                          f"instead of {t['hop_count']:.0f}")
        yield WrongAnswer(_m("forgot-latency"), t["no_latency"],
                          f"latency left out: {t['hop_count']:.0f} hops x {si(t['latency_s'], 's')}")
        yield WrongAnswer(_m("one-way-vs-bidirectional"), t["bidirectional"],
                          f"bandwidth {sci(t['bidi_bytes_per_s'])} B/s (bidirectional) instead of "
                          f"{sci(t['bytes_per_s'])} (one way)")
    if "elements" in t:
        yield WrongAnswer(_m("elements-not-bytes"), t["elements"],
                          f"bytes = {sci(costs.array_bytes(p['shape'], 'int8'))} elements instead of {sci(nbytes)} B")
    yield from _gib_slips(lambda w: interconnect.slip_times(chip, cat, p, bytes_per_s=w)["answer"], t["bytes_per_s"])
    yield from _unit_slips(problem)


def _vmem_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    p = problem.params
    chip = cat.get(p["chip"])
    bm, bk, bn = p["block"]
    vmem = float(chip.published_figure("vmem_bytes").value)
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
    """Each mistake is ``roofline.estimate`` on a tweaked step cost or tweaked ceilings."""
    # Imported here: only the transformer family needs the step model, and every quiz's first draw
    # imports this catalogue (the fair-draw rule), so its start-up does not pay for it (issue 25).
    from generator import transformer

    p = problem.params
    chip = cat.get(p["chip"])
    model = transformer.Model(params=p["params"], layers=p["layers"], d_model=p["d_model"],
                              kv_d_model=p.get("kv_d_model"))
    step, right = transformer.estimate(chip, model, p["phase"], p["batch"], p["seq"], p["dtype"])
    ceil, cost = right.ceilings, right.cost
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s

    def floor(c: costs.OpCost = cost, k: roofline.Ceilings = ceil) -> float:
        return roofline.estimate(k, c).floor_s

    yield WrongAnswer(_m("sum-not-max"), right.upper_s, "floor = T_math + T_comms instead of the max")
    yield WrongAnswer(_m("macs-not-flops"), floor(c=costs.in_macs(cost)), "2·params FLOPs per token counted as params")
    if p["phase"] == "prefill" and step.flops_attention:
        causal = dataclasses.replace(step, flops_attention=step.flops_attention / 2)  # type: ignore[arg-type]  # a wrong method's count: half an int FLOP count may be fractional
        yield WrongAnswer(_m("causal-halving"), floor(c=causal.op_cost()),
                          f"attention FLOPs halved for the causal mask: {sci(causal.flops_attention)} "
                          f"instead of {sci(step.flops_attention)}")
    yield WrongAnswer(_m("sparse-peak"), floor(k=ceil.with_peak(SPARSE_FACTOR * peak)), _sparse_step(chip, peak))
    for other, other_peak in _other_peaks(chip, step.dtype):
        yield WrongAnswer(_m("wrong-dtype-peak"), floor(k=ceil.with_peak(other_peak, other)), f"the {other} peak")
    if DTYPE_BYTES[step.dtype] != 1:
        elements = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], "int8").op_cost()
        yield WrongAnswer(_m("elements-not-bytes"), floor(c=elements),
                          "bytes counted as elements (params, not params x bytes)")
    yield from _gib_slips(lambda w: floor(k=ceil.with_bandwidth(w)), bw)
    yield from _unit_slips(problem)


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
        key = problem.answer.number
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
            key = problem.answer.number
            # Outside the key's tolerance it is a mistake, even near another edition's answer: grading
            # takes whichever of the two an answer is closer to (drills.grading.grade's ``mistakes``).
            if _rel(wrong.value, key) > max(problem.tolerance, 1e-9):
                out.append(wrong)
    return out


def distances(problem: Problem, cat: Catalogue | None = None) -> list[tuple[WrongAnswer, float]]:
    """Every named numeric mistake with its relative distance from the key, none filtered out
    (the fair-draw rule and the solution's notes read this). Choices: empty."""
    if problem.answer.is_choice:
        return []
    cat = cat or catalogue_mod.load()
    found = _family_hook(problem, cat, every=True)
    key = problem.answer.number
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
        key = problem.answer.number
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
