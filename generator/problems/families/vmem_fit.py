"""Family 7 [vmem_fit]: do the blocks of a tiled matmul fit in a chip's VMEM?

The footprint counts double-buffered input blocks and one output block; only chips that publish
``vmem_bytes`` get these problems.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, TypedDict, cast

from generator.model import costs
from generator.model.catalogue import Catalogue
from generator.problems.families.base import Skill, YES_NO, cite, per_chip, problem
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, GIB_PER_GB, si

NAME = "vmem_fit"
ORDER = 70  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_107  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
VARIANTS = ("fits", "bytes")
PROMPTS = {v: {"chip", "dtype", "bm", "bk", "bn", "buffers"} for v in VARIANTS}
REQUIRES = "vmem_bytes"


class VmemFitParams(TypedDict):
    """A drawn tiled matmul: the chip, ``fits`` or ``bytes``, the dtype, the (bm, bk, bn) block and the
    number of buffers per input block."""

    chip: str
    op: str
    variant: str
    dtype: str
    block: list[int]
    buffers: int


def params_of(problem: Problem) -> VmemFitParams:
    """The params of a vmem_fit problem."""
    return cast(VmemFitParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required={"blocks", "dtypes", "buffers", "variants"},
                      allowed={"blocks", "dtypes", "buffers", "variants"})
    blocks = check.mapping(p["blocks"], ("params", "blocks"), required={"bm", "bk", "bn"},
                           allowed={"bm", "bk", "bn"})
    dtypes = check.dtype_list(p["dtypes"], ("params", "dtypes"))
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"blocks": {k: check.int_list(blocks[k], ("params", "blocks", k)) for k in ("bm", "bk", "bn")},
            "dtypes": tuple(dtypes), "buffers": check.integer(p["buffers"], ("params", "buffers")),
            "variants": variants}


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: the footprint (``costs.vmem_footprint_bytes``) with one step tweaked."""
    p = params_of(problem)
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
        yield wrong(mid, value, f"{step}: {si(wrong_need, 'B')} instead of {si(need, 'B')}")
    if problem.answer.is_choice:
        fits_decimal = need <= vmem / GIB_PER_GB  # "128 MiB" read as 128e6 bytes
        yield wrong("gb-gib", "yes" if fits_decimal else "no",
                    f"VMEM {vmem / 2**20:.0f} MiB read as {vmem / 2**20:.0f} MB = {si(vmem / GIB_PER_GB, 'B')}")
    else:
        for factor in (GIB_PER_GB, 1 / GIB_PER_GB):
            yield wrong("gb-gib", need * factor, f"MiB and MB mixed: x{factor:.4f}")
        yield from slips.unit_slips(problem)


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    def what(v: str) -> str:
        return "do the blocks of a tiled matmul fit" if v == "fits" else "VMEM bytes of a tiled matmul's blocks"

    # a chip with no published VMEM size has nothing to fit against
    return per_chip(spec, cat, spec.params["variants"], lambda chip, v: f"{what(v)} in {chip.display} VMEM",
                    keep=lambda chip, v: chip.figure(REQUIRES) is not None, tags=lambda v: ("op::matmul",))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> VmemFitParams:
    b = spec.params["blocks"]
    return {"chip": skill.chip_name, "op": "matmul", "variant": skill.variant, "dtype": rng.choice(spec.params["dtypes"]),
            "block": [rng.choice(b["bm"]), rng.choice(b["bk"]), rng.choice(b["bn"])],
            "buffers": spec.params["buffers"]}


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: VmemFitParams) -> Problem:
    chip, dtype, buffers = cat.get(params["chip"]), params["dtype"], params["buffers"]
    bm, bk, bn = params["block"]
    size = DTYPE_BYTES[dtype]
    need = costs.vmem_footprint_bytes(bm, bk, bn, dtype, buffers)
    vmem = chip.published_figure(REQUIRES)
    fits = need <= float(vmem.value)
    steps = [
        f"lhs block {bm}x{bk}, rhs block {bk}x{bn}, output block {bm}x{bn}; {dtype} = {size} bytes per element",
        f"footprint = {buffers}·(bm·bk + bk·bn)·{size} + bm·bn·{size} = {buffers}·({bm * bk} + {bk * bn})·{size} "
        f"+ {bm * bn}·{size} = {need} bytes = {si(need, 'B')} ({need / 2**20:.1f} MiB)",
        f"{chip.display} VMEM = {int(vmem.value)} bytes ({int(vmem.value) / 2**20:.0f} MiB) {cite(vmem)}",
        f"{need / 2**20:.1f} MiB {'<=' if fits else '>'} {int(vmem.value) / 2**20:.0f} MiB: "
        f"{'fits' if fits else 'does not fit'}",
    ]
    fields = {"chip": chip.display, "dtype": dtype, "bm": str(bm), "bk": str(bk), "bn": str(bn),
              "buffers": str(buffers)}
    variant = params["variant"]
    answer = (Answer(choice="yes" if fits else "no", choices=YES_NO) if variant == "fits"
              else Answer(value=float(need), unit="B"))
    return problem(spec, skill, f"{bm}x{bk}x{bn}-{dtype}", spec.prompts[variant].format(**fields), answer,
                   steps, dict(params), spec.hints[variant].format(**fields), (f"dtype::{dtype}",))
