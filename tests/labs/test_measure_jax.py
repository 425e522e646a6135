"""The JAX side on the CPU: op builders compute the right thing, traces yield device time (slow)."""

import pytest

import jax
import numpy as np

from labs.measure import calibrate, calls as measure, ops, profile
from labs import runner
from labs.measure.device import detect
from tests.labs import synthetic

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", list(ops.OPS))
def test_builders_make_the_inputs_they_declare_and_compute_the_op(name):
    fn, make = ops.build(name, 64, "f32")
    args = make(0)
    assert [(a.shape, str(a.dtype)) for a in args] == [
        (shape, {"f32": "float32", "int32": "int32"}[d]) for shape, d in ops.OPS[name].inputs(64, "f32")]
    out = np.asarray(fn(*args))
    x = [np.asarray(a) for a in args]
    expected = {
        "matmul": lambda: x[0] @ x[1], "skinny_matmul": lambda: x[0] @ x[1], "add": lambda: x[0] + x[1],
        "softmax": lambda: np.exp(x[0] - x[0].max(-1, keepdims=True))
        / np.exp(x[0] - x[0].max(-1, keepdims=True)).sum(-1, keepdims=True),
        "reduce_sum": lambda: x[0].sum(-1), "embedding": lambda: x[0][x[1]],
    }[name]()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert not np.array_equal(np.asarray(make(0)[0]), np.asarray(make(1)[0])), "each set is different data"


def test_measure_call_reads_device_time_from_the_trace(tmp_path):
    fn, make = ops.build("add", 256, "bf16")
    sets = [make(i) for i in range(3)]
    m = measure.measure_call(lambda i: fn(*sets[i % 3]), ops.OPS["add"].module_name(), 4, tmp_path / "t")
    # three traces of 4 + 1 calls, the first of each dropped
    assert m.traces == 3 and m.wall.samples == 12 and len(m.device.runs_s) == 12
    assert m.device_grouping == "step markers" and m.reason == "" and m.measured_from == "device"
    assert 0 < m.device.min_s <= m.device.p20_s <= m.device.p50_s <= m.device.p80_s
    assert m.measured_s == m.device.p50_s and len(m.device.trace_medians_s) == 3
    d = m.to_dict()
    assert d["noisy"] == bool(d["noisy_why"]) and d["device_runs"] == 12
    for t in (1, 2, 3):
        assert profile.trace_files(tmp_path / "t" / f"trace-{t}")
    summary = profile.describe(tmp_path / "t" / "trace-1")
    assert any(p["plane"].startswith("/host:") for p in summary["planes"])


def test_without_a_trace_dir_the_wall_clock_is_the_measurement():
    fn, make = ops.build("reduce_sum", 128, "bf16")
    args = make(0)
    m = measure.measure_call(lambda i: fn(*args), "jit_lab_reduce_sum", 3, None)
    assert m.measured_from == "wall" and m.measured_s == m.wall.median_s and m.reason.startswith("not traced")
    assert m.to_dict()["measured_reason"].startswith("not traced")


def test_a_trace_whose_runs_cannot_be_told_apart_falls_back_to_the_wall_clock_with_the_reason(tmp_path):
    fn, make = ops.build("add", 64, "f32")
    args = make(0)
    # the module name matches no event in the trace: no device time, and the record says why
    m = measure.measure_call(lambda i: fn(*args), "jit_lab_not_this_one", 2, tmp_path / "t")
    assert m.measured_from == "wall" and m.device is None
    assert m.reason == "trace 1: no event of the module in the trace"


def test_timed_calls_rotate_through_distinct_input_sets(tmp_path, monkeypatch):
    """Fails when the runner reuses one input set (rotation off): every call must see other buffers."""
    seen = []
    real_build = ops.build

    def spy_build(name, size, dtype):
        fn, make = real_build(name, size, dtype)

        def lab_add(*args):
            seen.append(tuple(id(a) for a in args))
            return fn(*args)
        lab_add.lower = fn.lower
        return lab_add, make

    monkeypatch.setattr(ops, "build", spy_build)
    plan = runner.make_plan(runner.LabOptions(ops=("add",), size=64, reps=3, dtype="f32", out_dir=tmp_path),
                            detect())
    sets = plan.rotations["add"].sets
    assert sets >= 2
    result = runner._measure_op(plan, "add")
    assert result.measurement.measured_from == "device"
    calls = 2 + 3 * (3 + 1)  # warm-up, then three traces of reps + 1
    assert len(seen) == calls
    assert all(a != b for a, b in zip(seen, seen[1:])), "two calls in a row read the same buffers"
    assert len(set(seen)) == min(calls, sets)


def test_xla_counts_matmul_flops_like_the_hand_count():
    fn, make = ops.build("matmul", 128, "f32")
    cost = ops.OPS["matmul"].cost(128, "f32")
    xla = measure.xla_cost(fn, make(0), cost.flops, cost.bytes)
    assert xla.flops == cost.flops and not xla.flops_differ


def test_calibration_gives_ceilings_through_the_roofline(tmp_path):
    real = detect()
    small = synthetic.device("cpu", real.device_kind, memory_bytes=64 * 2**20, cache_bytes=real.cache_bytes)
    dim, copy_bytes = calibrate.plan_sizes(small, "bf16")
    assert 5 * dim * dim * 2 <= small.budget_bytes and copy_bytes <= small.budget_bytes / 2
    cal = calibrate.calibrate(small, "bf16", 3, tmp_path)
    assert cal.flops_per_s > 0 and cal.bytes_per_s > 0
    assert cal.matmul_flops == ops.OPS["matmul"].cost(dim, "bf16").flops
    assert cal.flops_per_s == pytest.approx(cal.matmul_flops / cal.matmul.measured_s)
    assert cal.bytes_per_s == pytest.approx(cal.copy_bytes_moved / cal.copy.measured_s)
    ceil = cal.ceilings()
    assert ceil.source.startswith(f"calibrated on {real.device_kind}")
    assert (tmp_path / "calibrate_matmul").is_dir() and (tmp_path / "calibrate_copy").is_dir()


def test_detect_maps_this_machine():
    d = detect()
    assert d.platform == "cpu" and d.chip is None and d.memory_bytes and d.jax_version == jax.__version__
