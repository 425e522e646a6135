"""The evidence a miss is explained with, read from a lab record (pure Python, no jax).

``op_evidence`` builds each op's ``generator.explain.OpEvidence`` from a record's own numbers, and
``attach`` stores those numbers as the op's ``evidence`` object, never which reasons they support (that
is judged when the learner answers); ``hierarchy_prediction`` is the measured hierarchy's prediction of
an op, ``table`` the evidence table. The probes behind the numbers are ``labs.measure.probes``'. Units:
seconds, bytes, FLOPs, bytes/s, FLOP/s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.model import costs, roofline
from generator import explain as miss_reasons
from generator.model.hierarchy import CallRate, Hierarchy, HierarchyError, Level
from generator.problems import record_mistakes
from generator.model.units import fmt
from labs.records import ops as lab_ops
from labs.records.types import Evidence, LabRecord, OpRow, Probes


def dtype_verdict(dtype: str, converts: int | None, xla_bytes: float | None,
                  hand_bytes: float) -> tuple[bool | None, str]:
    """(emulated, how we know) for an op computed in ``dtype``: converts to f32 in the optimized
    HLO, else (no HLO text) XLA's bytes against the hand count; f32 is native by definition."""
    if dtype == "f32":
        return False, "f32 needs no conversion"
    if converts is not None:
        return converts > 0, f"{converts} convert(s) to f32 in the optimized HLO"
    if xla_bytes is not None and hand_bytes > 0:
        share = xla_bytes / hand_bytes
        return share >= miss_reasons.TRAFFIC_FACTOR, f"no HLO text; XLA's bytes are {share:.2f}x the hand count"
    return None, "neither the optimized HLO nor XLA's bytes were recorded"


def _graded_floor(row: OpRow) -> tuple[float, str, str] | None:
    """(floor seconds, bound, which constants) from the datasheet, else the calibration."""
    for kind, est in (("datasheet", row.predictions.datasheet), ("calibrated", row.predictions.calibrated)):
        if est:
            return float(est.seconds), str(est.bound), kind
    return None


def _peaks(record: LabRecord, kind: str) -> tuple[float, float]:
    consts = record.constants.datasheet if kind == "datasheet" else record.constants.calibrated
    if consts is None:
        return 0.0, 0.0
    return float(consts.peak_flops_per_s or 0.0), float(consts.hbm_bytes_per_s or 0.0)


def _noisy_probes(probes: Probes | None, op: str) -> tuple[str, ...]:
    """The probes this op's evidence may not rest on: noisy (older records: their stored flags)."""
    if probes is None:
        return ()
    if probes.noisy is not None:
        noisy = [str(p) for p in probes.noisy if p != "fixed cost"]
        fixed = (probes.fixed_cost_by_op or {}).get(op) or {}
        if fixed.get("noisy"):
            noisy.insert(0, "fixed cost")
        return tuple(noisy)
    noisy = []  # version 3: the probes' own measurement dicts carry their noise flags
    if (probes.fixed_cost or {}).get("noisy"):
        noisy.append("fixed cost")
    cal = probes.calibration or {}
    if (cal.get("copy") or {}).get("noisy"):
        noisy.append("copy")
    if (cal.get("matmul") or {}).get("noisy"):
        noisy.append("matmul")
    return tuple(noisy)


def op_evidence(record: LabRecord, op: str) -> miss_reasons.OpEvidence:
    """The ``OpEvidence`` of one op of ``record``, from the record's own numbers.

    A record from an older schema is judged on what it has: missing numbers are None
    and ``lacking`` names them. KeyError for an op the record does not have."""
    row = record.op(op)
    if row is None:
        raise KeyError(f"the record has no op '{op}'")
    lacking = []
    floor = _graded_floor(row)
    if floor is None:
        raise KeyError(f"the record has no roofline prediction for '{op}'")
    floor_s, bound, kind = floor
    peak_flops, peak_bytes = _peaks(record, kind)
    xla = row.xla_cost
    if not xla:
        lacking.append("XLA cost analysis")
    probes = record.probes
    per_op = ((probes.fixed_cost_by_op if probes else None) or {}).get(op) or {}
    fixed = per_op.get("fixed_cost_s", probes.fixed_cost_s if probes else None)
    if fixed is None:
        lacking.append("fixed cost (this op kind's device time at its smallest size)")
    elif not per_op:
        lacking.append("fixed cost per op kind (older record: a trivial op's time stands in)")
    cal = record.constants.calibrated
    attained_b = probes.attained_bytes_per_s if probes else (cal.hbm_bytes_per_s if cal else None)
    attained_f = probes.attained_flops_per_s if probes else (cal.peak_flops_per_s if cal else None)
    if attained_b is None or attained_f is None:
        lacking.append("calibration probes (attained bytes/s and FLOP/s)")
    compiled = row.compiled or {}
    dtype = str(record.dtype)
    if "converts" in compiled:
        emulated, how = dtype_verdict(dtype, compiled.get("converts"), xla.bytes_accessed if xla else None,
                                      float(row.bytes))
    else:
        emulated, how = None, ""
        if dtype == "f32":
            emulated, how = False, "f32 needs no conversion"
        else:
            lacking.append("the optimized HLO's converts (whether the dtype is emulated)")
    working = _working_set(row.measured.buffer_sets, row.measured.buffer_set_bytes)
    cache = record.device.cache_bytes
    learner = row.predictions.learner if record.graded == "learner" else None
    measured_hierarchy = _hierarchy((probes.hierarchy if probes else None) or {}, lacking)
    level = measured_hierarchy.level_for(working) if (measured_hierarchy and working) else None
    call = level.for_call(float(row.bytes)) if level is not None else None  # main memory, by call size
    shape = tuple(int(x) for x in row.shape)
    is_matmul = row.cost_op == "matmul"
    rate = measured_hierarchy.rate(dtype, shape) if (measured_hierarchy and is_matmul) else None
    f32_rate = measured_hierarchy.rate("f32", shape) if (measured_hierarchy and is_matmul) else None
    calibration = (probes.calibration if probes else None) or {}
    exp_rate = measured_hierarchy.exp_rate(dtype) if measured_hierarchy else None
    cost = _row_cost(row.cost_op, shape, dtype)
    fresh, fresh_s = None, None
    if measured_hierarchy is not None and cost is not None:
        fresh = measured_hierarchy.fresh_output_for(cost.bytes_written)
        fresh_s = measured_hierarchy.fresh_output_s(cost.bytes_written) if fresh is not None else None
    op_rate = (measured_hierarchy.op_rate_for(cost.op, cost.dtype, working)
               if (measured_hierarchy is not None and cost is not None and working) else None)
    return record_mistakes.priced(miss_reasons.OpEvidence(
        op=op, bound=bound, platform=record.platform, dtype=dtype,
        predicted_seconds=float(learner.seconds) if learner else None,
        measured_seconds=float(row.measured.measured_s), floor_seconds=floor_s,
        model_flops=float(row.flops), model_bytes=float(row.bytes),
        xla_flops=xla.flops if xla else None, xla_bytes=xla.bytes_accessed if xla else None,
        fixed_cost_seconds=fixed, attained_bytes_per_s=attained_b, attained_flops_per_s=attained_f,
        peak_bytes_per_s=peak_bytes, peak_flops_per_s=peak_flops, emulated_dtype=emulated,
        prediction_text=str(learner.text) if learner else "",
        cost_op=str(row.cost_op or ""), shape=shape,
        lacking=tuple(lacking), noisy_probes=_noisy_probes(probes, op), emulated_from=how,
        working_set_bytes=working, cache_bytes=float(cache) if cache else None,
        level_name=_level_name(level, call), level_size_bytes=level.size_bytes if level else None,
        level_bytes_per_s=(call.bytes_per_s if call else level.bytes_per_s) if level else None,
        level_main_memory=bool(level and level.main_memory),
        level_spread=(call.spread if call else level.spread) if level else None,
        shape_flops_per_s=rate.flops_per_s if rate else None, shape_spread=rate.spread if rate else None,
        f32_shape_flops_per_s=f32_rate.flops_per_s if f32_rate else None,
        catalogued=kind == "datasheet", hierarchy_measured=measured_hierarchy is not None,
        wrong_methods=(),  # priced by record_mistakes.priced, around this call
        **_probe_counts(per_op, op, dtype),
        fixed_cost_spread=_number(per_op.get("spread")),
        copy_spread=_spread_of(calibration.get("copy")), matmul_spread=_spread_of(calibration.get("matmul")),
        exps=float(costs.transcendentals(cost)) if cost else None, exp_per_s=exp_rate.per_s if exp_rate else None,
        exp_spread=exp_rate.spread if exp_rate else None,
        fresh_output_seconds=fresh_s, fresh_output_spread=fresh.spread if fresh else None,
        output_bytes=float(cost.bytes_written) if cost else None,
        op_rate_bytes_per_s=op_rate.bytes_per_s if op_rate else None,
        op_rate_spread=op_rate.spread if op_rate else None, op_rate_level=op_rate.level if op_rate else "",
        level_rates=_level_rates(measured_hierarchy)))


def _level_rates(measured_hierarchy: Hierarchy | None) -> tuple[tuple[str, float, float | None], ...]:
    """Every rate the measured hierarchy holds: each level's, and main memory's by call size."""

    if measured_hierarchy is None:
        return ()
    out: list[tuple[str, float, float | None]] = []
    for level in measured_hierarchy.levels:
        if level.bytes_per_s:
            out.append((str(level.name), float(level.bytes_per_s), level.spread))
        for call in level.by_call:
            out.append((f"{level.name} (calls of {fmt(call.call_bytes, 'B')})", float(call.bytes_per_s), call.spread))
    return tuple(out)


def _row_cost(cost_op: Any, shape: Any, dtype: str) -> costs.OpCost | None:
    """What ``generator.model.costs`` counts for an op row's op at its shape (None where the row cannot say)."""
    try:
        return costs.cost(str(cost_op), tuple(int(x) for x in shape), dtype)
    except (ValueError, KeyError, TypeError):
        return None


def _working_set(sets: Any, set_bytes: Any) -> float | None:
    """A row's rotated inputs in all (its buffer sets times a set's bytes), or None where not recorded."""
    sets, set_bytes = _number(sets), _number(set_bytes)
    return float(sets * set_bytes) if sets and set_bytes else None


def _probe_cost(per_op: dict[str, Any], op: str, dtype: str) -> costs.OpCost | None:
    """What ``generator.model.costs`` counts for this op kind's fixed-cost probe (the op at the probe's size),
    or None where the record lacks the probe."""

    size = per_op.get("size")
    if op not in lab_ops.OPS or not isinstance(size, int) or isinstance(size, bool) or size < 1:
        return None
    try:
        return lab_ops.OPS[op].cost(size, dtype)
    except (ValueError, KeyError):
        return None


def _probe_counts(per_op: dict[str, Any], op: str, dtype: str) -> dict[str, float | None]:
    """This op kind's fixed-cost probe as OpEvidence fields: its device time, and the bytes and FLOPs
    ``generator.model.costs`` counts for the op at the probe's size (None where the record lacks them)."""
    seconds = _number(per_op.get("device_s"))
    cost = _probe_cost(per_op, op, dtype) if seconds else None
    if not seconds or cost is None:
        return {"probe_seconds": None, "probe_bytes": None, "probe_flops": None}
    return {"probe_seconds": seconds, "probe_bytes": float(cost.bytes), "probe_flops": float(cost.flops)}


def hierarchy_prediction(probes: Mapping[str, Any], dtype: str, row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The measured hierarchy's prediction for one op row (``generator.model.hierarchy.Hierarchy.prediction``):
    the roofline at the op's own measured rates (its working set's level at its call size, its matmul
    shape's rate, its exps at the exp rate; the probes' attained speeds elsewhere) plus its kind's fixed
    cost beyond the probe's work and exps, plus what its fresh output costs. None where the record has
    no measured hierarchy or probes."""
    stored, flops_per_s, bytes_per_s = (probes.get("hierarchy"), _number(probes.get("attained_flops_per_s")),
                                        _number(probes.get("attained_bytes_per_s")))
    if not stored or not flops_per_s or not bytes_per_s:
        return None
    try:
        measured_hierarchy = Hierarchy.from_dict(stored)
    except HierarchyError:
        return None
    cost = _row_cost(row.get("cost_op"), row.get("shape"), dtype)
    if cost is None:
        return None
    measured = row.get("measured") or {}
    working = _working_set(measured.get("buffer_sets"), measured.get("buffer_set_bytes")) or float(cost.bytes)
    per_op = (probes.get("fixed_cost_by_op") or {}).get(str(row["op"])) or {}
    probe_cost = _probe_cost(per_op, str(row["op"]), dtype)
    device_s, work_s = _number(per_op.get("device_s")), _number(per_op.get("work_floor_s"))
    if probe_cost is not None and device_s is not None and work_s is not None:
        fixed = measured_hierarchy.fixed_cost_s(probe_cost, device_s, work_s)
    else:
        fixed = _number(per_op.get("fixed_cost_s")) or 0.0
    base = roofline.Ceilings("the probes' attained speeds", flops_per_s, bytes_per_s, dtype)
    found = measured_hierarchy.prediction(base, cost, working, fixed)
    est = found.estimate
    return {"seconds": found.seconds, "bound": est.bound, "t_math_s": est.t_math_s, "t_comms_s": est.t_comms_s,
            "attainable_flops_per_s": est.attainable_flops_per_s, "fixed_cost_s": found.fixed_cost_s,
            "fresh_output_s": found.fresh_output_s}


def _level_name(level: Level | None, call: CallRate | None) -> str:
    """The level an op's working set lives in, with the call size its rate was swept at."""

    if level is None:
        return ""
    return f"{level.name} (calls of {fmt(call.call_bytes, 'B')})" if call is not None else str(level.name)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _spread_of(measurement: Any) -> float | None:
    """A probe measurement's spread: its device runs' when traced, else its wall runs'."""
    if not isinstance(measurement, dict):
        return None
    device = _number(measurement.get("device_spread"))
    return device if device is not None else _number(measurement.get("wall_spread"))


def _hierarchy(stored: Mapping[str, Any], lacking: list[str]) -> Hierarchy | None:
    """The record's measured hierarchy (its probes' ``hierarchy``), or None (``lacking`` says so)."""
    if not stored:
        lacking.append("the measured hierarchy (cache levels and matmul rates per shape)")
        return None
    try:
        return Hierarchy.from_dict(stored)
    except HierarchyError as exc:
        lacking.append(f"the measured hierarchy ({exc})")
        return None


def attach(record: LabRecord) -> LabRecord:
    """Each op's ``evidence``: the numbers the reasons are decided on, and no verdict on them."""
    rows = []
    for row in record.ops:
        ev = op_evidence(record, row.op)
        rows.append(row.replace(evidence=Evidence.from_dict({
            "xla_flops": ev.xla_flops, "xla_bytes": ev.xla_bytes, "fixed_cost_s": ev.fixed_cost_seconds,
            "attained_bytes_per_s": ev.attained_bytes_per_s, "attained_flops_per_s": ev.attained_flops_per_s,
            "peak_bytes_per_s": ev.peak_bytes_per_s, "peak_flops_per_s": ev.peak_flops_per_s,
            "floor_s": ev.floor_seconds, "bound": ev.bound, "emulated_dtype": ev.emulated_dtype,
            "emulated_from": ev.emulated_from, "noisy_probes": list(ev.noisy_probes),
            "working_set_bytes": ev.working_set_bytes, "cache_bytes": ev.cache_bytes,
            "level": ev.level_name or None, "level_bytes_per_s": ev.level_bytes_per_s,
            "shape_flops_per_s": ev.shape_flops_per_s, "f32_shape_flops_per_s": ev.f32_shape_flops_per_s,
            "lacking": list(ev.lacking),
        }, f"$.ops[{row.op}].evidence")))
    return record.replace(ops=tuple(rows))


_IN_COLUMNS = frozenset({"floor_seconds", "fixed_cost_seconds", "xla_bytes", "model_bytes", "attained_bytes_per_s",
                         "attained_flops_per_s"})


def _more_quantities(record: LabRecord, row: OpRow) -> str:
    """The op's other quantities a derivation may use (those the table's columns do not show), as printed."""
    try:
        ev = op_evidence(record, row.op)
    except KeyError:
        return ""
    return "; ".join(f"{q.label} {q.shown}" for q in miss_reasons.quantities(ev) if q.key not in _IN_COLUMNS)


def shown(row: OpRow) -> bool:
    """Which reasons the numbers support may be shown: after an accepted explanation, or revealed."""
    return row.miss is not None and bool(row.miss.accepted or row.miss.revealed)


def table(record: LabRecord) -> list[str]:
    """The evidence table for every op; which reasons explain a miss only where its explanation was
    accepted (or revealed with ``drill explain --show``)."""

    def n(value: float | None, unit: str) -> str:
        return "-" if value is None else fmt(value, unit)

    head = (f"{'op':<20} {'floor':>9} {'fixed':>9} {'XLA bytes':>10} {'counted':>10} {'attained B/s':>13} "
            f"{'attained FLOP/s':>16}  dtype")
    lines = [head, "-" * len(head)]
    for row in record.ops:
        e = row.evidence or Evidence(xla_flops=None, xla_bytes=None, fixed_cost_s=None, attained_bytes_per_s=None,
                                     attained_flops_per_s=None)
        dtype = {True: "upcast", False: "native", None: "-"}[e.emulated_dtype]
        lines.append(f"{row.label:<20} {n(e.floor_s, 's'):>9} {n(e.fixed_cost_s, 's'):>9} "
                     f"{n(e.xla_bytes, 'B'):>10} {n(row.bytes, 'B'):>10} "
                     f"{n(e.attained_bytes_per_s, 'B/s'):>13} {n(e.attained_flops_per_s, 'FLOP/s'):>16}"
                     f"  {dtype}")
        more = _more_quantities(record, row)
        if more:
            lines.append(f"    also: {more}")
        if row.verdict == "miss" and shown(row):
            ev = op_evidence(record, row.op)
            found = miss_reasons.explanations(ev)
            lines.append(f"    explained by: {'; '.join(' + '.join(c) for c in found) or 'nothing the evidence holds'}")
    noisy = sorted({p for row in record.ops for p in (row.evidence.noisy_probes if row.evidence else None) or ()})
    if noisy:
        lines.append(f"noisy even re-measured (their spread widens the band a corrected time is judged in): "
                     f"{', '.join(noisy)}")
    lines.append("fixed = this op kind's device time at its smallest size; attained = the matmul and copy probes; "
                 "reasons and their corrected times: `drill miss-reasons`")
    return lines
