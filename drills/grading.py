"""Grading: how right an answer is, as an FSRS rating. The one place the rules live.

The rules, for a problem with expected value E and an answer G given after T seconds,
using the family's grading bands from the drill specs (``generator.generate.grading_bands``):

- **Again** (wrong): a wrong choice or verdict; or a number outside every band below.
- **Hard** (right, loosely): G within a factor ``hard_factor`` of E, i.e.
  ``E / hard_factor <= G <= E * hard_factor`` (for latency estimates the course's
  "within 2x"), but outside the Good band.
- **Good** (right): relative error ``|G - E| / |E|`` within the problem's tolerance
  (the family's ``good_rel`` when the problem sets none).
- **Easy** (right, tight and quick): relative error within ``easy_rel`` *and*
  answered within ``easy_seconds``. A right choice answered within
  ``easy_seconds`` is Easy too; a right choice answered slower is Good.

A learner who asked for the hint (``?``) gets at most Good: Easy means the
method came unaided. Hard, Good and Easy count as correct; Again does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from fsrs import Rating

from generator.problem import Problem


class Bands(Protocol):
    """The grading bands of a family (``generator.generate.GradingBands``)."""

    good_rel: float  # relative error accepted as right
    easy_rel: float  # relative error for Easy (with easy_seconds)
    easy_seconds: float  # answered at most this fast for Easy
    hard_factor: float  # within this factor of the answer is Hard


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer. ``relative_error`` is None for choices."""

    rating: Rating
    relative_error: float | None

    @property
    def correct(self) -> bool:
        return self.rating != Rating.Again

    def to_dict(self) -> dict[str, Any]:
        return {"rating": self.rating.name, "correct": self.correct, "relative_error": self.relative_error}


def relative_error(given: float, expected: float) -> float:
    """``|given - expected| / |expected|``; 0 or infinity when expected is 0."""
    if expected == 0:
        return 0.0 if given == 0 else math.inf
    return abs(given - expected) / abs(expected)


def within_factor(given: float, expected: float, factor: float) -> bool:
    """True when given lies in [expected / factor, expected * factor] (same sign, non-zero)."""
    if given == 0 or expected == 0 or (given > 0) != (expected > 0):
        return given == expected
    ratio = given / expected
    return 1.0 / factor <= ratio <= factor


def grade_number(given: float, expected: float, tolerance: float, bands: Bands,
                 seconds_taken: float | None) -> Grade:
    """Rate a numeric answer; ``tolerance`` is the problem's Good band (0 -> the family's)."""
    good_rel = tolerance if tolerance > 0 else bands.good_rel
    error = relative_error(given, expected)
    quick = seconds_taken is not None and seconds_taken <= bands.easy_seconds
    if error <= min(bands.easy_rel, good_rel) and quick:
        rating = Rating.Easy
    elif error <= good_rel:
        rating = Rating.Good
    elif within_factor(given, expected, bands.hard_factor):
        rating = Rating.Hard
    else:
        rating = Rating.Again
    return Grade(rating, error if math.isfinite(error) else None)


def grade_choice(given: str, expected: str, bands: Bands, seconds_taken: float | None) -> Grade:
    """Rate a choice (verdict, yes/no): wrong is Again, right is Good, right and quick is Easy."""
    if given != expected:
        return Grade(Rating.Again, None)
    quick = seconds_taken is not None and seconds_taken <= bands.easy_seconds
    return Grade(Rating.Easy if quick else Rating.Good, None)


def grade(problem: Problem, given: float | str, bands: Bands, seconds_taken: float | None,
          hinted: bool = False) -> Grade:
    """Rate a parsed answer to ``problem`` (a number in the answer's unit, or a choice)."""
    if problem.answer.is_choice:
        verdict = grade_choice(str(given), str(problem.answer.choice), bands, seconds_taken)
    else:
        verdict = grade_number(float(given), float(problem.answer.value), problem.tolerance,  # type: ignore[arg-type]
                               bands, seconds_taken)
    if hinted and verdict.rating == Rating.Easy:
        return Grade(Rating.Good, verdict.relative_error)
    return verdict
