"""drill quiz driven by a script (stdin not a terminal): plan, grade, record, schedule, --json."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsrs import Rating, Scheduler

from drills.cli import cli
from drills.quiz import QuizOptions, Session, plan_session, teaching_order
from drills.quiz_io import QuizIO
from drills.store import ReviewRecord, Store
from generator import generate
from tests.drills.quizkit import DRILL, drill_env, planned_problems, right_answer, script, wrong_answer

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
        timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json_lines(proc.stdout)
    assert len(out) == 20 and all(o["correct"] for o in out)
    assert len({o["family"] for o in out}) >= 5  # a mixed session
    stats = subprocess.run(DRILL + ["stats", "--store", str(store), "--json"], capture_output=True, text=True,
                           env=drill_env(), timeout=60)
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
                          env=drill_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "[1/3]" in proc.stdout  # it really ran a quiz
    assert "HEAVY [] True" in proc.stdout


def test_feedback_formatting() -> None:
    from drills.assess import percent
    from drills.quiz_io import until

    assert [percent(x) for x in (0, 0.00018, 0.012, 0.5, 9.0)] == ["0%", "0.018%", "1.2%", "50%", "900%"]
    t = datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert until(t - timedelta(seconds=1), t) == "now"
    assert until(t + timedelta(minutes=10), t) == "in 10 min"
    assert until(t + timedelta(hours=5), t) == "in 5 h"
    assert until(t + timedelta(days=9), t) == "in 9 days"
