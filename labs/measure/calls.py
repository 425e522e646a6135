"""Measure one jitted op: wall clock (rotated inputs), device time (traces), XLA's own count.

Seconds, bytes and FLOPs throughout. ``measure_call`` is shared by the ops and
the calibration so both are timed the same way.
"""

from __future__ import annotations

import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from labs.measure import profile, timing

# XLA's count and the hand count "differ" when their ratio leaves [1/1.1, 1.1].
XLA_AGREEMENT_FACTOR = 1.1


# At least this many separate traces per op: one trace is one stretch of the machine's
# life, and on a busy CPU identical runs flipped verdicts; three show whether they agree.
TRACES = 3

# An op is `noisy` when its device runs' interquartile range exceeds a quarter of
# their median, or its traces' medians differ by more than 1.25x. Why these: the
# gate's band is a factor of 2 either way. An IQR of 25% puts the middle half of
# runs within about +-12.5% of the median, and 1.25x between traces is the same
# +-12% seen across traces; a ratio can then move by ~1.13x between identical
# runs, under a fifth of the band's width on a log scale (log 1.13 / log 2 = 0.18),
# so a verdict flips only for a prediction already within ~13% of the 2x edge.
# Beyond that the median is not a stable number to grade. For scale: on the H200
# (bench/, 2026-11-29) device minima sat within 1-8% of the medians, while this
# 2-core CPU showed wall spreads up to 41% and calibrations 2-3.6x apart.
NOISY_SPREAD = 0.25
NOISY_TRACE_RATIO = 1.25


@dataclass(frozen=True)
class DeviceTiming:
    """Device seconds per run pooled over every trace (first run of each dropped), with
    quantiles like triton's do_bench (p20, p50, p80) and the spread (IQR / median)."""

    runs_s: tuple[float, ...]
    trace_medians_s: tuple[float, ...]
    p20_s: float
    p50_s: float
    p80_s: float
    min_s: float
    spread: float
    noisy_why: tuple[str, ...]

    @property
    def noisy(self) -> bool:
        return bool(self.noisy_why)


def quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), ``ordered`` ascending."""
    if not ordered:
        raise ValueError("no samples")
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def noise_reasons(ordered: list[float], trace_medians: list[float]) -> tuple[float, tuple[str, ...]]:
    """(IQR / median, why the samples count as noisy: empty when they do not)."""
    median = quantile(ordered, 0.5)
    spread = (quantile(ordered, 0.75) - quantile(ordered, 0.25)) / median if median > 0 else 0.0
    why = []
    if spread > NOISY_SPREAD:
        why.append(f"runs spread {100 * spread:.0f}% (IQR / median) > {100 * NOISY_SPREAD:.0f}%")
    if len(trace_medians) > 1 and min(trace_medians) > 0:
        ratio = max(trace_medians) / min(trace_medians)
        if ratio > NOISY_TRACE_RATIO:
            why.append(f"trace medians {ratio:.2f}x apart > {NOISY_TRACE_RATIO:g}x")
    return spread, tuple(why)


def summarize_device(per_trace: list[list[float]]) -> DeviceTiming:
    runs = sorted(s for trace in per_trace for s in trace)
    medians = [statistics.median(t) for t in per_trace if t]
    spread, why = noise_reasons(runs, medians)
    return DeviceTiming(tuple(runs), tuple(medians), quantile(runs, 0.2), quantile(runs, 0.5),
                        quantile(runs, 0.8), runs[0], spread, why)


@dataclass(frozen=True)
class Measurement:
    wall: timing.WallTiming
    device: DeviceTiming | None
    device_grouping: str
    trace_dir: str | None
    reason: str = ""  # why there is no device time (the wall clock stands in)
    traces: int = 0
    stray_events: int = 0
    trace_reader: str = ""
    # When the traces were taken: Unix ns just before the first trace started and just after the
    # last one stopped (the gate checks each trace's own session lies inside). None: not traced.
    window_unix_ns: tuple[int, int] | None = None

    @property
    def measured_s(self) -> float:
        """The number predictions are scored against: device p50 when the traces had it."""
        return self.device.p50_s if self.device is not None else self.wall.median_s

    @property
    def measured_from(self) -> str:
        return "device" if self.device is not None else "wall"

    @property
    def noisy_why(self) -> tuple[str, ...]:
        if self.device is not None:
            return self.device.noisy_why
        if self.wall.spread > NOISY_SPREAD:
            return (f"wall runs spread {100 * self.wall.spread:.0f}% (IQR / median) > {100 * NOISY_SPREAD:.0f}%",)
        return ()

    def to_dict(self) -> dict[str, Any]:
        """The record's measured columns (JSON; ``labs.records.types.Measured`` reads them back typed)."""
        out: dict[str, Any] = dict(self.wall.to_dict())
        d = self.device
        out.update({"device_median_s": d.p50_s if d else None, "device_min_s": d.min_s if d else None,
                    "device_p20_s": d.p20_s if d else None, "device_p80_s": d.p80_s if d else None,
                    "device_spread": d.spread if d else None,
                    "device_trace_medians_s": list(d.trace_medians_s) if d else [],
                    "device_runs": len(d.runs_s) if d else 0, "device_runs_s": list(d.runs_s) if d else [],
                    "device_grouping": self.device_grouping,
                    "traces": self.traces, "stray_events": self.stray_events, "trace_reader": self.trace_reader,
                    "trace_dir": self.trace_dir, "measured_s": self.measured_s,
                    "measured_from": self.measured_from, "measured_reason": self.reason,
                    "noisy": bool(self.noisy_why), "noisy_why": list(self.noisy_why),
                    "traced_from_unix_ns": self.window_unix_ns[0] if self.window_unix_ns else None,
                    "traced_until_unix_ns": self.window_unix_ns[1] if self.window_unix_ns else None})
        return out


def _marked(call: Callable[[int], Any], module: str, offset: int) -> Callable[[int], Any]:
    """``call`` inside a host-side step marker named for its place in the trace, blocked on
    inside the marker so the device work of call k lies within marker k."""
    import jax  # optional dependency: jax loads only when a lab runs on a device

    def run(i: int) -> Any:
        with jax.profiler.TraceAnnotation(profile.marker_name(module, i)):
            return timing.block(call(offset + i))
    return run


def measure_call(call: Callable[[int], Any], module: str, reps: int, trace_dir: Path | None,
                 traces: int = TRACES) -> Measurement:
    """Warm up, then ``traces`` profiler traces of ``reps + 1`` calls each, timed on the wall clock too.

    ``call(i)`` runs the i-th call (rotating its own inputs) and returns its result.
    Wall clock and device time come from the same calls, so a noisy stretch of
    the machine hits both alike. Each trace's first call is dropped from both (it
    pays for the profiler's first touches). Without a trace directory, where the
    profiler cannot start, or where a trace's runs cannot be told apart, the
    wall clock is the measurement and ``reason`` says why.
    """
    if trace_dir is None:
        return Measurement(timing.summarize(timing.time_calls(call, reps)), None, "", None,
                           "not traced (no trace directory)")
    import jax  # optional dependency: jax loads only when a lab runs on a device

    trace_dir = Path(trace_dir)
    if trace_dir.exists():
        shutil.rmtree(trace_dir)  # this op's traces only: the newest in each folder is the one read
    trace_dir.mkdir(parents=True)
    timing.time_calls(call, 0)  # compile and warm up outside the traces
    offset = timing.DEFAULT_WARMUP
    walls: list[float] = []
    per_trace: list[list[float]] = []
    strays, how, reader, failure = 0, "", "", ""
    traced_from_ns = time.time_ns()
    for t in range(traces):
        folder = trace_dir / f"trace-{t + 1}"
        try:
            profile.start_trace(folder)
        except Exception as exc:  # a backend without a working profiler: keep the wall clock, say why
            failure = _failed(exc)
            break
        try:
            samples = timing.time_calls(_marked(call, module, offset), reps + 1, warmup=0)
        finally:
            stop_error = _stop_trace(jax)
        offset += reps + 1
        walls.extend(samples[1:])
        if stop_error is not None:
            failure = _failed(stop_error)
            break
        try:
            times = profile.module_times(folder, module, expected_runs=reps + 1)
        except Exception as exc:  # an unreadable trace loses the device column, not the run
            failure = _failed(exc)
            break
        finally:
            _compress(folder)
        how, reader, strays = times.grouping, times.reader, strays + times.stray
        if times.uncertain:
            failure = f"trace {t + 1}: {times.uncertain}"
            break
        per_trace.append(times.run_seconds)
    window = (traced_from_ns, time.time_ns())
    if failure:
        if not walls:
            walls = timing.time_calls(lambda i: call(offset + i), reps, warmup=0)
        return Measurement(timing.summarize(walls), None, how, str(trace_dir), failure, len(per_trace),
                           strays, reader, window)
    return Measurement(timing.summarize(walls), summarize_device(per_trace), how, str(trace_dir), "",
                       traces, strays, reader, window)


def _compress(folder: Path) -> None:
    try:
        profile.compress(folder)
    except OSError:  # a trace left uncompressed is still readable; the run goes on
        pass


def _stop_trace(jax: Any) -> Exception | None:
    try:
        profile.stop_trace()
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

    def to_dict(self) -> dict[str, float | bool | None]:
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


def xla_cost(jitted: Any, args: tuple[Any, ...], hand_flops: int, hand_bytes: int) -> XlaCost | None:
    """XLA's count for ``jitted(*args)``; None when this backend offers no cost analysis."""
    try:
        counts = read_cost_analysis(jitted.lower(*args).compile().cost_analysis())
    except Exception:  # cost analysis is optional in PJRT plugins; its absence must not stop the lab
        return None
    return XlaCost(counts["flops"], counts["bytes_accessed"], counts["transcendentals"], hand_flops, hand_bytes)
