"""`drill lab` at a terminal: asks for predictions first, then a sentence per miss (pexpect; slow)."""

import json
import sys

import pexpect
import pytest

from labs import records
from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_predict_then_measure_then_explain(tmp_path):
    out = tmp_path / "bench"
    child = pexpect.spawn(sys.executable, ["-m", "drills.cli", "lab", "--size", "128", "--reps", "3",
                                           "--ops", "add,reduce_sum", "--out", str(out)],
                          cwd=str(REPO), encoding="utf-8", timeout=120, dimensions=(40, 200))
    child.expect("Predict before you measure")
    child.expect(r"elementwise add \[add 128x128, bf16\]")
    child.sendline("1 ns")  # far too fast: a miss to explain
    child.expect(r"reduce_sum \[reduce_sum 128x128, bf16\]")
    child.sendline("3 GB")  # not a time: asked again
    child.expect("could not read that")
    child.sendline("1ns")
    child.expect("LAB·0.1")  # the progress bar runs after the predictions
    child.expect("measured  datasheet")  # the full table comes before any "why?"
    child.expect("Every miss over 2x needs a reason")
    child.expect(r"elementwise add: measured [\d.]+.\S+ \(device time\), your prediction 1.ns: [\d.]+x; why\?")
    child.sendline("One nanosecond is less than a single call's dispatch.")
    child.expect(r"reduce_sum: measured [\d.]+.\S+ \(device time\), your prediction 1.ns: [\d.]+x; why\?")
    child.sendline("")  # left unexplained on purpose
    child.expect("record: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    (path,) = out.glob("lab-0.1-*.json")
    rec = records.load(path)
    assert rec["graded"] == "learner"
    rows = {r["op"]: r for r in rec["ops"]}
    assert rows["add"]["predictions"]["learner"] == {"seconds": pytest.approx(1e-9), "text": "1 ns"}
    assert rows["add"]["explanation"] == "One nanosecond is less than a single call's dispatch."
    assert rows["reduce_sum"]["explanation"] is None
    assert rec["summary"]["unexplained"] == ["reduce_sum"]
    assert rec["learner_predictions"]["source"] == "terminal"
    assert rec["learner_predictions"]["read_at"] < rec["measurement_started_at"]
    json.dumps(rec)
