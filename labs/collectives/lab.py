"""The collectives lab: AllGather, AllReduce (psum), ReduceScatter (psum_scatter), AllToAll and one
sharded matmul on a JAX device mesh, predicted from the catalogue, measured, scored, recorded.

This module plans (``make_plan``), predicts, fits (``fit_calibration``), scores (``score_rows``) and
assembles the record (``assemble``); pure Python, no jax. The run is ``labs.collectives.run``'s.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.model import catalogue, costs, roofline
from generator.model import collectives as C
from generator.errors import DrillError
from generator.model.units import si
from labs.collectives import record as rec
from labs.records import folder as records
from labs.records import score
from labs.options import RunOptions
from labs.records.types import RecordError
from labs.records.predictions import InputError, parse_prediction
from labs.inputs import read_mapping

if TYPE_CHECKING:
    from labs.measure.device import DeviceInfo
    from labs.measure.calls import Measurement

RECORD_PREFIX = "collectives-0.1"
LAB_NAME = "LAB·coll collectives on a device mesh"
OPS = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all")
JAX_OPS = {"all_gather": "jax.lax.all_gather", "all_reduce": "jax.lax.psum",
           "reduce_scatter": "jax.lax.psum_scatter", "all_to_all": "jax.lax.all_to_all",
           "sharded_matmul": "local matmul + jax.lax.psum"}
MODEL_OP = {"all_gather": "all_gather", "all_reduce": "all_reduce", "reduce_scatter": "reduce_scatter",
            "all_to_all": "all_to_all", "sharded_matmul": "all_reduce"}
DEFAULT_SIZES = (64e3, 1e6, 16e6)  # bytes of the full array
CPU_SIZES = (16e3, 256e3, 1e6)  # practice on a CPU: forced devices share a few cores
COLS = 128  # last dim of every array: one lane row
AXIS_NAMES = ("x", "y", "z")
MAX_BYTES = 4e9


class CollectivesLabError(DrillError, ValueError):
    """Bad options or a device set the lab cannot use; one line."""


@dataclass(kw_only=True)
class Options(RunOptions):
    """The collectives lab's options: the shared ones (``labs.options``) and the mesh and sizes."""
    mesh: str = "auto"  # "auto" (one axis of all devices) or "AxB[xC]"
    sizes: tuple[float, ...] | None = None  # bytes of the full array; None: DEFAULT_SIZES (CPU_SIZES on a CPU)
    reps: int = 10


@dataclass(frozen=True)
class RowPlan:
    """One row to measure: an op at one size. ``bytes``: the full array's (C's for the sharded
    matmul), ``asked_bytes``: the size asked for; ``shape``: (rows, cols), or (I, J, K)."""
    id: str
    op: str
    asked_bytes: float
    bytes: int
    shape: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The row's first keys in the record."""
        return {"id": self.id, "op": self.op, "asked_bytes": self.asked_bytes, "bytes": self.bytes,
                "shape": list(self.shape)}


@dataclass
class Plan:
    options: Options
    device: Any  # labs.measure.device.DeviceInfo (or a stand-in with its fields)
    mesh_shape: tuple[int, ...]
    chip: catalogue.Chip | None
    datasheet_note: str
    rows: list[RowPlan]
    stamp: str
    stem: str
    trace_dir: Path | None
    notes: list[str] = field(default_factory=list)

    @property
    def devices(self) -> int:
        return math.prod(self.mesh_shape)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return AXIS_NAMES[:len(self.mesh_shape)]

    @property
    def matmul(self) -> RowPlan:
        """The sharded matmul's row (every plan has one)."""
        return next(r for r in self.rows if r.op == "sharded_matmul")

    def stored_path(self, path: str | Path | None) -> str | None:
        """A path as the record stores it (``records.stored_path``: relative to the records folder when inside)."""
        return records.stored_path(self.options.out_dir, path)


def parse_mesh(text: str, device_count: int) -> tuple[int, ...]:
    """``auto`` -> (device_count,); ``2x4`` -> (2, 4), which must use every device."""
    if str(text).strip().lower() == "auto":
        return (device_count,)
    try:
        shape = C.parse_shape(text)
    except C.TopologyError as exc:
        raise CollectivesLabError(str(exc).replace("slice shape", "mesh")) from None
    if len(shape) > len(AXIS_NAMES):
        raise CollectivesLabError(f"a mesh has at most {len(AXIS_NAMES)} axes, got {text}")
    if math.prod(shape) != device_count:
        raise CollectivesLabError(f"mesh {text} has {math.prod(shape)} devices; this run has {device_count}")
    return shape


def layout(nbytes: float, n: int, dtype: str) -> tuple[int, int]:
    """(rows, cols) of the full array nearest ``nbytes``: rows a multiple of n² so every split is even
    (``generator.model.costs.array_bytes`` inverted: the rows one row's bytes give)."""
    row_bytes = costs.array_bytes((1, COLS), dtype)
    unit = n * n
    rows = max(unit, round(nbytes / row_bytes / unit) * unit)
    return rows, COLS


def matmul_dims(nbytes: float, n: int, dtype: str) -> tuple[int, int, int]:
    """(I, J, K) of the sharded matmul: C = I×K near ``nbytes``, J = I rounded to a multiple of n·128
    (``generator.model.costs.array_bytes`` of a square C inverted)."""
    side = max(128, round(math.sqrt(nbytes / costs.array_bytes((1,), dtype)) / 128) * 128)
    j = max(n * 128, round(side / (n * 128)) * n * 128)
    return side, j, side


def row_id(op: str, nbytes: float) -> str:
    return f"{op}@{si(nbytes, 'B', 3).replace(' ', '')}"


def make_plan(options: Options, device: DeviceInfo | Any, now: _dt.datetime | None = None) -> Plan:
    """Check the options against the devices; decide every row; CollectivesLabError on anything that would fail."""
    if options.reps < 1:
        raise CollectivesLabError(f"--reps must be at least 1, got {options.reps}")
    if options.sizes is None:
        options.sizes = CPU_SIZES if device.platform == "cpu" else DEFAULT_SIZES
    if options.dtype not in ("f32", "bf16"):
        raise CollectivesLabError(f"--dtype must be bf16 or f32, got {options.dtype}")
    if not options.sizes or any(not (0 < s <= MAX_BYTES) for s in options.sizes):
        raise CollectivesLabError(f"--sizes must be positive byte counts up to {MAX_BYTES:g}")
    if device.device_count < 2:
        raise CollectivesLabError(
            "one device: a collective needs at least two (on a CPU set "
            "XLA_FLAGS=--xla_force_host_platform_device_count=8 before starting)")
    shape = parse_mesh(options.mesh, device.device_count)
    n = math.prod(shape)
    chip, note = _chip(options.chip, device)
    rows = []
    for nbytes in sorted(set(options.sizes)):
        r, c = layout(nbytes, n, options.dtype)
        rows += [RowPlan(row_id(op, nbytes), op, nbytes, costs.array_bytes((r, c), options.dtype), (r, c))
                 for op in OPS]
    i, j, k = matmul_dims(max(options.sizes), n, options.dtype)
    rows.append(RowPlan("sharded_matmul", "sharded_matmul", max(options.sizes), costs.array_bytes((i, k), options.dtype),
                        (i, j, k)))
    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    try:
        stem, trace_dir = options.claim_output(record_stem(device.platform, device.device_kind, n, stamp))
    except RecordError as exc:
        raise CollectivesLabError(str(exc)) from None
    notes = []
    if device.platform == "cpu":
        notes.append("CPU devices share one machine's memory: practice only (never counted)")
    if chip is not None and chip.kind == "tpu":
        notes.append("datasheet: each mesh axis is taken as a torus axis of the same length; "
                     "the runtime's device order decides the physical links")
    return Plan(options, device, shape, chip, note, rows, stamp, stem, trace_dir, notes)


def _chip(name: str, device: Any) -> tuple[catalogue.Chip | None, str]:
    if str(name).strip().lower() == "auto":
        chip = device.chip
    else:
        try:
            chip = catalogue.get(name)
        except catalogue.UnknownChipError as exc:
            raise CollectivesLabError(str(exc)) from None
    if chip is None:
        return None, f"'{device.device_kind}' has no catalogue entry: no datasheet prediction"
    if chip.figure("ici_bytes_per_s_bidi") is None:
        return None, f"{chip.display} has no link figure in the catalogue (not in the reference): no datasheet prediction"
    return chip, f"{chip.display} ICI figures from the catalogue"


def record_stem(platform: str, device_kind: str, devices: int, stamp: str) -> str:
    return f"{RECORD_PREFIX}-{platform}-{records.slug(device_kind)}-d{devices}-{stamp}"


def per_device_input_bytes(row: RowPlan, plan: Plan) -> int:
    """Bytes of one device's inputs for ``row``: a V-byte array each for AllReduce and ReduceScatter,
    V/n for AllGather and AllToAll, A and B's shards for the sharded matmul."""
    if row.op == "sharded_matmul":
        i, j, k = row.shape
        dtype = plan.options.dtype
        return (costs.array_bytes((i, j), dtype) + costs.array_bytes((j, k), dtype)) // plan.devices
    if row.op in ("all_reduce", "reduce_scatter"):
        return row.bytes
    return row.bytes // plan.devices


# --- predictions, calibration, scoring ------------------------------------------------------

def local_matmul_cost(plan: Plan) -> costs.OpCost:
    """Each device's share of the sharded matmul: A[I, J/n] @ B[J/n, K] (``generator.model.costs``)."""
    i, j, k = plan.matmul.shape
    return costs.cost("matmul", (i, j // plan.devices, k), plan.options.dtype)


def fit_matmul_flops_per_s(plan: Plan, local_matmul_s: float) -> float:
    """The local matmul's FLOP/s: its FLOPs (``local_matmul_cost``) over its measured time, the
    roofline's ``t_math = FLOPs / peak`` inverted."""
    return local_matmul_cost(plan).flops / local_matmul_s


def _ring(plan: Plan) -> tuple[bool, ...]:
    """The calibrated model's wraparound: every mesh axis a ring."""
    return (True,) * len(plan.mesh_shape)


def _sharded(out: dict[str, Any], t_math_s: float, t_collective: C.CollectiveTime) -> dict[str, Any]:
    """The sharded matmul's prediction: its local matmul, then the AllReduce of C, one after the other
    (the psum needs the matmul's result: ``roofline.upper_seconds``, the no-overlap rule)."""
    out["t_math_s"] = t_math_s
    out["seconds"] = roofline.upper_seconds(t_math_s, t_collective.t_s)
    return out


def datasheet_prediction(plan: Plan, row: RowPlan) -> dict[str, Any] | None:
    """The catalogue chip's model for one row (seconds); None without a chip with ICI figures."""
    chip = plan.chip
    if chip is None:
        return None
    cat = catalogue.load()
    try:
        wrap = C.resolve_wrap(chip, plan.mesh_shape, "auto", plan.mesh_shape)
    except C.TopologyError:
        return None
    t = C.chip_collective(cat, chip, MODEL_OP[row.op], row.bytes, plan.mesh_shape, wrap)
    out = _model_dict(t)
    if row.op == "sharded_matmul":
        try:
            sheet = roofline.Ceilings.from_chip(chip, plan.options.dtype)
        except KeyError:  # no peak for this dtype in the catalogue
            return None
        return _sharded(out, roofline.estimate(sheet, local_matmul_cost(plan)).t_math_s, t)
    return out


def _model_dict(t: C.CollectiveTime) -> dict[str, Any]:
    return {"seconds": t.t_s, "bound": t.bound, "t_bandwidth_s": t.t_bandwidth_s, "t_latency_s": t.t_latency_s,
            "hops": t.hops, "wrap": list(t.wrap)}


def _calibrated_collective(plan: Plan, row: RowPlan, w_bidi: float, hop_latency_s: float) -> C.CollectiveTime:
    """The collective model on the fitted link: ring bandwidth ``w_bidi`` (one way: half), per-hop latency."""
    return C.collective_time(MODEL_OP[row.op], row.bytes, plan.mesh_shape, _ring(plan), w_bidi / 2, w_bidi,
                             hop_latency_s)


def fit_calibration(plan: Plan, measured_s: dict[str, float], local_matmul_s: float | None) -> dict[str, Any]:
    """Effective ring bandwidth (bytes/s) and per-hop latency (s) from this device's own AllGathers
    (``measured_s``: row id -> seconds), and the local matmul's FLOP/s from its time alone.

    Each is the model inverted, never the model written again: the collective model on a ring
    with wraparound over the mesh axes (``generator.model.collectives``) gives the smallest AllGather's
    time per second of hop latency (no bandwidth term) and the largest's at 1 byte/s (no latency),
    so α = measured / (its time at α = 1 s) and W = (its time at W = 1 B/s) / measured; the matmul's FLOP/s is its FLOPs (``generator.model.costs``) over its time. Both fitting
    rows are then predicted exactly whenever the time grows no faster than the bytes between them
    (the usual case); ``exact_on_fit`` says whether the model, called with the fit, gave them back.
    """
    gathers = sorted((r for r in plan.rows if r.op == "all_gather"), key=lambda r: r.bytes)
    small, large = gathers[0], gathers[-1]
    # The model's time is proportional to α with no bandwidth term (W infinite), and to 1/W with no
    # latency (α = 0): each unit time, measured over, is the fit.
    alpha = measured_s[small.id] / _calibrated_collective(plan, small, math.inf, 1.0).t_s
    w_bidi = _calibrated_collective(plan, large, 1.0, 0.0).t_s / measured_s[large.id]
    exact = all(math.isclose(_calibrated_collective(plan, r, w_bidi, alpha).t_s, measured_s[r.id], rel_tol=1e-9)
                for r in (small, large))
    return {"w_bidi_bytes_per_s": w_bidi, "hop_latency_s": alpha, "fitted_on": [small.id, large.id],
            "model": "max(V / (W * n_axes), hops * alpha)", "exact_on_fit": exact,
            "local_matmul_s": local_matmul_s,
            "flops_per_s": fit_matmul_flops_per_s(plan, local_matmul_s) if local_matmul_s else None}


def calibrated_prediction(plan: Plan, row: RowPlan, cal: dict[str, Any]) -> dict[str, Any]:
    """The same model with the fitted link (``fit_calibration``'s dict); seconds. The sharded
    matmul's local matmul is the roofline at the fitted FLOP/s (its measured time, given back)."""
    t = _calibrated_collective(plan, row, cal["w_bidi_bytes_per_s"], cal["hop_latency_s"])
    out = _model_dict(t)
    if row.op == "sharded_matmul" and cal["local_matmul_s"] is not None:
        flops_per_s = cal.get("flops_per_s") or fit_matmul_flops_per_s(plan, cal["local_matmul_s"])
        fitted = roofline.Ceilings("fitted", flops_per_s, math.inf, plan.options.dtype, "the local matmul alone")
        return _sharded(out, roofline.estimate(fitted, local_matmul_cost(plan)).t_math_s, t)
    return out


def score_rows(plan: Plan, measured_s: dict[str, float], learner: dict[str, float],
               cal: dict[str, Any]) -> tuple[str, dict[str, dict[str, Any]]]:
    """(the graded kind, row id -> its predictions, ratios, within_2x, verdict and explanation keys)."""
    covered = bool(learner) and all(r.id in learner for r in plan.rows)
    has_sheet = plan.chip is not None and all(datasheet_prediction(plan, r) is not None for r in plan.rows)
    graded = score.graded_kind({"learner": 1.0 if covered else None, "datasheet": 1.0 if has_sheet else None,
                                "calibrated": 1.0})
    assert graded is not None  # "calibrated" is always given
    scored = {}
    for r in plan.rows:
        preds = {"datasheet": datasheet_prediction(plan, r), "calibrated": calibrated_prediction(plan, r, cal),
                 "learner": {"seconds": learner[r.id]} if r.id in learner else None}
        m = measured_s[r.id]
        ratios = {k: score.ratio(m, p["seconds"]) if p else None for k, p in preds.items()}
        within = {k: score.within(v) for k, v in ratios.items()}
        scored[r.id] = {"predictions": preds, "ratios": ratios, "within_2x": within,
                        "verdict": "hit" if within[graded] else "miss", "explanation": None}
    return graded, scored


def counted(platform: str, devices: int) -> bool:
    """The gate's rule for counting a measurement: real accelerators only (and a collective needs two)."""
    return platform in ("gpu", "tpu") and devices >= 2


# --- the record --------------------------------------------------------------------------------

def assemble(plan: Plan, measured: dict[str, Measurement], local_matmul: Measurement | None,
             learner: dict[str, float], process_count: int) -> dict[str, Any]:
    """The scored record (a dict of ``labs/collectives/collectives.schema.json``) from each row's measurement
    (row id -> ``labs.measure.calls.Measurement``) and the local matmul's (None: not measured)."""
    measured_s = {row_id: m.measured_s for row_id, m in measured.items()}
    local_s = local_matmul.measured_s if local_matmul is not None else None
    cal = fit_calibration(plan, measured_s, local_s)
    graded, scored = score_rows(plan, measured_s, learner, cal)
    rows = [{**r.to_dict(), "jax_op": JAX_OPS[r.op], "per_device_input_bytes": per_device_input_bytes(r, plan),
             "measured": {**measured[r.id].to_dict(), "trace_dir": plan.stored_path(measured[r.id].trace_dir)},
             **scored[r.id]} for r in plan.rows]
    d = plan.device
    missed = [r["id"] for r in rows if r["verdict"] == "miss"]
    is_counted = counted(d.platform, plan.devices)
    return {
        "schema": rec.SCHEMA_NAME, "schema_version": rec.SCHEMA_VERSION, "lab": LAB_NAME,
        "date": _dt.datetime.strptime(plan.stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=_dt.timezone.utc).isoformat(),
        "host": d.host, "platform": d.platform, "device_kind": d.device_kind, "device_count": plan.devices,
        "process_count": process_count, "chip": plan.chip.name if plan.chip else None,
        "jax_version": d.jax_version, "jaxlib_version": d.jaxlib_version, "python_version": d.python_version,
        "mesh": {"shape": list(plan.mesh_shape), "axes": list(plan.axis_names)},
        "dtype": plan.options.dtype, "reps": plan.options.reps,
        "constants": {"datasheet": _datasheet_constants(plan), "datasheet_note": plan.datasheet_note,
                      "calibrated": cal},
        "trace_dir": plan.stored_path(plan.trace_dir),
        "graded": graded, "counted": is_counted, "status": "counted" if is_counted else "practice",
        "rows": rows, "notes": list(plan.notes),
        "summary": {"graded": graded, "rows": len(rows), "within_2x": len(rows) - len(missed), "misses": missed,
                    "median_ratio": _median([scored[r.id]["ratios"][graded] for r in plan.rows])},
    }


def _datasheet_constants(plan: Plan) -> dict[str, Any] | None:
    """The catalogue chip's link figures (bytes/s, s) and their sources; None without a chip."""
    chip = plan.chip
    if chip is None:
        return None
    cat = catalogue.load()
    figs = [chip.figures["ici_bytes_per_s_bidi"], chip.figures["ici_bytes_per_s_one_way"],
            cat.fact(C.HOP_LATENCY_FACT)]
    if "ici_wraparound" in chip.figures:
        figs.append(chip.figures["ici_wraparound"])
    return {"chip": chip.name, "ici_bytes_per_s_one_way": chip.value("ici_bytes_per_s_one_way"),
            "ici_bytes_per_s_bidi": chip.value("ici_bytes_per_s_bidi"),
            "hop_latency_s": cat.fact(C.HOP_LATENCY_FACT).value,
            "wrap": [C.wraps(chip, n, plan.mesh_shape) for n in plan.mesh_shape],
            "sources": sorted({f.source.cite() for f in figs})}


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def load_predictions(path: Path, plan: Plan) -> dict[str, float]:
    """A YAML/JSON file: row id (``all_gather@1MB``, ``sharded_matmul``) -> time with units (seconds)."""

    try:
        data = read_mapping(Path(path), "predictions")
        ids = [r.id for r in plan.rows]
        out = {}
        for key, value in data.items():
            if str(key) not in ids:
                raise CollectivesLabError(f"predictions: '{key}' is not a row of this run ({', '.join(ids)})")
            out[str(key)] = parse_prediction(str(value))
        return out
    except InputError as exc:
        raise CollectivesLabError(str(exc)) from None
