"""The data of a variant card: one note per skill, K problems computed in Python, nothing left to the card.

A ``SkillNote`` holds up to K ``Variant``s of one skill; the drill's grading rules come in as
``CardRules``, so data flows one way (drills -> generator).
Details: docs/internals.md.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from generator.problems import misconceptions
from generator.model import answers
from generator.export import rotation
from generator.problems.families import mistakes
from generator.problems.families.base import Skill
from generator.problems.problem import Problem
from generator.model.units import fmt
from generator.problems.generate import answer_key

if TYPE_CHECKING:  # annotations only
    from generator.problems.generate import Registry

# Variants per note by default (skills with fewer distinct problems hold fewer): the deck's size
# grows with K (docs/anki.md: the full course deck) and a card without memory of its last review
# repeats about 1/K of the time (bench/bench_repeats.py).
DEFAULT_VARIANTS = 16
# The tolerance ``misconceptions.diagnose_all`` matches a wrong answer with when the problem sets none.
DIAGNOSE_DEFAULT_REL = 0.05

_SPELLED = {"us": "µs", "FLOP/byte": "FLOPs/byte"}  # how a stated unit is written on the card


@dataclass(frozen=True)
class CardRules:
    """The drill's grading rules the card must follow (given by ``drills``; see docs/internals.md).

    ``stated_unit(problem)``: the unit the prompt asks a bare number in, or None.
    ``good_rel(problem)``: the relative error ``drill check`` accepts as right.
    """

    stated_unit: Callable[[Problem], str | None]
    good_rel: Callable[[Problem], float]


@dataclass(frozen=True)
class Variant:
    """One problem of a skill note, with what the card needs to check a typed answer.

    ``unit``: the unit a typed plain number is read in, as written on the card ("µs";
    "" for plain counts and for choices); ``unit_scale``/``base_scale``: what one typed
    unit and one unit of the answer are in base SI (the card computes typed x unit_scale /
    base_scale, as ``generator.model.answers.parse_number`` does); ``good_rel``: grading's
    tolerance; ``diagnose_rel``: the misconception match's; ``wrong``: the classic wrong
    answers in ``mistakes.wrong_answers`` order.
    """

    problem: Problem
    unit: str
    unit_scale: float
    base_scale: float
    good_rel: float
    diagnose_rel: float
    wrong: tuple[misconceptions.WrongAnswer, ...]

    def to_dict(self) -> dict[str, Any]:
        """The card's compact data for this variant (see ``generator.export.card``)."""
        a = self.problem.answer
        out: dict[str, Any] = {"id": self.problem.id, "t": self.good_rel, "dt": self.diagnose_rel,
                               "w": [[w.value, w.misconception.id] for w in self.wrong]}
        if a.is_choice:
            out.update(k=a.choice, c=list(a.choices))
        else:
            out.update(k=a.number, s=self.unit_scale, b=self.base_scale, u=self.unit, bu=a.unit,
                       x=",".join(str(d) for d in answers.parse_unit(a.unit).dims))
            if self.problem.also_right:  # worked with another edition's figure: right too (drills.quiz.grading.grade)
                out["a"] = [float(other["value"]) for other in self.problem.also_right]
        return out


@dataclass(frozen=True)
class SkillNote:
    """One note: a skill and its variants; ``seed`` drives its rotation (``generator.export.rotation``)."""

    skill: str
    family: str
    description: str
    tags: tuple[str, ...]
    variants: tuple[Variant, ...]

    @property
    def seed(self) -> int:
        return rotation.note_seed(self.skill)

    @property
    def offset(self) -> int:
        """The old rule's per-note offset ((day + offset) mod K), kept for the benchmark's comparison."""
        return int(hashlib.sha256(self.skill.encode()).hexdigest()[:8], 16) % len(self.variants)

    def to_dict(self) -> dict[str, Any]:
        used = {w.misconception.id: w.misconception for v in self.variants for w in v.wrong}
        return {"skill": self.skill, "seed": self.seed, "v": [v.to_dict() for v in self.variants],
                "m": {mid: [m.name, m.explanation] for mid, m in sorted(used.items())}}


def repeats_an_answer(note: SkillNote) -> bool:
    """Whether two of a numeric note's variants give the same answer to 3 significant figures
    (``generate.answer_key``): a review with new numbers would then ask for a number already seen."""

    keys = [answer_key(v.problem) for v in note.variants]
    return keys[0] is not None and len(set(keys)) < len(keys)


def card_unit(problem: Problem, stated: str | None) -> str:
    """The unit a typed plain number is read in: the prompt's stated unit, else the answer's own
    SI-prefixed unit as ``fmt`` prints it ("µs", "TFLOP/s"), else the base unit; "" for choices."""
    a = problem.answer
    if a.is_choice or a.unit == "":
        return ""
    if stated:
        return _SPELLED.get(stated, stated)
    if a.unit == "FLOP/byte":
        return _SPELLED["FLOP/byte"]
    shown = fmt(a.number, a.unit).split(" ", 1)[-1]
    try:
        if answers.parse_unit(shown).dims == answers.parse_unit(a.unit).dims:
            return shown
    except answers.AnswerError:
        pass
    return a.unit


def variant(problem: Problem, rules: CardRules, measured: list[tuple[misconceptions.WrongAnswer, float]] | None = None
            ) -> Variant:
    """The card's variant of ``problem``; ``measured``: its named mistakes' distances where the draw
    worked them out (``mistakes.wrong_answers`` reads them instead of asking the family again)."""
    a = problem.answer
    unit = card_unit(problem, rules.stated_unit(problem))
    unit_scale = base_scale = 1.0
    if not a.is_choice:
        unit_scale, base_scale = answers.parse_unit(unit).scale, answers.parse_unit(a.unit).scale
    return Variant(problem, unit, unit_scale, base_scale, rules.good_rel(problem),
                   problem.tolerance or DIAGNOSE_DEFAULT_REL,
                   tuple(mistakes.wrong_answers(problem) if measured is None
                         else mistakes.wrong_answers(problem, measured=measured)))


def skill_notes(problems: Iterable[Problem], rules: CardRules, skills: dict[str, Skill] | None = None,
                max_variants: int = DEFAULT_VARIANTS, on_item: Callable[[int, int], None] | None = None,
                measured: Mapping[str, list[tuple[misconceptions.WrongAnswer, float]]] | None = None
                ) -> list[SkillNote]:
    """Group problems by skill (first-seen order) into notes of at most ``max_variants`` variants.

    ``skills`` (skill id -> ``Skill``) gives each note its description and tags; without it a
    note takes the tags its first problem shares with every problem of the skill.
    ``on_item(done, total)`` is called after each note is made (default: nothing).
    ``measured``: problem id -> its named mistakes' distances, as ``Registry.generate`` fills it.
    """
    by_skill: dict[str, list[Problem]] = {}
    for p in problems:
        group = by_skill.setdefault(p.skill, [])
        if len(group) < max_variants:
            group.append(p)
    notes = []
    for skill, group in by_skill.items():
        known = (skills or {}).get(skill)
        tags = known.tags if known else tuple(t for t in group[0].tags if all(t in p.tags for p in group))
        notes.append(SkillNote(skill, group[0].family, known.description if known else "", tags,
                               tuple(variant(p, rules, (measured or {}).get(p.id)) for p in group)))
        if on_item is not None:
            on_item(len(notes), len(by_skill))
    return notes


def course_notes(registry: Registry, rules: CardRules, families: list[str] | None = None,
                 chips: list[str] | None = None, max_variants: int = DEFAULT_VARIANTS, seed: int = 0,
                 on_drawn: Callable[[int, int], None] | None = None,
                 on_made: Callable[[int, int], None] | None = None) -> list[SkillNote]:
    """The variant deck's notes: ``max_variants`` problems drawn per skill of the selection
    (``Registry.generate``), grouped into ``skill_notes``; each variant's wrong answers are read from
    the distances its fair draw measured, not worked out again. ``on_drawn``/``on_made(done, total)``:
    after each skill is drawn, after each note is made."""
    measured: dict[str, list[tuple[misconceptions.WrongAnswer, float]]] = {}
    problems = registry.generate(families, chips, max_variants, seed, on_drawn, measured)
    return skill_notes(problems, rules, registry.by_id, max_variants, on_made, measured)
