"""Family 3 [bound]: compute- or memory-bound? The seed's five ops plus embedding, per chip.

The verdict is ``roofline.estimate(...).bound``: compute when intensity >= ridge. Draws
stay at least 10% away from the ridge (``ops.draw_clear_of_ridge``), so no verdict turns
on rounding or on an edition's constants.
"""

from __future__ import annotations

import random
from typing import Any

from generator.model.catalogue import Catalogue
from generator.problems.families import ops
from generator.problems.families.base import Mastery, Skill, VERDICTS, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import FamilySpec

NAME = "bound"
ORDER = 30  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_103  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 2: what shows it (drill progress)
MASTERY = {2: Mastery("compute/memory verdicts right within 60 s on at least two chips",
                      min_chips=2, within_seconds=60)}
PROMPTS = {"verdict": {"chip", "op", "label"}}


check_params = ops.check_case_params


params_of = ops.op_params_of  # a problem's params, typed: ops.OpParams


wrong_answers = ops.wrong_answers  # named wrong answers: the op model with one step tweaked


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    return ops.case_skills(spec, cat, lambda chip, case, v: f"is {ops.with_article(case.label)} compute- or "
                                                            f"memory-bound on {chip.display}?")


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> ops.OpParams:
    """A draw at least ``ops.RIDGE_MARGIN`` away from the ridge: a right/wrong verdict must not turn on rounding."""
    return ops.draw_clear_of_ridge(spec.params["cases"][skill.variant], cat.get(skill.chip_name), rng)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: ops.OpParams) -> Problem:
    chip, est = ops.estimate(cat, params)
    f = ops.fields(chip, est, spec.params["cases"][params["case"]])
    return problem(spec, skill, ops.key(params), spec.prompts["verdict"].format(**f),
                   Answer(choice=est.bound, choices=VERDICTS),
                   ops.steps(chip, est, "FLOPs", "bytes", "intensity", "ridge", "verdict", "constants", "convention"),
                   dict(params), spec.hints["verdict"].format(**f), (f"dtype::{params['dtype']}",))

