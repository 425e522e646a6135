"""Family 1 [ridge]: a chip's ridge point for a dtype, and which generation has the higher one.

ridge = peak FLOP/s / HBM bytes/s (FLOPs per byte), from ``roofline.Ceilings`` (the roofline's one ridge formula).
"""

from __future__ import annotations

import random
from typing import Any, Iterator, TypedDict, cast

from generator.model import costs, roofline
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Mastery, Skill, cite, per_chip, problem
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import normalize_dtype, sci

NAME = "ridge"
ORDER = 10  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_101  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 1: what shows it (drill progress)
MASTERY = {1: Mastery("ridge right on at least two chips at their last review", min_chips=2)}
PROMPTS = {"value": {"chip", "dtype"}, "compare": {"dtype", "a", "b"}}


class _ChipDtype(TypedDict):
    chip: str
    dtype: str


class RidgeParams(_ChipDtype, total=False):
    """A drawn ridge problem: the chip and dtype; a compare problem also names the ``other`` chip."""

    other: str


def params_of(problem: Problem) -> RidgeParams:
    """The params of a ridge problem."""
    return cast(RidgeParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required={"dtypes", "compare_dtype"},
                      allowed={"dtypes", "compare_dtype"})
    dtypes = check.dtype_list(p["dtypes"], ("params", "dtypes"))
    try:
        compare = normalize_dtype(check.text(p["compare_dtype"], ("params", "compare_dtype")))
    except ValueError as exc:
        check.fail(("params", "compare_dtype"), str(exc))
    return {"dtypes": tuple(dtypes), "compare_dtype": compare}


def _rivals(spec: FamilySpec, cat: Catalogue, chip: Chip, dtype: str) -> list[Chip]:
    """Chips of the same kind after ``chip`` in catalogue order with a different ridge for ``dtype``
    (a compare needs a winner). Only later chips: each unordered pair belongs to one skill, so no two
    notes (nor two problems of a deck) ask the same comparison."""
    mine, names = _ridge(chip, dtype), cat.names()
    return [c for c in cat.chips if c.kind == chip.kind and names.index(c.name) > names.index(chip.name)
            and dtype in c.peak_flops and _ridge(c, dtype) != mine]


def _ridge(chip: Chip, dtype: str) -> float:
    """The chip's datasheet ridge for ``dtype`` (FLOPs/byte), from the roofline."""
    return roofline.Ceilings.from_chip(chip, dtype).ridge_flops_per_byte


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: the ridge (``roofline.Ceilings``) with a wrong peak or bandwidth."""
    p = params_of(problem)
    if "dtype" not in p or problem.answer.is_choice:
        return
    chip = cat.get(p["chip"])
    ceil = roofline.Ceilings.from_chip(chip, p["dtype"])
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s
    cores = chip.figure("tensorcores_per_chip")
    if cores is not None and int(cores.value) > 1:  # first: on a two-core chip the likelier doubled ridge
        per_core = bw / int(cores.value)
        yield wrong("hbm-per-core", ceil.with_bandwidth(per_core).ridge_flops_per_byte,
                    f"HBM bandwidth = {sci(per_core)} B/s (one of {int(cores.value)} TensorCores' share) instead of "
                    f"the chip's {sci(bw)}")
    yield wrong("sparse-peak", ceil.with_peak(slips.SPARSE_FACTOR * peak).ridge_flops_per_byte,
                slips.sparse_step(chip, peak))
    for other, other_peak in slips.other_peaks(chip, p["dtype"]):
        yield wrong("wrong-dtype-peak", ceil.with_peak(other_peak, other).ridge_flops_per_byte,
                    f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({p['dtype']})")
    macs = peak / costs.FLOPS_PER_MAC
    yield wrong("macs-not-flops", ceil.with_peak(macs).ridge_flops_per_byte, f"peak counted in multiply-adds: {sci(macs)}")
    yield from slips.gib_slips(lambda w: ceil.with_bandwidth(w).ridge_flops_per_byte, bw)
    inverted = ceil.with_peak(bw).with_bandwidth(peak).ridge_flops_per_byte  # the two ceilings swapped
    yield wrong("ridge-inverted", inverted, f"bandwidth / peak = {sci(inverted)} bytes per FLOP instead of peak / "
                                            f"bandwidth")


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    compare = f"compare-{spec.params['compare_dtype']}"

    def describe(chip: Chip, v: str) -> str:
        if v == compare:  # no chip name here: the header must not name the answer
            return f"which of two {chip.kind.upper()}s has the higher {_dtype(v)} ridge"
        return f"ridge point of {chip.display} for {v}"

    def keep(chip: Chip, v: str) -> bool:
        return _dtype(v) in chip.peak_flops and (v != compare or bool(_rivals(spec, cat, chip, _dtype(v))))

    return per_chip(spec, cat, [*spec.params["dtypes"], compare], describe, keep, tags=lambda v: (f"dtype::{_dtype(v)}",))


def _dtype(variant: str) -> str:
    return variant.removeprefix("compare-")


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> RidgeParams:
    chip = cat.get(skill.chip_name)
    if skill.variant.startswith("compare-"):
        dtype = skill.variant.removeprefix("compare-")
        return {"chip": chip.name, "dtype": dtype, "other": rng.choice(_rivals(spec, cat, chip, dtype)).name}
    return {"chip": chip.name, "dtype": skill.variant}


def _ridge_steps(chip: Chip, dtype: str) -> list[str]:
    peak, bw = chip.peak_flops[dtype], chip.figures["hbm_bytes_per_s"]
    return [
        f"{chip.display} peak {dtype} = {sci(float(peak.value))} FLOP/s {cite(peak)}",
        f"{chip.display} HBM bandwidth = {sci(float(bw.value))} B/s {cite(bw)}",
        f"ridge({chip.name}, {dtype}) = {sci(float(peak.value))} / {sci(float(bw.value))} "
        f"= {_ridge(chip, dtype):.1f} FLOPs/byte",
    ]


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: RidgeParams) -> Problem:
    chip, dtype = cat.get(params["chip"]), params["dtype"]
    if "other" not in params:
        ridge = _ridge(chip, dtype)
        steps = ["ridge = peak FLOP/s / HBM bytes/s", *_ridge_steps(chip, dtype),
                 f"ops below {ridge:.0f} FLOPs/byte are memory-bound on {chip.display} ({dtype}); above it, compute-bound"]
        return problem(spec, skill, "", spec.prompts["value"].format(chip=chip.display, dtype=dtype),
                       Answer(value=ridge, unit="FLOP/byte"), steps, dict(params),
                       spec.hints["value"].format(chip=chip.display, dtype=dtype))
    other = cat.get(params["other"])
    # Catalogue order, so a pair reads the same whichever chip the skill belongs to.
    a, b = sorted((chip, other), key=lambda c: cat.names().index(c.name))
    ra, rb = _ridge(a, dtype), _ridge(b, dtype)
    winner = a if ra > rb else b
    steps = ["ridge = peak FLOP/s / HBM bytes/s", *_ridge_steps(a, dtype), *_ridge_steps(b, dtype),
             f"{winner.name} has the higher ridge ({max(ra, rb):.1f} vs {min(ra, rb):.1f} FLOPs/byte): "
             f"an op needs more FLOPs per byte to be compute-bound there"]
    fields = {"dtype": dtype, "a": a.name, "b": b.name}
    return problem(spec, skill, other.name, spec.prompts["compare"].format(**fields),
                   Answer(choice=winner.name, choices=(a.name, b.name)), steps, dict(params),
                   spec.hints["compare"].format(**fields))

