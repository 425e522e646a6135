import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]

# One Hypothesis profile for the whole suite: no per-example deadline and no too_slow health check (a busy
# machine is slow, not wrong), and under CI (CI set) the same examples every run, so a run that passes
# passes again.
settings.register_profile("drill", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=bool(os.environ.get("CI")))
settings.load_profile("drill")

TIME_SCALE_ENV = "DRILL_TEST_TIME_SCALE"  # multiplies every wall-clock limit below (default 1)
MIN_BOUND_S = 60.0


def bound(seconds: float = MIN_BOUND_S) -> float:
    """The wall-clock limit for a child process, or for a wait that must end: ``seconds`` times the
    ``DRILL_TEST_TIME_SCALE`` environment variable (default 1), and never under 60 s. A limit only turns a
    hang into a failure; no test asserts how long anything took."""
    raw = os.environ.get(TIME_SCALE_ENV, "").strip()
    try:
        scale = float(raw) if raw else 1.0
    except ValueError:
        raise pytest.UsageError(f"{TIME_SCALE_ENV}={raw!r} is not a number") from None
    if not scale > 0:
        raise pytest.UsageError(f"{TIME_SCALE_ENV}={raw!r} must be positive")
    return max(MIN_BOUND_S, seconds * scale)


def loaded_packages(statements: str, packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` a fresh interpreter has loaded after running ``statements`` (imports,
    a call) in the repository: what a command's path costs at start-up."""
    code = (f"import sys, json\n{statements}\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {packages!r})))")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=bound())
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def finishes(action, seconds: float = MIN_BOUND_S):
    """Run ``action()`` in a daemon thread and return what it returns (or raise what it raised); fail the
    test when it has not finished within ``bound(seconds)``, a hang (a FIFO opened for writing, a runaway
    computation) rather than a stalled suite."""
    import threading

    outcome: dict = {}

    def target():
        try:
            outcome["value"] = action()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(bound(seconds))
    if worker.is_alive():
        pytest.fail(f"did not finish within {bound(seconds):g} s (a hang)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def run_drill(*args: str, input: str | None = None, env: dict | None = None, timeout: float | None = None):
    """Run the real `drill` entry point in a fresh process, within ``bound(timeout)`` (default 120 s)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "drills.cli", *args], input=input, text=True,
                          capture_output=True, cwd=REPO, env=full_env, timeout=bound(timeout or 120))


SLOW_MODULE = re.compile(r"^pytestmark = pytest\.mark\.slow\b", re.M)


def pytest_ignore_collect(collection_path: Path, config):
    """With the slow set deselected (``-m "not slow"``, pyproject's default), a test module marked slow as a
    whole (``pytestmark = pytest.mark.slow``) is not imported: none of its tests would run, and it may import
    the slow set's tools (Anki, pexpect, Jupyter), which only the ``slow`` extra installs. Any other
    ``-m`` collects it as usual."""
    if config.getoption("markexpr", "") != "not slow" or collection_path.suffix != ".py" \
            or not collection_path.name.startswith("test_"):
        return None
    return True if SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")) else None


def pytest_configure(config):
    """Children start with Ctrl-C live. A suite run as a background job (``pytest &``, CI under ``nohup``)
    inherits SIGINT *ignored*, and an ignored signal stays ignored through ``exec``: every child (``drill``
    under subprocess or pexpect, xdist's workers) would then ignore the SIGINT the Ctrl-C tests send.
    A caught signal is reset to the default at ``exec``, so catching it here (Python's own
    KeyboardInterrupt handler) gives each child the default disposition, whichever test starts it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # The start-up cache in a folder of this run's own, unless one is named: the suite neither reads a
    # developer's cache (whatever state it is in) nor fills it. xdist's workers, and every `drill` a
    # test starts, inherit the variable; the run that made the folder removes it.
    if not os.environ.get(CACHE_ENV):
        os.environ[CACHE_ENV] = config.stash[_OWN_CACHE] = tempfile.mkdtemp(prefix="drill-test-cache-")


def pytest_unconfigure(config):
    folder = config.stash.get(_OWN_CACHE, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(CACHE_ENV) == folder:
            del os.environ[CACHE_ENV]


CACHE_ENV = "DRILL_CACHE_DIR"  # generator.io.startcache's folder override
_OWN_CACHE = pytest.StashKey[str]()


def invoke_drill(*args: str, input: str | None = None, env: dict | None = None,
                 cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `drill` in this process through click's ``CliRunner`` (no interpreter start-up): the same
    ``drills.cli.main`` the entry point calls, so its one-line errors and exit codes are the real ones.
    ``cwd``: the working directory for the call (``run_drill`` runs in the repository; default: this
    process's). Returns what ``run_drill`` returns. Tests of signals, pipes, closed descriptors and the
    interpreter's own exit use ``run_drill``."""
    from click.testing import CliRunner

    from drills.cli import main

    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with CliRunner().isolation(input=input, env=env) as (out, err, _):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["drill", *args], code, stdout, stderr)


@pytest.fixture
def drill():
    return run_drill


@pytest.fixture(autouse=True)
def learner_records(tmp_path, monkeypatch):
    """Every test gets its own empty learner records folder: no test reads or writes the real
    user data directory (subprocesses inherit the variable)."""
    from labs.records import folder as records

    folder = tmp_path / "learner-records"
    monkeypatch.setenv(records.RECORDS_ENV, str(folder))
    return folder
