"""The collectives lab on the devices (jax): the mesh, one jitted shard_map program per op, the
measurements, and the start of a multi-host run (``init_distributed``). The plan, the predictions,
the scoring and the record are ``labs.collectives.lab``'s (pure Python). jax is imported inside
each function, never at the top.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path
from typing import Any, Callable

from labs.collectives.lab import CollectivesLabError, Options, Plan, RowPlan, assemble, load_predictions, make_plan
from labs.collectives import record as collectives_record
from labs.measure import calls as measure

MIN_JAX = (0, 4, 30)  # the single-chip lab's minimum (pyproject's lab extra): shard_map exists from there on
INPUT_SETS = 2  # input sets per row, alternated: a call never reuses the previous call's buffers


def _shard_map() -> Callable[..., Any]:
    """``shard_map`` with its replication check turned off, on every jax the lab supports.

    New jax: ``jax.shard_map(..., check_vma=False)``; before that (0.4.30 to 0.6):
    ``jax.experimental.shard_map.shard_map(..., check_rep=False)``. Below ``MIN_JAX`` the
    lab refuses with one line.
    """

    import jax  # optional dependency: jax loads only when a lab runs on a device

    version = tuple(int(p) for p in re.findall(r"\d+", jax.__version__)[:3])
    if version < MIN_JAX:
        raise CollectivesLabError(f"the collectives lab needs jax >= {'.'.join(map(str, MIN_JAX))}; "
                                  f"this is jax {jax.__version__}")
    smap: Any = getattr(jax, "shard_map", None)
    if smap is None:
        from jax.experimental.shard_map import shard_map as smap  # older jax
    params = inspect.signature(smap).parameters
    check = next((name for name in ("check_vma", "check_rep") if name in params), None)
    if check is None:
        plain: Callable[..., Any] = smap
        return plain
    return lambda f, **kw: smap(f, **kw, **{check: False})


def build(plan: Plan) -> tuple[Any, dict[str, Callable[..., Any]], Callable[[RowPlan, int], tuple[Any, ...]]]:
    """The mesh, one jitted shard_map program per op, and ``make_input(row, seed)``: the row's
    inputs, each generated straight into its sharding."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device
    import numpy as np  # optional dependency: jax loads only when a lab runs on a device
    # optional dependency: jax loads only when a lab runs on a device
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()).reshape(plan.mesh_shape), plan.axis_names)
    ax = plan.axis_names
    smap = _shard_map()
    dtype = jnp.bfloat16 if plan.options.dtype == "bf16" else jnp.float32
    n = plan.devices

    def program(name: str, body: Callable[..., Any], in_specs: Any, out_specs: Any) -> Callable[..., Any]:
        mapped = smap(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

        def fn(*args: Any) -> Any:
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

    def placed(key: Any, shape: tuple[int, ...], spec: Any) -> Any:
        # Generated straight into its sharding: no full copy on one device, and the same
        # program on every process of a multi-host run.
        return jax.jit(lambda k: jax.random.normal(k, shape, dtype), out_shardings=NamedSharding(mesh, spec))(key)

    def make_input(row: RowPlan, seed: int) -> tuple[Any, ...]:
        key = jax.random.key(seed)
        if row.op == "sharded_matmul":
            i, j, k = row.shape
            ka, kb = jax.random.split(key)
            return (placed(ka, (i, j), P(None, ax)), placed(kb, (j, k), P(ax, None)))
        rows, cols = row.shape
        if row.op in ("all_reduce", "reduce_scatter"):
            rows *= n  # every device holds a full V-byte array to be summed
        return (placed(key, (rows, cols), P(ax)),)  # AllGather, AllToAll: V in total, V/n per device

    return mesh, programs, make_input


def measure_local_matmul(plan: Plan, trace_dir: Path | None) -> Any:
    """The per-device matmul of the sharded matmul, alone on one device (for calibration):
    a ``labs.measure.calls.Measurement``."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device

    i, j, k = plan.matmul.shape
    dtype = jnp.bfloat16 if plan.options.dtype == "bf16" else jnp.float32
    a = jax.random.normal(jax.random.key(1), (i, j // plan.devices), dtype)
    b = jax.random.normal(jax.random.key(2), (j // plan.devices, k), dtype)

    def coll_local_matmul(x: Any, y: Any) -> Any:
        return x @ y

    fn = jax.jit(coll_local_matmul)
    return measure.measure_call(lambda _: fn(a, b), "jit_coll_local_matmul", plan.options.reps, trace_dir)


def run(plan: Plan, learner: dict[str, float] | None = None,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure every row and return the scored record (``labs.collectives.lab.assemble``; not yet saved)."""
    import jax  # optional dependency: jax loads only when a lab runs on a device

    progress = progress or (lambda label: None)
    progress("build mesh")
    _, programs, make_input = build(plan)
    measured = {}
    for row in plan.rows:
        progress(f"measure {row.id}")
        fn = programs[row.op]
        inputs = [make_input(row, seed) for seed in range(INPUT_SETS)]
        trace = plan.trace_dir / _safe(row.id) if plan.trace_dir is not None else None
        measured[row.id] = measure.measure_call(lambda i: fn(*inputs[i % INPUT_SETS]), f"jit_{fn.__name__}",
                                                plan.options.reps, trace)
        del inputs
    progress("local matmul (calibration)")
    local = measure_local_matmul(plan, plan.trace_dir / "local_matmul" if plan.trace_dir is not None else None)
    return assemble(plan, measured, local, learner or {}, jax.process_count())


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)


def separate_process_traces(plan: Plan) -> None:
    """Multi-host: each process writes its traces in its own folder (``process-<index>``)."""
    import jax  # optional dependency: jax loads only when a lab runs on a device

    if jax.process_count() > 1 and plan.trace_dir is not None:
        plan.trace_dir = plan.trace_dir / f"process-{jax.process_index()}"


def is_first_process() -> bool:
    """Process 0 writes the one record of a (multi-host) run."""
    import jax  # optional dependency: jax loads only when a lab runs on a device

    return bool(jax.process_index() == 0)


def init_distributed(environ: dict[str, str] | None = None) -> bool:
    """Multi-host: ``jax.distributed.initialize`` from DRILL_COORDINATOR / DRILL_NUM_PROCESSES /
    DRILL_PROCESS_ID (``DRILL_COORDINATOR=auto``: the runtime's own detection, e.g. Cloud TPU).

    Must run before any other jax call; False (nothing done) when DRILL_COORDINATOR is unset.
    """
    env = os.environ if environ is None else environ
    addr = env.get("DRILL_COORDINATOR", "").strip()
    if not addr:
        return False
    import jax  # optional dependency: jax loads only when a lab runs on a device

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


def prepare(options: Options, predictions: Path | None) -> tuple[Plan, dict[str, float]]:
    """``drill lab --collectives`` up to measuring: the multi-host start, the device, the plan (each
    process's own trace folder) and the learner's predictions file; CollectivesLabError (one line)."""
    from labs.measure.device import detect  # optional dependency: jax loads only when a lab runs on a device

    init_distributed()
    plan = make_plan(options, detect())
    learner = load_predictions(predictions, plan) if predictions else {}
    separate_process_traces(plan)
    return plan, learner


def run_and_save(plan: Plan, learner: dict[str, float],
                 progress: Callable[[str], None] | None = None) -> tuple[dict[str, Any], Any, Path | None]:
    """Measure, validate and (process 0 only) save: (the record, it typed, its path or None on the other
    processes of a multi-host run). CollectivesLabError or RecordError (one line)."""

    record = run(plan, learner, progress)
    typed = collectives_record.parse(record)  # the record as written, validated
    path = collectives_record.save(record, plan.options.out_dir, plan.stem) if is_first_process() else None
    return record, typed, path
