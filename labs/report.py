"""Text views of a lab record: the seed's "measured / predicted / ratio" table and the details.

Pure Python (reads the record dict only), so the gate, the notebook and the
device script print the same tables.
"""

from __future__ import annotations

from generator.units import seconds, si
from labs import score

# The fidelity target: for ops of 1 ms or more, wall median within 15% of device time.
WALL_DEVICE_TOLERANCE = 0.15


def _s(value: float | None) -> str:
    return "-" if value is None else seconds(value)


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def header_lines(record: dict) -> list[str]:
    consts = record["constants"]
    ds, cal = consts["datasheet"], consts["calibrated"]
    lines = [f"{record['lab']} on {record['device_kind']} ({record['platform']}), N={record['size']}, "
             f"{record['dtype']}, {record['reps']} timed runs per op, jax {record['jax_version']}"]
    if ds:
        lines.append(f"datasheet: {ds['name']}: {si(ds['peak_flops_per_s'], 'FLOP/s')}, "
                     f"{si(ds['hbm_bytes_per_s'], 'B/s')} ({ds['source']})")
    else:
        lines.append("datasheet: none (no catalogue entry for this device)")
    if cal:
        lines.append(f"calibrated: {si(cal['peak_flops_per_s'], 'FLOP/s')}, "
                     f"{si(cal['hbm_bytes_per_s'], 'B/s')} ({cal['source']})")
    lines.append(f"dispatch overhead per call: {_s(record['dispatch_overhead_s'])}")
    return lines


def score_table(record: dict) -> list[str]:
    """The seed's table: measured, each prediction and its ratio (measured / predicted), the verdict."""
    head = (f"{'op':<20} {'measured':>10} {'datasheet':>10} {'ratio':>7} {'calibrated':>10} {'ratio':>7} "
            f"{'you':>10} {'ratio':>7}  verdict ({record['graded']})")
    lines = [head, "-" * len(head)]
    for row in record["ops"]:
        p, r = row["predictions"], row["ratios"]
        lines.append(
            f"{row['label']:<20} {_s(row['measured']['measured_s']):>10} "
            f"{_s(p['datasheet'] and p['datasheet']['seconds']):>10} {_r(r['datasheet']):>7} "
            f"{_s(p['calibrated'] and p['calibrated']['seconds']):>10} {_r(r['calibrated']):>7} "
            f"{_s(p['learner'] and p['learner']['seconds']):>10} {_r(r['learner']):>7}  {row['verdict']}")
    measured_from = {row["measured"]["measured_from"] for row in record["ops"]}
    lines.append(f"measured = {'device time from the profiler trace' if measured_from == {'device'} else 'device time where the trace had it, else wall-clock median'}; "
                 f"ratio = measured / predicted; a hit is within {score.WITHIN_FACTOR:g}x either way")
    return lines


def detail_table(record: dict) -> list[str]:
    """Wall clock (median, min, spread), device time, overhead, buffers, XLA's count against the hand count."""
    head = (f"{'op':<20} {'wall med':>9} {'min':>9} {'spread':>7} {'device':>9} {'overhead':>9} {'bufs':>5} "
            f"{'FLOPs':>9} {'XLA FLOPs':>9} {'bytes':>9} {'XLA bytes':>9}")
    lines = [head, "-" * len(head)]
    for row in record["ops"]:
        m, x = row["measured"], row["xla_cost"]
        overhead = None if m["device_median_s"] is None else m["wall_median_s"] - m["device_median_s"]
        lines.append(
            f"{row['label']:<20} {_s(m['wall_median_s']):>9} {_s(m['wall_min_s']):>9} "
            f"{100 * m['wall_spread']:>6.1f}% {_s(m['device_median_s']):>9} {_s(overhead):>9} "
            f"{m['buffer_sets']:>5} {row['flops']:>9.3g} {_xla(x, 'flops', 'flops_differ'):>9} "
            f"{row['bytes']:>9.3g} {_xla(x, 'bytes_accessed', 'bytes_differ'):>9}")
    lines.append("spread = interquartile range / median; overhead = wall median - device median; "
                 "bufs = rotating input sets; * = XLA's count differs from the hand count by more than 10%")
    return lines


def _xla(x: dict | None, key: str, flag: str) -> str:
    if x is None or x[key] is None:
        return "n/a"
    return f"{x[key]:.3g}{'*' if x[flag] else ''}"


def note_lines(record: dict) -> list[str]:
    lines = []
    for row in record["ops"]:
        if row["verdict"] == "miss":
            why = row["explanation"] or "UNEXPLAINED"
            lines.append(f"miss: {row['label']} ({score.describe_ratio(row['ratios'][record['graded']])}): {why}")
    differs = [row["label"] for row in record["ops"] if row["xla_cost"] and
               (row["xla_cost"]["flops_differ"] or row["xla_cost"]["bytes_differ"])]
    if differs:
        why = (" (on a CPU, bf16 elementwise work is upcast to f32 and fused differently)"
               if record["platform"] == "cpu" and record["dtype"] == "bf16" else "")
        lines.append(f"XLA's own count differs from the hand count for: {', '.join(differs)}{why}")
    gaps = []
    for row in record["ops"]:
        m = row["measured"]
        if m["device_median_s"] and m["wall_median_s"] > (1 + WALL_DEVICE_TOLERANCE) * m["device_median_s"]:
            gaps.append(f"{row['label']} (+{seconds(m['wall_median_s'] - m['device_median_s'])})")
    if gaps:
        lines.append(f"wall clock over device time by more than {100 * WALL_DEVICE_TOLERANCE:.0f}%: "
                     f"{', '.join(gaps)}; dispatch is {_s(record['dispatch_overhead_s'])} a call, so the rest "
                     "is runtime work outside the op's kernels (e.g. allocating a temporary buffer)")
    if record["platform"] == "cpu":
        lines.append("CPU run: practice only; GATE 00 counts records from a TPU or GPU")
    s = record["summary"]
    lines.append(f"{s['within_2x']}/{s['ops']} within {score.WITHIN_FACTOR:g}x ({s['graded']} predictions); "
                 f"unexplained misses: {', '.join(s['unexplained']) or 'none'}")
    return lines


def full_report(record: dict) -> list[str]:
    return [*header_lines(record), "", *score_table(record), "", *detail_table(record), "", *note_lines(record)]
