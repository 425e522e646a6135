"""The collectives lab (labs/collectives/lab.py, labs/collectives/run.py): planning, predictions, calibration,
scoring, and an end-to-end run on 8 forced CPU devices (XLA_FLAGS must be set before jax starts, so that run
is a subprocess). Its typed record: tests/labs/test_collectives_record.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import collectives as C
from generator.model import costs, roofline
from labs.collectives import lab
from labs.collectives import record as rec
from labs.collectives import run as on_devices
from tests.conftest import bound, run_drill
from tests.labs.collectives_synthetic import CAT, NOW, FakeDevice

FORCE8 = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}



def _plan(tmp_path, device=None, **opts):
    device = device or FakeDevice(chip=CAT.get("v5e"))
    return lab.make_plan(lab.Options(out_dir=tmp_path, trace=False, **opts), device, NOW)


def test_mesh_parsing():
    assert lab.parse_mesh("auto", 8) == (8,)
    assert lab.parse_mesh("2x4", 8) == (2, 4)
    for bad in ("3x3", "2x", "1x2x2x2", "0x8"):
        with pytest.raises(lab.CollectivesLabError):
            lab.parse_mesh(bad, 8)


def test_layout_splits_evenly():
    """The layout inverts ``costs.array_bytes``: the array it gives is the asked size within one split unit."""
    for n in (2, 8, 16):
        for dtype in ("bf16", "f32"):
            rows, cols = lab.layout(1e6, n, dtype)
            assert rows % (n * n) == 0 and cols == lab.COLS
            assert abs(costs.array_bytes((rows, cols), dtype) - 1e6) <= costs.array_bytes((n * n, cols), dtype) / 2
    i, j, k = lab.matmul_dims(16e6, 8, "bf16")
    assert j % (8 * 128) == 0 and i % 128 == 0 and k == i
    assert abs(costs.array_bytes((i, k), "bf16") - 16e6) <= costs.array_bytes((i + 128, k + 128), "bf16") - 16e6


def test_row_bytes_and_per_device_inputs_are_the_models_array_bytes(tmp_path):
    plan = _plan(tmp_path, sizes=(1e6,))
    for row in plan.rows:
        shape = (row.shape[0], row.shape[2]) if row.op == "sharded_matmul" else row.shape
        assert row.bytes == costs.array_bytes(shape, "bf16")
    i, j, k = plan.matmul.shape
    assert lab.per_device_input_bytes(plan.matmul, plan) == (costs.array_bytes((i, j // 16), "bf16")
                                                             + costs.array_bytes((j // 16, k), "bf16"))


@settings(max_examples=100)
@given(local_s=st.floats(1e-7, 1.0), small_s=st.floats(1e-6, 1e-2), power=st.floats(0.0, 1.0))
def test_each_fit_round_trips_through_the_model(tmp_path_factory, local_s, small_s, power):
    """The fitted FLOP/s, link bandwidth and hop latency, fed back to the model, give the measured
    times they came from (the local matmul's through the roofline, the AllGathers' through the
    collective model)."""
    plan = _plan(tmp_path_factory.mktemp("trip"), sizes=(64e3, 16e6),
                 device=FakeDevice(platform="cpu", device_kind="cpu", device_count=8))
    small, large = (r for r in plan.rows if r.op == "all_gather")
    measured = {small.id: small_s, large.id: small_s * (large.bytes / small.bytes) ** power}
    cal = lab.fit_calibration(plan, measured, local_matmul_s=local_s)
    fitted = roofline.Ceilings("fit", cal["flops_per_s"], 1e30, "bf16")
    assert roofline.estimate(fitted, lab.local_matmul_cost(plan)).t_math_s == pytest.approx(local_s, rel=1e-12)
    ring = (True,)
    for row in (small, large):
        t = C.collective_time("all_gather", row.bytes, (8,), ring, cal["w_bidi_bytes_per_s"] / 2,
                              cal["w_bidi_bytes_per_s"], cal["hop_latency_s"])
        assert t.t_s == pytest.approx(measured[row.id], rel=1e-9)
    assert lab.calibrated_prediction(plan, plan.matmul, cal)["t_math_s"] == pytest.approx(local_s, rel=1e-12)


def test_plan_rows_and_one_device_refused(tmp_path):
    plan = _plan(tmp_path, sizes=(64e3, 1e6))
    assert [r.op for r in plan.rows] == [*lab.OPS, *lab.OPS, "sharded_matmul"]
    assert plan.rows[0].id == "all_gather@64kB"
    with pytest.raises(lab.CollectivesLabError, match="at least two"):
        _plan(tmp_path, device=FakeDevice(device_count=1))
    with pytest.raises(lab.CollectivesLabError):
        _plan(tmp_path, reps=0)
    with pytest.raises(lab.CollectivesLabError):
        _plan(tmp_path, sizes=(-1.0,))


def test_datasheet_prediction_is_the_collective_model(tmp_path):
    plan = _plan(tmp_path, sizes=(1e6,))  # 16 v5e chips on one axis: wraparound
    row = next(r for r in plan.rows if r.op == "all_reduce")
    pred = lab.datasheet_prediction(plan, row)
    want = C.chip_collective(CAT, CAT.get("v5e"), "all_reduce", row.bytes, (16,))
    assert pred["seconds"] == pytest.approx(want.t_s) and pred["wrap"] == [True]
    mm = plan.matmul
    i, j, k = mm.shape
    got = lab.datasheet_prediction(plan, mm)
    local = costs.cost("matmul", (i, j // 16, k), "bf16")  # each of the 16 chips' share of A[I, J_X] @ B[J_X, K]
    assert lab.local_matmul_cost(plan) == local
    t_math_s = roofline.estimate(roofline.Ceilings.from_chip(CAT.get("v5e"), "bf16"), local).t_math_s
    assert got["t_math_s"] == t_math_s
    assert got["seconds"] == roofline.upper_seconds(t_math_s, C.chip_collective(CAT, CAT.get("v5e"), "all_reduce",
                                                                                mm.bytes, (16,)).t_s)
    gpu = _plan(tmp_path, device=FakeDevice(platform="gpu", device_kind="NVIDIA H200", chip=CAT.get("h200"), device_count=8))
    assert gpu.chip is None and "not in the reference" in gpu.datasheet_note
    assert lab.datasheet_prediction(gpu, gpu.rows[0]) is None


def test_calibration_fit_reproduces_its_two_rows(tmp_path):
    plan = _plan(tmp_path, sizes=(64e3, 16e6), device=FakeDevice(platform="cpu", device_kind="cpu", device_count=8))
    small, large = (r for r in plan.rows if r.op == "all_gather")
    measured = {small.id: 40e-6, large.id: 2e-3}
    cal = lab.fit_calibration(plan, measured, local_matmul_s=1e-3)
    assert cal["hop_latency_s"] == pytest.approx(10e-6)  # 4 hops on a ring of 8
    assert cal["exact_on_fit"] and cal["model"].startswith("max(")
    for row in (small, large):  # the model the predictions use reproduces both fitting rows exactly
        pred = lab.calibrated_prediction(plan, row, cal)
        assert pred["seconds"] == pytest.approx(measured[row.id], rel=1e-9)
        assert pred["seconds"] == max(pred["t_bandwidth_s"], pred["t_latency_s"])
    measured_s = {r.id: 1e-3 for r in plan.rows}
    graded, scored = lab.score_rows(plan, measured_s, {}, cal)
    assert graded == "calibrated" and all(s["verdict"] in ("hit", "miss") for s in scored.values())
    learner = {r.id: 1e-3 for r in plan.rows}
    graded, scored = lab.score_rows(plan, measured_s, learner, cal)
    assert graded == "learner" and all(s["verdict"] == "hit" for s in scored.values())


@settings(max_examples=200)
@given(small_s=st.floats(1e-6, 1e-2), power=st.floats(0.0, 1.0))
def test_the_fit_is_the_max_model_on_any_sublinear_pair(tmp_path_factory, small_s, power):
    """Where time grows no faster than bytes (time ratio = bytes ratio ** power, power <= 1), both
    fitting rows are predicted exactly."""
    plan = _plan(tmp_path_factory.mktemp("fit"), sizes=(64e3, 16e6),
                 device=FakeDevice(platform="cpu", device_kind="cpu", device_count=8))
    small, large = (r for r in plan.rows if r.op == "all_gather")
    measured = {small.id: small_s, large.id: small_s * (large.bytes / small.bytes) ** power}
    cal = lab.fit_calibration(plan, measured, local_matmul_s=None)
    assert cal["exact_on_fit"]
    for row in (small, large):
        assert lab.calibrated_prediction(plan, row, cal)["seconds"] == pytest.approx(measured[row.id], rel=1e-9)


@pytest.mark.slow  # imports jax (the lab extra; the slow set's install)
def test_shard_map_passes_the_check_flag_this_jax_has():
    import inspect
    smap = on_devices._shard_map()
    import jax
    base = getattr(jax, "shard_map", None)
    if base is None:
        from jax.experimental.shard_map import shard_map as base
    params = inspect.signature(base).parameters
    assert "check_vma" in params or "check_rep" in params
    assert callable(smap)


def test_counting_rule():
    assert lab.counted("tpu", 8) and lab.counted("gpu", 2)
    assert not lab.counted("cpu", 8) and not lab.counted("gpu", 1)


def test_distributed_env():
    assert on_devices.init_distributed({}) is False
    with pytest.raises(lab.CollectivesLabError, match="DRILL_NUM_PROCESSES"):
        on_devices.init_distributed({"DRILL_COORDINATOR": "localhost:1234", "DRILL_NUM_PROCESSES": "two"})


def test_parse_refuses_other_records():
    with pytest.raises(rec.RecordError, match="not a collectives record"):
        rec.parse({"schema": "rudrite-kernels/lab-record"})


@pytest.mark.slow
def test_end_to_end_on_8_forced_cpu_devices(tmp_path):
    out = tmp_path / "bench"
    preds = tmp_path / "mine.yaml"
    preds.write_text("all_gather@16kB: 1 ms\nsharded_matmul: 5ms\n")
    res = run_drill("lab", "--collectives", "--mesh", "2x4", "--sizes", "16kB,64kB", "--reps", "3",
                    "--predictions", str(preds), "--out", str(out), "--json", env=FORCE8, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(res.stdout)
    path = Path(data["path"])
    assert path.parent == out and path.name.startswith("collectives-0.1-cpu-")
    record = json.loads(path.read_text())
    typed = rec.load(path)  # validated on load
    assert typed.to_dict() == record and typed.rows[0].measured.measured_s == record["rows"][0]["measured"]["measured_s"]
    assert record["device_count"] == 8 and record["mesh"] == {"shape": [2, 4], "axes": ["x", "y"]}
    assert record["status"] == "practice" and record["counted"] is False and record["graded"] == "calibrated"
    ops = {r["op"] for r in record["rows"]}
    assert ops == {"all_gather", "all_reduce", "reduce_scatter", "all_to_all", "sharded_matmul"}
    for row in record["rows"]:
        m = row["measured"]
        assert m["measured_from"] == "device" and m["device_median_s"] > 0, row["id"]
        assert row["predictions"]["calibrated"]["seconds"] > 0
    mine = {r["id"]: r["predictions"]["learner"] for r in record["rows"]}
    assert mine["all_gather@16kB"] == {"seconds": pytest.approx(1e-3)} and mine["all_to_all@64kB"] is None
    assert (out / record["trace_dir"]).is_dir()
    assert not list(out.glob(".*.tmp"))  # saved through safeio under the folder's lock (records.save_new)
    gate = run_drill("gate", "--bench", str(out), "--json")  # GATE 00 neither counts nor skips it
    assert json.loads(gate.stdout)["status"] == "pending" and json.loads(gate.stdout)["skipped"] == []


@pytest.mark.slow
@pytest.mark.parametrize("args, env", [
    (("--mesh", "3x3"), FORCE8),
    (("--sizes", "0"), FORCE8),
    (("--sizes", "1 s"), FORCE8),
    ((), {"XLA_FLAGS": ""}),  # one CPU device
])
def test_lab_bad_input_is_one_line_exit_2(tmp_path, args, env):
    res = run_drill("lab", "--collectives", "--out", str(tmp_path), *args, env=env, timeout=300)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_local_processes_share_one_mesh(tmp_path):
    """Multi-host code path: jax.distributed.initialize in two CPU processes of 4 devices each (gloo)."""
    import subprocess
    import sys

    from tests.conftest import REPO

    port = _free_port()
    procs = []
    for pid in (0, 1):
        env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
               "DRILL_COORDINATOR": f"localhost:{port}", "DRILL_NUM_PROCESSES": "2", "DRILL_PROCESS_ID": str(pid)}
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "drills.cli", "lab", "--collectives", "--sizes", "16kB", "--reps", "2",
             "--out", str(tmp_path / f"out{pid}"), "--json"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=bound(600))
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for rc, out, err in results:
        assert rc == 0, err[-2000:]
    # gloo prints "[Gloo] Rank ... connected" lines on stdout from C++: the JSON object follows them
    first, second = (json.loads(out[out.index("{\n"):]) for _, out, _ in results)
    assert second["path"] is None  # only process 0 writes the record
    record = json.loads(Path(first["path"]).read_text())
    assert record["process_count"] == 2 and record["device_count"] == 8 and record["mesh"]["shape"] == [8]
    assert all(r["measured"]["measured_s"] > 0 for r in record["rows"])


@pytest.mark.slow
def test_end_to_end_on_jax_0_5_2(tmp_path):
    """The collectives lab on the old jax of the CI's second venv (experimental shard_map, check_rep)."""
    import subprocess

    from tests.conftest import REPO

    old_python = os.environ.get("DRILL_OLD_JAX_PYTHON", "").strip()
    if not old_python:
        message = "DRILL_OLD_JAX_PYTHON is not set: make a venv with jax==0.5.2 and the package (see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path / "rec"
    res = subprocess.run([old_python, "-m", "drills.cli", "lab", "--collectives", "--mesh", "2x4", "--sizes",
                          "16kB,64kB", "--reps", "3", "--out", str(out), "--json"], cwd=REPO, capture_output=True,
                         text=True, timeout=bound(900), env={**os.environ, **FORCE8, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-3000:]
    record = json.loads(Path(json.loads(res.stdout)["path"]).read_text())
    rec.parse(record)
    assert record["jax_version"] == "0.5.2" and record["device_count"] == 8
    assert all(r["measured"]["measured_from"] == "device" for r in record["rows"])
    cal = record["constants"]["calibrated"]
    fitted = {r["id"]: r for r in record["rows"] if r["id"] in cal["fitted_on"]}
    if cal["exact_on_fit"]:  # the model it predicts with reproduces the rows it was fitted on
        for row in fitted.values():
            assert row["predictions"]["calibrated"]["seconds"] == pytest.approx(row["measured"]["measured_s"], rel=1e-6)
