"""Measure one jitted op: wall clock (rotated inputs), device time (trace), XLA's own count.

Seconds, bytes and FLOPs throughout. ``measure_call`` is shared by the ops and
the calibration so both are timed the same way.
"""

from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from labs import profile, timing

# XLA's count and the hand count "differ" when their ratio leaves [1/1.1, 1.1].
XLA_AGREEMENT_FACTOR = 1.1


@dataclass(frozen=True)
class Measurement:
    wall: timing.WallTiming
    device_median_s: float | None
    device_min_s: float | None
    device_runs: int
    device_grouping: str
    trace_dir: str | None

    @property
    def measured_s(self) -> float:
        """The number predictions are scored against: device time when the trace had it."""
        return self.device_median_s if self.device_median_s is not None else self.wall.median_s

    @property
    def measured_from(self) -> str:
        return "device" if self.device_median_s is not None else "wall"

    def to_dict(self) -> dict:
        out = self.wall.to_dict()
        out.update({"device_median_s": self.device_median_s, "device_min_s": self.device_min_s,
                    "device_runs": self.device_runs, "device_grouping": self.device_grouping,
                    "trace_dir": self.trace_dir, "measured_s": self.measured_s,
                    "measured_from": self.measured_from})
        return out


def measure_call(call: Callable[[int], Any], module: str, reps: int, trace_dir: Path | None) -> Measurement:
    """Warm up, then time ``reps`` calls on the wall clock while a profiler trace records them.

    ``call(i)`` runs the i-th call (rotating its own inputs) and returns its result.
    Wall clock and device time come from the same calls, so a noisy stretch of
    the machine hits both alike. One extra call opens the traced loop and is
    dropped from both (it pays for the profiler's first touches). Without a
    trace directory, or where the profiler cannot start, the wall clock alone
    is the measurement.
    """
    if trace_dir is None:
        return Measurement(timing.summarize(timing.time_calls(call, reps)), None, None, 0, "not traced", None)
    import jax

    trace_dir = Path(trace_dir)
    if trace_dir.exists():
        shutil.rmtree(trace_dir)  # one trace per op directory: the newest is the one read
    trace_dir.mkdir(parents=True)
    timing.time_calls(call, 0)  # compile and warm up outside the trace
    try:
        jax.profiler.start_trace(str(trace_dir), profiler_options=profile.profiler_options())
    except Exception as exc:  # a backend without a working profiler: keep the wall clock, say why
        samples = timing.time_calls(call, reps, warmup=0)
        return Measurement(timing.summarize(samples), None, None, 0, _failed(exc), None)
    try:
        samples = timing.time_calls(lambda i: call(timing.DEFAULT_WARMUP + i), reps + 1, warmup=0)[1:]
    finally:
        stop_error = _stop_trace(jax)
    wall = timing.summarize(samples)
    if stop_error is not None:
        return Measurement(wall, None, None, 0, _failed(stop_error), None)
    try:
        times = profile.module_times(trace_dir, module, expected_runs=reps + 1)
    except Exception as exc:  # an unreadable trace loses the device column, not the run
        return Measurement(wall, None, None, 0, _failed(exc), str(trace_dir))
    if not times.run_seconds:
        return Measurement(wall, None, None, 0, times.grouping, str(trace_dir))
    return Measurement(wall, statistics.median(times.run_seconds), min(times.run_seconds),
                       len(times.run_seconds), times.grouping, str(trace_dir))


def _stop_trace(jax) -> Exception | None:
    try:
        jax.profiler.stop_trace()
    except Exception as exc:  # reported in the record; the wall clock still stands
        return exc
    return None


def _failed(exc: BaseException) -> str:
    first = str(exc).splitlines()[0][:120] if str(exc) else ""
    return f"trace failed: {type(exc).__name__}: {first}"


@dataclass(frozen=True)
class XlaCost:
    """XLA's own count from ``compile().cost_analysis()`` next to the hand count."""

    flops: float | None  # None: XLA could not count it (see read_cost_analysis)
    bytes_accessed: float | None
    transcendentals: float | None
    hand_flops: int
    hand_bytes: int

    @property
    def flops_differ(self) -> bool:
        return _differ(self.flops, self.hand_flops)

    @property
    def bytes_differ(self) -> bool:
        return _differ(self.bytes_accessed, self.hand_bytes)

    def to_dict(self) -> dict:
        return {"flops": self.flops, "bytes_accessed": self.bytes_accessed,
                "transcendentals": self.transcendentals,
                "flops_differ": self.flops_differ, "bytes_differ": self.bytes_differ}


def _differ(xla: float | None, hand: float) -> bool:
    if xla is None or xla == hand:
        return False
    if xla <= 0 or hand <= 0:
        return True
    return not (1 / XLA_AGREEMENT_FACTOR <= xla / hand <= XLA_AGREEMENT_FACTOR)


def read_cost_analysis(analysis: Any) -> dict[str, float | None]:
    """XLA's cost dict, tolerant of its shapes across jax versions: absent keys mean zero.

    A negative count means XLA could not count the op (on the H200, jax 0.11.2
    reports -1 for a matmul lowered to a cuBLAS custom call): that is None, "not
    counted", never a disagreement with the hand count.
    """
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    analysis = analysis or {}

    def count(key: str) -> float | None:
        value = float(analysis.get(key, 0.0) or 0.0)
        return None if value < 0 else value

    return {"flops": count("flops"), "bytes_accessed": count("bytes accessed"),
            "transcendentals": count("transcendentals")}


def xla_cost(jitted: Any, args: tuple, hand_flops: int, hand_bytes: int) -> XlaCost | None:
    """XLA's count for ``jitted(*args)``; None when this backend offers no cost analysis."""
    try:
        counts = read_cost_analysis(jitted.lower(*args).compile().cost_analysis())
    except Exception:  # cost analysis is optional in PJRT plugins; its absence must not stop the lab
        return None
    return XlaCost(counts["flops"], counts["bytes_accessed"], counts["transcendentals"], hand_flops, hand_bytes)
