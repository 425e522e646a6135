"""Grading: is an answer right, and how did the right answer come? The one place the rules live.

Correct means within the problem's tolerance; a right answer is rated Easy, Good or Hard by how
tight, how quick and how hinted it was; a wrong one is Again.
Details: docs/internals.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from fsrs import Rating

from generator.problems.problem import Problem

MAX_HINTS = 3

# The best rating still reachable after n hints.
_HINT_CAP = {0: Rating.Easy, 1: Rating.Good, 2: Rating.Hard, 3: Rating.Hard}


class Bands(Protocol):
    """The grading bands of a family (``generator.problems.specs.GradingBands``), read only: the frozen
    dataclass the specs give satisfies it (a plain attribute here would ask for a settable one)."""

    @property
    def good_rel(self) -> float: ...  # relative error accepted as right (the family's tolerance)
    @property
    def easy_rel(self) -> float: ...  # relative error for Easy (with easy_seconds)
    @property
    def easy_seconds(self) -> float: ...  # answered at most this fast (seconds) for Easy
    @property
    def hard_seconds(self) -> float: ...  # a right answer slower than this (seconds) is Hard


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer. ``relative_error`` is None for choices."""

    rating: Rating
    relative_error: float | None
    note: str = ""  # e.g. right with another edition's figure: which figures, which sources

    @property
    def correct(self) -> bool:
        return self.rating != Rating.Again

    def to_dict(self) -> dict[str, Any]:
        return {"rating": self.rating.name, "correct": self.correct, "relative_error": self.relative_error,
                "note": self.note}


def relative_error(given: float, expected: float) -> float:
    """``|given - expected| / |expected|``; 0 or infinity when expected is 0."""
    if expected == 0:
        return 0.0 if given == 0 else math.inf
    return abs(given - expected) / abs(expected)


def hint_cap(hints: int) -> Rating:
    """The best rating a right answer can get after ``hints`` hints (0..MAX_HINTS)."""
    return _HINT_CAP[max(0, min(MAX_HINTS, int(hints)))]


def rate_right(tight: bool, seconds_taken: float | None, bands: Bands, hints: int = 0) -> Rating:
    """The rating of a right answer: Easy, Good or Hard (the bands: docs/internals.md)."""
    quick = seconds_taken is not None and seconds_taken <= bands.easy_seconds
    slow = seconds_taken is not None and seconds_taken > bands.hard_seconds
    if slow:
        rating = Rating.Hard
    elif tight and quick:
        rating = Rating.Easy
    else:
        rating = Rating.Good
    return min(rating, hint_cap(hints))


def grade_number(given: float, expected: float, tolerance: float, bands: Bands,
                 seconds_taken: float | None, hints: int = 0) -> Grade:
    """Rate a numeric answer; ``tolerance`` is the problem's (0 -> the family's ``good_rel``)."""
    good_rel = tolerance if tolerance > 0 else bands.good_rel
    error = relative_error(given, expected)
    if error <= good_rel:
        rating = rate_right(error <= min(bands.easy_rel, good_rel), seconds_taken, bands, hints)
    else:
        rating = Rating.Again
    return Grade(rating, error if math.isfinite(error) else None)


def grade_choice(given: str, expected: str, bands: Bands, seconds_taken: float | None,
                 hints: int = 0) -> Grade:
    """Rate a choice (verdict, yes/no, a term): wrong is Again; right is rated by time and hints."""
    if given != expected:
        return Grade(Rating.Again, None)
    return Grade(rate_right(True, seconds_taken, bands, hints), None)


def grade(problem: Problem, given: float | str, bands: Bands, seconds_taken: float | None,
          hints: int = 0, mistakes: Sequence[float] = ()) -> Grade:
    """Rate a parsed answer to ``problem`` (a number in the answer's unit, or a choice).

    A number outside the tolerance of the key but within it of one of ``problem.also_right``
    (the answer worked with another edition's published figure) is right, rated against that
    answer, with its note; the relative error stays the one against the key. Not when it is
    closer to one of ``mistakes`` (the values named wrong methods give) than to both the key and
    that answer: then it is that mistake (a GiB slip lands within 1% of the other PCIe edition).
    """
    if problem.answer.is_choice:
        return grade_choice(str(given), str(problem.answer.choice), bands, seconds_taken, hints)
    key = problem.answer.number
    verdict = grade_number(float(given), key, problem.tolerance, bands, seconds_taken, hints)
    if verdict.correct:
        return verdict
    nearest_mistake = min((abs(float(given) - m) for m in mistakes), default=math.inf)
    for other in problem.also_right:
        alt = grade_number(float(given), float(other["value"]), problem.tolerance, bands, seconds_taken, hints)
        if alt.correct and abs(float(given) - float(other["value"])) <= nearest_mistake:
            return Grade(alt.rating, verdict.relative_error, str(other.get("note", "")))
    return verdict


def rating_word(rating: Rating) -> str:
    """How the quiz names a rating to the learner."""
    return {Rating.Again: "wrong", Rating.Hard: "right, with effort", Rating.Good: "right",
            Rating.Easy: "right, quick"}[rating]
