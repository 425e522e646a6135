"""What every problem family shares: the Skill, ids, tags, how answers are written, mastery rules.

It also says what a family module provides (``NAME``, ``ORDER``, ``DECK_ID``, ``PROMPTS``,
``check_params``, ``skills``, ``draw_params``, ``params_of``, ``solve``, and optional hooks).
Details: docs/internals.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Hashable, TypeVar

from generator.model.catalogue import Catalogue, Chip, Figure
from generator.problems.problem import Answer, Problem
from generator.problems.specs import FamilySpec
from generator.model.units import fmt, sci

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

    @property
    def chip_name(self) -> str:
        """The chip of a per-chip skill; a ValueError for a skill that names none."""
        if self.chip is None:
            raise ValueError(f"skill '{self.id}' is not drawn on a chip")
        return self.chip

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


def per_chip(spec: FamilySpec, cat: Catalogue, variants: Iterable[str], describe: Callable[[Chip, str], str],
             keep: Callable[[Chip, str], bool] = lambda chip, variant: True,
             tags: Callable[[str], tuple[str, ...]] = lambda variant: ()) -> list[Skill]:
    """The common ``skills()``: for each chip of the spec (catalogue order), each variant (in order)
    that ``keep(chip, variant)`` allows, the skill ``family:chip:variant``, described by
    ``describe(chip, variant)`` and tagged with ``tags(variant)``."""
    listed = tuple(variants)
    return [make_skill(spec.family, chip.name, v, describe(chip, v), tags(v))
            for chip in (cat.get(name) for name in spec.chips) for v in listed if keep(chip, v)]


@dataclass(frozen=True)
class Mastery:
    """What shows a "Can you" item is mastered (a family's ``MASTERY``; ``drill progress`` reads it):
    skills of ``families`` (default: the declaring family; ``variant`` prefix) whose *last* review
    was right (within ``within_seconds`` when set), on ``min_chips`` distinct chips and ``min_skills``
    distinct skills, including a skill id containing each of ``must_include``; or, with ``lab``, a
    lab record with every miss explained."""

    what: str
    families: tuple[str, ...] = ()
    variant: str = ""
    min_chips: int = 0
    min_skills: int = 1
    within_seconds: float | None = None
    must_include: tuple[str, ...] = ()
    lab: bool = False


T = TypeVar("T")
# (id of a spec, id of a catalogue, what) -> (that spec, that catalogue, key -> value): see ``derived``.
_DERIVED: dict[tuple[int, int, str], tuple[FamilySpec, Catalogue, dict[Hashable, Any]]] = {}


def derived(spec: FamilySpec, cat: Catalogue, what: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, worked out once for this spec object, this catalogue object, ``what`` and ``key``.

    For a value that is a function of those alone (the slices a chip has, whether a drawn shape is
    fair), which a family's ``draw_params`` would otherwise work out again at every draw. Entries are
    held by the objects' identity and keep them alive, so an id is never reused while its entry
    stands, and another spec or catalogue (another spec directory, a test's own) never sees them.
    """
    slot = (id(spec), id(cat), what)
    entry = _DERIVED.get(slot)
    if entry is None or entry[0] is not spec or entry[1] is not cat:
        entry = _DERIVED[slot] = (spec, cat, {})
    values = entry[2]
    if key not in values:
        values[key] = compute()
    value: T = values[key]
    return value


def cite(fig: Figure) -> str:
    """The source of one figure, for a worked step: ``[title, retrieved date]``."""
    return f"[{fig.source.cite()}]"


def show(value: float, unit: str) -> str:
    """A value the way a card prints it: the one formatter, ``generator.model.units.fmt``."""
    return fmt(value, unit)


def problem(spec: FamilySpec, skill: Skill, key: str, prompt: str, answer: Answer,
            solution: list[str] | tuple[str, ...], params: dict[str, Any], hint: str,
            tags: tuple[str, ...] = (), also_right: tuple[dict[str, Any], ...] = ()) -> Problem:
    """Assemble a Problem; its id is the skill id plus ``key`` (the drawn parameters)."""
    return Problem(
        family=spec.family, skill=skill.id, id=f"{skill.id}:{key}" if key else skill.id,
        prompt=prompt, answer=answer, tolerance=0.0 if answer.is_choice else spec.tolerance,
        solution=tuple(solution), tags=skill.tags + tags, params=params, hint=hint, also_right=also_right)


FACTOR_OF_2_SLIPS = (2.0, 0.5)  # a doubled or halved answer: the slip another edition's answer must not equal


def other_editions(chip: Chip, key: str, label: str, answer_with: Callable[[float], float], key_answer: float, unit: str,
                   tolerance: float) -> tuple[dict[str, Any], ...]:
    """Answers worked with the other published figures of ``key`` (``chip.other_figures``), for
    ``Problem.also_right``: each graded right with a note naming both figures and their sources.

    ``answer_with(bytes_per_s) -> value`` recomputes the answer with that figure; only answers
    outside the tolerance of the key are listed (the others are right anyway). An answer that is also
    a factor-of-2 slip of the key (x2 or ÷2, within the tolerance) is not listed either: the prompt
    states the figure it uses (``figure_sentence``), so only that edition's answer is right and the
    slip is graded wrong and named.
    """
    fig = chip.published_figure(key)
    out = []
    for value, alt in chip.other_figures(key):
        other = answer_with(value)
        if any(abs(other - f * key_answer) <= tolerance * abs(f * key_answer) for f in (1, *FACTOR_OF_2_SLIPS)):
            continue
        per = f" per host = {fmt(value, 'B/s')} per chip" if alt.per == "host" else " per chip"
        out.append({"value": other, "note": (
            f"right with {label} at {fmt(alt.value, 'B/s')}{per} ({alt.source.title}: {alt.note}); this card uses "
            f"{fmt(float(fig.value), 'B/s')} per chip ({fig.source.title}), which gives {fmt(key_answer, unit)}")})
    return tuple(out)


def figure_sentence(label: str, value: float, per: str = "per chip") -> str:
    """The prompt's statement of a figure a learner is not expected to know by heart (PCIe, DCN, ICI)."""
    return f" Take {label} as {sci(value)} B/s {per}."

