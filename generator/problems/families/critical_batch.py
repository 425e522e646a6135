"""Family 5 [critical_batch]: the batch size above which a matmul is compute-bound.

Derived from ``costs.matmul``; an "exact" problem uses widths where the B << D shortcut misses
the exact answer by more than the tolerance (at least ``SHORTCUT_MISS``).
Details: docs/internals.md.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable, Iterator, TypedDict, cast

from generator.model import costs, roofline
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Skill, cite, per_chip, problem
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, normalize_dtype, sci

NAME = "critical_batch"
ORDER = 50  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_105  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: where the exact form is asked, the B << D shortcut misses it by more than 5%. Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"shortcut-not-exact": 0.05}
FORMS = ("approx", "exact")
PROMPTS = {form: {"chip", "label", "lhs", "rhs", "D", "F"} for form in FORMS}
MODE_KEYS = {"activations", "weights", "label"}
SHORTCUT_MISS = 0.05  # least relative error of the shortcut on an exact problem (more if the tolerance is wider)


class MatmulWidths(TypedDict):
    """What B* depends on: the activations' and weights' dtypes and the widths D and F."""

    activations: str
    weights: str
    D: int
    F: int


class CriticalBatchParams(MatmulWidths):
    """A drawn critical batch: the chip, the op (``matmul``), the spec's mode and the form asked
    (``approx`` or ``exact``), with the mode's dtypes and the widths."""

    chip: str
    op: str
    mode: str
    form: str


def params_of(problem: Problem) -> CriticalBatchParams:
    """The params of a critical_batch problem."""
    return cast(CriticalBatchParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required={"modes", "forms", "dims"},
                      allowed={"modes", "forms", "dims"})
    modes = {}
    for name, body in check.mapping(p["modes"], ("params", "modes")).items():
        at = ("params", "modes", name)
        body = check.mapping(body, at, required=MODE_KEYS, allowed=MODE_KEYS)
        try:
            act, w = normalize_dtype(str(body["activations"])), normalize_dtype(str(body["weights"]))
        except ValueError as exc:
            check.fail(at, str(exc))
        modes[name] = {"activations": act, "weights": w, "label": check.text(body["label"], (*at, "label"))}
    forms = check.text_list(p["forms"], ("params", "forms"))
    for i, form in enumerate(forms):
        check.one_of(form, ("params", "forms", i), FORMS)
    dims = check.mapping(p["dims"], ("params", "dims"), required={"D", "F"}, allowed={"D", "F"})
    return {"modes": modes, "forms": forms,
            "dims": {k: check.int_list(dims[k], ("params", "dims", k)) for k in ("D", "F")}}


def _parts(params: MatmulWidths, tweak: Callable[[costs.OpCost], costs.OpCost] | None = None
           ) -> tuple[int, int, int, costs.OpCost]:
    """FLOPs per row of B, bytes per row of B, fixed bytes, and the compute dtype: all from costs.matmul
    (``tweak``: a wrong method's change to each cost, e.g. ``costs.in_macs``)."""
    D, F = params["D"], params["F"]
    one = costs.matmul(1, D, F, params["activations"], rhs_dtype=params["weights"])
    two = costs.matmul(2, D, F, params["activations"], rhs_dtype=params["weights"])
    if tweak is not None:
        one, two = tweak(one), tweak(two)
    bytes_row = two.bytes - one.bytes
    return one.flops, bytes_row, one.bytes - bytes_row, one


def critical_batch(ridge: float, params: MatmulWidths, form: str,
                   tweak: Callable[[costs.OpCost], costs.OpCost] | None = None) -> float:
    """B* in rows (may be fractional; ``math.inf`` when the matmul can never reach the ridge).
    ``ridge`` in FLOPs/byte; ``tweak`` changes the matmul's cost (a wrong method, see ``_parts``)."""
    flops_row, bytes_row, bytes_fixed, _ = _parts(params, tweak)
    if form == "approx":
        return ridge * bytes_fixed / flops_row
    denominator = flops_row - ridge * bytes_row
    return math.inf if denominator <= 0 else ridge * bytes_fixed / denominator


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: B* (``critical_batch``) with one step tweaked: the ridge, the form, a cost."""
    p = params_of(problem)
    chip = cat.get(p["chip"])
    dtype = _parts(p)[3].dtype
    ceil = roofline.Ceilings.from_chip(chip, dtype)
    ridge, peak = ceil.ridge_flops_per_byte, ceil.peak_flops_per_s
    form = p["form"]

    def b_star(r: float = ridge, params: MatmulWidths = p, f: str = form,
               tweak: Callable[[costs.OpCost], costs.OpCost] | None = None) -> float:
        return float(critical_batch(r, params, f, tweak))

    if form == "exact":
        yield wrong("shortcut-not-exact", b_star(f="approx"),
                    f"B* = ridge·bytes_fixed / flops_row = {b_star(f='approx'):.1f} (per-row bytes dropped)")
    sparse = ceil.with_peak(slips.SPARSE_FACTOR * peak).ridge_flops_per_byte
    yield wrong("sparse-peak", b_star(r=sparse), f"ridge from a {slips.sparse_step(chip, peak)}: {sparse:.1f}")
    for other, other_peak in slips.other_peaks(chip, dtype):
        r = ceil.with_peak(other_peak, other).ridge_flops_per_byte
        yield wrong("wrong-dtype-peak", b_star(r=r), f"ridge from the {other} peak: {r:.1f} instead of {ridge:.1f}")
    yield wrong("macs-not-flops", b_star(tweak=costs.in_macs),
                f"FLOPs per row counted as D·F instead of {costs.FLOPS_PER_MAC}·D·F")
    ones: CriticalBatchParams = {**p, "activations": "int8", "weights": "int8"}
    if (p["activations"], p["weights"]) != ("int8", "int8"):
        yield wrong("elements-not-bytes", b_star(params=ones), "bytes counted as elements (1 each)")
    if 2 in (DTYPE_BYTES[p["activations"]], DTYPE_BYTES[p["weights"]]):  # bf16 counted at f32's 4 bytes
        act, weights = p["activations"], p["weights"]
        wide: CriticalBatchParams = {**p, "activations": "f32" if DTYPE_BYTES[act] == 2 else act,
                                     "weights": "f32" if DTYPE_BYTES[weights] == 2 else weights}
        yield wrong("wrong-dtype-size", b_star(params=wide), "bf16 counted as 4 bytes an element (f32's size)")
    if p["weights"] != p["activations"]:
        same: CriticalBatchParams = {**p, "weights": p["activations"]}
        yield wrong("wrong-dtype-size", b_star(params=same),
                    f"weights counted as {p['activations']} ({DTYPE_BYTES[p['activations']]} bytes) "
                    f"instead of {p['weights']} ({DTYPE_BYTES[p['weights']]} byte)")


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    modes = spec.params["modes"]
    variants = {f"{mode}-{form}": (m, form) for mode, m in modes.items() for form in spec.params["forms"]}

    def compute(v: str) -> str:
        m = variants[v][0]
        return costs.matmul(1, 1, 1, m["activations"], rhs_dtype=m["weights"]).dtype

    def describe(chip: Chip, v: str) -> str:
        m, form = variants[v]
        how = "with B << D, F" if form == "approx" else "exact form"
        return f"critical batch of a matmul on {chip.display}: {m['label']}, {how}"

    return per_chip(spec, cat, variants, describe, keep=lambda chip, v: compute(v) in chip.peak_flops,
                    tags=lambda v: ("op::matmul", f"dtype::{compute(v)}"))


def shortcut_miss(ridge: float, params: MatmulWidths) -> float:
    """Relative error of the B << D, F answer against the exact one (1 when the exact B* is infinite)."""
    exact = critical_batch(ridge, params, "exact")
    return 1.0 if not math.isfinite(exact) else abs(critical_batch(ridge, params, "approx") - exact) / exact


# (chip, mode, form, dims, least miss) -> the (D, F) pairs a problem may use. Pure in the key.
_PAIRS: dict[tuple[Any, ...], tuple[tuple[int, int], ...]] = {}


def _pairs(spec: FamilySpec, cat: Catalogue, chip: str, mode: str, form: str) -> tuple[tuple[int, int], ...]:
    dims, m = spec.params["dims"], spec.params["modes"][mode]
    least = max(SHORTCUT_MISS, spec.tolerance)
    key = (chip, mode, form, tuple(dims["D"]), tuple(dims["F"]), least)
    hit = _PAIRS.get(key)
    if hit is None:
        def widths(d: int, f: int) -> MatmulWidths:
            return {"activations": m["activations"], "weights": m["weights"], "D": d, "F": f}

        ridge = roofline.Ceilings.from_chip(cat.get(chip), _parts(widths(1, 1))[3].dtype).ridge_flops_per_byte
        if form == "approx":
            pairs = [(max(dims["D"]), max(dims["F"]))]
        else:  # reachable (finite B*) and where the shortcut is wrong by more than the tolerance
            pairs = [(d, f) for d in dims["D"] for f in dims["F"]
                     if math.isfinite(critical_batch(ridge, widths(d, f), "exact"))
                     and shortcut_miss(ridge, widths(d, f)) > least]
        if not pairs:
            raise ValueError(f"critical_batch on {chip} ({mode}, {form}): no (D, F) in the spec where the "
                             f"B << D, F shortcut misses by more than {least:.0%}; add smaller widths")
        hit = _PAIRS[key] = tuple(pairs)
    return hit


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> CriticalBatchParams:
    mode, form = skill.variant.rsplit("-", 1)
    m = spec.params["modes"][mode]
    D, F = rng.choice(_pairs(spec, cat, skill.chip_name, mode, form))
    return {"chip": skill.chip_name, "op": "matmul", "mode": mode, "form": form,
            "activations": m["activations"], "weights": m["weights"], "D": D, "F": F}


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: CriticalBatchParams) -> Problem:
    chip, form = cat.get(params["chip"]), params["form"]
    flops_row, bytes_row, bytes_fixed, one = _parts(params)
    dtype = one.dtype
    peak, bw = chip.peak_flops[dtype], chip.figures["hbm_bytes_per_s"]
    ridge = roofline.Ceilings.from_chip(chip, dtype).ridge_flops_per_byte
    b_star = critical_batch(ridge, params, form)
    D, F = params["D"], params["F"]
    t = one.operand_dtypes
    steps = [
        f"matmul {t['lhs']}[B,{'D' if form == 'approx' else D}] @ {t['rhs']}[D,F]: FLOPs = {one.flops_formula}; "
        f"bytes = {one.bytes_formula}",
        f"per row of B: FLOPs = 2·D·F, bytes = D·{DTYPE_BYTES[t['lhs']]} + F·{DTYPE_BYTES[t['out']]}; "
        f"fixed (weights) bytes = D·F·{DTYPE_BYTES[t['rhs']]}",
        f"ridge ({dtype} FLOPs) = {sci(float(peak.value))} FLOP/s {cite(peak)} / {sci(float(bw.value))} B/s "
        f"{cite(bw)} = {ridge:.1f} FLOPs/byte",
    ]
    if form == "approx":
        w = DTYPE_BYTES[t["rhs"]]
        steps += [f"B << D, F: the per-row bytes vanish, intensity ≈ 2·B·D·F / (D·F·{w}) = {2 / w:g}·B",
                  f"compute-bound when {2 / w:g}·B >= {ridge:.1f}: B* = ridge·{w}/2 = {b_star:.1f}"]
        key = ""
    else:
        steps += [f"D = {D}, F = {F}: FLOPs per row = {sci(flops_row)}, bytes per row = {sci(bytes_row)}, "
                  f"fixed bytes = {sci(bytes_fixed)}",
                  f"intensity(B) = B·{sci(flops_row)} / (B·{sci(bytes_row)} + {sci(bytes_fixed)}) >= {ridge:.1f} "
                  f"<=> B >= {ridge:.1f}·{sci(bytes_fixed)} / ({sci(flops_row)} - {ridge:.1f}·{sci(bytes_row)}) "
                  f"= {b_star:.1f}"]
        lo, hi = max(1, math.ceil(b_star) - 1), math.ceil(b_star)
        for b in (lo, hi):
            est = roofline.estimate(chip, costs.matmul(b, D, F, params["activations"], rhs_dtype=params["weights"]))
            steps.append(f"check with the roofline: B = {b}: intensity {est.intensity_flops_per_byte:.1f} "
                         f"-> {est.bound}-bound")
        key = f"d{D}-f{F}"
    fields = {"chip": chip.display, "label": spec.params["modes"][params["mode"]]["label"],
              "lhs": t["lhs"], "rhs": t["rhs"], "D": str(D), "F": str(F)}
    prompt = spec.prompts[form].format(**fields)
    acc = costs.ACCUMULATE_DTYPE.get(dtype)
    if acc and acc != t["out"]:  # the hardware's accumulate type, and the output bytes as the model counts them
        prompt += (f" Products accumulate in {acc}, written back as {t['out']} "
                   f"({DTYPE_BYTES[t['out']]} byte an element).")
    return problem(spec, skill, key, prompt, Answer(value=b_star, unit=""),
                   steps, dict(params), spec.hints[form].format(**fields))
