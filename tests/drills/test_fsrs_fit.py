"""`drill fsrs-fit`: FSRS parameters fitted with fsrs-rs, scored on held-out reviews against the
defaults, kept only when they predict better; the quiz then schedules with them and `drill stats`
says so. The learner is simulated by bench/bench_fsrs_fit.py (true parameters unlike the defaults)."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench import bench_fsrs_fit
from drills import fsrs_fit
from drills.cli import cli
from drills.quiz.session import QuizOptions, Session
from drills.quiz.terminal import QuizIO
from drills.store.repository import ReviewRecord, Store
from tests.conftest import bound


def _store_with(path: Path, histories) -> None:
    """The simulated histories as quiz reviews of skills ``s<k>``, at their own times."""
    with Store.open(path) as store:
        rows = sorted((when, k, rating) for k, history in enumerate(histories) for when, rating in history)
        for when, k, rating in rows:
            store.record_review(ReviewRecord(
                skill=f"ridge:s{k}", family="ridge", chip=None, problem_id="p", params={}, prompt="?", expected={},
                given="1", given_value=1.0, correct=rating > 1, rating=rating, relative_error=None,
                seconds_taken=20.0, hints=0), now=when)


@pytest.fixture(scope="module")
def learner() -> list:
    return bench_fsrs_fit.simulate(1)


def test_rmse_bins_is_srs_benchmarks_binned_calibration_error() -> None:
    """Bins by interval, review number and lapses; the mean prediction against the mean outcome in each,
    weighted by the bins' sizes: two bins, (0.9 vs 1/2 right) x 2 and (0.2 vs 0 right) x 1."""
    reviews = [fsrs_fit.HeldOut((), 3, True, 2, 0), fsrs_fit.HeldOut((), 3, False, 2, 0),
               fsrs_fit.HeldOut((), 40, False, 5, 2)]
    got = fsrs_fit.rmse_bins([0.9, 0.9, 0.2], reviews)
    assert got == pytest.approx(math.sqrt((2 * 0.4 ** 2 + 1 * 0.2 ** 2) / 3))
    assert fsrs_fit.log_loss([0.9, 0.9, 0.2], [True, False, False]) == pytest.approx(
        -(math.log(0.9) + math.log(0.1) + math.log(0.8)) / 3)


def test_the_held_out_reviews_come_after_one_moment_and_are_the_same_for_both(learner) -> None:
    cut = fsrs_fit.cutoff(learner)
    times = sorted(w for h in learner for w, _ in h)
    assert sum(t < cut for t in times) == math.floor(len(times) * fsrs_fit.TRAIN_SHARE)
    scored = fsrs_fit.held_out(learner, cut)
    items, _ = fsrs_fit.training_items(learner, cut)
    assert scored and all(r.days >= 1 for r in scored)
    assert len(items) == sum(max(0, fsrs_fit.split_at(h, cut) - 1) for h in learner)
    # the predictions match the engine's own memory states with py-fsrs's forgetting curve
    p = fsrs_fit.predictions(fsrs_fit.DEFAULT_PARAMETERS, scored[:5])
    assert all(0 < x < 1 for x in p)


def test_a_simulated_learner_gets_parameters_that_predict_better_and_the_quiz_uses_them(tmp_path: Path,
                                                                                       learner) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with(path, learner)
    result = CliRunner().invoke(cli, ["fsrs-fit", "--store", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["reviews"] == sum(len(h) for h in learner) and data["kept"] is True
    assert data["fitted"]["log_loss"] < data["default"]["log_loss"]
    assert set(data["default"]) == set(data["fitted"]) == {"log_loss", "rmse_bins"}
    assert len(data["parameters"]) == 21 and data["parameters"] != list(fsrs_fit.DEFAULT_PARAMETERS)
    with Store.open(path) as store:
        assert list(store.scheduler().parameters) == pytest.approx(data["parameters"])
        session = Session(store, QuizOptions(), QuizIO(False, False, stdin=io.StringIO(), stdout=io.StringIO()))
        assert list(session.scheduler.parameters) == pytest.approx(data["parameters"])  # the quiz schedules with them
        kept = store.fsrs_parameters()
        assert kept is not None and kept["reviews"] == data["reviews"]
    stats = CliRunner().invoke(cli, ["stats", "--store", str(path)]).output
    assert f"scheduler: FSRS parameters fitted to your {data['reviews']} reviews, in use since" in stats
    text = CliRunner().invoke(cli, ["fsrs-fit", "--store", str(path)]).output
    assert "default parameters: log loss" in text and "In use: parameters fitted to" in text


def test_a_fit_that_does_not_predict_better_is_not_kept(tmp_path: Path, learner, monkeypatch) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with(path, learner)
    worse = (100.0,) * 4 + tuple(fsrs_fit.DEFAULT_PARAMETERS[4:])  # an engine that returns a bad fit
    monkeypatch.setattr(fsrs_fit.engine.FSRS, "compute_parameters", lambda self, items: list(worse), raising=False)
    data = json.loads(CliRunner().invoke(cli, ["fsrs-fit", "--store", str(path), "--json"]).output)
    assert data["fitted"]["log_loss"] > data["default"]["log_loss"] and data["kept"] is False
    assert data["parameters"] == pytest.approx(list(fsrs_fit.DEFAULT_PARAMETERS))
    with Store.open(path) as store:
        assert store.fsrs_parameters() is None


def test_too_few_reviews_says_how_many_more_and_keeps_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    t0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
    _store_with(path, [[(t0 + timedelta(days=d), 3) for d in (0, 2, 5)] for _ in range(10)])
    result = CliRunner().invoke(cli, ["fsrs-fit", "--store", str(path), "--json"])
    data = json.loads(result.output)
    assert data["fitted"] is None and data["kept"] is False and data["reviews"] == 30
    # 10 training reviews (the second of each skill; the third, after the cut, is held out)
    assert data["more_needed"] == fsrs_fit.MIN_TRAINING_ITEMS - 10 and data["held_out"] == 10
    assert data["default"]["log_loss"] is not None
    text = CliRunner().invoke(cli, ["fsrs-fit", "--store", str(path)]).output
    assert f"needs {data['more_needed']} more reviews a day or more after the one before" in text
    assert "In use: FSRS's default parameters" in text
    empty = CliRunner().invoke(cli, ["fsrs-fit", "--store", str(tmp_path / "new.sqlite3"), "--json"])
    assert empty.exit_code == 0 and json.loads(empty.output)["more_needed"] == fsrs_fit.MIN_TRAINING_ITEMS


def test_the_quiz_never_imports_the_optimizer() -> None:
    code = ("import sys; from drills import cmd_quiz, progress; from drills.quiz import session as quiz; "
            "print([m for m in ('fsrs_rs_python', 'drills.fsrs_fit', 'zstandard') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=bound(60))
    assert out.stdout.strip() == "[]", out.stderr
