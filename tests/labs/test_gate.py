"""GATE 00 on synthetic records: pass, fail, practice, pending; broken records skipped."""

import json

import pytest
from click.testing import CliRunner

from drills.cmd_lab import gate as gate_command
from labs import gate, records, runner
from tests.labs import synthetic


def _save(rec, bench, name):
    return records.save(rec, bench, name)


def test_no_record_is_pending(tmp_path):
    result = gate.evaluate(tmp_path / "missing")
    assert result.status == "pending" and result.rows == []
    text = "\n".join(gate.format_lines(result))
    assert "GATE 00 OPEN" in text and gate.PENDING_TEXT in text and gate.CRITERION in text


def test_gpu_record_with_a_3x_miss_explained_passes(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0},
                           explanations={"softmax": "XLA splits softmax into three passes over HBM."})
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result = gate.evaluate(tmp_path / "bench")
    assert result.status == "pass"
    (row,) = result.rows
    assert row.status == "pass" and row.misses == ["softmax"] and row.unexplained == []
    assert row.within_2x == 4 and row.ops == 5


def test_gpu_record_with_the_same_miss_unexplained_fails(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0})
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result = gate.evaluate(tmp_path / "bench")
    assert result.status == "fail"
    assert result.rows[0].unexplained == ["softmax"]
    assert "UNEXPLAINED: softmax" in "\n".join(gate.format_lines(result))


def test_a_miss_faster_than_predicted_counts_as_a_miss(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 0.3})
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    assert gate.evaluate(tmp_path / "bench").rows[0].misses == ["add"]


def test_cpu_records_are_practice_even_when_perfect(tmp_path):
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    rec = synthetic.record(tmp_path, dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=512)
    assert rec["summary"]["criterion_met"]
    _save(rec, tmp_path / "bench", "lab-0.1-cpu")
    result = gate.evaluate(tmp_path / "bench")
    assert result.status == "practice" and result.rows[0].status == "practice"


def test_an_accelerator_record_decides_over_cpu_practice(tmp_path):
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    _save(synthetic.record(tmp_path, dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=512),
          tmp_path / "bench", "lab-0.1-cpu")
    _save(synthetic.record(tmp_path, {"matmul": 5.0}), tmp_path / "bench", "lab-0.1-gpu-a")
    assert gate.evaluate(tmp_path / "bench").status == "fail"
    _save(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu-b")
    assert gate.evaluate(tmp_path / "bench").status == "pass"


def test_a_record_without_the_five_ops_is_not_judged(tmp_path):
    rec = synthetic.record(tmp_path, ops=("matmul", "add"))
    _save(rec, tmp_path / "bench", "lab-0.1-gpu-partial")
    result = gate.evaluate(tmp_path / "bench")
    assert result.status == "pending"
    assert result.rows[0].status == "incomplete"
    assert result.rows[0].missing_ops == ["skinny_matmul", "softmax", "reduce_sum"]


def test_the_gate_recomputes_ratios_instead_of_trusting_the_record(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 10.0})
    row = rec["ops"][0]
    row["verdict"], row["ratios"]["datasheet"], row["within_2x"]["datasheet"] = "hit", 1.0, True
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


@pytest.mark.parametrize("ratios, explained, status", [
    ({"softmax": 3.0}, {"softmax": "three passes"}, "pass"),
    ({"softmax": 3.0}, {}, "fail"),
    (None, {}, "pass"),
])
def test_gate_json_has_the_status_key(tmp_path, ratios, explained, status):
    _save(synthetic.record(tmp_path, ratios, explanations=explained), tmp_path / "bench", "lab-0.1-gpu")
    res = CliRunner().invoke(gate_command, ["--bench", str(tmp_path / "bench"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["status"] == status and data["status"] in gate.STATUSES
    assert data["criterion"] == gate.CRITERION and len(data["rows"]) == 1


def test_gate_json_pending_and_practice(tmp_path):
    res = CliRunner().invoke(gate_command, ["--bench", str(tmp_path / "none"), "--json"])
    assert json.loads(res.output)["status"] == "pending"
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    _save(synthetic.record(tmp_path, dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=512),
          tmp_path / "bench", "lab-0.1-cpu")
    res = CliRunner().invoke(gate_command, ["--bench", str(tmp_path / "bench"), "--json"])
    assert json.loads(res.output)["status"] == "practice"
