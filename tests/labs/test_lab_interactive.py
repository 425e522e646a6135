"""`drill lab` at a terminal: predictions first, the record saved, then "why?" per miss judged against
the evidence (refused shrugs, try again), and only then the tables (pexpect; slow)."""

import json
import sys

import pexpect
import pytest

from labs import records
from tests.conftest import REPO, bound

pytestmark = pytest.mark.slow


def test_predict_then_measure_then_explain(tmp_path):
    from generator import miss_reasons
    from labs import evidence

    out = tmp_path / "bench"
    child = pexpect.spawn(sys.executable, ["-m", "drills.cli", "lab", "--size", "128", "--reps", "3",
                                           "--ops", "add,reduce_sum", "--out", str(out)],
                          cwd=str(REPO), encoding="utf-8", timeout=bound(120), dimensions=(40, 200))
    child.expect("This device's datasheet")  # a CPU has no catalogue entry: its probes first
    child.expect(r"memory bandwidth \(an in-place copy\): [\d.]+ .B/s")
    child.expect(r"fixed cost of a add call")
    child.expect("Predict before you measure")
    child.expect(r"elementwise add \[add 128x128, bf16\]")
    child.sendline("1 ns")  # far too fast: a miss to explain
    child.expect(r"reduce_sum \[reduce_sum 128x128, bf16\]")
    child.sendline("3 GB")  # not a time: asked again
    child.expect("could not read that")
    child.sendline("70")  # a bare number: asked again, never taken as seconds
    child.expect("70 what")
    child.sendline("1ns")
    child.expect("LAB·0.1")  # the progress bar runs after the predictions
    child.expect("Every miss over 2x needs a corrected estimate")  # before any table: the record is saved
    (path,) = out.glob("lab-0.1-*.json")
    saved = records.load(path)  # predictions and measurements saved before the first "why?"
    asked = [r["op"] for r in saved["ops"] if r["verdict"] == "miss" and not r["miss"].get("finding")]
    assert asked[0] == "add", "a 1 ns prediction is explained by the arithmetic and the fixed cost"
    assert saved["summary"]["unexplained"] == asked  # a finding asks nothing
    assert saved["constants"]["measured_datasheet"]["shown_before_predictions"] is True
    assert "supported_reasons" not in path.read_text()  # no answer key before the answer
    ev = evidence.op_evidence(saved, "add")
    found = miss_reasons.explanations(ev)
    child.expect(r"elementwise add: measured [\d.]+.\S+ \(device time\), your prediction 1.ns: [\d.]+x; why\?")
    before = child.before
    assert "measured  datasheet" not in before and "explained by" not in before  # no table yet
    child.sendline("overhead")
    child.expect("refused: 'overhead' is a shrug, not a reason")
    child.expect("look at: measured")
    child.expect("try again")
    child.expect(r"elementwise add: measured .*why\?")
    if found:  # re-predicted with what the record's numbers give for those reasons, the numbers quoted
        numbers = ", ".join(f"{v:.4g} {u}" for _, v, u in miss_reasons.needed_numbers(ev, found[0]))
        answer = (f"{' + '.join(found[0])}: from {numbers} = "
                  f"{miss_reasons.corrected_time(ev, found[0]) * 1e6:.4g} us")
    else:  # nothing the evidence allows explains it on this run: the floor alone is refused
        answer = f"learner-arithmetic: the floor is {ev.floor_seconds * 1e6:.4g} us = {ev.floor_seconds * 1e6:.4g} us"
    child.sendline(answer)
    child.expect("accepted: " if found else "refused: ")
    if not found:  # the add stays unexplained, asked again
        child.expect(r"why\?")
        child.sendline("")
    if "reduce_sum" in asked:  # a finding is never asked
        child.expect(r"reduce_sum: measured [\d.]+.\S+ \(device time\), your prediction 1.ns: [\d.]+x; why\?")
        child.sendline("")  # reduce_sum left unexplained on purpose
    child.expect("measured  datasheet")  # the tables only after the answers
    child.expect("attained FLOP/s")  # and the evidence table for every op
    child.expect("record: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    rec = records.load(path)
    assert rec["graded"] == "learner"
    rows = {r["op"]: r for r in rec["ops"]}
    assert rows["add"]["predictions"]["learner"] == {"seconds": pytest.approx(1e-9), "text": "1 ns"}
    assert rows["add"]["miss"]["accepted"] is bool(found)
    assert [a["text"] for a in rows["add"]["miss"]["attempts"]] == ["overhead", answer]
    assert rows["add"]["explanation"] == (answer if found else None)
    assert rows["reduce_sum"]["explanation"] is None and rows["reduce_sum"]["miss"]["accepted"] is False
    assert rec["summary"]["unexplained"] == [op for op in asked if op != "add" or not found]
    assert rec["learner_predictions"]["source"] == "terminal"
    assert rec["learner_predictions"]["read_at"] < rec["measurement_started_at"]
    json.dumps(rec)
