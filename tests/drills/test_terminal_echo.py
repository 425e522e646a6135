"""A learner's own control characters are shown as escapes, never echoed raw: `drill check` (text and
``--json``) and the quiz (its messages and its ``--json`` lines). `drill check` is one-shot: it never
says "Try again."; the quiz, which asks again, does."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from drills.cli import cli
from drills.quiz.session import QuizOptions
from generator.problems import generate
from tests.drills.quizkit import planned_problems, right_answer, script

ATTACK = "87.2us\x1b]0;PWN\x07\x1b[31mRED\x9b2J\u202e"


def raw_controls(text: str) -> list[str]:
    """The characters a terminal acts on (other than the newline) found raw in ``text``."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


def a_problem_id() -> str:
    return generate.Registry().generate(["floor"], count=1, seed=3)[0].id


def test_drill_check_shows_the_answers_controls_as_escapes_and_does_not_say_try_again():
    result = CliRunner().invoke(cli, ["check", "--problem-id", a_problem_id(), "--answer", ATTACK])
    assert result.exit_code == 0, result.output
    assert raw_controls(result.output) == [], repr(result.output)
    assert "not graded" in result.output and "\\x1b" in result.output, result.output
    assert "Try again" not in result.output


def test_drill_check_json_escapes_c1_and_bidi_and_keeps_the_value():
    result = CliRunner().invoke(cli, ["check", "--problem-id", a_problem_id(), "--answer", ATTACK, "--json"])
    assert result.exit_code == 0, result.output
    assert raw_controls(result.output) == [], repr(result.output)
    data = json.loads(result.output)
    assert data["given"] == ATTACK and data["status"] != "graded"
    assert "Try again" not in data["feedback"]


def test_the_quiz_shows_a_typed_escape_as_its_escape_and_asks_again(tmp_path: Path):
    store = tmp_path / "s.db"
    options = QuizOptions(families=("floor",), chips=("v5e",), count=1, new_per_day=1, seed=5)
    (first,) = planned_problems(store, options)
    args = ["quiz", "--store", str(store), "--family", "floor", "--chip", "v5e", "--count", "1", "--new", "1",
            "--seed", "5"]
    result = CliRunner().invoke(cli, args, input=script([ATTACK, right_answer(first)]))
    assert result.exit_code == 0, result.output
    assert raw_controls(result.stdout) == [], repr(result.stdout)
    assert "\\x1b" in result.stdout and "Try again." in result.stdout
    args[2] = str(tmp_path / "json.db")
    as_json = CliRunner().invoke(cli, [*args, "--json"], input=script([ATTACK, right_answer(first)]))
    assert as_json.exit_code == 0, as_json.output
    assert raw_controls(as_json.output) == [], repr(as_json.output)
    assert "\\x1b" in as_json.stderr and "Try again." in as_json.stderr  # the messages, on stderr


def test_the_quizs_json_lines_escape_what_json_dumps_leaves_raw():
    import io

    from drills.quiz.terminal import QuizIO

    out = io.StringIO()
    QuizIO(False, True, stdin=io.StringIO(), stdout=out, stderr=io.StringIO()).emit({"given": ATTACK})
    assert raw_controls(out.getvalue()) == [], repr(out.getvalue())
    assert json.loads(out.getvalue()) == {"given": ATTACK}
