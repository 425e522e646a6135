"""The one error type the tool raises for its user: ``DrillError(message, exit_code)``.

Every error a learner can meet derives from it, so one place reports them all the same way;
``show()`` prints one as one line on stderr. It imports nothing of the project, so generator/,
labs/ and drills/ can all raise it.
Details: docs/internals.md.
"""

from __future__ import annotations

import sys
from typing import TextIO


class DrillError(Exception):
    """An error meant for the user: ``message`` is what they read, ``exit_code`` how the command ends.

    ``exit_code`` is 1 unless given (a class may set its own default as a class attribute)."""

    exit_code: int = 1

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def format_message(self) -> str:
        """The message on one line: every run of white space (newlines included) becomes one space."""
        return " ".join(str(self).split())

    def show(self, file: TextIO | None = None, prog: str = "drill") -> None:
        """Print ``PROG: error: MESSAGE`` as one line on ``file`` (stderr by default)."""
        stream = sys.stderr if file is None else file
        stream.write(f"{prog}: error: {self.format_message()}\n")


class UsageError(DrillError):
    """A value the user gave (a chip, a dtype, a quantity, a count) that the model cannot take as given;
    the message names what it accepts. Exit status 2, as for a usage error; a command shows it as its
    own usage error. Its text is the message itself, also where a subclass keeps ``KeyError`` as a base."""

    exit_code = 2

    def __str__(self) -> str:
        return self.message
