"""Nothing lost, with real processes: Ctrl-C, end of input, SIGKILL mid-quiz, two quizzes at once,
and a store file that is not a store (refused, never overwritten)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pexpect
import pytest
from fsrs import Card, Rating, Scheduler

from drills.quiz.session import QuizOptions, teaching_order
from drills.store.repository import ReviewRecord, Store
from generator.problems import generate
from tests.drills.quizkit import DRILL, drill_env, planned_problems, right_answer, script, wrong_answer
from tests.procs import reap
from tests.conftest import bound

pytestmark = pytest.mark.slow

V5E = ("v5e",)


def quiz_args(store: Path, count: int, seed: int, *extra: str) -> list[str]:
    return ["quiz", "--store", str(store), "--chip", "v5e", "--count", str(count), "--new", str(count),
            "--seed", str(seed), *extra]


def integrity_ok(path: Path) -> bool:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_ctrl_c_on_a_terminal_keeps_answered_reviews_and_exits_130(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    problems = planned_problems(store, QuizOptions(chips=V5E, count=5, new_per_day=5, seed=1))
    child = pexpect.spawn(DRILL[0], quiz_args(store, 5, 1), env=drill_env(), encoding="utf-8", timeout=bound(30))
    for problem in problems[:2]:
        child.expect_exact("answer> ")
        child.sendline(right_answer(problem))
    child.expect_exact("[3/5]")
    child.expect_exact("answer> ")
    child.sendintr()
    child.expect_exact("Interrupted: 2 reviews saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    with Store.open(store) as s:
        assert [r["problem_id"] for r in s.reviews()] == [p.id for p in problems[:2]]


def test_terminal_offers_cram_when_nothing_is_due_and_ctrl_d_ends_cleanly(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    (problem,) = planned_problems(store, QuizOptions(chips=V5E, count=1, new_per_day=1, seed=8))
    first = subprocess.run(DRILL + quiz_args(store, 1, 8), input=script([right_answer(problem)]),
                           capture_output=True, text=True, env=drill_env(), timeout=bound(60))
    assert first.returncode == 0
    child = pexpect.spawn(DRILL[0], ["quiz", "--store", str(store), "--chip", "v5e", "--new", "0", "--count", "2"],
                          env=drill_env(), encoding="utf-8", timeout=bound(30))
    child.expect_exact("Nothing is due now; next review in")
    child.expect_exact("[c]ram, [n]ew skills (2 more beyond today's 0), or [q]uit? ")  # --new 0: past the limit
    child.sendline("c")
    child.expect_exact("cram, schedule untouched")
    child.expect_exact("[1/2]")
    child.expect_exact("answer> ")
    child.sendeof()
    child.expect_exact("End of input: 0 reviews saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    with Store.open(store) as s:
        assert s.count_reviews() == 1


def test_sigint_in_a_pipe_exits_130_too(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    problems = planned_problems(store, QuizOptions(chips=V5E, count=4, new_per_day=4, seed=2))
    proc = subprocess.Popen(DRILL + quiz_args(store, 4, 2, "--json"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=drill_env())
    proc.stdin.write(right_answer(problems[0]) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["problem_id"] == problems[0].id  # committed, then printed
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=bound(30))
    assert proc.returncode == 130
    assert "Interrupted: 1 review saved" in err
    with Store.open(store) as s:
        assert s.count_reviews() == 1


def test_end_of_input_mid_quiz_keeps_answered_reviews_and_exits_0(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    problems = planned_problems(store, QuizOptions(chips=V5E, count=6, new_per_day=6, seed=3))
    proc = subprocess.run(DRILL + quiz_args(store, 6, 3), input=script([right_answer(p) for p in problems[:3]]),
                          capture_output=True, text=True, env=drill_env(), timeout=bound(60))
    assert proc.returncode == 0
    assert "End of input: 3 reviews saved" in proc.stdout
    with Store.open(store) as s:
        assert s.count_reviews() == 3


def test_sigkill_mid_quiz_leaves_every_answered_review(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    problems = planned_problems(store, QuizOptions(chips=V5E, count=8, new_per_day=8, seed=4))
    proc = subprocess.Popen(DRILL + quiz_args(store, 8, 4, "--json"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=drill_env())
    for problem in problems[:3]:
        proc.stdin.write(right_answer(problem) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["problem_id"] == problem.id
    proc.kill()  # SIGKILL while it waits for the fourth answer
    reap(proc)
    assert proc.returncode == -signal.SIGKILL
    assert integrity_ok(store)
    with Store.open(store) as s:
        assert [r["problem_id"] for r in s.reviews()] == [p.id for p in problems[:3]]
        assert len(s.cards()) == 3


@pytest.mark.parametrize("delay_s", [0.05, 0.15, 0.3, 0.6])
def test_sigkill_at_any_moment_loses_nothing_printed(tmp_path: Path, delay_s: float) -> None:
    """Answers stream in as fast as the quiz takes them; a kill lands wherever it lands."""
    store = tmp_path / "s.db"
    problems = planned_problems(store, QuizOptions(chips=V5E, count=30, new_per_day=30, seed=5))
    proc = subprocess.Popen(DRILL + quiz_args(store, 30, 5, "--json"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=drill_env())
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        proc.stdin.write(script([right_answer(p) for p in problems]))
        proc.stdin.flush()
    except BrokenPipeError:  # pragma: no cover - it finished before we wrote everything
        pass
    time.sleep(delay_s)
    proc.kill()
    proc.wait(timeout=bound(30))
    reader.join(timeout=bound(30))
    reap(proc)
    confirmed = [json.loads(line)["problem_id"] for line in printed if line.strip()]
    assert integrity_ok(store) if store.exists() else not confirmed
    if not store.exists():
        return
    with Store.open(store) as s:
        saved = [r["problem_id"] for r in s.reviews()]
    # every review reported to the learner is in the store, in order; at most one more was
    # committed in the instant between its commit and its line being printed
    assert saved[: len(confirmed)] == confirmed
    assert len(saved) - len(confirmed) in (0, 1)
    assert saved == [p.id for p in problems[: len(saved)]]


def test_two_quizzes_on_one_store_record_everything(tmp_path: Path) -> None:
    """Both quizzes review the same due skills at the same time: no lock errors, no lost FSRS update."""
    store = tmp_path / "s.db"
    skills = teaching_order(generate.skills(chips=list(V5E)))[:12]
    past = datetime.now(timezone.utc) - timedelta(days=2)
    with Store.open(store) as s:
        for skill in skills:
            s.record_review(ReviewRecord(
                skill=skill.id, family=skill.family, chip=skill.chip, problem_id=skill.id, params={}, prompt="",
                expected={}, given="", given_value=None, correct=False, rating=int(Rating.Again),
                relative_error=None, seconds_taken=None, session="seed"), Scheduler(), past)
    options = QuizOptions(chips=V5E, count=12, new_per_day=0, seed=6)
    problems = planned_problems(store, options)
    assert {p.skill for p in problems} == {s.id for s in skills}  # all due, in both quizzes
    answers = script([right_answer(p) if i % 3 else wrong_answer(p) for i, p in enumerate(problems)])
    args = ["quiz", "--store", str(store), "--chip", "v5e", "--count", "12", "--new", "0", "--seed", "6", "--json"]
    procs = [subprocess.Popen(DRILL + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=drill_env()) for _ in range(2)]
    header_lines = []
    for proc in procs:  # both have planned (all 12 due) before either answers
        header_lines.append("")
        while "[1/12]" not in header_lines[-1]:
            header_lines[-1] = proc.stderr.readline()
            assert header_lines[-1], "quiz ended before its first problem"
    results = [None, None]

    def feed(i: int) -> None:
        results[i] = procs[i].communicate(answers, timeout=bound(120))

    threads = [threading.Thread(target=feed, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err
        assert "locked" not in err and "Traceback" not in err
        assert len(out.splitlines()) == 12, err
    with Store.open(store) as s:
        rows = s.reviews()
        cards = s.cards()
    assert len(rows) == 12 + 24
    for skill in skills:
        logged = [r for r in rows if r["skill"] == skill.id and not r["cram"]]
        assert len(logged) == 3
        assert cards[skill.id].reviews == 3  # each read-modify-write saw the one before it
        last = max(r["reviewed_at"] for r in logged)
        assert cards[skill.id].card.last_review == datetime.fromisoformat(last)
        # replaying the log through FSRS gives the stored memory state: no update was lost
        replayed = Card(card_id=cards[skill.id].card.card_id, due=datetime.fromisoformat(logged[0]["reviewed_at"]))
        for r in sorted(logged, key=lambda r: r["reviewed_at"]):
            replayed, _ = Scheduler().review_card(replayed, Rating(r["rating"]),
                                                  review_datetime=datetime.fromisoformat(r["reviewed_at"]))
        stored = cards[skill.id].card
        assert (stored.state, stored.step) == (replayed.state, replayed.step)
        assert stored.stability == pytest.approx(replayed.stability)
        assert stored.difficulty == pytest.approx(replayed.difficulty)


@pytest.mark.parametrize("content", [
    b"these are my notes, not a database\n" * 50,
    bytes(range(256)) * 16,
    b"SQLite format 3\x00" + b"\x00" * 84 + b"\xde\xad\xbe\xef" * 1000,  # a header, then garbage
])
@pytest.mark.parametrize("command", [["quiz", "--count", "1"], ["stats"]])
def test_a_bad_store_file_is_refused_and_never_touched(tmp_path: Path, content: bytes, command: list[str]) -> None:
    path = tmp_path / "drill.sqlite3"
    path.write_bytes(content)
    before = set(tmp_path.iterdir())
    proc = subprocess.run(DRILL + [command[0], "--store", str(path), *command[1:]], input="1\n",
                          capture_output=True, text=True, env=drill_env(), timeout=bound(60))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(path) in lines[0] and "Move it aside" in lines[0]
    assert path.read_bytes() == content
    assert set(tmp_path.iterdir()) == before


def test_store_from_drill_store_env(tmp_path: Path) -> None:
    path = tmp_path / "from-env.sqlite3"
    env = {**drill_env(), "DRILL_STORE": str(path)}
    missing = subprocess.run(DRILL + ["stats", "--json"], capture_output=True, text=True, env=env, timeout=bound(60))
    assert missing.returncode == 1 and f"no store at {path}" in missing.stderr  # a read creates nothing
    assert not path.exists()
    quiz = subprocess.run(DRILL + ["quiz", "--count", "1"], input="q\n", capture_output=True, text=True,
                          env=env, timeout=bound(60))
    assert quiz.returncode == 0, quiz.stderr
    proc = subprocess.run(DRILL + ["stats", "--json"], capture_output=True, text=True, env=env, timeout=bound(60))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["store"] == str(path) and path.exists()
    assert os.path.getsize(path) > 0
