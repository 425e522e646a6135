"""The lab on an old jax (0.5.2: no ProfileData, no ProfileOptions) still reads device time.

.ci/run makes a second small venv with jax==0.5.2 (CPU) and exports its python as
$DRILL_OLD_JAX_PYTHON. In CI (CI set) a missing venv fails this test; elsewhere it
is skipped with the command that makes one.
"""

import json
import os
import subprocess

import pytest

from labs import records
from tests.conftest import REPO

pytestmark = pytest.mark.slow

OLD_JAX_ENV = "DRILL_OLD_JAX_PYTHON"
OLD_JAX = "0.5.2"


@pytest.fixture
def old_python():
    path = os.environ.get(OLD_JAX_ENV, "").strip()
    if not path:
        message = (f"{OLD_JAX_ENV} is not set: make a venv with jax=={OLD_JAX} and the package "
                   f"(see .ci/run) and point {OLD_JAX_ENV} at its python")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def test_drill_lab_on_jax_0_5_2_measures_every_op_on_the_device(old_python, tmp_path):
    probe = subprocess.run([old_python, "-c", "import jax; print(jax.__version__, "
                            "getattr(jax.profiler, 'ProfileData', None), hasattr(jax.profiler, 'ProfileOptions'))"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == [OLD_JAX, "None", "False"], probe.stdout + probe.stderr
    res = subprocess.run([old_python, "-m", "drills.cli", "lab", "--size", "256", "--reps", "3", "--json",
                          "--out", str(tmp_path / "rec")], cwd=REPO, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    rec = records.load(out["path"])
    assert rec["jax_version"] == OLD_JAX
    assert "device time read with labs.xplane" in res.stderr and "WALL CLOCK" not in res.stderr
    for row in rec["ops"]:
        m = row["measured"]
        assert m["measured_from"] == "device", (row["op"], m["measured_reason"])
        assert m["trace_reader"] == "labs.xplane.XSpace" and m["device_runs"] == 9 and m["traces"] == 3
    for probe_name in ("matmul", "copy"):
        assert rec["constants"]["calibrated"][probe_name]["measured_from"] == "device"
