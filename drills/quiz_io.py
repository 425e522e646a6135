"""How the quiz talks: a terminal session, or plain lines when stdin is not a terminal.

Interactive (stdin and stdout are terminals): an ``answer>`` prompt with line
editing and colour. Plain (piped or scripted): one answer is read per line, and
the problem, feedback and worked solutions are printed as plain lines with no
prompt. With ``--json`` stdout carries only one JSON object per answered
problem; everything else goes to stderr.
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import datetime
from typing import IO, Any

import click

from generator.problem import Problem
from generator.units import si


# Lone surrogates: bytes that did not decode (errors="surrogateescape") or were never text.
_UNDECODABLE = re.compile("[\ud800-\udfff]")


class EndOfInput(Exception):
    """stdin ended (end of a script, or Ctrl-D)."""


def describe_answer(problem: Problem, value: float | str) -> str:
    """A value in the problem's answer unit, printed the way the course prints it (87.2 µs)."""
    if problem.answer.is_choice:
        return str(value)
    number = float(value)
    if problem.answer.unit:
        return si(number, problem.answer.unit)
    return f"{number:.4g}"


def percent(fraction: float) -> str:
    """0.5 -> "50%", 0.012 -> "1.2%", 0.00018 -> "0.018%": enough digits to tell a miss from exact."""
    value = fraction * 100
    if value == 0 or value >= 10:
        return f"{value:.0f}%"
    return f"{value:.2g}%"


def until(moment: datetime, now: datetime) -> str:
    """``in 10 min``, ``in 3 h``, ``in 2 days``, or ``now``."""
    seconds = (moment - now).total_seconds()
    if seconds <= 0:
        return "now"
    if seconds < 3600:
        return f"in {max(1, round(seconds / 60))} min"
    if seconds < 2 * 86400:
        return f"in {round(seconds / 3600)} h"
    return f"in {round(seconds / 86400)} days"


class QuizIO:
    """Reading answers and printing feedback, for a terminal or a script."""

    def __init__(self, interactive: bool, as_json: bool, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, stderr: IO[str] | None = None):
        self.interactive, self.as_json = interactive, as_json
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.text_out = self.stderr if as_json else self.stdout
        self._at_prompt = False
        if interactive:
            try:
                import readline  # noqa: F401  (line editing for input())
            except ImportError:  # pragma: no cover - platforms without readline
                pass

    @classmethod
    def for_terminal(cls, as_json: bool) -> "QuizIO":
        interactive = sys.stdin.isatty() and sys.stdout.isatty() and not as_json
        if hasattr(sys.stdin, "reconfigure"):
            # Bytes that are not text reach ask() as surrogates (refused there), not as a
            # UnicodeDecodeError that would end the quiz.
            sys.stdin.reconfigure(errors="surrogateescape")
        return cls(interactive, as_json)

    def say(self, line: str = "", fg: str | None = None) -> None:
        click.echo(click.style(line, fg=fg) if (fg and self.interactive) else line, file=self.text_out)

    def end_prompt_line(self) -> None:
        """After Ctrl-C or Ctrl-D at the prompt, start the next message on a fresh line."""
        if self.interactive and self._at_prompt:
            self.say("")

    def ask(self, prompt: str) -> str:
        while True:
            line = self._read_line(prompt)
            if not _UNDECODABLE.search(line):
                return line
            self.say("can not read that line: it is not valid text in this terminal's encoding. "
                     "Try again (? hint, s skip, q quit).")

    def _read_line(self, prompt: str) -> str:
        if self.interactive:
            self._at_prompt = True  # stays set if Ctrl-C or Ctrl-D ends the input
            try:
                line = input(prompt)
            except EOFError:
                raise EndOfInput from None
            self._at_prompt = False
            return line
        line = self.stdin.readline()
        if not line:
            raise EndOfInput
        return line

    def problem(self, index: int, total: int, title: str, problem: Problem) -> None:
        self.say("")
        self.say(f"[{index}/{total}] {title}", fg="cyan")
        for line in problem.prompt.splitlines():
            self.say(line)
        if problem.answer.is_choice and not all(c in problem.prompt for c in problem.answer.choices):
            self.say(f"({' / '.join(problem.answer.choices)})")

    def result(self, problem: Problem, value: float | str, verdict: Any, due: datetime | None,
               now: datetime) -> None:
        from drills.quiz import rating_word

        expected = describe_answer(problem, problem.answer.choice if problem.answer.is_choice
                                   else problem.answer.value)  # type: ignore[arg-type]
        off = ""
        if verdict.relative_error is not None and math.isfinite(verdict.relative_error):
            off = f" ({percent(verdict.relative_error)} off)"
        when = f"; next review {until(due, now)}" if due else ""
        word = rating_word(verdict.rating)
        self.say(f"{word} ({verdict.rating.name}): expected {expected}, you said "
                 f"{describe_answer(problem, value)}{off}{when}",
                 fg="green" if verdict.correct else "red")
        if verdict.rating.name in ("Again", "Hard"):
            self.say("worked solution:")
            for step in problem.solution:
                self.say(f"  {step}")

    def emit(self, obj: dict[str, Any]) -> None:
        if self.as_json:
            click.echo(json.dumps(obj, ensure_ascii=False), file=self.stdout)
