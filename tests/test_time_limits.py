"""The suite's wall-clock limits (tests/conftest.py): ``bound`` scales by DRILL_TEST_TIME_SCALE and never goes
under a minute; ``finishes`` turns a hang into a failure and passes results and errors through."""

from __future__ import annotations

import threading

import pytest

from tests import conftest
from tests.conftest import TIME_SCALE_ENV, bound, finishes


def test_bound_is_at_least_a_minute_and_scales(monkeypatch):
    monkeypatch.delenv(TIME_SCALE_ENV, raising=False)
    assert (bound(), bound(10), bound(120)) == (60, 60, 120)
    monkeypatch.setenv(TIME_SCALE_ENV, "3")
    assert (bound(), bound(10), bound(120)) == (180, 60, 360)
    monkeypatch.setenv(TIME_SCALE_ENV, "0.1")  # a smaller scale never goes under the minute
    assert (bound(), bound(300)) == (60, 60)
    for bad in ("fast", "0", "-2"):
        monkeypatch.setenv(TIME_SCALE_ENV, bad)
        with pytest.raises(pytest.UsageError, match=TIME_SCALE_ENV):
            bound()


def test_finishes_passes_results_and_errors_through_and_fails_a_hang(monkeypatch):
    assert finishes(lambda: 42) == 42
    with pytest.raises(KeyError, match="inner"):
        finishes(lambda: {}["inner"])
    monkeypatch.setattr(conftest, "bound", lambda seconds=60: 0.05)  # a hang, found in 50 ms instead of 60 s
    release = threading.Event()
    try:
        with pytest.raises(pytest.fail.Exception, match="did not finish"):
            finishes(release.wait)
    finally:
        release.set()
