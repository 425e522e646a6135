import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_drill(*args: str, input: str | None = None, env: dict | None = None, timeout: float = 120):
    """Run the real `drill` entry point in a fresh process."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "drills.cli", *args], input=input, text=True,
                          capture_output=True, cwd=REPO, env=full_env, timeout=timeout)


def pytest_configure(config):
    """Children start with Ctrl-C live. A suite run as a background job (``pytest &``, CI under ``nohup``)
    inherits SIGINT *ignored*, and an ignored signal stays ignored through ``exec``: every child (``drill``
    under subprocess or pexpect, xdist's workers) would then ignore the SIGINT the Ctrl-C tests send.
    A caught signal is reset to the default at ``exec``, so catching it here (Python's own
    KeyboardInterrupt handler) gives each child the default disposition, whichever test starts it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def invoke_drill(*args: str, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `drill` in this process through click's ``CliRunner`` (no interpreter start-up): the same
    ``drills.cli.main`` the entry point calls, so its one-line errors and exit codes are the real ones.
    Returns what ``run_drill`` returns. Tests of signals, pipes, closed descriptors and the interpreter's
    own exit use ``run_drill``."""
    from click.testing import CliRunner

    from drills.cli import main

    with CliRunner().isolation(input=input, env=env) as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["drill", *args], code, stdout, stderr)


@pytest.fixture
def drill():
    return run_drill


@pytest.fixture(autouse=True)
def learner_records(tmp_path, monkeypatch):
    """Every test gets its own empty learner records folder: no test reads or writes the real
    user data directory (subprocesses inherit the variable)."""
    from labs import records

    folder = tmp_path / "learner-records"
    monkeypatch.setenv(records.RECORDS_ENV, str(folder))
    return folder
