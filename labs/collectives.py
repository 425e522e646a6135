"""The collectives lab: AllGather, AllReduce (psum), ReduceScatter (psum_scatter), AllToAll and one
sharded matmul on a JAX device mesh, predicted from the catalogue, measured, scored, recorded.

The engine is JAX's own SPMD machinery, nothing home-made: a ``jax.sharding.Mesh`` over all
local devices, inputs placed with ``NamedSharding``, each op a ``jax.shard_map`` body under
``jax.jit`` calling ``jax.lax.all_gather`` / ``psum`` / ``psum_scatter`` / ``all_to_all``.
Every collective runs over all mesh axes at once (``axis_name=("x", "y")`` on a 2-D mesh).

Sizes: ``V`` is the bytes of the full array, as in ``drill collective``: AllGather assembles
V on every device from V/n shards; AllReduce sums n per-device arrays of V bytes; ReduceScatter
leaves V/n of such a sum on each; AllToAll moves an array of V bytes in total. The sharded
matmul is the book's A[I, J_X] · B[J_X, K]: a local matmul, then psum of C (V = bytes of C).

Predictions, per row:
- datasheet: ``generator.collectives`` with the catalogue chip's ICI figures and wraparound
  rule applied to the mesh axes (a mesh axis is taken to be a torus axis of the same length;
  on a real slice the runtime's device order decides that). GPUs have no link figure in the
  catalogue (NVLink is not in the reference) and a CPU has no entry: no datasheet column.
- calibrated (always): the same model with an effective ring bandwidth and per-hop latency
  fitted to this device's own AllGather at the largest and smallest sizes (so those two
  rows are fits, not checks), and the matmul's FLOP/s from the local matmul timed alone.
- learner: a file mapping row ids (``all_gather@1MB``) to times, as in LAB·0.1.

Device time comes from the profiler trace exactly as the single-chip lab reads it
(``labs.measure.measure_call``). Records go to ``<out>/collectives-0.1-...json`` (schema
``labs/collectives.schema.json``), beside LAB·0.1's records; GATE 00 does not read them.
The counting rule is the gate's: only TPU/GPU records with two or more devices count;
a CPU run (``XLA_FLAGS=--xla_force_host_platform_device_count=8``) is practice.

Multi-host: on a TPU pod slice or several GPU hosts, run the same command on every host
with ``DRILL_COORDINATOR=HOST:PORT DRILL_NUM_PROCESSES=N DRILL_PROCESS_ID=I`` in the
environment (``init_distributed``: ``jax.distributed.initialize`` before any other jax
call); the mesh then spans ``jax.devices()`` of all hosts, and only process 0 writes the
record. On Cloud TPU, ``jax.distributed.initialize()`` needs no arguments
(``DRILL_COORDINATOR=auto``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from generator import catalogue
from generator import collectives as C
from generator.units import DTYPE_BYTES, seconds, si
from labs import records, score

SCHEMA_PATH = Path(__file__).with_name("collectives.schema.json")
SCHEMA_NAME = "rudrite-kernels/collectives-record"
SCHEMA_VERSION = 1
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


class CollectivesLabError(ValueError):
    """Bad options or a device set the lab cannot use; one line."""


@dataclass
class Options:
    mesh: str = "auto"  # "auto" (one axis of all devices) or "AxB[xC]"
    sizes: tuple[float, ...] | None = None  # None: DEFAULT_SIZES (CPU_SIZES on a CPU)
    reps: int = 10
    dtype: str = "bf16"
    chip: str = "auto"
    out_dir: Path = Path("bench")
    trace_dir: Path | None = None
    trace: bool = True


@dataclass
class Plan:
    options: Options
    device: Any  # labs.device.DeviceInfo
    mesh_shape: tuple[int, ...]
    chip: catalogue.Chip | None
    datasheet_note: str
    rows: list[dict]
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
    """(rows, cols) of the full array nearest ``nbytes``: rows a multiple of n² so every split is even."""
    row_bytes = COLS * DTYPE_BYTES[dtype]
    unit = n * n
    rows = max(unit, round(nbytes / row_bytes / unit) * unit)
    return rows, COLS


def matmul_dims(nbytes: float, n: int, dtype: str) -> tuple[int, int, int]:
    """(I, J, K) of the sharded matmul: C = I×K near ``nbytes``, J = I rounded to a multiple of n·128."""
    side = max(128, round(math.sqrt(nbytes / DTYPE_BYTES[dtype]) / 128) * 128)
    j = max(n * 128, round(side / (n * 128)) * n * 128)
    return side, j, side


def row_id(op: str, nbytes: float) -> str:
    return f"{op}@{si(nbytes, 'B', 3).replace(' ', '')}"


def make_plan(options: Options, device, now: _dt.datetime | None = None) -> Plan:
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
        for op in OPS:
            full = r * c * DTYPE_BYTES[options.dtype]
            rows.append({"id": row_id(op, nbytes), "op": op, "asked_bytes": nbytes, "bytes": full,
                         "shape": [r, c]})
    i, j, k = matmul_dims(max(options.sizes), n, options.dtype)
    rows.append({"id": "sharded_matmul", "op": "sharded_matmul", "asked_bytes": max(options.sizes),
                 "bytes": i * k * DTYPE_BYTES[options.dtype], "shape": [i, j, k]})
    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    stem = records.free_stem(options.out_dir, record_stem(device.platform, device.device_kind, n, stamp))
    try:
        trace_dir = records.prepare_output(options.out_dir, stem, options.trace, options.trace_dir)
    except records.RecordError as exc:
        raise CollectivesLabError(str(exc)) from None
    notes = []
    if device.platform == "cpu":
        notes.append("CPU devices share one machine's memory: practice only (never counted)")
    if chip is not None and chip.kind == "tpu":
        notes.append("datasheet: each mesh axis is taken as a torus axis of the same length; "
                     "the runtime's device order decides the physical links")
    return Plan(options, device, shape, chip, note, rows, stamp, stem, trace_dir, notes)


def _chip(name: str, device) -> tuple[catalogue.Chip | None, str]:
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


def separate_process_traces(plan: "Plan") -> None:
    """Multi-host: each process writes its traces in its own folder (``process-<index>``)."""
    import jax

    if jax.process_count() > 1 and plan.trace_dir is not None:
        plan.trace_dir = plan.trace_dir / f"process-{jax.process_index()}"


def is_first_process() -> bool:
    """Process 0 writes the one record of a (multi-host) run."""
    import jax

    return jax.process_index() == 0


# --- predictions (pure Python) -------------------------------------------------------------

def datasheet_prediction(plan: Plan, row: dict) -> dict | None:
    """The catalogue chip's model for one row; None without a chip with ICI figures."""
    chip = plan.chip
    if chip is None:
        return None
    cat = catalogue.load()
    try:
        wrap = C.resolve_wrap(chip, plan.mesh_shape, "auto", plan.mesh_shape)
    except C.TopologyError:
        return None
    t = C.chip_collective(cat, chip, MODEL_OP[row["op"]], row["bytes"], plan.mesh_shape, wrap)
    out = _model_dict(t)
    if row["op"] == "sharded_matmul":
        i, j, k = row["shape"]
        flops = 2 * i * j * k / plan.devices
        dtype = plan.options.dtype
        peak = chip.peak_flops_per_s(dtype) if dtype in chip.peak_flops else None
        if peak is None:
            return None
        out["t_math_s"] = flops / peak
        out["seconds"] = out["t_math_s"] + t.t_s
    return out


def _model_dict(t: C.CollectiveTime) -> dict:
    return {"seconds": t.t_s, "bound": t.bound, "t_bandwidth_s": t.t_bandwidth_s, "t_latency_s": t.t_latency_s,
            "hops": t.hops, "wrap": list(t.wrap)}


def fit_calibration(plan: Plan, measured: dict[str, float], local_matmul_s: float | None) -> dict:
    """Effective ring bandwidth (bytes/s) and per-hop latency (s) from this device's own AllGathers.

    The model the predictions use, fitted as it is: t = max(V / (W · n_axes), hops · α) on a
    ring with wraparound over the mesh axes. α from the smallest AllGather (its latency
    term), W from the largest (its bandwidth term). Both fitting rows are then predicted
    exactly whenever the time grows no faster than the bytes between them (the usual case);
    ``exact_on_fit`` says whether it did.
    """
    gathers = sorted((r for r in plan.rows if r["op"] == "all_gather"), key=lambda r: r["bytes"])
    small, large = gathers[0], gathers[-1]
    hops = sum(C.axis_gather_hops(n, True) for n in plan.mesh_shape)
    n_axes = len(plan.mesh_shape)
    alpha = measured[small["id"]] / hops
    w_bidi = large["bytes"] / (measured[large["id"]] * n_axes)
    i, j, k = next(r["shape"] for r in plan.rows if r["op"] == "sharded_matmul")
    flops = 2 * i * j * k / plan.devices
    exact = (small["bytes"] / (w_bidi * n_axes) <= measured[small["id"]] * (1 + 1e-12)
             and hops * alpha <= measured[large["id"]] * (1 + 1e-12))
    return {"w_bidi_bytes_per_s": w_bidi, "hop_latency_s": alpha, "fitted_on": [small["id"], large["id"]],
            "model": "max(V / (W * n_axes), hops * alpha)", "exact_on_fit": exact,
            "local_matmul_s": local_matmul_s,
            "flops_per_s": flops / local_matmul_s if local_matmul_s else None}


def calibrated_prediction(plan: Plan, row: dict, cal: dict) -> dict:
    w = cal["w_bidi_bytes_per_s"]
    t = C.collective_time(MODEL_OP[row["op"]], row["bytes"], plan.mesh_shape, (True,) * len(plan.mesh_shape),
                          w / 2, w, cal["hop_latency_s"])
    out = _model_dict(t)
    if row["op"] == "sharded_matmul" and cal["local_matmul_s"] is not None:
        out["t_math_s"] = cal["local_matmul_s"]
        out["seconds"] = cal["local_matmul_s"] + t.t_s
    return out


def score_rows(plan: Plan, rows: list[dict], learner: dict[str, float], cal: dict) -> str:
    """Fill predictions, ratios and verdicts in place; return the graded kind."""
    covered = bool(learner) and all(r["id"] in learner for r in rows)
    has_sheet = plan.chip is not None and all(datasheet_prediction(plan, r) is not None for r in rows)
    graded = score.graded_kind({"learner": 1.0 if covered else None, "datasheet": 1.0 if has_sheet else None,
                                "calibrated": 1.0})
    for r in rows:
        preds = {"datasheet": datasheet_prediction(plan, r), "calibrated": calibrated_prediction(plan, r, cal),
                 "learner": {"seconds": learner[r["id"]]} if r["id"] in learner else None}
        m = r["measured"]["measured_s"]
        r["predictions"] = preds
        r["ratios"] = {k: score.ratio(m, p["seconds"]) if p else None for k, p in preds.items()}
        r["within_2x"] = {k: score.within(v) for k, v in r["ratios"].items()}
        r["verdict"] = "hit" if r["within_2x"][graded] else "miss"
        r["explanation"] = None
    return graded


# --- running on the devices (jax) ------------------------------------------------------------

MIN_JAX = (0, 4, 30)  # the single-chip lab's minimum (pyproject's lab extra): shard_map exists from there on


def _shard_map():
    """``shard_map`` with its replication check turned off, on every jax the lab supports.

    New jax: ``jax.shard_map(..., check_vma=False)``; before that (0.4.30 to 0.6):
    ``jax.experimental.shard_map.shard_map(..., check_rep=False)``. Below ``MIN_JAX`` the
    lab refuses with one line.
    """
    import inspect

    import jax

    version = tuple(int(p) for p in re.findall(r"\d+", jax.__version__)[:3])
    if version < MIN_JAX:
        raise CollectivesLabError(f"the collectives lab needs jax >= {'.'.join(map(str, MIN_JAX))}; "
                                  f"this is jax {jax.__version__}")
    smap = getattr(jax, "shard_map", None)
    if smap is None:
        from jax.experimental.shard_map import shard_map as smap  # older jax
    params = inspect.signature(smap).parameters
    check = next((name for name in ("check_vma", "check_rep") if name in params), None)
    if check is None:
        return smap
    return lambda f, **kw: smap(f, **kw, **{check: False})


def build(plan: Plan):
    """The mesh and one jitted shard_map program per op: {op: (fn, make_input(row, seed))}."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()).reshape(plan.mesh_shape), plan.axis_names)
    ax = plan.axis_names
    smap = _shard_map()
    dtype = jnp.bfloat16 if plan.options.dtype == "bf16" else jnp.float32
    n = plan.devices

    def program(name: str, body: Callable, in_specs, out_specs) -> Callable:
        mapped = smap(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

        def fn(*args):
            return mapped(*args)

        fn.__name__ = fn.__qualname__ = name  # the trace's module is jit_<name>
        return jax.jit(fn)

    programs = {
        "all_gather": program("coll_all_gather", lambda x: jax.lax.all_gather(x, ax, tiled=True), P(ax), P()),
        "all_reduce": program("coll_psum", lambda x: jax.lax.psum(x, ax), P(ax), P()),
        "reduce_scatter": program("coll_psum_scatter",
                                  lambda x: jax.lax.psum_scatter(x, ax, scatter_dimension=0, tiled=True), P(ax), P(ax)),
        "all_to_all": program("coll_all_to_all", lambda x: jax.lax.all_to_all(x, ax, 0, 0, tiled=True), P(ax), P(ax)),
        "sharded_matmul": program("coll_sharded_matmul", lambda a, b: jax.lax.psum(a @ b, ax),
                                  (P(None, ax), P(ax, None)), P()),
    }
    def placed(key, shape, spec):
        # Generated straight into its sharding: no full copy on one device, and the same
        # program on every process of a multi-host run.
        return jax.jit(lambda k: jax.random.normal(k, shape, dtype), out_shardings=NamedSharding(mesh, spec))(key)

    def make_input(row: dict, seed: int):
        key = jax.random.key(seed)
        if row["op"] == "sharded_matmul":
            i, j, k = row["shape"]
            ka, kb = jax.random.split(key)
            return (placed(ka, (i, j), P(None, ax)), placed(kb, (j, k), P(ax, None)))
        rows, cols = row["shape"]
        if row["op"] in ("all_reduce", "reduce_scatter"):
            rows *= n  # every device holds a full V-byte array to be summed
        return (placed(key, (rows, cols), P(ax)),)  # AllGather, AllToAll: V in total, V/n per device

    return mesh, programs, make_input


def measure_local_matmul(plan: Plan, trace_dir: Path | None):
    """The per-device matmul of the sharded matmul, alone on one device (for calibration)."""
    import jax
    import jax.numpy as jnp

    from labs import measure

    i, j, k = next(r["shape"] for r in plan.rows if r["op"] == "sharded_matmul")
    dtype = jnp.bfloat16 if plan.options.dtype == "bf16" else jnp.float32
    a = jax.random.normal(jax.random.key(1), (i, j // plan.devices), dtype)
    b = jax.random.normal(jax.random.key(2), (j // plan.devices, k), dtype)

    def coll_local_matmul(x, y):
        return x @ y

    fn = jax.jit(coll_local_matmul)
    return measure.measure_call(lambda _: fn(a, b), "jit_coll_local_matmul", plan.options.reps, trace_dir)


def run(plan: Plan, learner: dict[str, float] | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """Measure every row and return the scored record (not yet saved)."""
    from labs import measure

    progress = progress or (lambda label: None)
    progress("build mesh")
    mesh, programs, make_input = build(plan)
    sets = 2  # two input sets per row, alternated: a call never reuses the previous call's buffers
    rows = []
    for spec in plan.rows:
        progress(f"measure {spec['id']}")
        fn = programs[spec["op"]]
        inputs = [make_input(spec, seed) for seed in range(sets)]
        trace = plan.trace_dir / _safe(spec["id"]) if plan.trace_dir is not None else None
        meas = measure.measure_call(lambda i: fn(*inputs[i % sets]), f"jit_{fn.__name__}", plan.options.reps, trace)
        rows.append({**spec, "jax_op": JAX_OPS[spec["op"]], "per_device_input_bytes": _per_device(spec, plan),
                     "measured": {**meas.to_dict(), "trace_dir": _stored(plan, meas.trace_dir)}})
        del inputs
    progress("local matmul (calibration)")
    local = measure_local_matmul(plan, plan.trace_dir / "local_matmul" if plan.trace_dir is not None else None)
    measured = {r["id"]: r["measured"]["measured_s"] for r in rows}
    cal = fit_calibration(plan, measured, local.measured_s)
    graded = score_rows(plan, rows, learner or {}, cal)
    return assemble(plan, rows, graded, cal, mesh)


def _per_device(row: dict, plan: Plan) -> int:
    itemsize = DTYPE_BYTES[plan.options.dtype]
    if row["op"] == "sharded_matmul":
        i, j, k = row["shape"]
        return (i * j + j * k) * itemsize // plan.devices
    if row["op"] in ("all_reduce", "reduce_scatter"):
        return row["bytes"]
    return row["bytes"] // plan.devices


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)


def _stored(plan: Plan, path: str | None) -> str | None:
    return records.stored_path(plan.options.out_dir, path)


def counted(platform: str, devices: int) -> bool:
    """The gate's rule for counting a measurement: real accelerators only (and a collective needs two)."""
    return platform in ("gpu", "tpu") and devices >= 2


def assemble(plan: Plan, rows: list[dict], graded: str, cal: dict, mesh=None) -> dict:
    d = plan.device
    missed = [r["id"] for r in rows if r["verdict"] == "miss"]
    sources = []
    if plan.chip is not None:
        cat = catalogue.load()
        figs = [plan.chip.figures["ici_bytes_per_s_bidi"], plan.chip.figures["ici_bytes_per_s_one_way"],
                cat.fact(C.HOP_LATENCY_FACT)]
        if "ici_wraparound" in plan.chip.figures:
            figs.append(plan.chip.figures["ici_wraparound"])
        sources = sorted({f.source.cite() for f in figs})
    return {
        "schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION, "lab": LAB_NAME,
        "date": _dt.datetime.strptime(plan.stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=_dt.timezone.utc).isoformat(),
        "host": d.host, "platform": d.platform, "device_kind": d.device_kind, "device_count": plan.devices,
        "process_count": _process_count(), "chip": plan.chip.name if plan.chip else None,
        "jax_version": d.jax_version, "jaxlib_version": d.jaxlib_version, "python_version": d.python_version,
        "mesh": {"shape": list(plan.mesh_shape), "axes": list(plan.axis_names)},
        "dtype": plan.options.dtype, "reps": plan.options.reps,
        "constants": {"datasheet": None if plan.chip is None else {
            "chip": plan.chip.name,
            "ici_bytes_per_s_one_way": plan.chip.value("ici_bytes_per_s_one_way"),
            "ici_bytes_per_s_bidi": plan.chip.value("ici_bytes_per_s_bidi"),
            "hop_latency_s": catalogue.load().fact(C.HOP_LATENCY_FACT).value,
            "wrap": [C.wraps(plan.chip, n, plan.mesh_shape) for n in plan.mesh_shape], "sources": sources},
            "datasheet_note": plan.datasheet_note, "calibrated": cal},
        "trace_dir": _stored(plan, str(plan.trace_dir)) if plan.trace_dir is not None else None,
        "graded": graded, "counted": counted(d.platform, plan.devices),
        "status": "counted" if counted(d.platform, plan.devices) else "practice",
        "rows": rows, "notes": list(plan.notes),
        "summary": {"graded": graded, "rows": len(rows), "within_2x": len(rows) - len(missed), "misses": missed,
                    "median_ratio": _median([r["ratios"][graded] for r in rows])},
    }


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def _process_count() -> int:
    import jax

    return jax.process_count()


# --- records -----------------------------------------------------------------------------

def validate(record: Any) -> None:
    """CollectivesLabError naming the first problems when ``record`` breaks the schema."""
    if not isinstance(record, dict) or record.get("schema") != SCHEMA_NAME:
        raise CollectivesLabError(f"not a collectives record (schema {SCHEMA_NAME})")
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    errors = records.schema_errors(record, schema)
    if errors:
        raise CollectivesLabError("; ".join(errors[:3]))


def save(plan: Plan, record: dict) -> Path:
    """Validate, then write ``<out>/<stem>.json`` (``records.save_new``: under the records folder's
    lock, atomically through ``generator.safeio``, never replacing an existing record)."""
    validate(record)
    try:
        return records.save_new(records.record_text(record), plan.options.out_dir, plan.stem)
    except records.RecordError as exc:
        raise CollectivesLabError(str(exc)) from None


def report_lines(record: dict) -> list[str]:
    """The table a terminal shows: each row's measured time against its predictions."""
    g = record["graded"]
    lines = [f"{LAB_NAME}: {record['device_count']} x {record['device_kind']} ({record['platform']}), "
             f"mesh {'x'.join(map(str, record['mesh']['shape']))} {tuple(record['mesh']['axes'])}, {record['dtype']}, "
             f"{record['status']}",
             f"graded on: {g}; calibrated link: W_bidi {record['constants']['calibrated']['w_bidi_bytes_per_s']:.3g} B/s, "
             f"{seconds(record['constants']['calibrated']['hop_latency_s'])} per hop "
             f"(fitted on {', '.join(record['constants']['calibrated']['fitted_on'])})",
             f"{'row':<28} {'bytes':>10} {'measured':>10} {'datasheet':>10} {'calibrated':>10} {'learner':>10}  ratio  verdict"]
    for r in record["rows"]:
        p = r["predictions"]
        cell = lambda k: seconds(p[k]["seconds"]) if p.get(k) else "-"  # noqa: E731
        ratio = r["ratios"][g]
        lines.append(f"{r['id']:<28} {si(r['bytes'], 'B'):>10} {seconds(r['measured']['measured_s']):>10} "
                     f"{cell('datasheet'):>10} {cell('calibrated'):>10} {cell('learner'):>10}  "
                     f"{score.describe_ratio(ratio):<6} {r['verdict']}")
    for note in record["notes"]:
        lines.append(f"note: {note}")
    if record["constants"]["datasheet"] is None:
        lines.append(f"note: {record['constants']['datasheet_note']}")
    return lines


# --- the learner's predictions and multi-host start -------------------------------------------

def load_predictions(path: Path, plan: Plan) -> dict[str, float]:
    """A YAML/JSON file: row id (``all_gather@1MB``, ``sharded_matmul``) -> time with units."""
    from labs.inputs import InputError, parse_prediction, read_mapping

    try:
        data = read_mapping(Path(path), "predictions")
        ids = [r["id"] for r in plan.rows]
        out = {}
        for key, value in data.items():
            if str(key) not in ids:
                raise CollectivesLabError(f"predictions: '{key}' is not a row of this run ({', '.join(ids)})")
            out[str(key)] = parse_prediction(str(value))
        return out
    except InputError as exc:
        raise CollectivesLabError(str(exc)) from None


def init_distributed(environ: dict[str, str] | None = None) -> bool:
    """Multi-host: ``jax.distributed.initialize`` from DRILL_COORDINATOR / DRILL_NUM_PROCESSES /
    DRILL_PROCESS_ID (``DRILL_COORDINATOR=auto``: the runtime's own detection, e.g. Cloud TPU).

    Must run before any other jax call; False (nothing done) when DRILL_COORDINATOR is unset.
    """
    env = os.environ if environ is None else environ
    addr = env.get("DRILL_COORDINATOR", "").strip()
    if not addr:
        return False
    import jax

    try:  # CPU processes need a cross-process collectives library; accelerators ignore this setting
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except Exception:  # an older jax without the option: CPU multi-process collectives are then unsupported
        pass
    if addr == "auto":
        jax.distributed.initialize()
        return True
    try:
        count, pid = int(env["DRILL_NUM_PROCESSES"]), int(env["DRILL_PROCESS_ID"])
    except (KeyError, ValueError):
        raise CollectivesLabError("DRILL_COORDINATOR=HOST:PORT needs DRILL_NUM_PROCESSES and DRILL_PROCESS_ID "
                                  "(integers)") from None
    jax.distributed.initialize(coordinator_address=addr, num_processes=count, process_id=pid)
    return True
