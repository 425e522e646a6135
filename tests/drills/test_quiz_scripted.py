"""drill quiz driven by a script (stdin not a terminal): plan, grade, record, schedule, --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsrs import Rating, Scheduler

from drills.cli import cli
from drills.quiz.session import QuizOptions, Session, draw_problems, plan_session, select_skills, teaching_order
from drills.quiz.terminal import QuizIO
from drills.store.repository import ReviewRecord, Store
from generator.problems import generate
from tests.drills.quizkit import DRILL, drill_env, planned_problems, right_answer, script, wrong_answer
from tests.conftest import bound

V5E = ("v5e",)


def run_quiz(store: Path, lines: list[str], *args: str):
    return CliRunner().invoke(cli, ["quiz", "--store", str(store), *args], input=script(lines))


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_right_and_wrong_answers_are_graded_recorded_and_scheduled(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(chips=V5E, count=4, new_per_day=4, seed=7)
    problems = planned_problems(store, options)
    assert len(problems) == 4
    lines = [right_answer(problems[0]), wrong_answer(problems[1]), right_answer(problems[2]),
             wrong_answer(problems[3])]
    result = run_quiz(store, lines, "--chip", "v5e", "--count", "4", "--new", "4", "--seed", "7", "--json")
    assert result.exit_code == 0, result.output
    out = json_lines(result.stdout)
    assert [o["problem_id"] for o in out] == [p.id for p in problems]
    assert [o["correct"] for o in out] == [True, False, True, False]
    assert out[1]["rating"] == "Again" and out[0]["rating"] in ("Good", "Easy")
    for o, p in zip(out, problems):
        assert {"skill", "problem_id", "prompt", "expected", "given", "correct", "rating", "relative_error"} <= set(o)
        assert o["skill"] == p.skill and o["prompt"] == p.prompt
        assert o["expected"] == (p.answer.choice if p.answer.is_choice else p.answer.value)
        if not p.answer.is_choice:
            assert o["relative_error"] == (pytest.approx(0.0) if o["correct"] else pytest.approx(9.0))
    with Store.open(store) as s:
        rows = s.reviews()
        cards = s.cards()
    assert [r["correct"] for r in rows] == [1, 0, 1, 0]
    assert {r["skill"] for r in rows} == set(cards)
    assert all(card.due > datetime.now(timezone.utc) for card in cards.values())
    assert "Done: 4 reviews saved (2 right)" in result.stderr


def test_plain_mode_prints_problems_feedback_and_solutions(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(chips=V5E, count=2, new_per_day=2, seed=3)
    first, second = planned_problems(store, options)
    result = run_quiz(store, [wrong_answer(first), right_answer(second)],
                      "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "3")
    assert result.exit_code == 0
    text = result.stdout
    assert "[1/2]" in text and first.prompt in text and second.prompt in text
    assert "wrong (Again)" in text and "worked solution:" in text and first.solution[-1] in text
    assert "\x1b[" not in text  # plain lines, no colour codes


def test_hint_skip_wrong_dimension_and_unreadable_answers(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(families=("floor",), chips=V5E, count=2, new_per_day=2, seed=5)
    first, second = planned_problems(store, options)
    assert first.answer.unit == "s"
    lines = ["?", "16 GiB", "9**9**9", "", "11.8", right_answer(first), "s"]
    result = run_quiz(store, lines, "--family", "floor", "--chip", "v5e", "--count", "2", "--new", "2",
                      "--seed", "5")
    assert result.exit_code == 0
    text = result.stdout
    assert f"hint 1/3: {first.hint}" in text
    assert "not graded: add a unit: 11.8 what? e.g. 11.8 us" in text
    assert "not graded: expected a time" in text
    assert "can not read that: exponent" in text
    assert "skipped" in text
    with Store.open(store) as s:
        rows = s.reviews()
    assert len(rows) == 1 and rows[0]["problem_id"] == first.id and rows[0]["correct"] == 1


def test_answers_with_units_and_working(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(families=("floor",), chips=V5E, count=2, new_per_day=2, seed=11)
    first, second = planned_problems(store, options)
    lines = [f"{first.answer.value * 1e6!r} us", f"({second.answer.value * 1e3!r}) ms"]
    result = run_quiz(store, lines, "--family", "floor", "--chip", "v5e", "--count", "2", "--new", "2",
                      "--seed", "11", "--json")
    assert [o["correct"] for o in json_lines(result.stdout)] == [True, True]


def test_quit_and_end_of_input_keep_answered_reviews(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(chips=V5E, count=5, new_per_day=5, seed=2)
    problems = planned_problems(store, options)
    args = ("--chip", "v5e", "--count", "5", "--new", "5", "--seed", "2")
    quit_run = run_quiz(store, [right_answer(problems[0]), "q"], *args)
    assert quit_run.exit_code == 0 and "Stopped: 1 review saved" in quit_run.stdout
    eof_run = run_quiz(tmp_path / "t.db", [right_answer(problems[0]), right_answer(problems[1])], *args)
    assert eof_run.exit_code == 0 and "End of input: 2 reviews saved" in eof_run.stdout


def test_new_skills_are_limited_per_day_and_nothing_due_says_so(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(chips=V5E, count=10, new_per_day=3, seed=1)
    problems = planned_problems(store, options)
    assert len(problems) == 3
    first = run_quiz(store, [right_answer(p) for p in problems], "--chip", "v5e", "--new", "3", "--seed", "1")
    assert first.exit_code == 0 and "3 problems (0 due, 3 new)" in first.stdout
    again = run_quiz(store, [], "--chip", "v5e", "--new", "3")
    assert again.exit_code == 0
    assert "Nothing is due now; next review in" in again.stdout
    assert "--cram" in again.stdout and "--new N" in again.stdout


def test_cram_practises_without_touching_the_schedule(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    options = QuizOptions(chips=V5E, count=2, new_per_day=2, seed=4)
    problems = planned_problems(store, options)
    run_quiz(store, [right_answer(p) for p in problems], "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "4")
    with Store.open(store) as s:
        before = {k: v.card.to_dict() for k, v in s.cards().items()}
    cram = QuizOptions(chips=V5E, count=3, cram=True, seed=9)
    cram_problems = planned_problems(store, cram)
    result = run_quiz(store, [wrong_answer(p) for p in cram_problems], "--chip", "v5e", "--count", "3",
                      "--cram", "--seed", "9", "--json")
    assert result.exit_code == 0
    out = json_lines(result.stdout)
    assert len(out) == 3 and all(o["cram"] and o["next_due"] is None for o in out)
    with Store.open(store) as s:
        assert {k: v.card.to_dict() for k, v in s.cards().items()} == before
        assert s.count_reviews() == 5


def test_due_skills_come_first_most_overdue_first(tmp_path: Path) -> None:
    skills = generate.skills(chips=["v5e"])
    t0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
    scheduler = Scheduler(enable_fuzzing=False)
    order = teaching_order(skills)
    with Store.open(tmp_path / "s.db") as store:
        for minutes, skill in ((30, order[5]), (0, order[7]), (10, order[6])):
            store.record_review(ReviewRecord(
                skill=skill.id, family=skill.family, chip=skill.chip, problem_id=skill.id, params={},
                prompt="", expected={}, given="", given_value=None, correct=False, rating=int(Rating.Again),
                relative_error=None, seconds_taken=None), scheduler, t0 + timedelta(minutes=minutes))
        plan = plan_session(store, skills, QuizOptions(count=5, new_per_day=2), t0 + timedelta(days=1))
    assert plan.skill_ids[:3] == (order[7].id, order[6].id, order[5].id)
    assert plan.skill_ids[3:] == (order[0].id, order[1].id)  # then new ones, in teaching order
    assert (plan.due, plan.new) == (3, 2)


def test_teaching_order_takes_families_in_turn() -> None:
    ordered = teaching_order(generate.skills(chips=["v5e"]))
    first = [s.family for s in ordered[:4]]
    assert len(set(first)) == 4


def test_session_times_answers_with_the_clock(tmp_path: Path) -> None:
    import io

    store_path = tmp_path / "s.db"
    options = QuizOptions(families=("ridge",), chips=V5E, count=1, new_per_day=1, seed=0)
    (problem,) = planned_problems(store_path, options)
    ticks = iter([100.0, 112.5])
    out = io.StringIO()
    with Store.open(store_path) as store:
        quiz_io = QuizIO(False, True, stdin=io.StringIO(right_answer(problem) + "\n"), stdout=out,
                         stderr=io.StringIO())
        assert Session(store, options, quiz_io, clock=lambda: next(ticks)).run() == 0
        (row,) = store.reviews()
    assert row["seconds_taken"] == 12.5
    assert json.loads(out.getvalue())["seconds_taken"] == 12.5


def test_usage_errors(tmp_path: Path) -> None:
    bad_family = CliRunner().invoke(cli, ["quiz", "--store", str(tmp_path / "s.db"), "--family", "nope"])
    assert bad_family.exit_code == 2 and "unknown family 'nope'" in bad_family.output
    bad_chip = CliRunner().invoke(cli, ["quiz", "--store", str(tmp_path / "s.db"), "--chip", "v99"])
    assert bad_chip.exit_code == 2 and "unknown chip" in bad_chip.output


# -- real processes ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_twenty_problem_scripted_quiz_records_twenty_reviews(tmp_path: Path) -> None:
    store = tmp_path / "fresh.sqlite3"
    options = QuizOptions(count=20, new_per_day=20, seed=2026)
    problems = planned_problems(store, options)
    assert len(problems) == 20
    proc = subprocess.run(
        DRILL + ["quiz", "--store", str(store), "--count", "20", "--new", "20", "--seed", "2026", "--json"],
        input=script([right_answer(p) for p in problems]), capture_output=True, text=True, env=drill_env(),
        timeout=bound(120))
    assert proc.returncode == 0, proc.stderr
    out = json_lines(proc.stdout)
    assert len(out) == 20 and all(o["correct"] for o in out)
    assert len({o["family"] for o in out}) >= 5  # a mixed session
    stats = subprocess.run(DRILL + ["stats", "--store", str(store), "--json"], capture_output=True, text=True,
                           env=drill_env(), timeout=bound(60))
    numbers = json.loads(stats.stdout)
    assert numbers["reviews"] == 20 and numbers["skills_seen"] == 20
    with Store.open(store) as s:
        cards = s.cards()
    assert len(cards) == 20 and all(row.reviews == 1 and row.due > row.introduced_at for row in cards.values())


@pytest.mark.slow
def test_quiz_imports_neither_jax_nor_numpy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from drills.cli import cli\n"
        f"rv = cli.main(args=['quiz', '--store', {str(tmp_path / 's.db')!r}, '--count', '3', '--new', '3'],"
        " standalone_mode=False)\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'numpy'))\n"
        "print('HEAVY', heavy, 'quiz' in sys.modules.get('drills.cmd_quiz').__name__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input="", capture_output=True, text=True,
                          env=drill_env(), timeout=bound(60))
    assert proc.returncode == 0, proc.stderr
    assert "[1/3]" in proc.stdout  # it really ran a quiz
    assert "HEAVY [] True" in proc.stdout


def test_feedback_formatting() -> None:
    from drills.quiz.assess import percent
    from drills.quiz.terminal import until

    assert [percent(x) for x in (0, 0.00018, 0.012, 0.5, 9.0)] == ["0%", "0.018%", "1.2%", "50%", "900%"]
    t = datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert until(t - timedelta(seconds=1), t) == "now"
    assert until(t + timedelta(minutes=10), t) == "in 10 min"
    assert until(t + timedelta(hours=5), t) == "in 5 h"
    assert until(t + timedelta(days=9), t) == "in 9 days"


# -- two chips, one seen; the clock that ran ahead; odd time zones ------------------------

def test_two_chips_are_both_introduced_from_the_first_day(tmp_path: Path) -> None:
    """`--chip v5e --chip v6e` at 5 new a day: both chips, and several families, on day 1 (and each day)."""
    options = QuizOptions(chips=("v5e", "v6e"), count=10, new_per_day=5)
    skills = select_skills(options)
    with Store.open(tmp_path / "s.db") as store:
        plan = plan_session(store, skills, options, datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc))
    chips = [generate.registry().skill(sid).chip for sid in plan.skill_ids]
    families = {generate.registry().skill(sid).family for sid in plan.skill_ids}
    assert len(plan.skill_ids) == 5 and {"v5e", "v6e"} <= set(chips) and len(families) >= 4
    ordered = teaching_order(skills)
    assert all(a.chip != b.chip for a, b in zip(ordered[:20], ordered[1:20]))  # the chips alternate
    assert all(a.family != b.family for a, b in zip(ordered[:20], ordered[1:20]))  # and so do the families
    assert sorted(s.id for s in ordered) == sorted(s.id for s in skills)  # nothing lost or repeated


def _quiz(store: Store, options: QuizOptions, lines: list[str], now) -> tuple[int, str]:
    import io

    out = io.StringIO()
    quiz_io = QuizIO(False, False, stdin=io.StringIO("".join(x + "\n" for x in lines)), stdout=out,
                     stderr=io.StringIO())
    status = Session(store, options, quiz_io, now=now).run()
    return status, out.getvalue()


def _history(path: Path) -> list[tuple]:
    """Every review's and card's times, to see that nothing was rewritten."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return (conn.execute("SELECT id, reviewed_at, due_after, card_before FROM reviews ORDER BY id").fetchall()
                + conn.execute("SELECT skill, card, due, updated_at FROM cards ORDER BY skill").fetchall())
    finally:
        conn.close()


def test_reviews_made_under_a_clock_a_year_ahead_are_scheduled_from_and_never_re_dated(tmp_path: Path) -> None:
    """Like `faketime '+365d' drill quiz` then `drill quiz` / `drill stats` on the real clock: the real
    clock is behind the store, so the store's time (the newest review's) is used and nothing is rewritten."""
    from drills.stats import compute_stats

    real = datetime.now(timezone.utc)
    ahead = real + timedelta(days=365)
    options = QuizOptions(families=("floor",), chips=V5E, count=5, new_per_day=5, seed=1)
    path = tmp_path / "s.db"
    with Store.open(path) as store:
        problems = list(draw_problems(plan_session(store, select_skills(options), options, ahead).skill_ids, 1))
        status, _ = _quiz(store, options, [wrong_answer(p) for p in problems], lambda: ahead)
        assert status == 0 and store.count_reviews() == 5
    history = _history(path)
    real = datetime.now(timezone.utc)
    with Store.open(path, readonly=True) as store:
        stats = compute_stats(store, real)
    assert stats["reviews_today"] == 5 and stats["future_reviews"] == 5 and stats["streak_days"] == 1
    # wrong answers are due again in minutes from when they were made
    assert datetime.fromisoformat(stats["next_due"]) < ahead + timedelta(hours=1)
    shown = CliRunner().invoke(cli, ["stats", "--store", str(path)])
    assert shown.exit_code == 0 and "the clock" in shown.stderr and "is behind the newest review" in shown.stderr
    assert "5 reviews are dated after it" in shown.stderr and "nothing in the store was changed" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1 and "(5 today" in shown.stdout
    later = QuizOptions(families=("floor",), chips=V5E, count=5, new_per_day=0, seed=1)
    with Store.open(path) as store:
        status, out = _quiz(store, later, [], lambda: real)  # the real clock: the first quiz after
        first = out.splitlines()[0]
        assert "is behind the newest review" in first and "the clock is wrong" in first
        assert "next review in 365 days" not in out and ("next review in" in out and " min" in out), out
        status, out = _quiz(store, later, ["q"], lambda: real + timedelta(hours=1))
        assert "is behind the newest review" in out  # still behind: still said, still nothing written
    assert _history(path) == history


def test_a_clock_behind_rewrites_no_review_and_dates_new_ones_after_the_newest(tmp_path: Path) -> None:
    """A dead RTC battery: the clock reads 2001 after reviews made today."""
    real = datetime.now(timezone.utc)
    behind = datetime(2001, 1, 1, tzinfo=timezone.utc)
    options = QuizOptions(families=("floor",), chips=V5E, count=3, new_per_day=3, seed=1)
    path = tmp_path / "s.db"
    with Store.open(path) as store:
        problems = list(draw_problems(plan_session(store, select_skills(options), options, real).skill_ids, 1))
        _quiz(store, options, [wrong_answer(p) for p in problems], lambda: real)
    history = _history(path)
    with Store.open(path) as store:
        status, out = _quiz(store, options, ["q"], lambda: behind)
        assert status == 0 and "the clock (it reads 2001-01-01 00:00 UTC) is behind the newest review" in out, out
    assert _history(path) == history  # quit at once: nothing written
    more = QuizOptions(families=("floor",), chips=V5E, count=4, new_per_day=4, seed=2)
    with Store.open(path) as store:
        plan = plan_session(store, select_skills(more), more, store.store_time(behind))
        problems = list(draw_problems(plan.skill_ids, 2))
        status, _ = _quiz(store, more, [wrong_answer(p) for p in problems], lambda: behind)
        rows = store.reviews()
    assert _history(path)[:3] == history[:3]  # the old reviews are as they were
    times = [r["reviewed_at"] for r in rows]
    assert len(rows) > 3 and times == sorted(times) and min(times[3:]) >= max(times[:3])


def test_a_review_of_a_card_reviewed_in_the_future_starts_from_now(tmp_path: Path) -> None:
    real = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
    scheduler = Scheduler(enable_fuzzing=False)
    record = ReviewRecord(skill="ridge:v5e:bf16", family="ridge", chip="v5e", problem_id="p", params={},
                          prompt="", expected={}, given="", given_value=None, correct=True, rating=int(Rating.Good),
                          relative_error=None, seconds_taken=None)
    with Store.open(tmp_path / "s.db") as store:
        store.record_review(record, scheduler, real + timedelta(days=365))
        card = store.record_review(record, scheduler, real)
        assert card.last_review == real and real < card.due < real + timedelta(days=30)


@pytest.mark.parametrize("zone", ["UTC-24", "UTC+24"])
def test_time_zones_a_whole_day_off_utc_work_in_quiz_and_stats(tmp_path: Path, zone: str, monkeypatch) -> None:
    """glibc accepts TZ=UTC-24 (an offset of +24 h), which datetime.timezone refuses with ValueError."""
    import time as time_module

    from click.testing import CliRunner

    from drills.cli import cli
    from drills.quiz.session import start_of_day

    monkeypatch.setenv("TZ", zone)
    time_module.tzset()
    try:
        offset = time_module.localtime().tm_gmtoff
        assert abs(offset) == 86400  # the platform really gives a whole day
        now = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
        midnight = start_of_day(now)
        assert midnight <= now < midnight + timedelta(days=1) and midnight.tzinfo is not None
        store = tmp_path / "s.db"
        quiz = CliRunner().invoke(cli, ["quiz", "--store", str(store), "--family", "ridge", "--chip", "v5e",
                                        "--count", "1", "--seed", "1"], input="1\n")
        assert quiz.exit_code == 0 and "Traceback" not in quiz.output, quiz.output
        for args in (["stats"], ["stats", "--json"]):
            result = CliRunner().invoke(cli, [*args, "--store", str(store)])
            assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        assert json.loads(result.stdout)["reviews_today"] == 1
    finally:
        monkeypatch.delenv("TZ")
        time_module.tzset()


def _faketime() -> None:
    # .ci/run installs Debian's faketime; in CI its absence fails rather than skips.
    if __import__("shutil").which("faketime") is None:
        if os.environ.get("CI"):
            pytest.fail("faketime is not installed (.ci/run installs it)")
        pytest.skip("faketime is not installed; the injected-clock tests above cover the rule")


def test_a_quiz_under_faketime_a_year_ahead_then_the_real_clock(tmp_path: Path) -> None:
    _faketime()
    store = tmp_path / "s.db"
    args = ["quiz", "--store", str(store), "--family", "floor", "--chip", "v5e", "--count", "3", "--seed", "1"]
    ahead = subprocess.run(["faketime", "-f", "+365d", *DRILL, *args], input="1us\n1us\n1us\n", capture_output=True,
                           text=True, env=drill_env(), timeout=bound(120))
    assert ahead.returncode == 0, ahead.stderr
    history = _history(store)
    real = subprocess.run([*DRILL, *args, "--new", "0"], input="", capture_output=True, text=True,
                          env=drill_env(), timeout=bound(120))
    assert real.returncode == 0 and "is behind the newest review" in real.stdout
    assert "next review in 365 days" not in real.stdout and "next review in" in real.stdout
    assert _history(store) == history


def test_a_quiz_under_a_clock_set_back_to_2001_rewrites_no_history(tmp_path: Path) -> None:
    """`echo q | faketime '2001-01-01 00:00:00' drill quiz` after five reviews today."""
    _faketime()
    store = tmp_path / "s.db"
    first = subprocess.run([*DRILL, "quiz", "--family", "bound", "--count", "5", "--new", "5", "--seed", "1",
                            "--store", str(store)], input="compute\n" * 5, capture_output=True, text=True,
                           env=drill_env(), timeout=120)
    assert first.returncode == 0, first.stderr
    history = _history(store)
    behind = subprocess.run(["faketime", "2001-01-01 00:00:00", *DRILL, "quiz", "--family", "bound", "--count", "1",
                             "--store", str(store)], input="q\n", capture_output=True, text=True, env=drill_env(),
                            timeout=120)
    assert behind.returncode == 0, behind.stderr
    assert "2001-01-01 00:00 UTC) is behind the newest review" in behind.stdout, behind.stdout
    assert "the clock is wrong" in behind.stdout and "ran ahead" not in behind.stdout
    assert _history(store) == history
    stats = subprocess.run([*DRILL, "stats", "--json", "--store", str(store)], capture_output=True, text=True,
                           env=drill_env(), timeout=120)
    numbers = json.loads(stats.stdout)
    assert numbers["reviews_today"] == 5 and numbers["streak_days"] == 1
