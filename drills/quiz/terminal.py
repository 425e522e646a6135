"""How the quiz talks: a terminal session, or plain lines when stdin is not a terminal.

Interactive (stdin and stdout are terminals): an ``answer>`` prompt with line
editing and colour. Plain (piped or scripted): one answer is read per line, and
the problem, feedback and worked solutions are printed as plain lines with no
prompt. With ``--json`` stdout carries only one JSON object per answered
problem; everything else goes to stderr.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from typing import IO, Any

import click

from generator.problems.problem import Problem
from generator.io.termsafe import json_visible, visible_text
from generator.model.units import json_ready


# Lone surrogates: bytes that did not decode (errors="surrogateescape") or were never text.
_UNDECODABLE = re.compile("[\ud800-\udfff]")


MAX_LINE_CHARS = 4096  # an answer line; a longer one (or an endless stream with no newline) ends the quiz


class EndOfInput(Exception):
    """stdin ended (end of a script, or Ctrl-D)."""


class InputTooLong(Exception):
    """A line of input longer than ``MAX_LINE_CHARS``: read no further (it may never end)."""


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


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (OSError, ValueError, AttributeError):  # a closed or replaced stream
        return False


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
        interactive = _isatty(sys.stdin) and _isatty(sys.stdout) and not as_json
        if hasattr(sys.stdin, "reconfigure"):
            # Bytes that are not text reach ask() as surrogates (refused there), not as a
            # UnicodeDecodeError that would end the quiz.
            sys.stdin.reconfigure(errors="surrogateescape")
        return cls(interactive, as_json)

    def say(self, line: str = "", fg: str | None = None) -> None:
        """One message (its lines kept), each control in it shown as its escape (``generator.io.termsafe``): a
        learner's answer quoted back, or a parse error quoting it, never acts on the terminal."""
        line = visible_text(line)
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
        line = self.stdin.readline(MAX_LINE_CHARS + 1)  # bounded: a stream with no newline never ends
        if not line:
            raise EndOfInput
        if len(line) > MAX_LINE_CHARS:
            raise InputTooLong
        return line

    def problem(self, index: int, total: int, title: str, problem: Problem) -> None:
        self.say("")
        self.say(f"[{index}/{total}] {title}", fg="cyan")
        for line in problem.prompt.splitlines():
            self.say(line)
        if problem.answer.is_choice and not all(c in problem.prompt for c in problem.answer.choices):
            self.say(f"({' / '.join(problem.answer.choices)})")

    def result(self, problem: Problem, outcome: Any, due: datetime | None, now: datetime) -> None:
        """The verdict (``drills.quiz.assess.Outcome.feedback``), when the skill is next due, and the
        worked solution after anything but a clean right answer."""
        when = f"; next review {until(due, now)}" if due else ""
        lines = outcome.feedback.split("\n")
        self.say(lines[0] + when, fg="green" if outcome.correct else "red")
        for line in lines[1:]:
            self.say(line, fg="yellow")
        if outcome.grade.rating.name in ("Again", "Hard"):
            self.solution(problem)

    def solution(self, problem: Problem) -> None:
        self.say("worked solution:")
        for step in problem.solution:
            self.say(f"  {step}")

    def emit(self, obj: dict[str, Any]) -> None:
        if self.as_json:
            click.echo(json_visible(json.dumps(json_ready(obj), ensure_ascii=False, allow_nan=False)), file=self.stdout)
