"""bench/device_lab.sh on the CPU with tiny sizes: what comes back fits the device tool's limits (slow)."""

import json
import os
import subprocess
import sys
import tarfile

import pytest

from labs.records import folder as records
from tests.conftest import REPO, bound

pytestmark = pytest.mark.slow

MAX_FILES, MAX_BYTES = 8, 16 * 2**20


def test_device_script_leaves_records_plots_traces_and_the_gate(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "REPS": "2", "PYTHON": sys.executable}
    res = subprocess.run(["bash", str(REPO / "bench" / "device_lab.sh"), "64", "128"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=bound(300))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= MAX_FILES
    assert all(p.stat().st_size <= MAX_BYTES for p in files)
    assert all(len(p.relative_to(out).parts) <= 2 for p in files)  # $OUT/a/file at most
    saved = sorted((out / "bench").glob("lab-0.1-*.json"), key=lambda p: records.load(p)["size"])
    assert [records.load(p)["size"] for p in saved] == [64, 128]
    assert (out / "bench" / "ledger.jsonl").is_file()  # the gate counts a record only where its ledger vouches
    assert (out / "roofline-n64.png").is_file() and (out / "roofline-n128.png").is_file()
    with tarfile.open(out / "traces.tar.gz") as tar:
        names = tar.getnames()
    assert any(n.startswith("traces/") and n.endswith(".xplane.pb.gz") for n in names)
    stem = saved[0].stem
    assert records.load(saved[0])["trace_dir"] == f"traces/{stem}"  # extract inside bench/ and it lines up
    assert any(n.startswith(f"traces/{stem}/matmul/") for n in names)
    assert json.loads((out / "trace-summary.json").read_text())["planes"]
    log = (out / "log.txt").read_text()
    assert "GATE 00 OPEN (no record counts yet: practice only)" in log and "measured  datasheet" in log
    assert "why not: CPU: not real hardware" in log
    assert "GATE 00" in res.stdout
