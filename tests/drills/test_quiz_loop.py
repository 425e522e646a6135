"""The quiz loop a student expects: progressive hints, a skip that teaches, undo, the --new banner,
statuses and misconceptions in --json, and Can-you items ticked by a scripted quiz of right answers."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from drills.cli import cli
from drills.quiz.session import QuizOptions, hints
from drills.store.repository import Store
from generator.problems import generate
from tests.drills.quizkit import planned_problems, right_answer, script


def run(store: Path, lines: list[str], *args: str):
    return CliRunner().invoke(cli, ["quiz", "--store", str(store), *args], input=script(lines))


def test_three_progressive_hints_each_lowering_the_best_rating(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    args = ("--family", "floor", "--chip", "v5e", "--count", "1", "--new", "1", "--seed", "4")
    (problem,) = planned_problems(store, QuizOptions(families=("floor",), chips=("v5e",), count=1, new_per_day=1,
                                                     seed=4))
    steps = hints(problem)
    assert len(steps) == 3 and steps[0] == problem.hint and "retrieved" in steps[1] and "first step" in steps[2]
    result = run(store, ["?", "?", "?", "?", right_answer(problem)], *args, "--json")
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert "hint 1/3" in err and "(best rating now: Good)" in err and "hint 3/3" in err
    assert "no more hints" in err
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["correct"] is True and line["rating"] == "Hard" and line["status"] == "graded"


def test_skip_shows_the_answer_and_solution_and_records_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    (problem,) = planned_problems(store, QuizOptions(families=("ridge",), chips=("v5e",), count=1, new_per_day=1,
                                                     seed=1))
    result = run(store, ["s"], "--family", "ridge", "--chip", "v5e", "--count", "1", "--new", "1", "--seed", "1")
    assert result.exit_code == 0
    assert "the skill stays new and will be offered again" in result.output
    expected = str(problem.answer.choice) if problem.answer.is_choice else None
    assert "The answer: " in result.output and (expected is None or expected in result.output)
    assert "worked solution:" in result.output and problem.solution[0] in result.output
    with Store.open(store) as s:
        assert s.count_reviews() == 0 and not s.cards()


def test_undo_removes_the_review_and_restores_the_card(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    args = ("--family", "ridge", "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "3")
    first, second = planned_problems(store, QuizOptions(families=("ridge",), chips=("v5e",), count=2,
                                                        new_per_day=2, seed=3))
    # Answer the first right (its skill is introduced), then undo it from the second question: the first
    # question is asked again (skipped here), then the second, answered right.
    result = run(store, [right_answer(first), "u", "s", right_answer(second)], *args)
    assert result.exit_code == 0, result.output
    # ridge on one chip has one set of numbers: it is asked again as it was
    assert "undone" in result.output and "asked again as it was" in result.output
    after_undo = result.output.split("undone:", 1)[1]
    assert after_undo.index(first.prompt.splitlines()[0]) < after_undo.index("skipped")  # asked again
    assert "[1/2]" in after_undo and after_undo.index("[1/2]") < after_undo.index("[2/2]")
    with Store.open(store) as s:
        rows = s.reviews()
        cards = s.cards()
    assert [r["problem_id"] for r in rows] == [second.id]
    assert set(cards) == {second.skill}  # the undone first review introduced its skill: new again
    # A second session: review the same skill twice, undo the second: the card is as after the first.
    store2 = tmp_path / "t.db"
    one = run(store2, [right_answer(first)], *args[:-4], "--count", "1", "--new", "1", "--seed", "3")
    assert one.exit_code == 0
    with Store.open(store2) as s:
        before = s.cards()[first.skill].card.to_dict()
    again = CliRunner().invoke(cli, ["quiz", "--store", str(store2), "--family", "ridge", "--chip", "v5e",
                                     "--cram", "--count", "1", "--seed", "3"], input=script([right_answer(first)]))
    assert again.exit_code == 0
    with Store.open(store2) as s:
        assert s.cards()[first.skill].card.to_dict() == before  # cram leaves the card alone


def test_undo_restores_a_reviewed_card_exactly(tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    from drills.store.repository import ReviewRecord

    def review(rating: int) -> ReviewRecord:
        return ReviewRecord(skill="ridge:v5e:bf16", family="ridge", chip="v5e", problem_id="p", params={},
                            prompt="?", expected={"value": 1.0, "unit": "FLOP/byte"}, given="1", given_value=1.0,
                            correct=rating > 1, rating=rating, relative_error=0.0, seconds_taken=5.0, session="x")

    with Store.open(tmp_path / "u.db") as s:
        s.record_review(review(3), now=datetime.now(timezone.utc) - timedelta(days=3))
        before = s.cards()["ridge:v5e:bf16"]
        s.record_review(review(1))
        assert s.cards()["ridge:v5e:bf16"].card.to_dict() != before.card.to_dict()
        assert s.undo_review(s.last_review_id("x"))
        after = s.cards()["ridge:v5e:bf16"]
        assert after.card.to_dict() == before.card.to_dict() and after.reviews == before.reviews
        assert s.count_reviews() == 1
        assert not s.undo_review(10_000)


def test_the_banner_says_when_new_capped_the_session(tmp_path: Path) -> None:
    result = run(tmp_path / "s.db", ["q"], "--family", "floor", "--count", "10")
    assert ("5 problems, not the --count of 10: nothing else is due, and at most 5 new skills start each day "
            "(--new 5; 5 today, counting this quiz's). To start 5 more now: drill quiz --new 10.") in result.output
    result = run(tmp_path / "t.db", ["q"], "--family", "floor", "--count", "10", "--new", "10")
    assert "new skills start each day" not in result.output


def test_json_lines_carry_status_and_misconception(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    for seed in range(100):  # the first seed whose problem is bf16
        (problem,) = planned_problems(store, QuizOptions(families=("intensity",), chips=("v5e",), count=1,
                                                         new_per_day=1, seed=seed))
        if problem.params["dtype"] == "bf16":
            break
    elements = float(problem.answer.value) * 2  # bf16: counting elements doubles the intensity
    result = run(store, [f"{elements} FLOP/byte"], "--family", "intensity", "--chip", "v5e", "--count", "1",
                 "--new", "1", "--seed", str(seed), "--json")
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["status"] == "graded" and line["correct"] is False
    assert line["misconception"] in ("elements-not-bytes", "forgot-output-write")
    assert "classic mistake" in result.stderr


def test_a_scripted_quiz_of_right_answers_leaves_items_one_and_two_pending_until_a_later_day(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    args = ("--family", "ridge", "--family", "bound", "--chip", "v5e", "--chip", "v6e", "--count", "30",
            "--new", "30", "--seed", "9")
    options = QuizOptions(families=("ridge", "bound"), chips=("v5e", "v6e"), count=30, new_per_day=30, seed=9)
    problems = planned_problems(store, options)
    result = run(store, [right_answer(p) for p in problems], *args)
    assert result.exit_code == 0, result.output
    (tmp_path / "none").mkdir()  # an empty records folder (a missing one is a usage error)
    progress = CliRunner().invoke(cli, ["progress", "--store", str(store), "--bench", str(tmp_path / "none"),
                                        "--json"])
    data = json.loads(progress.output)
    items = {i["number"]: i for i in data["can_you"]}
    assert data["can_you_ticked"] == 0 and not items[1]["by_hand"] and not items[1]["by_quiz"]
    for n, family in ((1, "ridge"), (2, "bound")):  # every answer right, learned today: a later day ticks them
        assert items[n]["missing"] == "" and items[n]["pending"], items[n]
        assert {p["status"] for p in items[n]["pending"]} == {"learned today: recall it on a later day to tick"}
        assert all(p["skill"].startswith(family + ":") for p in items[n]["pending"])


def test_drill_check_grades_without_touching_a_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DRILL_STORE", str(tmp_path / "never.db"))
    problem = generate.generate(["floor"], ["v5e"], 1, seed=0)[0]
    runner = CliRunner()
    right = json.loads(runner.invoke(cli, ["check", "--problem-id", problem.id, "--answer", right_answer(problem),
                                           "--seconds", "5", "--json"]).output)
    assert right["status"] == "graded" and right["correct"] is True and right["rating"] == "Easy"
    assert set(right) >= {"problem_id", "expected", "given", "status", "correct", "rating", "relative_error",
                          "misconception", "feedback"}
    # A bare number is read in the unit the problem's Anki card names, as the card reads it.
    from drills.quiz.assess import stated_unit
    from generator.model.answers import parse_unit
    from generator.export.variants import card_unit
    unit = parse_unit(card_unit(problem, stated_unit(problem)))
    number = repr(problem.answer.value * parse_unit(problem.answer.unit).scale / unit.scale)
    bare = runner.invoke(cli, ["check", "--problem-id", problem.id, "--answer", number, "--json"])
    data = json.loads(bare.output)
    assert bare.exit_code == 0 and data["status"] == "graded" and data["correct"] is True, data
    assert data["given"] == number
    kind = json.loads(runner.invoke(cli, ["check", "--problem-id", problem.id, "--answer", "3 GiB",
                                          "--json"]).output)
    assert kind["status"] == "wrong-kind"
    junk = json.loads(runner.invoke(cli, ["check", "--problem-id", problem.id, "--answer", "__import__('os')",
                                          "--json"]).output)
    assert junk["status"] == "unreadable"
    unknown = runner.invoke(cli, ["check", "--problem-id", "floor:v5e:nope", "--answer", "1 s"])
    assert unknown.exit_code == 2 and "unknown problem id" in unknown.output
    assert not (tmp_path / "never.db").exists()


def test_quiz_help_lists_every_command_and_the_lock_bound() -> None:
    text = " ".join(CliRunner().invoke(cli, ["quiz", "--help"]).output.split())
    for word in ("? hint", "s skip", "u undo", "w the worked solution", "q quit", "again with new numbers",
                 "at most 5 s"):
        assert word in text, word


# -- undo is not a grade laundry; w shows the last worked solution ---------------------

def _json_lines(result) -> list[dict]:
    return [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]


def test_after_an_undo_the_question_comes_back_with_new_numbers(tmp_path: Path) -> None:
    """Wrong, read the worked solution, undo, type the key just read: the numbers changed, so it is not right."""
    from tests.drills.quizkit import wrong_answer

    store = tmp_path / "s.db"
    args = ("--family", "floor", "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "5", "--json")
    first, _ = planned_problems(store, QuizOptions(families=("floor",), chips=("v5e",), count=2, new_per_day=2,
                                                   seed=5))
    # wrong (the worked solution is shown), then undo at the next question, then the key just read
    result = run(store, [wrong_answer(first), "u", right_answer(first), "q"], *args)
    assert result.exit_code == 0, result.output
    wrong, again = _json_lines(result)
    assert wrong["problem_id"] == first.id and not wrong["correct"]
    assert "with new numbers" in result.stderr
    assert again["skill"] == first.skill and again["problem_id"] != first.id and again["prompt"] != first.prompt
    assert not (again["correct"] and again["rating"] in ("Good", "Easy"))  # the copied key is not recall
    with Store.open(store) as s:
        assert [r["problem_id"] for r in s.reviews()] == [again["problem_id"]]


def test_same_numbers_after_a_seen_solution_are_rated_at_most_hard(tmp_path: Path) -> None:
    from tests.drills.quizkit import wrong_answer

    store = tmp_path / "s.db"
    args = ("--family", "ridge", "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "3", "--json")
    first, _ = planned_problems(store, QuizOptions(families=("ridge",), chips=("v5e",), count=2, new_per_day=2,
                                                   seed=3))
    result = run(store, [wrong_answer(first), "u", right_answer(first), "q"], *args)
    assert result.exit_code == 0, result.output
    _, again = _json_lines(result)
    assert again["prompt"] == first.prompt and again["correct"] and again["rating"] == "Hard"
    assert "rated at most Hard" in result.stderr


def test_w_shows_the_worked_solution_of_the_last_question_after_a_quick_right_answer(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    args = ("--family", "floor", "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "2")
    first, second = planned_problems(store, QuizOptions(families=("floor",), chips=("v5e",), count=2,
                                                        new_per_day=2, seed=2))
    result = run(store, ["w", right_answer(first), "w", right_answer(second)], *args)
    assert result.exit_code == 0, result.output
    before, after = result.output.split(f"the last question ({first.id}):", 1)
    assert "no answered question yet" in before and "worked solution:" not in before  # a quick right one shows none
    assert "[2/2]" in before  # w at the second question shows the first one's method, not the second's key
    assert "worked solution:" in after and first.solution[-1] in after
    assert not any(step in after for step in second.solution if step not in first.solution)
