"""Family 2 [intensity]: arithmetic intensity (FLOPs per byte) of an op at given shapes.

Fair draws: the output write left out misses the key by more than 5% (skinny matmuls whose output is a sliver of the bytes are redrawn).

Intensity = FLOPs / bytes from ``generator.model.costs``; the solution compares it with
the chip's ridge so each card also says which side of the ridge the op is on.
"""

from __future__ import annotations

from typing import Any

from generator.model.catalogue import Catalogue
from generator.problems.families import ops
from generator.problems.families.base import Skill, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import FamilySpec

NAME = "intensity"
ORDER = 20  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_102  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: the output write left out misses the key by more than 5% (skinny matmuls whose output is a sliver of the bytes are redrawn). Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"forgot-output-write": 0.05}
PROMPTS = {"value": {"chip", "op", "label"}}


check_params = ops.check_case_params


params_of = ops.op_params_of  # a problem's params, typed: ops.OpParams


wrong_answers = ops.wrong_answers  # named wrong answers: the op model with one step tweaked


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    return ops.case_skills(spec, cat, lambda chip, case, v: f"arithmetic intensity of {ops.with_article(case.label)} (on {chip.display})")


draw_params = ops.draw_case_params


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: ops.OpParams) -> Problem:
    chip, est = ops.estimate(cat, params)
    f = ops.fields(chip, est, spec.params["cases"][params["case"]])
    return problem(spec, skill, ops.key(params), spec.prompts["value"].format(**f),
                   Answer(value=est.intensity_flops_per_byte, unit="FLOP/byte"),
                   ops.steps(chip, est, "FLOPs", "bytes", "intensity", "ridge", "verdict", "constants", "convention"),
                   dict(params), spec.hints["value"].format(**f), (f"dtype::{params['dtype']}",))
