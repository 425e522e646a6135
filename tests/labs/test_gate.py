"""GATE 00 on synthetic records: what counts (predict, then measure), pass, fail, practice, pending."""

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills.cmd_lab import gate as gate_command
from labs import gate, records, runner
from tests.labs import synthetic

REPO = Path(__file__).resolve().parents[2]


def _save(rec, bench, name):
    return records.save(rec, bench, name)


def _only_row(bench):
    result = gate.evaluate(bench)
    (row,) = result.rows
    return result, row


def test_no_record_is_pending(tmp_path):
    result = gate.evaluate(tmp_path / "missing")
    assert result.status == "pending" and result.rows == []
    text = "\n".join(gate.format_lines(result))
    assert "GATE 00 OPEN" in text and gate.PENDING_TEXT in text and gate.CRITERION in text


def test_a_first_gpu_run_with_predictions_written_first_counts_and_passes(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0},
                           explanations={"softmax": "XLA splits softmax into three passes over HBM."})
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "pass"
    assert row.counted and row.why_not == [] and row.status == "pass"
    assert row.misses == ["softmax"] and row.unexplained == [] and row.within_2x == 4 and row.ops == 5


def test_the_same_miss_unexplained_fails(tmp_path):
    _save(synthetic.record(tmp_path, {"softmax": 3.0}), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "fail" and row.counted and row.unexplained == ["softmax"]
    assert "UNEXPLAINED: softmax" in "\n".join(gate.format_lines(result))


def test_a_miss_faster_than_predicted_counts_as_a_miss(tmp_path):
    _save(synthetic.record(tmp_path, {"add": 0.3}), tmp_path / "bench", "lab-0.1-gpu")
    assert gate.evaluate(tmp_path / "bench").rows[0].misses == ["add"]


def test_a_record_without_learner_predictions_is_not_counted(tmp_path):
    # Perfect against the datasheet, but the learner predicted nothing: teaching, never graded.
    _save(synthetic.record(tmp_path, mine=False), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and not row.counted and row.verdict == "ungraded"
    assert any("no prediction of yours" in w for w in row.why_not)


def test_a_record_with_a_wall_clock_op_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, wall_ops=("add",)), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and not row.counted
    assert row.why_not == ["add: wall clock, not device time (trace failed: RuntimeError: test)"]


def test_a_record_with_a_noisy_op_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, noisy_ops=("softmax",)), tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and row.why_not == ["softmax: noisy (runs spread 60% (IQR / median) > 25%)"]


def test_predictions_read_after_the_measurement_began_are_not_counted(tmp_path):
    late = runner.PredictionsRead("test", (synthetic.NOW + dt.timedelta(seconds=5)).isoformat())
    _save(synthetic.record(tmp_path, read=late), tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and len(row.why_not) == 1
    assert "not before the measurement began" in row.why_not[0]


def test_predictions_edited_after_the_run_break_their_sha256(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 3.0})
    row = next(r for r in rec["ops"] if r["op"] == "matmul")
    row["predictions"]["learner"] = {"seconds": row["measured"]["measured_s"], "text": "what I saw"}
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, judged = _only_row(tmp_path / "bench")
    assert not judged.counted and any("SHA-256" in w for w in judged.why_not)


def test_only_the_first_run_per_device_and_n_counts(tmp_path):
    bench = tmp_path / "bench"
    first = synthetic.record(tmp_path, {"matmul": 5.0}, started_at="2026-11-29T12:00:00+00:00")
    second = synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00")  # after seeing the numbers
    other_n = synthetic.record(tmp_path, size=8192, started_at="2026-11-29T14:00:00+00:00")
    _save(second, bench, "lab-0.1-gpu-a")  # names sort the second run first: order must come from the times
    _save(first, bench, "lab-0.1-gpu-b")
    result = gate.evaluate(bench)
    rows = {r.path.rsplit("/", 1)[-1]: r for r in result.rows}
    assert rows["lab-0.1-gpu-b.json"].counted and rows["lab-0.1-gpu-b.json"].status == "fail"
    assert not rows["lab-0.1-gpu-a.json"].counted and rows["lab-0.1-gpu-a.json"].verdict == "pass"
    assert "not your first run on NVIDIA H200 at N=4096" in rows["lab-0.1-gpu-a.json"].why_not[0]
    assert result.status == "fail"
    _save(other_n, bench, "lab-0.1-gpu-c")
    assert gate.evaluate(bench).status == "pass"  # a first run at another N counts


def test_cpu_records_are_practice_even_when_perfect(tmp_path):
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    rec = synthetic.record(tmp_path, dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=512)
    assert rec["summary"]["criterion_met"] and rec["graded"] == "learner"
    _save(rec, tmp_path / "bench", "lab-0.1-cpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and row.status == "practice" and not row.counted
    assert row.why_not == ["CPU: not real hardware (the gate needs a TPU or GPU)"]


def test_a_record_without_the_five_ops_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, ops=("matmul", "add")), tmp_path / "bench", "lab-0.1-gpu-partial")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and row.verdict == "incomplete" and not row.counted
    assert row.missing_ops == ["skinny_matmul", "softmax", "reduce_sum"]


def test_the_gate_recomputes_ratios_instead_of_trusting_the_record(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 10.0})
    row = rec["ops"][0]
    row["verdict"], row["ratios"]["learner"], row["within_2x"]["learner"] = "hit", 1.0, True
    rec["summary"] = runner._summary(rec["ops"], rec["graded"])
    _save(rec, tmp_path / "bench", "lab-0.1-gpu-tampered")
    assert gate.evaluate(tmp_path / "bench").status == "fail"


def test_learner_predictions_are_what_gets_graded(tmp_path):
    p = synthetic.plan(tmp_path)
    est = p.datasheet_estimates()
    # the learner predicted 10x the roofline for every op; measurements match the learner
    learner = {n: runner.LearnerPrediction(e.floor_s * 10, f"{e.floor_s * 10}s") for n, e in est.items()}
    rec = synthetic.record(tmp_path, learner=learner)
    assert rec["graded"] == "learner"
    assert all(row["verdict"] == "hit" for row in rec["ops"])
    assert all(row["within_2x"]["datasheet"] is False for row in rec["ops"])
    _save(rec, tmp_path / "bench", "lab-0.1-gpu-learner")
    assert gate.evaluate(tmp_path / "bench").status == "pass"


def test_broken_and_foreign_records_are_reported_and_skipped(tmp_path):
    bench = tmp_path / "bench"
    _save(synthetic.record(tmp_path), bench, "lab-0.1-gpu-good")
    (bench / "lab-0.1-broken.json").write_text("{ not json")
    foreign = synthetic.record(tmp_path)
    foreign["schema_version"] = 7
    (bench / "lab-0.1-future.json").write_text(json.dumps(foreign))
    result = gate.evaluate(bench)
    assert result.status == "pass"
    reasons = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in result.skipped}
    assert set(reasons) == {"lab-0.1-broken.json", "lab-0.1-future.json"}
    assert "unknown schema version 7" in reasons["lab-0.1-future.json"]
    assert "[skipped]" in "\n".join(gate.format_lines(result))


@pytest.mark.parametrize("kwargs, status, counted", [
    ({"ratios": {"softmax": 3.0}, "explanations": {"softmax": "three passes"}}, "pass", True),
    ({"ratios": {"softmax": 3.0}}, "fail", True),
    ({"mine": False}, "practice", False),
    ({"wall_ops": ("matmul",)}, "practice", False),
])
def test_gate_json_has_status_counted_and_why_not(tmp_path, kwargs, status, counted):
    _save(synthetic.record(tmp_path, **kwargs), tmp_path / "bench", "lab-0.1-gpu")
    res = CliRunner().invoke(gate_command, ["--bench", str(tmp_path / "bench"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["status"] == status and data["status"] in gate.STATUSES
    (row,) = data["rows"]
    assert row["counted"] is counted and isinstance(row["why_not"], list) and bool(row["why_not"]) is not counted


def test_the_gate_reads_the_learners_records_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "mine"))
    res = CliRunner().invoke(gate_command, ["--json"])
    data = json.loads(res.output)
    assert data["status"] == "pending" and data["bench"] == str(tmp_path / "mine") and data["rows"] == []
    _save(synthetic.record(tmp_path), tmp_path / "mine", "lab-0.1-gpu")
    assert json.loads(CliRunner().invoke(gate_command, ["--json"]).output)["status"] == "pass"


def test_the_courses_published_h200_records_are_shown_not_counted_as_the_learners(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "fresh"))
    bench = tmp_path / "bench"
    shutil.copytree(REPO / "bench", bench, ignore=shutil.ignore_patterns("traces"))
    data = json.loads(CliRunner().invoke(gate_command, ["--bench", str(bench), "--json"]).output)
    h200 = [r for r in data["rows"] if r["device_kind"] == "NVIDIA H200"]
    assert sorted(r["size"] for r in h200) == [4096, 8192]
    # schema-1 records: no proof of when the predictions were read, one trace per op, runs split by count
    assert all(not r["counted"] and any("when your predictions were read" in w for w in r["why_not"])
               and any(w.startswith("no noise check for matmul") for w in r["why_not"])
               and any("counting events" in w for w in r["why_not"]) for r in h200)
    assert data["skipped"] == []
