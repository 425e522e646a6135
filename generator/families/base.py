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
from generator.units import fmt, sci

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
            tags: tuple[str, ...] = (), also_right: tuple[dict[str, Any], ...] = ()) -> Problem:
    """Assemble a Problem; its id is the skill id plus ``key`` (the drawn parameters)."""
    return Problem(
        family=spec.family, skill=skill.id, id=f"{skill.id}:{key}" if key else skill.id,
        prompt=prompt, answer=answer, tolerance=0.0 if answer.is_choice else spec.tolerance,
        solution=tuple(solution), tags=skill.tags + tags, params=params, hint=hint, also_right=also_right)


def other_editions(chip, key: str, label: str, answer_with, key_answer: float, unit: str,
                   tolerance: float) -> tuple[dict[str, Any], ...]:
    """Answers worked with the other published figures of ``key`` (``chip.other_figures``), for
    ``Problem.also_right``: each graded right with a note naming both figures and their sources.

    ``answer_with(bytes_per_s) -> value`` recomputes the answer with that figure; only answers
    outside the tolerance of the key are listed (the others are right anyway).
    """
    fig = chip.figure(key)
    out = []
    for value, alt in chip.other_figures(key):
        other = answer_with(value)
        if abs(other - key_answer) <= tolerance * abs(key_answer):
            continue
        per = f" per host = {fmt(value, 'B/s')} per chip" if alt.per == "host" else " per chip"
        out.append({"value": other, "note": (
            f"right with {label} at {fmt(alt.value, 'B/s')}{per} ({alt.source.title}: {alt.note}); this card uses "
            f"{fmt(float(fig.value), 'B/s')} per chip ({fig.source.title}), which gives {fmt(key_answer, unit)}")})
    return tuple(out)


def figure_sentence(label: str, value: float, per: str = "per chip") -> str:
    """The prompt's statement of a figure a learner is not expected to know by heart (PCIe, DCN, ICI)."""
    return f" Take {label} as {sci(value)} B/s {per} (the scaling book's current edition)."

