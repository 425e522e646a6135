"""Family 4 [floor]: floor latency of an op: T_math, T_comms and their max.

Fair draws: T_math + T_comms differs from max(T_math, T_comms) by more than 10%, and the output write left out misses by more than 5%, where a draw allows (a compute-bound floor does not move without the write).

T_math = FLOPs / peak, T_comms = bytes / HBM bandwidth, floor = max of the two
(``generator.model.roofline``). ``params.quantities`` says which cases ask which quantity.
"""

from __future__ import annotations

import random
from typing import Any

from generator.model.catalogue import Catalogue
from generator.problems.families import ops
from generator.problems.families.base import Skill, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec

NAME = "floor"
ORDER = 40  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_104  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: T_math + T_comms differs from max(T_math, T_comms) by more than 10%, and the output write left out misses by more than 5%, where a draw allows (a compute-bound floor does not move without the write). Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"sum-not-max": 0.10, "forgot-output-write": 0.05}
QUANTITIES = ("floor", "t_math", "t_comms")
PROMPTS = {q: {"chip", "op", "label"} for q in QUANTITIES}


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required={"cases", "quantities"}, allowed={"cases", "quantities"})
    cases = ops.check_cases(p["cases"], check, ("params", "cases"))
    q = check.mapping(p["quantities"], ("params", "quantities"), required={"floor"}, allowed=set(QUANTITIES))
    quantities = {}
    for name, listed in q.items():
        where = ("params", "quantities", name)
        quantities[name] = check.text_list(listed, where)
        for i, case in enumerate(quantities[name]):
            check.one_of(case, (*where, i), list(cases))
    return {"cases": cases, "quantities": quantities}


def _split(variant: str) -> tuple[str, str]:
    case, _, quantity = variant.partition("-")
    return case, quantity or "floor"


params_of = ops.floor_params_of  # a problem's params, typed: ops.FloorParams


wrong_answers = ops.wrong_answers  # named wrong answers: the op model with one step tweaked


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    quantities = spec.params["quantities"]
    variants = [case if quantity == "floor" else f"{case}-{quantity}"
                for case in spec.params["cases"] for quantity, listed in quantities.items() if case in listed]
    return ops.case_skills(spec, cat, lambda chip, case, v: f"{_split(v)[1]} of {ops.with_article(case.label)} on {chip.display}",
                           variants, case_of=lambda v: _split(v)[0])


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> ops.FloorParams:
    case, quantity = _split(skill.variant)
    return {**ops.draw(spec.params["cases"][case], cat.get(skill.chip_name), rng), "quantity": quantity}


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: ops.FloorParams) -> Problem:
    chip, est = ops.estimate(cat, params)
    quantity = params.get("quantity", "floor")
    f = ops.fields(chip, est, spec.params["cases"][params["case"]])
    value = {"floor": est.floor_s, "t_math": est.t_math_s, "t_comms": est.t_comms_s}[quantity]
    labels = {"floor": ("FLOPs", "bytes", "T_math", "T_comms", "floor"), "t_math": ("FLOPs", "T_math"),
              "t_comms": ("bytes", "T_comms")}[quantity]
    return problem(spec, skill, ops.key(params), spec.prompts[quantity].format(**f),
                   Answer(value=value, unit="s"), ops.steps(chip, est, *labels, "verdict", "constants", "convention"),
                   dict(params), spec.hints[quantity].format(**f), (f"dtype::{params['dtype']}",))
