"""Grading bands -> FSRS ratings: the rules in drills/grading.py, and that they are monotonic."""

from __future__ import annotations

import pytest
from fsrs import Rating
from hypothesis import given
from hypothesis import strategies as st

from drills.grading import grade, grade_choice, grade_number, relative_error, within_factor
from generator.problem import Answer, Problem


class Bands:
    def __init__(self, good_rel: float = 0.1, easy_rel: float = 0.02, easy_seconds: float = 20.0,
                 hard_factor: float = 2.0):
        self.good_rel, self.easy_rel, self.easy_seconds, self.hard_factor = (
            good_rel, easy_rel, easy_seconds, hard_factor)


BANDS = Bands()


@pytest.mark.parametrize("given_value, seconds, rating", [
    (100.0, 5.0, Rating.Easy),     # exact and quick
    (101.0, 5.0, Rating.Easy),     # 1% off, quick
    (101.0, 60.0, Rating.Good),    # 1% off, slow
    (105.0, 5.0, Rating.Good),     # 5%: inside Good, outside Easy
    (110.0, 5.0, Rating.Good),     # the Good edge
    (150.0, 5.0, Rating.Hard),     # within 2x
    (200.0, 5.0, Rating.Hard),     # the 2x edge
    (50.0, 5.0, Rating.Hard),      # within 2x below
    (201.0, 5.0, Rating.Again),
    (49.0, 5.0, Rating.Again),
    (-100.0, 5.0, Rating.Again),   # wrong sign
    (0.0, 5.0, Rating.Again),
    (100.0, None, Rating.Good),    # time unknown: never Easy
])
def test_number_bands(given_value: float, seconds: float | None, rating: Rating) -> None:
    assert grade_number(given_value, 100.0, 0.1, BANDS, seconds).rating == rating


def test_problem_tolerance_overrides_family_good_band() -> None:
    assert grade_number(115.0, 100.0, 0.2, BANDS, 60).rating == Rating.Good
    assert grade_number(115.0, 100.0, 0.0, BANDS, 60).rating == Rating.Hard  # falls back to good_rel 0.1


def test_correct_and_relative_error() -> None:
    g = grade_number(150.0, 100.0, 0.1, BANDS, 5)
    assert g.correct and g.relative_error == pytest.approx(0.5)
    wrong = grade_number(1000.0, 100.0, 0.1, BANDS, 5)
    assert not wrong.correct and wrong.to_dict() == {"rating": "Again", "correct": False, "relative_error": 9.0}


def test_choices() -> None:
    assert grade_choice("compute", "compute", BANDS, 3).rating == Rating.Easy
    assert grade_choice("compute", "compute", BANDS, 300).rating == Rating.Good
    assert grade_choice("memory", "compute", BANDS, 3).rating == Rating.Again


def test_grade_dispatches_on_the_answer_kind() -> None:
    number = Problem("f", "f/s", "f/s#1", "p", Answer(value=2.0, unit="s"), 0.1, ("x",))
    choice = Problem("f", "f/c", "f/c#1", "p", Answer(choice="memory", choices=("compute", "memory")), 0, ("x",))
    assert grade(number, 2.0, BANDS, 1).rating == Rating.Easy
    assert grade(choice, "compute", BANDS, 1).rating == Rating.Again


def test_helpers() -> None:
    assert relative_error(0.0, 0.0) == 0.0
    assert relative_error(1.0, 0.0) == float("inf")
    assert within_factor(3.0, 1.5, 2.0) and not within_factor(3.1, 1.5, 2.0)
    assert within_factor(-2.0, -1.0, 2.0) and not within_factor(2.0, -1.0, 2.0)


ORDER = {Rating.Again: 0, Rating.Hard: 1, Rating.Good: 2, Rating.Easy: 3}
positive = st.floats(min_value=1e-9, max_value=1e15, allow_nan=False)


@given(positive, st.floats(min_value=0, max_value=10), st.floats(min_value=0, max_value=10),
       st.floats(min_value=0, max_value=120))
def test_rating_never_improves_as_the_error_grows(expected: float, a: float, b: float, seconds: float) -> None:
    near, far = sorted((a, b))
    r_near = grade_number(expected * (1 + near), expected, 0.1, BANDS, seconds).rating
    r_far = grade_number(expected * (1 + far), expected, 0.1, BANDS, seconds).rating
    assert ORDER[r_near] >= ORDER[r_far]


@given(positive, st.floats(min_value=0, max_value=0.1), st.floats(min_value=0, max_value=120),
       st.floats(min_value=0, max_value=120))
def test_rating_never_improves_as_time_grows(expected: float, error: float, t1: float, t2: float) -> None:
    fast, slow = sorted((t1, t2))
    r_fast = grade_number(expected * (1 + error), expected, 0.1, BANDS, fast).rating
    r_slow = grade_number(expected * (1 + error), expected, 0.1, BANDS, slow).rating
    assert ORDER[r_fast] >= ORDER[r_slow]


def test_a_hint_caps_the_rating_at_good() -> None:
    number = Problem("f", "f/s", "f/s#1", "p", Answer(value=2.0, unit="s"), 0.1, ("x",))
    assert grade(number, 2.0, BANDS, 1, hinted=True).rating == Rating.Good
    assert grade(number, 3.0, BANDS, 1, hinted=True).rating == Rating.Hard
    choice = Problem("f", "f/c", "f/c#1", "p", Answer(choice="memory", choices=("compute", "memory")), 0, ("x",))
    assert grade(choice, "memory", BANDS, 1, hinted=True).rating == Rating.Good
