"""The lab on an old jax (0.5.2 and 0.4.30: no ProfileData, no ProfileOptions) still reads device time
for every op (on 0.4.30 the runtime threads hold only zero-duration instants).

.ci/run makes a second small venv with jax==0.5.2 (CPU) and exports its python as
$DRILL_OLD_JAX_PYTHON. In CI (CI set) a missing venv fails this test; elsewhere it
is skipped with the command that makes one. $DRILL_OLDEST_JAX_PYTHON, when set, points
at a venv with jax==0.4.30 (the oldest the README supports): `python3 -m venv /tmp/oj30 &&
/tmp/oj30/bin/pip install 'jax==0.4.30' 'jaxlib==0.4.30' 'numpy<2.1' -e .`; $DRILL_JAX_0_6_PYTHON
likewise for jax==0.6.2 (whose profiler logs the TensorFlow import warnings this lab keeps quiet).
"""

import json
import os
import subprocess

import pytest

from labs.records import folder as records
from tests.conftest import REPO, bound

pytestmark = pytest.mark.slow

OLD_JAX_ENV = "DRILL_OLD_JAX_PYTHON"
OLD_JAX = "0.5.2"
OLDEST_JAX_ENV = "DRILL_OLDEST_JAX_PYTHON"
OLDEST_JAX = "0.4.30"
# jax 0.6.2 has ProfileOptions but no ProfileData, and its profiler logs "Can't import
# tensorflow.python.profiler.trace" on every start and stop.
NOISY_JAX_ENV = "DRILL_JAX_0_6_PYTHON"
NOISY_JAX = "0.6.2"


@pytest.fixture(params=[(OLD_JAX_ENV, OLD_JAX, True, "False"), (OLDEST_JAX_ENV, OLDEST_JAX, True, "False"),
                        (NOISY_JAX_ENV, NOISY_JAX, True, "True")],
                ids=[OLD_JAX, OLDEST_JAX, NOISY_JAX])
def old_jax(request):
    env, version, required_in_ci, has_options = request.param
    path = os.environ.get(env, "").strip()
    if not path:
        message = (f"{env} is not set: make a venv with jax=={version} and the package "
                   f"(see .ci/run) and point {env} at its python")
        if os.environ.get("CI") and required_in_ci:
            pytest.fail(message)
        pytest.skip(message)
    return path, version, has_options


def test_drill_lab_on_an_old_jax_measures_every_op_on_the_device(old_jax, tmp_path):
    old_python, version, has_options = old_jax
    probe = subprocess.run([old_python, "-c", "import jax; print(jax.__version__, "
                            "getattr(jax.profiler, 'ProfileData', None), hasattr(jax.profiler, 'ProfileOptions'))"],
                           capture_output=True, text=True, timeout=bound(120))
    assert probe.stdout.split() == [version, "None", has_options], probe.stdout + probe.stderr
    res = subprocess.run([old_python, "-m", "drills.cli", "lab", "--size", "256", "--reps", "3", "--json",
                          "--out", str(tmp_path / "rec")], cwd=REPO, capture_output=True, text=True, timeout=bound(900),
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    rec = records.load(out["path"])
    assert rec["jax_version"] == version
    assert rec["probes"]["fixed_cost_from"] == "device"
    # Each op kind's fixed-cost probe read from the device. The fixed cost itself is that call's time less
    # its work at the attained speeds, and may clamp to 0 when a loaded machine reads those speeds low.
    by_op = rec["probes"]["fixed_cost_by_op"]
    assert set(by_op) == {r["op"] for r in rec["ops"]}
    assert all(v["measured_from"] == "device" and v["device_s"] > 0 for v in by_op.values()), by_op
    assert all(r["evidence"]["fixed_cost_s"] >= 0 for r in rec["ops"])
    assert "device time read with labs.measure.xplane" in res.stderr and "WALL CLOCK" not in res.stderr
    assert "Can't import tensorflow" not in res.stderr  # the profiler's noise never reaches the learner
    for row in rec["ops"]:
        m = row["measured"]
        assert m["measured_from"] == "device", (row["op"], m["measured_reason"])
        assert m["trace_reader"] == "labs.measure.xplane.XSpace" and m["device_runs"] == 9 and m["traces"] == 3
    for probe_name in ("matmul", "copy"):
        assert rec["constants"]["calibrated"][probe_name]["measured_from"] == "device"
