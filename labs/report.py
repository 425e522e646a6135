"""Text views of a lab record: the seed's "measured / predicted / ratio" table and the details.

Pure Python (reads the typed record, ``labs.records.types``; a record dict is read as one), so
the gate, the notebook and the device script print the same tables.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from generator.model.units import seconds, si
from labs.records import score
from labs.records.types import LabRecord, XlaCost, as_record
from labs import explain as lab_explain

# The fidelity target: for ops of 1 ms or more, wall median within 15% of device time.
WALL_DEVICE_TOLERANCE = 0.15


def _s(value: float | None) -> str:
    return "-" if value is None else seconds(value)


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def header_lines(record: LabRecord | Mapping[str, Any]) -> list[str]:
    record = as_record(record)
    ds, cal = record.constants.datasheet, record.constants.calibrated
    lines = [f"{record.lab} on {record.device_kind} ({record.platform}), N={record.size}, "
             f"{record.dtype}, {record.reps} timed runs per op, jax {record.jax_version}"]
    if ds:
        lines.append(f"datasheet: {ds.name}: {si(ds.peak_flops_per_s, 'FLOP/s')}, "
                     f"{si(ds.hbm_bytes_per_s, 'B/s')} ({ds.source})")
    else:
        lines.append("datasheet: none (no catalogue entry for this device)")
    if cal:
        lines.append(f"calibrated: {si(cal.peak_flops_per_s, 'FLOP/s')}, "
                     f"{si(cal.hbm_bytes_per_s, 'B/s')} ({cal.source})")
    lines.append(f"dispatch overhead per call: {_s(record.dispatch_overhead_s)}")
    return lines


def wall_banner(record: LabRecord | Mapping[str, Any]) -> list[str]:
    """Loud lines, before any table, when an op's time is the wall clock or noisy (never silent)."""
    record = as_record(record)
    lines = []
    wall = [row for row in record.ops if row.measured.measured_from == "wall"]
    if wall:
        lines.append("!" * 78)
        lines.append(f"WALL CLOCK, NOT DEVICE TIME, for {len(wall)} of {len(record.ops)} ops: these times include "
                     f"dispatch (~{_s(record.dispatch_overhead_s)} a call) and the wait")
        for row in wall:
            reason = row.measured.measured_reason or row.measured.device_grouping or "no device time"
            lines.append(f"  {row.label}: {reason}")
        lines.append(f"  jax {record.jax_version}; GATE 00 does not count a record with wall-clock ops")
        lines.append("!" * 78)
    noisy = [row for row in record.ops if row.measured.noisy]
    for row in noisy:
        lines.append(f"NOISY: {row.label}: {'; '.join(row.measured.noisy_why or [])} "
                     "(its verdict is shown but GATE 00 does not count this record)")
    return lines


def score_table(record: LabRecord | Mapping[str, Any]) -> list[str]:
    """The seed's table: measured, each prediction and its ratio (measured / predicted), the verdict."""
    record = as_record(record)
    head = (f"{'op':<20} {'measured':>10} {'datasheet':>10} {'ratio':>7} {'calibrated':>10} {'ratio':>7} "
            f"{'hierarchy':>10} {'ratio':>7} {'you':>10} {'ratio':>7}  verdict ({record.graded})")
    lines = [head, "-" * len(head)]
    for row in record.ops:
        p, r = row.predictions, row.ratios
        lines.append(
            f"{row.label:<20} {_s(row.measured.measured_s):>10} "
            f"{_s(p.datasheet.seconds if p.datasheet else None):>10} {_r(r.datasheet):>7} "
            f"{_s(p.calibrated.seconds if p.calibrated else None):>10} {_r(r.calibrated):>7} "
            f"{_s(p.hierarchy.seconds if p.hierarchy else None):>10} {_r(r.hierarchy):>7} "
            f"{_s(p.learner.seconds if p.learner else None):>10} {_r(r.learner):>7}  {row.verdict}"
            f"{' (wall clock)' if row.measured.measured_from == 'wall' else ''}"
            f"{' (noisy)' if row.measured.noisy else ''}")
    measured_from = {row.measured.measured_from for row in record.ops}
    lines.append(f"measured = {'device time (median of every run in the profiler traces)' if measured_from == {'device'} else 'device time where the traces had it, else WALL-CLOCK median'}; "
                 f"ratio = measured / predicted; a hit is within {score.WITHIN_FACTOR:g}x either way")
    lines.extend(_hierarchy_line(record))
    return lines


def _hierarchy_line(record: LabRecord) -> list[str]:
    """How the measured hierarchy's predictions did (none: the record has none)."""
    pairs = [(row.measured.measured_s, row.predictions.hierarchy.seconds, row.within_2x.hierarchy)
             for row in record.ops if row.predictions.hierarchy is not None]
    if not pairs:
        return []
    errors = sorted(abs(predicted - measured) / measured for measured, predicted, _ in pairs)
    median = statistics.median(errors)
    hits = sum(1 for *_, within in pairs if within)
    return [f"hierarchy = the floor at each op's own measured rates (drill hierarchy) plus its fixed cost and fresh output, never "
            f"graded: {hits}/{len(pairs)} within {score.WITHIN_FACTOR:g}x, median |predicted - measured| / measured "
            f"{median:.0%}"]


def detail_table(record: LabRecord | Mapping[str, Any]) -> list[str]:
    """Device time (p20, p50, p80, spread over every traced run), wall median, overhead, buffers,
    XLA's own count against the hand count."""
    record = as_record(record)
    head = (f"{'op':<20} {'dev p20':>9} {'p50':>9} {'p80':>9} {'spread':>7} {'runs':>5} {'wall med':>9} "
            f"{'overhead':>9} {'bufs':>5} {'FLOPs':>9} {'XLA FLOPs':>9} {'bytes':>9} {'XLA bytes':>9}")
    lines = [head, "-" * len(head)]
    for row in record.ops:
        m, x = row.measured, row.xla_cost
        overhead = None if m.device_median_s is None else m.wall_median_s - m.device_median_s
        spread = m.device_spread
        spread_text = "-" if spread is None else f"{100 * spread:.0f}%"
        lines.append(
            f"{row.label:<20} {_s(m.device_p20_s):>9} {_s(m.device_median_s):>9} "
            f"{_s(m.device_p80_s):>9} {spread_text:>7} {m.device_runs:>5} {_s(m.wall_median_s):>9} "
            f"{_s(overhead):>9} {m.buffer_sets:>5} {row.flops:>9.3g} {_xla(x, 'flops', 'flops_differ'):>9} "
            f"{row.bytes:>9.3g} {_xla(x, 'bytes_accessed', 'bytes_differ'):>9}")
    lines.append("p20/p50/p80 = quantiles of device time over every run of every trace; spread = IQR / median "
                 "(noisy above 25%); overhead = wall median - device p50; bufs = rotating input sets; "
                 "* = XLA's count differs from the hand count by more than 10%")
    return lines


def _xla(x: XlaCost | None, key: str, flag: str) -> str:
    value = None if x is None else getattr(x, key)
    if x is None or value is None:
        return "n/a"
    return f"{value:.3g}{'*' if getattr(x, flag) else ''}"


def finding_of(record: LabRecord, op: str) -> str | None:
    """Why no reason the record's evidence allows explains ``op``'s miss (judged again), or None."""

    return lab_explain.finding(record, op)


def note_lines(record: LabRecord | Mapping[str, Any]) -> list[str]:
    record = as_record(record)
    lines = []
    for row in record.ops:
        if row.verdict != "miss":
            continue
        miss = row.miss
        head = f"miss: {row.label} ({score.describe_ratio(getattr(row.ratios, record.graded))})"
        if row.explanation and (miss is None or miss.accepted):
            named = f" [{', '.join(miss.reasons)}]" if miss is not None and miss.reasons else ""
            lines.append(f"{head}: {row.explanation}{named}")
        elif miss is not None and miss.text:
            lines.append(f"{head}: REFUSED '{miss.text}': {miss.why or ''}")
        elif finding_of(record, row.op):
            lines.append(f"{head}: unexplained by the evidence (a finding, nothing to ask): {finding_of(record, row.op)}")
        else:
            lines.append(f"{head}: UNEXPLAINED")
    differs = [row.label for row in record.ops if row.xla_cost and
               (row.xla_cost.flops_differ or row.xla_cost.bytes_differ)]
    if differs:
        why = (" (on a CPU, bf16 elementwise work is upcast to f32 and fused differently)"
               if record.platform == "cpu" and record.dtype == "bf16" else "")
        lines.append(f"XLA's own count differs from the hand count for: {', '.join(differs)}{why}")
    gaps = []
    for row in record.ops:
        m = row.measured
        if m.device_median_s and m.wall_median_s > (1 + WALL_DEVICE_TOLERANCE) * m.device_median_s:
            gaps.append(f"{row.label} (+{seconds(m.wall_median_s - m.device_median_s)})")
    if gaps:
        lines.append(f"wall clock over device time by more than {100 * WALL_DEVICE_TOLERANCE:.0f}%: "
                     f"{', '.join(gaps)}; dispatch is {_s(record.dispatch_overhead_s)} a call, so the rest "
                     "is runtime work outside the op's kernels (e.g. allocating a temporary buffer)")
    if record.platform == "cpu":
        lines.append("CPU run: practice only; GATE 00 counts records from a TPU or GPU")
    if record.graded != "learner":
        lines.append(f"no predictions of yours: graded on the {record.graded} predictions for teaching; "
                     "GATE 00 counts only a run whose five predictions were yours, written first")
    s = record.summary
    lines.append(f"{s.within_2x}/{s.ops} within {score.WITHIN_FACTOR:g}x ({s.graded} predictions); "
                 f"unexplained misses: {', '.join(s.unexplained) or 'none'}")
    return lines


def tables(record: LabRecord | Mapping[str, Any]) -> list[str]:
    """Everything up to the "why?" questions: header, the wall/noise banner, both tables."""
    record = as_record(record)
    banner = wall_banner(record)
    return [*header_lines(record), *([""] + banner if banner else []), "", *score_table(record), "",
            *detail_table(record)]


def full_report(record: LabRecord | Mapping[str, Any]) -> list[str]:
    record = as_record(record)
    return [*tables(record), "", *note_lines(record)]
