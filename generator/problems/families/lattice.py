"""Family 6 [lattice]: the TPU tiling lattice. Is a block shape legal, and what is its smallest legal padding?

The lattice per dtype is a catalogue fact citing the course seed
(``tiling_lattice_32bit`` = (8, 128), ``tiling_lattice_bf16`` = (16, 128);
``tiling_lattice_int8`` = (32, 128) derived by the seed's packing rule): "legal"
means the last two dims are whole native tiles, multiples of (sublanes, lanes).
That is stricter than what compiles, and the cards say so (``compiles_note``).
"""

from __future__ import annotations

import random
from typing import Any, Iterator, TypedDict, cast

from generator.model import catalogue
from generator.model.catalogue import Catalogue, Figure
from generator.problems.families.base import Mastery, Skill, YES_NO, cite, make_skill, problem
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import normalize_dtype

NAME = "lattice"
ORDER = 60  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_106  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 4: what shows it (drill progress)
MASTERY = {4: Mastery("lattice cards right for 32-bit and for bf16", min_skills=2, must_include=("f32", "bf16"))}
VARIANTS = ("legal", "pad")
PROMPTS = {v: {"dtype", "rows", "cols"} for v in VARIANTS}


class LatticeParams(TypedDict):
    """A drawn block: ``legal`` or ``pad``, its dtype, and its (rows, cols)."""

    variant: str
    dtype: str
    block: list[int]


def params_of(problem: Problem) -> LatticeParams:
    """The params of a lattice problem."""
    return cast(LatticeParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"lattices", "rows", "cols", "variants", "compiles_note"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    facts = catalogue.load().facts
    lattices = {}
    for dtype, fact in check.mapping(p["lattices"], ("params", "lattices")).items():
        at = ("params", "lattices", dtype)
        try:
            dtype = normalize_dtype(str(dtype))
        except ValueError as exc:
            check.fail(at, str(exc))
        if fact not in facts:
            check.fail(at, f"'{fact}' is not a catalogue fact; facts: {', '.join(facts)}")
        value = facts[fact].value
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and v > 0 for v in value)):
            check.fail(at, f"fact '{fact}' is not a (sublanes, lanes) pair: {value!r}")
        lattices[dtype] = fact
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"lattices": lattices, "rows": check.int_list(p["rows"], ("params", "rows")),
            "cols": check.int_list(p["cols"], ("params", "cols")), "variants": variants,
            "compiles_note": check.text(p["compiles_note"], ("params", "compiles_note"))}


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: the 32-bit tile where a packed one applies."""
    p = params_of(problem)
    if p["dtype"] not in ("bf16", "int8", "fp8"):
        return
    r, c = p["block"]
    sub32, lanes = (int(v) for v in cat.facts["tiling_lattice_32bit"].value)
    if p["variant"] == "legal":
        value: str = "yes" if r % sub32 == 0 and c % lanes == 0 else "no"
    else:
        value = f"{-(-r // sub32) * sub32}x{-(-c // lanes) * lanes}"
    yield wrong("packing-ignored", value, f"rows checked against {sub32} ({sub32}, {lanes}) instead of "
                                          f"the packed {p['dtype']} tile")


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    return [make_skill(NAME, None, f"{variant}-{dtype}",
                       ("is a block made of whole native tiles" if variant == "legal"
                        else "smallest padding of a block to whole native tiles")
                       + f" for {dtype} (the tiling lattice)", (f"dtype::{dtype}", "kind::tpu"))
            for variant in spec.params["variants"] for dtype in spec.params["lattices"]]


def _lattice(cat: Catalogue, spec: FamilySpec, dtype: str) -> tuple[Figure, int, int]:
    fig = cat.facts[spec.params["lattices"][dtype]]
    return fig, int(fig.value[0]), int(fig.value[1])


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> LatticeParams:
    variant, dtype = skill.variant.split("-", 1)
    _, sub, lane = _lattice(cat, spec, dtype)
    rows, cols = spec.params["rows"], spec.params["cols"]
    good_rows = [r for r in rows if r % sub == 0] or [sub]
    good_cols = [c for c in cols if c % lane == 0] or [lane]
    bad_rows = [r for r in rows if r % sub] or [sub + 1]
    bad_cols = [c for c in cols if c % lane] or [lane + 1]
    # Half the legality cards are legal; padding needs an illegal block.
    if variant == "legal" and rng.random() < 0.5:
        r, c = rng.choice(good_rows), rng.choice(good_cols)
    else:
        broken = rng.choice(("rows", "cols", "both"))
        r = rng.choice(bad_rows if broken in ("rows", "both") else good_rows)
        c = rng.choice(bad_cols if broken in ("cols", "both") else good_cols)
    return {"variant": variant, "dtype": dtype, "block": [r, c]}


def _up(n: int, m: int) -> int:
    return -(-n // m) * m


def _shape(r: int, c: int) -> str:
    return f"{r}x{c}"


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: LatticeParams) -> Problem:
    dtype, (r, c) = params["dtype"], params["block"]
    fig, sub, lane = _lattice(cat, spec, dtype)
    legal = r % sub == 0 and c % lane == 0
    steps = [f"{dtype} native tile: last two dims in multiples of ({sub}, {lane}) {cite(fig)}"
             + (f" ({fig.note})" if fig.note.startswith("derived") else ""),
             f"rows {r} % {sub} = {r % sub}; cols {c} % {lane} = {c % lane}"]
    fields = {"dtype": dtype, "rows": str(r), "cols": str(c)}
    if params["variant"] == "legal":
        steps += [f"{'legal' if legal else 'not legal'}: both remainders must be 0", spec.params["compiles_note"]]
        return problem(spec, skill, f"{r}x{c}", spec.prompts["legal"].format(**fields),
                       Answer(choice="yes" if legal else "no", choices=YES_NO), steps, dict(params),
                       spec.hints["legal"].format(**fields))
    R, C = _up(r, sub), _up(c, lane)
    # Distractors: the 32-bit lattice for packed types (and the reverse), padding one dim only, doubling.
    other_sub = 8 if sub != 8 else 16
    wrong = [(_up(r, other_sub), C), (r, C), (R, c), (R * 2, C), (R, C + lane), (R + sub, C)]
    choices = [(R, C)]
    for w in wrong:
        if w not in choices and w[0] >= r and w[1] >= c and len(choices) < 4:
            choices.append(w)
    choices.sort()
    steps += [f"round each up: rows ceil({r}/{sub})·{sub} = {R}, cols ceil({c}/{lane})·{lane} = {C}",
              f"padded block {R}x{C}: {R * C} elements for {r * c} useful ({100 * (1 - r * c / (R * C)):.0f}% padding)",
              spec.params["compiles_note"]]
    return problem(spec, skill, f"{r}x{c}", spec.prompts["pad"].format(**fields),
                   Answer(choice=_shape(R, C), choices=tuple(_shape(*x) for x in choices)), steps, dict(params),
                   spec.hints["pad"].format(**fields))
