"""Reaping child processes in tests, so no pipe is left to the garbage collector (pytest fails on the
ResourceWarning that would raise: pyproject's filterwarnings has no exception for it)."""

from __future__ import annotations

import subprocess
from typing import Any


def reap(proc: subprocess.Popen[Any], timeout: float | None = 30) -> None:
    """Kill ``proc`` if it still runs, wait for it, and close its pipes. Unlike ``Popen.__exit__`` this
    does not raise when stdin still holds bytes a dead child can never read (a BrokenPipeError)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except BrokenPipeError:  # buffered input for a dead child: the file is closed all the same
                pass
