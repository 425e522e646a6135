"""Lab plans and records built without jax: a described device, measurements given as numbers.

The records go through the real ``runner.make_plan`` and ``runner.assemble``,
so their predictions come from generator.model.roofline like a real run's.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from generator.model import catalogue
from labs.measure import ops as lab_ops
from labs import runner
from labs.measure.calibrate import Calibration
from labs.measure.device import DeviceInfo
from labs.measure.calls import DeviceTiming, Measurement
from labs.measure.timing import WallTiming

NOW = dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.timezone.utc)


def device(platform: str = "gpu", device_kind: str = "NVIDIA H200", memory_bytes: float | None = 100e9,
           cache_bytes: int | None = 50_000_000) -> DeviceInfo:
    chip = catalogue.load().for_device_kind(device_kind) if platform != "cpu" else None
    return DeviceInfo(platform, device_kind, chip, memory_bytes, "test", cache_bytes, "test",
                      "testhost", "0.0.test", "0.0.test", "3.11.0", 1)


def plan(tmp_path: Path, dev: DeviceInfo | None = None, **options) -> runner.Plan:
    # 3 timed runs per trace: what ``measurement``'s nine runs over three traces are.
    opts = runner.LabOptions(out_dir=tmp_path / "bench", size=options.pop("size", 4096),
                             reps=options.pop("reps", 3), **options)
    return runner.make_plan(opts, dev or device(), now=NOW)


def _ns(seconds: float) -> float:
    """Whole nanoseconds, as a trace holds them (so fabricated traces re-derive them exactly)."""
    return max(1, round(seconds * 1e9)) * 1e-9


# Each synthetic measurement's traces are taken in its own slot of this many ns (three sessions
# of tests/labs/fabricate.SESSION_NS fit in one, one after another).
SLOT_NS = 100_000_000_000


def unix_ns(when: dt.datetime | str) -> int:
    """An aware time (or its ISO text) as Unix ns."""
    when = dt.datetime.fromisoformat(when) if isinstance(when, str) else when
    return round(when.timestamp() * 1e6) * 1000


def slot(base_unix_ns: int, k: int) -> tuple[int, int]:
    """The k-th measurement window after ``base_unix_ns`` (measurements run one after another)."""
    start = base_unix_ns + k * SLOT_NS
    return start, start + SLOT_NS - 1_000_000_000


def measurement(seconds: float, device_seconds: float | None = None, *, wall_only: bool = False,
                noisy: bool = False, trace_dir: Path | None = None,
                window_unix_ns: tuple[int, int] | None = None) -> Measurement:
    """Device time ``seconds`` (p50, whole nanoseconds) from three quiet traces; ``wall_only``: the
    trace failed; ``noisy``: the runs' spread is over the threshold; ``trace_dir``: where
    ``write_traces`` puts the traces; ``window_unix_ns``: when they were taken."""
    wall = WallTiming(seconds, seconds * 0.95, seconds * 1.1, 0.02, 57)
    if wall_only:
        return Measurement(wall, None, "", None, "trace failed: RuntimeError: test", 0)
    dev = _ns(seconds if device_seconds is None else device_seconds)
    lo, hi = _ns(dev * 0.99), _ns(dev * 1.01)
    why = ("runs spread 60% (IQR / median) > 25%",) if noisy else ()
    device = DeviceTiming(tuple(sorted([lo, dev, hi] * 3)), (dev, dev, dev), lo, dev, hi,
                          lo, 0.6 if noisy else 0.02, why)
    return Measurement(wall, device, "step markers", None if trace_dir is None else str(trace_dir), "", 3, 0, "test",
                       window_unix_ns)


def write_traces(m: Measurement, platform: str, module: str, parameters=None) -> None:
    """Fabricated traces for ``m`` in its ``trace_dir`` (tests/labs/fabricate.py): sessions inside its
    window, and the compiled module for ``parameters`` (labs.gate.verify.op_parameters) when given."""
    from tests.labs import fabricate

    if m.device is not None and m.trace_dir is not None:
        fabricate.write_for_measurement(Path(m.trace_dir), platform, module, list(m.device.runs_s), m.traces,
                                        parameters=None if parameters is None else list(parameters),
                                        window_unix_ns=m.window_unix_ns)


def probes_for(p: runner.Plan, flops_per_s: float, bytes_per_s: float, fixed_cost_s: float = 2e-6) -> dict:
    """The record's ``probes``: per op kind a fixed-cost measurement (``fixed_cost_s`` beyond the op's
    own work at its smallest size) and a calibration whose matmul and copy attain (about) the given
    speeds, their traces written beside the plan's (the layout ``labs.records.evidence`` measures)."""
    from labs.measure import probes

    probed = probed_for(p, flops_per_s, bytes_per_s, fixed_cost_s)
    return probes.probes_dict(probed.fixed, probed.calibration, p.stored_path)


def probed_for(p: runner.Plan, flops_per_s: float, bytes_per_s: float, fixed_cost_s: float = 2e-6):
    """``probes_for``'s probes as ``labs.measure.probes.measure_probes`` returns them (a ``Probed``)."""
    from generator.model import costs, roofline
    from labs.measure import probes
    from labs.measure import ops as lab_ops

    from labs.gate.verify import op_parameters

    root = p.trace_dir
    dim = 1024
    mm_flops = costs.cost("matmul", (dim, dim, dim), p.options.dtype).flops
    moved = 2 * 2**28
    base = unix_ns(NOW) - 7200 * 10**9  # the probes: measured before the predictions were asked for
    mm = measurement(mm_flops / flops_per_s, trace_dir=root / "calibrate_matmul" if root else None,
                     window_unix_ns=slot(base, 0))
    cp = measurement(moved / bytes_per_s, trace_dir=root / "calibrate_copy" if root else None,
                     window_unix_ns=slot(base, 1))
    cal = Calibration(p.device.device_kind, p.options.dtype, mm_flops / mm.measured_s, moved / cp.measured_s,
                      dim, mm_flops, mm, moved, cp)
    edge = probes.fixed_cost_edge(p.options.size, p.options.ops)
    fixed = {}
    for k, op in enumerate(p.options.ops, start=2):
        work_s = roofline.estimate(cal.ceilings(), lab_ops.OPS[op].cost(edge, p.options.dtype)).floor_s
        m = measurement(work_s + fixed_cost_s, trace_dir=root / "fixed_cost" / op if root else None,
                        window_unix_ns=slot(base, k))
        write_traces(m, p.device.platform, lab_ops.OPS[op].module_name(), op_parameters(op, edge, p.options.dtype))
        fixed[op] = (m, False, edge)
    for m, module, shapes in ((mm, "jit_lab_calibrate_matmul", op_parameters("matmul", dim, p.options.dtype)),
                              (cp, "jit_lab_calibrate_copy", None)):
        write_traces(m, p.device.platform, module, shapes)
    return probes.Probed(cal, False, fixed, NOW.isoformat(timespec="seconds"))


def calibration(flops_per_s: float, bytes_per_s: float, dtype: str = "bf16") -> Calibration:
    m = measurement(1e-3)
    return Calibration("Test Device", dtype, flops_per_s, bytes_per_s, 1024, 2 * 1024**3, m, 2**28, m)


def record(tmp_path: Path, ratios: dict[str, float] | None = None, *, dev: DeviceInfo | None = None,
           learner: dict[str, runner.LearnerPrediction] | None = None,
           explanations: dict[str, str] | None = None, calibrate: Calibration | None = None,
           wall_ops: tuple[str, ...] = (), noisy_ops: tuple[str, ...] = (),
           read: runner.PredictionsRead | None = None, started_at: str | None = None, mine: bool = True,
           probes: dict | None | str = "default", **options) -> dict:
    """A record, as its JSON, whose ops measure ``ratio`` x their graded prediction (default 1.0).

    ``mine`` (default): without ``learner``, the learner predicted exactly the model's
    floors (so the record can count); ``mine=False``: no learner predictions at all.
    With learner predictions and no ``read``, they count as read a minute before
    the measurement began (``started_at``, default the plan's stamp). ``probes``: the fixed cost and
    attained speeds (default: a 2 µs fixed cost, 70% of the datasheet's FLOP/s and a third of its
    bytes/s; None: none)."""
    p = plan(tmp_path, dev, **options)
    ratios = ratios or {}
    base = p.datasheet_estimates()
    if not base and calibrate is not None:
        from generator.model import roofline
        base = {n: roofline.estimate(calibrate.ceilings(), c) for n, c in p.costs.items()}
    if learner is None and mine:
        learner = {n: runner.LearnerPrediction(e.floor_s, f"{e.floor_s!r}s") for n, e in base.items()}
    from labs.gate.verify import op_parameters

    measured = {}
    started = started_at or NOW.isoformat()
    for k, name in enumerate(p.options.ops):
        if learner and name in learner and all(n in learner for n in p.options.ops):
            predicted = learner[name].seconds
        else:
            predicted = base[name].floor_s
        m = measurement(predicted * ratios.get(name, 1.0), wall_only=name in wall_ops, noisy=name in noisy_ops,
                        trace_dir=p.trace_dir / name if p.trace_dir else None,
                        window_unix_ns=slot(unix_ns(started) + 60 * 10**9, k))
        write_traces(m, p.device.platform, lab_ops.OPS[name].module_name(),
                     op_parameters(name, p.options.size, p.options.dtype))
        measured[name] = runner.OpResult(m, None)
    if learner and read is None:
        read = runner.PredictionsRead("test", (dt.datetime.fromisoformat(started) - dt.timedelta(minutes=1)).isoformat())
    if probes == "default":
        peaks = p.datasheet or (calibrate.ceilings() if calibrate else None)
        probes = probes_for(p, 0.7 * peaks.peak_flops_per_s if peaks else 1e12,
                            peaks.hbm_bytes_per_s / 3 if peaks else 1e11)
    rec = runner.assemble(p, measured, learner or {}, calibrate, 5e-6, read=read, started_at=started, probes=probes)
    return runner.explain(rec, explanations or {}).to_dict()  # as stored: tests edit it as a forger would


def json_edit(edit):
    """``records.update``'s change for an ``edit`` that mutates the record's JSON in place (as a hand
    editing the file would): the stored record's dict, edited, read back as a typed record."""
    from labs.records.types import as_record

    def change(record):
        data = record.to_dict()
        edit(data)
        return as_record(data)
    return change
