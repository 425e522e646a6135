"""What every problem family shares: the Skill, ids, tags and how answers are written.

A family module provides:

- ``NAME`` and ``PROMPTS`` (template name -> allowed ``{placeholders}``; the
  spec's ``prompts`` and ``hints`` must give exactly these templates);
- ``check_params(spec, check) -> dict``: validate and normalise the spec's ``params``;
- ``skills(spec, cat) -> list[Skill]``;
- ``draw_params(spec, cat, skill, rng) -> dict``: the random part (``rng`` is
  the only source of randomness, never the global ``random``);
- ``solve(spec, cat, skill, params) -> Problem``: everything else, deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.catalogue import Figure
from generator.problem import Answer, Problem
from generator.specs import FamilySpec
from generator.units import fmt

VERDICTS = ("compute", "memory")
YES_NO = ("yes", "no")


@dataclass(frozen=True)
class Skill:
    """What a learner is trained on, independent of the drawn numbers.

    ``id`` is ``family:chip:variant`` (``family:variant`` when no chip applies).
    """

    id: str
    family: str
    chip: str | None
    variant: str
    description: str
    tags: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "chip": self.chip, "variant": self.variant,
                "description": self.description, "tags": list(self.tags)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Skill":
        return cls(data["id"], data["family"], data.get("chip"), data["variant"],
                   data.get("description", ""), tuple(data.get("tags", ())))


def make_skill(family: str, chip: str | None, variant: str, description: str,
               tags: tuple[str, ...] = ()) -> Skill:
    sid = f"{family}:{chip}:{variant}" if chip else f"{family}:{variant}"
    base = ("rudrite::stage0", f"family::{family}") + ((f"chip::{chip}",) if chip else ())
    return Skill(sid, family, chip, variant, description, base + tuple(tags))


def cite(fig: Figure) -> str:
    """The source of one figure, for a worked step: ``[title, retrieved date]``."""
    return f"[{fig.source.cite()}]"


def show(value: float, unit: str) -> str:
    """A value the way a card prints it: the one formatter, ``generator.units.fmt``."""
    return fmt(value, unit)


def problem(spec: FamilySpec, skill: Skill, key: str, prompt: str, answer: Answer,
            solution: list[str] | tuple[str, ...], params: dict[str, Any], hint: str,
            tags: tuple[str, ...] = ()) -> Problem:
    """Assemble a Problem; its id is the skill id plus ``key`` (the drawn parameters)."""
    return Problem(
        family=spec.family, skill=skill.id, id=f"{skill.id}:{key}" if key else skill.id,
        prompt=prompt, answer=answer, tolerance=0.0 if answer.is_choice else spec.tolerance,
        solution=tuple(solution), tags=skill.tags + tags, params=params, hint=hint)

