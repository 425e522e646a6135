"""The lab's plan and record assembly, without jax: every check happens before anything is timed."""

import pytest

from generator.model import catalogue, costs, roofline
from labs.measure import ops
from labs import runner
from labs.records.types import as_record
from tests.conftest import invoke_drill
from tests.labs import synthetic


def test_a_gpu_plan_predicts_with_the_catalogue_chip(tmp_path):
    p = synthetic.plan(tmp_path)
    assert p.chip.name == "h200" and not p.calibrate
    h200 = catalogue.get("h200")
    est = p.datasheet_estimates()
    assert set(est) == set(ops.SEED_OPS)
    # the same numbers generator.model.roofline gives for the seed's shapes
    expected = roofline.estimate(h200, costs.cost("matmul", (8, 4096, 4096), "bf16"))
    assert est["skinny_matmul"].floor_s == expected.floor_s
    assert p.costs["softmax"] == costs.cost("softmax", (4096, 4096), "bf16")


def test_a_cpu_has_no_catalogue_entry_so_calibration_is_forced(tmp_path):
    p = synthetic.plan(tmp_path, synthetic.device("cpu", "cpu", 8e9, 32 * 2**20), size=256)
    assert p.chip is None and p.datasheet is None and p.calibrate
    assert "forced" in p.calibrate_reason and runner.step_labels(p)[1] == "calibrate"


def test_an_unknown_accelerator_also_forces_calibration(tmp_path):
    p = synthetic.plan(tmp_path, synthetic.device("gpu", "Mystery GPU 9000"), size=256)
    assert p.chip is None and p.calibrate


def test_a_named_chip_overrides_auto(tmp_path):
    p = synthetic.plan(tmp_path, synthetic.device("cpu", "cpu", 8e9, 2**25), size=256, chip="v5e")
    assert p.chip.name == "v5e" and p.datasheet.peak_flops_per_s == catalogue.get("v5e").peak_flops_per_s("bf16")
    assert not p.calibrate


@pytest.mark.parametrize("options, message", [
    ({"chip": "v9z"}, "unknown chip 'v9z'"),
    ({"dtype": "int8"}, "the lab times bf16 or f32"),
    ({"dtype": "float64"}, "unknown dtype"),
    ({"size": 8}, "too small"),
    ({"reps": 0}, "--reps must be at least 1"),
    ({"dtype": "f32"}, "no published f32 peak"),
])
def test_bad_options_fail_before_anything_runs(tmp_path, options, message):
    with pytest.raises(runner.LabError, match=message):
        synthetic.plan(tmp_path, **options)


def test_a_size_too_large_for_device_memory_is_refused(tmp_path):
    small = synthetic.device("gpu", "NVIDIA H200", memory_bytes=1e9)
    with pytest.raises(runner.LabError, match="too large for matmul on this device"):
        synthetic.plan(tmp_path, small, size=16384)


def test_an_unwritable_output_directory_is_refused_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    opts = runner.LabOptions(out_dir=blocker / "bench", size=256)
    with pytest.raises(runner.LabError, match="cannot write to"):
        runner.make_plan(opts, synthetic.device(), now=synthetic.NOW)


def test_small_sizes_note_that_the_cache_still_holds_the_inputs(tmp_path):
    p = synthetic.plan(tmp_path, size=128)
    assert p.notes and "fit in the" in p.notes[0]
    assert all(r.sets >= 2 for r in p.rotations.values())


def test_assemble_scores_every_prediction(tmp_path):
    cal = synthetic.calibration(5e14, 4e12)
    rec = synthetic.record(tmp_path, {"matmul": 2.5, "add": 0.6}, calibrate=cal, mine=False)
    rows = {r["op"]: r for r in rec["ops"]}
    assert rec["graded"] == "datasheet"
    mm = rows["matmul"]
    assert mm["ratios"]["datasheet"] == pytest.approx(2.5)
    assert mm["within_2x"]["datasheet"] is False and mm["verdict"] == "miss"
    # the calibrated column goes through the same roofline with measured ceilings
    cal_est = roofline.estimate(cal.ceilings(), costs.cost("matmul", (4096, 4096, 4096)))
    assert mm["predictions"]["calibrated"]["seconds"] == cal_est.floor_s
    assert mm["ratios"]["calibrated"] == pytest.approx(mm["measured"]["measured_s"] / cal_est.floor_s)
    assert rows["add"]["verdict"] == "hit" and rows["add"]["ratios"]["datasheet"] == pytest.approx(0.6, rel=1e-4)
    assert rec["summary"]["misses"] == ["matmul"] and rec["summary"]["unexplained"] == ["matmul"]
    assert rec["constants"]["calibrated"]["source"].startswith("calibrated on Test Device")
    assert {s["key"] for s in rec["constants"]["datasheet"]["sources"]} == {"scaling-book-gpus"}


def test_explain_attaches_sentences_only_to_misses(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 2.5})
    rec = runner.explain(as_record(rec), {"matmul": "  cuBLAS picked a\nsmall tile. ", "add": "not a miss"}).to_dict()
    rows = {r["op"]: r for r in rec["ops"]}
    assert rows["matmul"]["miss"]["text"] == "cuBLAS picked a small tile."
    assert rows["add"]["explanation"] is None and rows["add"]["miss"] is None
    # "tile" names no reason (only a prefix of ids before ':' does): refused, and the attempt is kept
    assert rows["matmul"]["miss"]["reasons"] == [] and not rows["matmul"]["miss"]["accepted"]
    assert "name your reasons first" in rows["matmul"]["miss"]["why"] and len(rows["matmul"]["miss"]["attempts"]) == 1
    # named, but a sentence without a corrected time re-predicts nothing: refused, both attempts kept
    rec = runner.explain(as_record(rec), {"matmul": "below-peak-compute: cuBLAS picked a\nsmall tile."}).to_dict()
    rows = {r["op"]: r for r in rec["ops"]}
    assert rows["matmul"]["miss"]["text"] == "below-peak-compute: cuBLAS picked a small tile."
    assert rows["matmul"]["miss"]["reasons"] == ["below-peak-compute"] and not rows["matmul"]["miss"]["accepted"]
    assert "no corrected time" in rows["matmul"]["miss"]["why"] and len(rows["matmul"]["miss"]["attempts"]) == 2
    assert rows["matmul"]["explanation"] is None
    assert rec["summary"]["unexplained"] == ["matmul"] and not rec["summary"]["criterion_met"]


def test_partial_learner_predictions_are_scored_but_not_graded(tmp_path):
    learner = {"matmul": runner.LearnerPrediction(1e-3, "1ms")}
    rec = synthetic.record(tmp_path, learner=learner)
    assert rec["graded"] == "datasheet"
    mm = rec["ops"][0]
    assert mm["predictions"]["learner"] == {"seconds": 1e-3, "text": "1ms"}
    assert mm["ratios"]["learner"] == pytest.approx(mm["measured"]["measured_s"] / 1e-3)


@pytest.mark.parametrize("platform, kind, want", [("cpu", "cpu", 1024), ("gpu", "NVIDIA H200", 4096)])
def test_drill_lab_without_size_runs_1024_on_a_cpu_and_the_counted_size_elsewhere(tmp_path, monkeypatch, platform,
                                                                                   kind, want):
    from labs.measure import device as lab_device

    seen = {}

    def plan(options, dev, now=None):
        seen["size"] = options.size
        raise runner.LabError("stop before measuring")

    monkeypatch.setattr(lab_device, "detect", lambda: synthetic.device(platform, kind))
    monkeypatch.setattr(runner, "make_plan", plan)
    res = invoke_drill("lab", "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and "stop before measuring" in res.stderr
    assert seen["size"] == want
