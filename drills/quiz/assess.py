"""One answer to one problem: read it, grade it, name the mistake, say it. The quiz and `drill check` share this.

``assess(problem, text, ...)`` returns an ``Outcome``; only a ``graded`` outcome is ever recorded.
Details: docs/internals.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from drills.quiz import grading
from generator.problems import misconceptions
from generator.model import answers
from generator.problems.families import mistakes as named_mistakes
from generator.problems.problem import Problem
from generator.model.units import fmt

GRADED, NEEDS_UNIT, UNREADABLE, WRONG_KIND = "graded", "needs-unit", "unreadable", "wrong-kind"
STATUSES = (GRADED, NEEDS_UNIT, UNREADABLE, WRONG_KIND)

# "..., in µs?" / "in FLOPs per byte": the prompt names the unit a bare number is read in. One pattern
# finds every such phrase in one pass; ``_STATED_ORDER`` is the order they are tried in when a prompt has two.
_STATED = re.compile(r"\bin (µs|us|microseconds|ms|milliseconds|ns|nanoseconds|seconds|bytes)\b|\bFLOPs? per byte\b")
_STATED_WORDS = {"µs": "us", "us": "us", "microseconds": "us", "ms": "ms", "milliseconds": "ms", "ns": "ns",
                 "nanoseconds": "ns", "seconds": "s", "bytes": "B", "": "FLOP/byte"}
_STATED_ORDER = ("us", "ms", "ns", "s", "B", "FLOP/byte")


def stated_unit(problem: Problem) -> str | None:
    """The unit the prompt asks the answer in (a bare number is read in it), or None."""
    if problem.answer.is_choice or problem.answer.unit == "":
        return None
    named = {_STATED_WORDS[word] for word in _STATED.findall(problem.prompt)}
    for unit in _STATED_ORDER:
        if unit in named:
            try:
                if answers.parse_unit(unit).dims == answers.parse_unit(problem.answer.unit).dims:
                    return unit
            except answers.AnswerError:
                continue
    return None


def expected_text(problem: Problem) -> str:
    a = problem.answer
    return str(a.choice) if a.is_choice else fmt(a.number, a.unit)


def given_text(problem: Problem, value: float | str) -> str:
    return str(value) if problem.answer.is_choice else fmt(float(value), problem.answer.unit)


def percent(fraction: float) -> str:
    """0.5 -> "50%", 0.012 -> "1.2%", 0.00018 -> "0.018%": enough digits to tell a miss from exact."""
    value = fraction * 100
    if value == 0 or value >= 10:
        return f"{value:.0f}%"
    return f"{value:.2g}%"


@dataclass(frozen=True)
class Outcome:
    """The verdict on one answer, as ``drill check --json`` prints it (these keys are an interface)."""

    problem: Problem
    given: str
    status: str
    given_value: float | str | None = None
    grade: grading.Grade | None = None
    matches: tuple[misconceptions.WrongAnswer, ...] = ()  # named mistakes the answer matches, first is best
    reason: str = ""  # why it was not graded

    @property
    def misconception(self) -> misconceptions.WrongAnswer | None:
        return self.matches[0] if self.matches else None

    @property
    def correct(self) -> bool | None:
        return None if self.grade is None else self.grade.correct

    @property
    def feedback(self) -> str:
        """The line(s) the quiz prints for this answer."""
        if self.status != GRADED:
            return f"not graded: {self.reason}."
        assert self.grade is not None and self.given_value is not None  # a graded outcome has both
        off = ""
        if self.grade.relative_error is not None:
            off = f" ({percent(self.grade.relative_error)} off)"
        text = (f"{grading.rating_word(self.grade.rating)} ({self.grade.rating.name}): expected "
                f"{expected_text(self.problem)}, you said {given_text(self.problem, self.given_value)}{off}")
        if self.grade.note:
            text += f"\n{self.grade.note}"
        for i, m in enumerate(self.matches):
            lead = "That is what you get with the classic mistake" if i == 0 else "Or the classic mistake"
            # the value that method gives, so a learner sees how near their number is to it
            gives = m.value if isinstance(m.value, str) else fmt(float(m.value), self.problem.answer.unit)
            text += f"\n{lead} '{m.misconception.id}' ({m.misconception.name}), which gives {gives}: {m.step}."
        if self.matches:
            text += f"\n{self.matches[0].misconception.explanation}"
        return text

    def to_dict(self) -> dict[str, Any]:
        a = self.problem.answer
        return {
            "problem_id": self.problem.id,
            "expected": a.choice if a.is_choice else a.value,
            "unit": a.unit,
            "expected_display": expected_text(self.problem),
            "given": self.given,
            "given_value": self.given_value,
            "status": self.status,
            "correct": self.correct,
            "rating": None if self.grade is None else self.grade.rating.name,
            "relative_error": None if self.grade is None else self.grade.relative_error,
            "note": "" if self.grade is None else self.grade.note,
            "misconception": None if self.misconception is None else self.misconception.misconception.id,
            "misconceptions": [m.misconception.id for m in self.matches],
            "feedback": self.feedback,
        }


def read(problem: Problem, text: str, bare_unit: str | None = None,
         right: Callable[[float], bool] | None = None) -> float | str:
    """The answer as the problem's kind (a choice, or a number in the answer's unit); AnswerError if not.

    A plain number is read in the prompt's stated unit, else in ``bare_unit`` (`drill check` passes
    the card's unit), else not at all (``NeedsUnitError``). ``right(value)``: the grader's verdict, so a
    plain number right only in the base unit asks for its unit (``answers.parse_number``)."""
    if problem.answer.is_choice:
        prompt = problem.prompt.lower()
        shown = all(c.lower() in prompt for c in problem.answer.choices)
        return answers.parse_choice(text, problem.answer.choices, shown)
    return answers.parse_number(text, problem.answer.unit, stated_unit(problem) or bare_unit,
                                problem.answer.number, right)


def assess(problem: Problem, text: str, bands: grading.Bands, seconds_taken: float | None = None,
           hints: int = 0, bare_unit: str | None = None) -> Outcome:
    """Read, grade and diagnose one answer. Never raises for bad answers: the status says.

    ``bare_unit``: the unit a plain number is read in where the prompt states none (see ``read``)."""
    mistakes = () if problem.answer.is_choice or not problem.also_right else tuple(
        float(w.value) for w in named_mistakes.wrong_answers(problem) if not isinstance(w.value, str))

    def right(value: float) -> bool:
        return grading.grade(problem, value, bands, None, 0, mistakes).correct

    try:
        value = read(problem, text, bare_unit, right)
    except answers.NeedsUnitError as exc:
        return Outcome(problem, text, NEEDS_UNIT, reason=str(exc))
    except answers.WrongDimensionError as exc:
        return Outcome(problem, text, WRONG_KIND, reason=str(exc))
    except answers.AnswerError as exc:
        return Outcome(problem, text, UNREADABLE, reason=f"can not read that: {exc}")
    verdict = grading.grade(problem, value, bands, seconds_taken, hints, mistakes)
    matches = () if verdict.correct else tuple(named_mistakes.diagnose_all(problem, value))
    return Outcome(problem, text, GRADED, value, verdict, matches)
