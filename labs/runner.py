"""LAB·0.1 end to end: detect, predict, calibrate, measure, score, record.

``make_plan`` does every check that can fail before anything is timed; ``run`` then measures and
returns the typed record (``LabRecord``); ``explain`` returns it with the learner's derivation of
each miss judged and stored.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Callable

from generator.model import catalogue, roofline
from generator.model.costs import OpCost
from generator.errors import DrillError
from labs.measure import calls as measure, ops as lab_ops, probes as lab_probes, timing
from labs.records import evidence, folder as records
from labs.records import score
from labs.records.types import SCHEMA_NAME, LabRecord, OpRow, RecordError, Summary
from labs.records.folder import RecordJSON
from labs.measure.device import DeviceInfo
from labs.options import RunOptions
from labs.measure.timing import Rotation
from labs import explain as lab_explain

if TYPE_CHECKING:
    from generator import explain as miss_reasons
    from labs.measure.calibrate import Calibration
    from labs.measure.probes import Probed
    from labs.explain import Given
    from labs.measure.calls import Measurement, XlaCost

LAB_NAME = "LAB·0.1"


class LabError(DrillError, ValueError):
    """A problem found before anything runs: one line saying what to change."""


@dataclass(frozen=True)
class LearnerPrediction:
    seconds: float
    text: str

    def to_dict(self) -> RecordJSON:
        return {"seconds": self.seconds, "text": self.text}


@dataclass(frozen=True)
class PredictionsRead:
    """When and from where the learner's predictions were read: the record's proof that
    they came before the measurement (GATE 00 counts only such records)."""

    source: str  # "file <path>", "terminal", "notebook", ...
    read_at: str  # ISO 8601, UTC
    file_sha256: str | None = None  # of the file's bytes, when read from a file

    def to_dict(self, learner: dict[str, LearnerPrediction]) -> RecordJSON:
        texts = {name: p.text for name, p in learner.items()}
        return {"source": self.source, "read_at": self.read_at,
                "sha256": records.predictions_sha256(texts), "file_sha256": self.file_sha256,
                "ops": sorted(texts)}


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


@dataclass(kw_only=True)
class LabOptions(RunOptions):
    """LAB·0.1's options: the shared ones (``labs.options``) and the ops, N and calibration."""
    ops: tuple[str, ...] = lab_ops.SEED_OPS
    size: int = 4096
    calibrate: bool = False


@dataclass
class Plan:
    options: LabOptions
    device: DeviceInfo
    chip: catalogue.Chip | None
    datasheet: roofline.Ceilings | None
    calibrate: bool
    calibrate_reason: str
    costs: dict[str, OpCost]
    rotations: dict[str, Rotation]
    stamp: str
    stem: str
    trace_dir: Path | None
    notes: list[str] = field(default_factory=list)

    def stored_path(self, path: str | Path | None) -> str | None:
        """A path as a record stores it: relative to the record's folder when inside it
        (so a record and its traces move together), else absolute."""
        return records.stored_path(self.options.out_dir, path)

    def datasheet_estimates(self) -> dict[str, roofline.Estimate]:
        if self.datasheet is None:
            return {}
        return {name: roofline.estimate(self.datasheet, c) for name, c in self.costs.items()}


def make_plan(options: LabOptions, device: DeviceInfo, now: _dt.datetime | None = None) -> Plan:
    """Resolve the chip, count every op, size the buffers; LabError on anything that would fail later."""
    if options.reps < 1:
        raise LabError(f"--reps must be at least 1, got {options.reps}")
    try:
        dtype = lab_ops.check_dtype(options.dtype)
        lab_ops.check_size(options.size, options.ops)
    except lab_ops.OpError as exc:
        raise LabError(str(exc)) from None
    options.dtype = dtype

    chip = _resolve_chip(options.chip, device)
    datasheet = None
    if chip is not None:
        try:
            datasheet = roofline.Ceilings.from_chip(chip, dtype)
        except roofline.UnpublishedFigureError as exc:
            raise LabError(f"{exc}; use --dtype bf16 or --calibrate with --chip auto") from None

    calibrate, reason = options.calibrate, "asked for (--calibrate)" if options.calibrate else ""
    if chip is None:
        calibrate = True
        reason = (f"forced: '{device.device_kind}' ({device.platform}) has no catalogue entry, "
                  "so only the device's own measured speeds can predict")

    op_costs = {name: lab_ops.OPS[name].cost(options.size, dtype) for name in options.ops}
    rotations = {}
    for name in options.ops:
        try:
            rotations[name] = lab_ops.rotation(lab_ops.OPS[name], options.size, dtype, device)
        except MemoryError as exc:
            raise LabError(f"--size {options.size} is too large for {name} on this device: {exc}") from None

    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    try:
        stem, trace_dir = options.claim_output(
            records.record_stem(device.platform, device.device_kind, options.size, stamp))
    except RecordError as exc:
        raise LabError(str(exc)) from None

    notes: list[str] = []
    small = [n for n, r in rotations.items() if r.cache_bytes and not r.defeats_cache]
    if small:
        notes.append(f"inputs of {', '.join(small)} still fit in the {_cache_text(device)} cache even rotated "
                     "(N is small): expect them faster than the memory roofline")
    return Plan(options, device, chip, datasheet, calibrate, reason, op_costs, rotations,
                stamp, stem, trace_dir, notes)


def _cache_text(device: DeviceInfo) -> str:
    return f"{device.cache_bytes / 2**20:.0f} MiB" if device.cache_bytes else "unknown"


def _resolve_chip(name: str, device: DeviceInfo) -> catalogue.Chip | None:
    if name.strip().lower() == "auto":
        return device.chip
    try:
        return catalogue.get(name)
    except catalogue.UnknownChipError as exc:
        raise LabError(str(exc)) from None


Progress = Callable[[str], None]


def probe_labels(plan: Plan) -> list[str]:
    """The steps ``labs.measure.probes.measure_probes`` reports, in order: with ``plan.calibrate`` the
    probes also predict ("calibrate"), then the fixed cost and the memory hierarchy."""
    return ["calibrate" if plan.calibrate else "probes", "fixed cost", "hierarchy"]


def step_labels(plan: Plan) -> list[str]:
    """The steps ``run`` reports: the dispatch overhead, the probes (run on every device: the miss
    reasons' evidence; ``probe_labels``), then each op measured."""
    return ["dispatch overhead", *probe_labels(plan), *[f"measure {name}" for name in plan.options.ops]]


def run(plan: Plan, learner: dict[str, LearnerPrediction] | None = None,
        progress: Progress | None = None, read: PredictionsRead | None = None,
        probed: Probed | None = None) -> LabRecord:
    """Measure every op and return the record (not yet saved; misses not yet explained).

    ``read`` says when and where the learner's predictions were read; without it
    they count as read now, by the caller, before the first measurement. ``probed``:
    the probes already measured (``labs.measure.probes.measure_probes``, shown as the device's
    datasheet before the predictions were asked for); else they are measured here.
    """

    progress = progress or (lambda label: None)
    if learner and read is None:
        read = PredictionsRead("given to labs.runner.run", utc_now())
    started_at = utc_now()
    progress("dispatch overhead")
    dispatch_s = timing.dispatch_overhead_s()
    if probed is None:
        probed = lab_probes.measure_probes(plan, progress)
    else:
        progress("calibrate" if plan.calibrate else "probes")
        progress("fixed cost")
        progress("hierarchy")
    calibration = probed.calibration if plan.calibrate else None
    measured = {}
    for name in plan.options.ops:
        progress(f"measure {name}")
        measured[name] = _measure_op(plan, name)
    probes = lab_probes.probes_dict(probed.fixed, probed.calibration, plan.stored_path, probed.calibration_remeasured,
                                  probed.hierarchy)
    # No catalogue entry: the measured datasheet is what predictions were made from.
    shown = lab_probes.datasheet_constants(probed, plan.stored_path) if plan.chip is None else None
    return assemble(plan, measured, learner or {}, calibration, dispatch_s, read=read, started_at=started_at,
                    probes=probes, measured_datasheet=shown)


@dataclass(frozen=True)
class OpResult:
    """What measuring one op produced: the timings and XLA's own count (None if unavailable)."""

    measurement: "Measurement"
    xla: "XlaCost | None"
    compiled: dict[str, int | str | None] | None = None  # labs.measure.probes.compiled_dtype: the optimized HLO's converts


def assemble(plan: Plan, measured: dict[str, OpResult], learner: dict[str, LearnerPrediction],
             calibration: "Calibration | None", dispatch_s: float, *, read: PredictionsRead | None = None,
             started_at: str | None = None, probes: RecordJSON | None = None,
             measured_datasheet: RecordJSON | None = None) -> LabRecord:
    """The typed record from measurements: every prediction, ratio and verdict, and each op's evidence
    (pure Python; RecordError if what was measured does not make a valid record).

    ``started_at``: when the first measurement began (default: the plan's stamp); ``probes``:
    the fixed cost and attained speeds (``labs.measure.probes.probes_dict``; None: the evidence lacks them);
    ``measured_datasheet``: the probes shown as the device's datasheet (a device with no catalogue entry)."""

    calibrated = calibration.ceilings() if calibration else None
    graded = _graded_kind(plan, calibrated, learner)
    rows = []
    for name in plan.options.ops:
        row = _row(plan, name, measured[name])
        _score_row(row, plan, calibrated, learner.get(name), graded,
                   evidence.hierarchy_prediction(probes or {}, plan.options.dtype, row))
        rows.append(row)
    rec = _record(plan, rows, graded, calibration, dispatch_s)
    if measured_datasheet is not None:
        rec["constants"]["measured_datasheet"] = measured_datasheet
    rec["measurement_started_at"] = started_at or rec["date"]
    rec["learner_predictions"] = read.to_dict(learner) if (read is not None and learner) else None
    rec["probes"] = probes
    rec["practice"] = graded != "learner"
    rec["run"] = None  # the ledger entry, set when the record is first saved (records.save_run)
    typed = LabRecord.from_dict(rec)
    typed, _ = lab_explain.mark_findings(evidence.attach(typed))  # before any "why?": a miss the evidence
    return with_summary(typed)                                    # cannot explain is a finding


def judge_explanation(record: LabRecord, op: str, given: Given) -> "miss_reasons.Judgement":
    """``labs.explain.judge``: one explanation of one op (KeyError for an unknown reason id)."""

    return lab_explain.judge(record, op, given)


def record_judgement(record: LabRecord, op: str, judgement: miss_reasons.Judgement) -> LabRecord:
    """The record with an attempt stored on a miss (``labs.explain.apply``: every attempt kept; an
    accepted explanation never replaced by a later refused one), its summary refreshed."""

    row = record.op(op)
    if row is None:
        raise KeyError(f"the record has no op '{op}'")
    return with_summary(record.with_row(lab_explain.apply(row, judgement)))


def reveal(record: LabRecord, op: str) -> tuple[LabRecord, list[str]]:
    """Which reasons explain ``op``'s miss: (the record with the miss marked revealed, so it never counts
    as explained; the lines that show them)."""

    row, lines = lab_explain.reveal(record, op)
    return with_summary(record.with_row(row)), lines


def explain(record: LabRecord, explanations: Mapping[str, Given]) -> LabRecord:
    """Judge each missed op's explanation in ``explanations`` (op -> sentence, or {"reasons",
    "corrected", "text"}) against the record's evidence, store the attempt; refresh the summary."""
    for row in record.misses():
        given = explanations.get(row.op)
        if given is None or (isinstance(given, str) and not given.strip()):
            continue

        if lab_explain.finding(record, row.op):
            continue  # unexplained by the evidence: nothing to judge
        record = record_judgement(record, row.op, judge_explanation(record, row.op, given))
    return with_summary(record)


def accepted(row: OpRow) -> bool:
    """A miss is explained when its explanation was accepted and not revealed (``labs.explain.accepted``)."""

    return lab_explain.accepted(row)


def with_summary(record: LabRecord) -> LabRecord:
    """The record with its summary counted again from its rows."""
    missed = [r.op for r in record.misses()]
    unexplained = [r.op for r in record.misses() if not accepted(r) and not (r.miss is not None and r.miss.finding)]
    return record.replace(summary=Summary.from_dict(
        _summary_fields(record.graded, len(record.ops), missed, unexplained), "$.summary"))


def _summary_fields(graded: str, ops: int, missed: Sequence[str], unexplained: Sequence[str]) -> RecordJSON:
    return {"graded": graded, "ops": ops, "within_2x": ops - len(missed), "misses": list(missed),
            "unexplained": list(unexplained), "criterion_met": not missed and not unexplained}


def _measure_op(plan: Plan, name: str) -> OpResult:
    cost = plan.costs[name]
    fn, make_inputs = lab_ops.build(name, plan.options.size, plan.options.dtype)
    sets = [make_inputs(seed) for seed in range(plan.rotations[name].sets)]
    xla = measure.xla_cost(fn, sets[0], cost.flops, cost.bytes)
    compiled = lab_probes.compiled_dtype(fn, sets[0])
    trace_dir = plan.trace_dir / name if plan.trace_dir is not None else None
    meas = measure.measure_call(lambda i: fn(*sets[i % len(sets)]), lab_ops.OPS[name].module_name(),
                                plan.options.reps, trace_dir)
    return OpResult(meas, xla, compiled)


def _row(plan: Plan, name: str, result: OpResult) -> RecordJSON:
    op, cost, rotation = lab_ops.OPS[name], plan.costs[name], plan.rotations[name]
    return {
        "op": name, "label": op.label, "cost_op": cost.op, "shape": list(cost.shape), "dtype": cost.dtype,
        "flops": cost.flops, "bytes": cost.bytes,
        "intensity_flops_per_byte": cost.intensity_flops_per_byte, "convention": cost.convention,
        "predictions": {},
        "measured": {**result.measurement.to_dict(), **rotation.to_dict(),
                     "trace_dir": plan.stored_path(result.measurement.trace_dir)},
        "ratios": {}, "within_2x": {}, "verdict": "hit", "explanation": None,
        "xla_cost": result.xla.to_dict() if result.xla else None,
        "compiled": result.compiled,
    }


def _estimate_dict(est: roofline.Estimate) -> RecordJSON:
    return {"seconds": est.floor_s, "bound": est.bound, "t_math_s": est.t_math_s,
            "t_comms_s": est.t_comms_s, "attainable_flops_per_s": est.attainable_flops_per_s}


def _graded_kind(plan: Plan, calibrated: roofline.Ceilings | None, learner: dict[str, LearnerPrediction]) -> str:
    covered = bool(learner) and all(name in learner for name in plan.options.ops)
    available = {"learner": 1.0 if covered else None,
                 "datasheet": 1.0 if plan.datasheet else None,
                 "calibrated": 1.0 if calibrated else None}
    kind = score.graded_kind(available)
    assert kind is not None, "a plan without a chip always calibrates"
    return kind


def _score_row(row: RecordJSON, plan: Plan, calibrated: roofline.Ceilings | None, mine: LearnerPrediction | None,
               graded: str, hierarchy: RecordJSON | None = None) -> None:
    """The row's predictions, ratios (measured / predicted), within-2x flags and verdict (on ``graded``);
    ``hierarchy``: the measured hierarchy's prediction, kept beside the others and never graded."""
    cost = plan.costs[row["op"]]
    preds = {
        "datasheet": _estimate_dict(roofline.estimate(plan.datasheet, cost)) if plan.datasheet else None,
        "calibrated": _estimate_dict(roofline.estimate(calibrated, cost)) if calibrated else None,
        "learner": mine.to_dict() if mine else None,
        "hierarchy": hierarchy,
    }
    measured = row["measured"]["measured_s"]
    row["predictions"] = preds
    row["ratios"] = {k: score.ratio(measured, p["seconds"]) if p else None for k, p in preds.items()}
    row["within_2x"] = {k: score.within(r) for k, r in row["ratios"].items()}
    row["verdict"] = "hit" if row["within_2x"][graded] else "miss"
    row["miss"] = None if row["verdict"] == "hit" else lab_explain.empty_miss(row["op"])
    row["evidence"] = None  # labs.records.evidence.attach, once the record is whole


def _record(plan: Plan, rows: list[RecordJSON], graded: str, calibration: Calibration | None,
            dispatch_s: float) -> RecordJSON:
    d, o = plan.device, plan.options
    missed = [r["op"] for r in rows if r["verdict"] == "miss"]
    datasheet = None
    if plan.datasheet is not None:
        assert plan.chip is not None, "a plan's datasheet is its chip's (make_plan)"
        used = [plan.chip.peak_flops[o.dtype].source, plan.chip.figures["hbm_bytes_per_s"].source]
        sources = {s.key: s.to_dict() for s in used}
        datasheet = {"name": plan.datasheet.name, "peak_flops_per_s": plan.datasheet.peak_flops_per_s,
                     "hbm_bytes_per_s": plan.datasheet.hbm_bytes_per_s, "dtype": plan.datasheet.dtype,
                     "source": plan.datasheet.source,
                     "sources": [{k: v for k, v in s.items() if k != "note"} for s in sources.values()]}
    return {
        "schema": SCHEMA_NAME, "schema_version": records.SCHEMA_VERSION, "lab": LAB_NAME,
        "date": _dt.datetime.strptime(plan.stamp, "%Y%m%dT%H%M%SZ").replace(
            tzinfo=_dt.timezone.utc).isoformat(),
        "host": d.host, "platform": d.platform, "device_kind": d.device_kind, "device_count": d.device_count,
        "chip": plan.chip.name if plan.chip else None,
        "jax_version": d.jax_version, "jaxlib_version": d.jaxlib_version, "python_version": d.python_version,
        "dtype": o.dtype, "size": o.size, "reps": o.reps,
        "constants": {"datasheet": datasheet,
                      "calibrated": calibration.to_dict(plan.stored_path) if calibration else None},
        "device": {"memory_bytes": d.memory_bytes, "memory_source": d.memory_source,
                   "cache_bytes": d.cache_bytes, "cache_source": d.cache_source},
        "dispatch_overhead_s": dispatch_s,
        "trace_dir": plan.stored_path(plan.trace_dir),
        "graded": graded,
        "ops": rows,
        # rows just measured, none explained yet (``with_summary`` counts again once the record is typed)
        "summary": _summary_fields(graded, len(rows), missed, missed),
    }


def save(plan: Plan, record: LabRecord) -> Path:
    """Save a new record (and its ledger entry): before any table is shown."""
    return records.save_run(record, plan.options.out_dir, plan.stem)
