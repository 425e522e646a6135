import os
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
