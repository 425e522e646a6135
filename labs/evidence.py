"""The evidence a miss is explained with: per op, the numbers the miss reasons are decided on.

Measured once per run, on every device (CPU included):
- the fixed cost: a trivial jitted op's device time (``fixed_cost_probe``),
  the per-call cost a small op cannot go below;
- the probes: attained FLOP/s (a large matmul) and bytes/s (a large copy),
  ``labs.calibrate``'s two measurements;
- per op, XLA's own count of the compiled program (``measure.xla_cost``).
``attach`` writes each op's ``evidence`` object from the record's own numbers
(pure Python), and ``generator.miss_reasons`` decides which reasons they
support; the gate re-derives the same objects from the same numbers.
Units: seconds, bytes, FLOPs, bytes/s, FLOP/s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from generator import miss_reasons
from labs.records import emulated_dtype  # noqa: F401  (defined there: records never imports evidence)

if TYPE_CHECKING:
    from labs.calibrate import Calibration
    from labs.measure import Measurement

FIXED_COST_MODULE = "jit_lab_fixed_cost"


def fixed_cost_probe(reps: int, trace_dir: Path | None) -> "Measurement":
    """Device time of a trivial jitted op (x + 1 on one f32 element), timed like every op."""
    import jax
    import jax.numpy as jnp

    from labs import measure

    def lab_fixed_cost(x):
        return x + 1

    fn = jax.jit(lab_fixed_cost)
    x = jnp.zeros((1,), jnp.float32)
    return measure.measure_call(lambda i: fn(x), FIXED_COST_MODULE, reps, trace_dir)


def probes_dict(fixed: "Measurement", calibration: "Calibration", stored_path) -> dict:
    """The record's ``probes``: the fixed cost and the two attained speeds, with their measurements."""
    fixed_d = fixed.to_dict()
    fixed_d["trace_dir"] = stored_path(fixed_d["trace_dir"])
    return {"fixed_cost_s": fixed.measured_s, "fixed_cost_from": fixed.measured_from,
            "attained_flops_per_s": calibration.flops_per_s, "attained_bytes_per_s": calibration.bytes_per_s,
            "fixed_cost": fixed_d, "calibration": calibration.to_dict(stored_path)}


def attach(record: dict) -> dict:
    """Each op's ``evidence`` from the record's own numbers (and which reasons they support)."""
    from labs import records

    for row in record["ops"]:
        ev = records.op_evidence(record, row["op"])
        findings = miss_reasons.assess(ev)
        row["evidence"] = {
            "xla_flops": ev.xla_flops, "xla_bytes": ev.xla_bytes, "fixed_cost_s": ev.fixed_cost_seconds,
            "attained_bytes_per_s": ev.attained_bytes_per_s, "attained_flops_per_s": ev.attained_flops_per_s,
            "peak_bytes_per_s": ev.peak_bytes_per_s, "peak_flops_per_s": ev.peak_flops_per_s,
            "floor_s": ev.floor_seconds, "bound": ev.bound, "emulated_dtype": ev.emulated_dtype,
            "lacking": list(ev.lacking),
            "supported_reasons": [f.reason_id for f in findings if f.supported],
            "findings": [f.to_dict() for f in findings],
        }
    return record


def table(record: dict) -> list[str]:
    """The evidence table for every op (shown only after the learner has answered "why?")."""
    from generator.units import fmt

    def n(value, unit):
        return "-" if value is None else fmt(value, unit)

    head = (f"{'op':<20} {'floor':>9} {'fixed':>9} {'XLA bytes':>10} {'counted':>10} {'attained B/s':>13} "
            f"{'attained FLOP/s':>16}  supported reasons")
    lines = [head, "-" * len(head)]
    for row in record["ops"]:
        e = row.get("evidence") or {}
        lines.append(f"{row['label']:<20} {n(e.get('floor_s'), 's'):>9} {n(e.get('fixed_cost_s'), 's'):>9} "
                     f"{n(e.get('xla_bytes'), 'B'):>10} {n(row['bytes'], 'B'):>10} "
                     f"{n(e.get('attained_bytes_per_s'), 'B/s'):>13} {n(e.get('attained_flops_per_s'), 'FLOP/s'):>16}"
                     f"  {', '.join(e.get('supported_reasons') or []) or '-'}")
        for f in e.get("findings") or []:
            if f["supported"]:
                lines.append(f"    {f['reason_id']}: {f['why']}")
    lines.append("fixed = a trivial op's device time; attained = the matmul and copy probes; "
                 "reasons: `drill miss-reasons`")
    return lines
