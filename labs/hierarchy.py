"""EX·06 as a lab: measure the memory hierarchy and matmul rates of the device jax runs on.

The levels come from the device itself: on a CPU each data or unified cache level that
sysfs lists for cpu0 (``labs.device.cpu_cache_levels``) and DRAM; on a GPU the
catalogue's L2 and HBM; on a TPU HBM (VMEM is not reachable from a plain jitted op, and
the hierarchy says so). Each level's bandwidth is a jitted in-place negate of a float32
buffer sized to live in that level (half its size; main memory: several times the
largest cache), run as many passes inside one call (``lax.fori_loop``) as it takes to
move ``BYTES_PER_CALL``, so the call's dispatch is a small share of what is timed: the
rate an XLA op attains with its working set in that level. Each probe is re-measured
with more runs until its spread (IQR / median) is at most ``TARGET_SPREAD`` or its
budget is spent; the spread is kept. The matmul rates are the lab's own shapes (the
square N^3 and the skinny 8xNxN matmul) in each dtype asked for, so an emulated bf16
shows as a measured rate, timed on the device (profiler traces) where a trace folder is
given, as the lab times its ops. The exp rate per dtype (an elementwise exp at the lab's softmax
shape) is the compute a softmax's exps need. The result is a ``generator.hierarchy.Hierarchy``.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from pathlib import Path
from typing import Any, Callable

from generator import costs
from generator.hierarchy import MEASURED, CallRate, ExpRate, FreshOutput, Hierarchy, Level, MatmulRate
from generator.units import DTYPE_BYTES
from labs import measure
from labs import ops as lab_ops
from labs.device import DeviceInfo, cpu_cache_levels

COPY_DTYPE = "f32"
BYTES_PER_CALL = 64 * 2**20  # each timed call moves at least this much (read + write)
MAIN_MEMORY_CACHE_MULTIPLE = 8  # the main-memory buffer: this many times the largest cache
MIN_MAIN_MEMORY_BYTES = 256 * 2**20
TARGET_SPREAD = 0.10  # re-measure a probe until its spread is at most this
FIRST_REPS = 7
MAX_REPS = 56
PROBE_BUDGET_S = 2.5  # seconds of re-measuring per probe, at most (twelve probes on a CPU: the run stays near 30 s)
LEVEL_SHARE = 0.5  # a level's buffer is this share of its size (room for the rest of the program)

Progress = Callable[[str], None]


def _jax() -> tuple[Any, Any, Any]:
    """(jax, jax.numpy, jax.lax), loaded only when a probe runs."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device
    from jax import lax  # optional dependency: jax loads only when a lab runs on a device

    return jax, jnp, lax


def _spread(meas: measure.Measurement) -> float:
    """The spread of the time a probe reports: device time where it was traced, else the wall clock."""
    return meas.device.spread if meas.device is not None else meas.wall.spread


def _steady(measure_once: Callable[[int], measure.Measurement], keep_last: bool = False) -> measure.Measurement:
    """``measure_once(reps)`` with more reps each time, until the spread is at most TARGET_SPREAD or the
    budget is spent. The quietest measurement is kept; with ``keep_last`` the last (the one with the most
    runs: a traced probe re-measures into the same folder, so only the last one's traces remain)."""
    started = time.monotonic()
    reps = FIRST_REPS
    best = last = measure_once(reps)
    while _spread(last if keep_last else best) > TARGET_SPREAD and time.monotonic() - started < PROBE_BUDGET_S \
            and reps < MAX_REPS:
        reps *= 2
        last = measure_once(reps)
        if _spread(last) < _spread(best):
            best = last
    return last if keep_last else best


def copy_rate(buffer_bytes: int) -> tuple[float, float, int]:
    """(bytes/s, spread, passes) of an in-place negate of a float32 buffer of about ``buffer_bytes``."""
    jax, jnp, lax = _jax()
    cols = 256
    elem = DTYPE_BYTES[COPY_DTYPE]
    rows = max(1, buffer_bytes // (cols * elem))
    moved = costs.in_place_pass_bytes((rows, cols), COPY_DTYPE)  # one pass
    passes = max(1, math.ceil(BYTES_PER_CALL / moved))

    def lab_hierarchy_copy(x: Any) -> Any:
        return lax.fori_loop(0, passes, lambda i, y: -y, x)

    fn = jax.jit(lab_hierarchy_copy, donate_argnums=0)
    holder = [jnp.ones((rows, cols), lab_ops.jax_dtype(COPY_DTYPE))]

    def step(i: int) -> Any:
        holder[0] = fn(holder[0])
        return holder[0]

    meas = _steady(lambda reps: measure.measure_call(step, "jit_lab_hierarchy_copy", reps, None))
    holder.clear()
    return moved * passes / meas.measured_s, meas.wall.spread, passes


CALL_SIZES_BYTES = (256 * 2**10, 2**20, 4 * 2**20, 16 * 2**20)  # a call's buffer, main memory swept by call
FRESH_OUTPUT_MIN_BYTES = 2**20  # fresh outputs are timed from this call size up (smaller ones come from the heap)
ROTATED_CACHE_MULTIPLE = 3  # the rotated buffers total this many times the largest cache: from main memory


def _rotated_shape(call_buffer_bytes: int) -> tuple[int, int]:
    """(rows, cols) of the f32 buffer a rotated copy of about ``call_buffer_bytes`` moves each call."""
    cols = 256
    return max(1, call_buffer_bytes // (cols * DTYPE_BYTES[COPY_DTYPE])), cols


def rotated_copy_rate(call_buffer_bytes: int, total_bytes: int, trace_dir: Path | None,
                      fresh_output: bool = False) -> tuple[float, float]:
    """(bytes/s, spread) of negates of ``call_buffer_bytes`` each, rotated through buffers totalling
    ``total_bytes`` (past every cache: each call streams from main memory, as the lab's rotated ops do);
    device time under ``trace_dir``, else wall time. In place (the input donated to the output), or with
    ``fresh_output`` into a newly allocated output each call, as the lab's ops write theirs."""
    jax, jnp, _lax = _jax()
    rows, cols = _rotated_shape(call_buffer_bytes)
    size = rows * cols * DTYPE_BYTES[COPY_DTYPE]
    count = max(2, math.ceil(total_bytes / size))

    # The same negate under two names: each gets its own XLA module, so the two kinds' traces stay apart.
    def lab_hierarchy_rotated_copy(x: Any) -> Any:
        return -x

    def lab_hierarchy_fresh_copy(x: Any) -> Any:
        return -x

    fn = jax.jit(lab_hierarchy_fresh_copy) if fresh_output else jax.jit(lab_hierarchy_rotated_copy, donate_argnums=0)
    bufs = [jnp.full((rows, cols), float(i), lab_ops.jax_dtype(COPY_DTYPE)) for i in range(count)]

    def step(i: int) -> Any:
        if fresh_output:
            return fn(bufs[i % count])
        bufs[i % count] = fn(bufs[i % count])
        return bufs[i % count]

    kind = "fresh" if fresh_output else "rotated"
    folder = None if trace_dir is None else Path(trace_dir) / f"{kind}-{size}"
    # at least one call on every buffer, so each measured call streams its buffer from main memory
    meas = _steady(lambda reps: measure.measure_call(step, f"jit_lab_hierarchy_{kind}_copy",
                                                     max(reps, min(MAX_REPS, count)), folder),
                   keep_last=folder is not None)
    spread = _spread(meas)
    bufs.clear()
    return costs.in_place_pass_bytes((rows, cols), COPY_DTYPE) / meas.measured_s, spread


def fresh_output(call_buffer_bytes: int, total_bytes: int, trace_dir: Path | None, in_place_bytes_per_s: float,
                 in_place_spread: float) -> FreshOutput:
    """What a fresh output of ``call_buffer_bytes`` costs a call beyond writing it in place: the same rotated
    copy timed into a new output each call, less its in-place time (at ``in_place_bytes_per_s``)."""
    rows, cols = _rotated_shape(call_buffer_bytes)
    moved = costs.in_place_pass_bytes((rows, cols), COPY_DTYPE)
    fresh_rate, fresh_spread = rotated_copy_rate(call_buffer_bytes, total_bytes, trace_dir, fresh_output=True)
    extra = max(0.0, moved / fresh_rate - moved / in_place_bytes_per_s)
    return FreshOutput(float(rows * cols * DTYPE_BYTES[COPY_DTYPE]), extra, max(fresh_spread, in_place_spread),
                       f"{MEASURED}: a rotated {COPY_DTYPE} negate into a new output, less the same in place")


def matmul_rate(shape: tuple[int, int, int], dtype: str, trace_dir: Path | None = None,
                sets: int = 2) -> tuple[float, float, str]:
    """(FLOP/s, spread, "device" or "wall") of a jitted [B,D] @ [D,F] in ``dtype``, its inputs rotated
    through ``sets`` input sets (the lab rotates its matmuls' inputs past the cache: a probe that reuses
    two hot sets reads faster than the op it stands for); FLOPs from ``generator.costs``. With
    ``trace_dir``, device time from profiler traces, as the lab times its ops (a small matmul's dispatch
    would otherwise dominate its wall time)."""
    jax, _jnp, _lax = _jax()
    b, d, f = shape
    dt = lab_ops.jax_dtype(dtype)

    def lab_hierarchy_matmul(x: Any, y: Any) -> Any:
        return x @ y

    fn = jax.jit(lab_hierarchy_matmul)
    count = max(2, sets)
    keys = jax.random.split(jax.random.key(7), 2 * count)
    inputs = [(jax.random.normal(keys[2 * k], (b, d), dt), jax.random.normal(keys[2 * k + 1], (d, f), dt))
              for k in range(count)]
    flops = costs.cost("matmul", shape, dtype).flops
    folder = None if trace_dir is None else Path(trace_dir) / f"matmul-{'x'.join(map(str, shape))}-{dtype}"
    meas = _steady(lambda reps: measure.measure_call(lambda i: fn(*inputs[i % count]), "jit_lab_hierarchy_matmul",
                                                     reps, folder), keep_last=folder is not None)
    spread = _spread(meas)
    return flops / meas.measured_s, spread, meas.measured_from


EXPS_PER_CALL = 8 * 2**20  # each timed exp call computes at least this many exponentials


def exp_rate(shape: tuple[int, int], dtype: str) -> tuple[float, float]:
    """(exps/s, spread) of a jitted elementwise ``exp(-x)`` over an array of ``shape`` in ``dtype``,
    written in place, as many passes a call as make ``EXPS_PER_CALL`` (wall time: one call is long).
    ``exp(-x)`` from 1 stays in (0.3, 1), so no pass meets an overflow or a denormal."""
    jax, jnp, lax = _jax()
    elements = 1
    for d in shape:
        elements *= d
    exps = costs.transcendentals(costs.cost("softmax", shape, dtype))  # one exp per element, as softmax's
    passes = max(1, math.ceil(EXPS_PER_CALL / exps))

    def lab_hierarchy_exp(x: Any) -> Any:
        return lax.fori_loop(0, passes, lambda i, y: jnp.exp(-y), x)

    fn = jax.jit(lab_hierarchy_exp, donate_argnums=0)
    holder = [jnp.ones(shape, lab_ops.jax_dtype(dtype))]

    def step(i: int) -> Any:
        holder[0] = fn(holder[0])
        return holder[0]

    meas = _steady(lambda reps: measure.measure_call(step, "jit_lab_hierarchy_exp", reps, None))
    holder.clear()
    return exps * passes / meas.measured_s, meas.wall.spread


def level_plan(device: DeviceInfo) -> tuple[list[tuple[str, str, float | None, bool]], list[str]]:
    """(name, what, size bytes, main memory?) of each level to sweep, fastest first, and notes."""
    notes: list[str] = []
    levels: list[tuple[str, str, float | None, bool]] = []
    if device.platform == "cpu":
        for name, size in cpu_cache_levels():
            levels.append((name, f"CPU cache (sysfs: {name}, per cpu0)", float(size), False))
        if not levels:
            notes.append("sysfs lists no CPU caches here: only main memory is measured")
        levels.append(("DRAM", "main memory", device.memory_bytes, True))
    elif device.platform == "gpu":
        chip = device.chip
        l2 = chip.figure("l2_bytes") if chip is not None else None
        if l2 is not None and l2.value:
            levels.append(("L2", f"cache shared by all SMs ({l2.source.cite()})", float(l2.value), False))
        else:
            notes.append("no L2 size in the catalogue for this GPU: only HBM is measured")
        levels.append(("HBM", "off-chip high-bandwidth memory", device.memory_bytes, True))
    else:
        levels.append(("HBM", "off-chip high-bandwidth memory", device.memory_bytes, True))
        notes.append("VMEM is staged by the compiler inside a kernel; a plain jitted op cannot pin a "
                     "working set there, so it is not swept")
    return levels, notes


def _largest_cache_bytes(device: DeviceInfo, levels: list[tuple[str, str, float | None, bool]]) -> int:
    """The largest cache level swept (else the device's own cache size): what main memory must exceed."""
    return int(max((s for _, _, s, main in levels if not main and s), default=float(device.cache_bytes or 0)))


def _lab_rotation(device: DeviceInfo, op: str, size: int, dtype: str) -> int:
    """How many input sets the lab rotates this op's inputs through at this size
    (``labs.ops.LabOp.rotation``), 2 where it could not hold one."""
    try:
        return lab_ops.OPS[op].rotation(size, dtype, device).sets
    except MemoryError:
        return 2


def _main_buffer(device: DeviceInfo, levels: list[tuple[str, str, float | None, bool]]) -> int:
    wanted = max(MIN_MAIN_MEMORY_BYTES, MAIN_MEMORY_CACHE_MULTIPLE * _largest_cache_bytes(device, levels))
    return wanted if device.budget_bytes is None else min(wanted, int(device.budget_bytes // 2))


def _rotated_total(device: DeviceInfo, levels: list[tuple[str, str, float | None, bool]]) -> int:
    total = max(64 * 2**20, ROTATED_CACHE_MULTIPLE * _largest_cache_bytes(device, levels))
    return total if device.budget_bytes is None else min(total, int(device.budget_bytes // 4))


def step_labels(device: DeviceInfo, dtypes: tuple[str, ...]) -> list[str]:
    """The steps ``measure_hierarchy`` reports, in order, on ``device``: each level's copy (its calls of
    each size and its fresh outputs are parts of that step), then each dtype's two matmul shapes, then
    each dtype's exp."""
    levels, _notes = level_plan(device)
    return [*(f"copy in {name}" for name, _what, _size, _main in levels),
            *(f"matmul {shape} {dtype}" for dtype in dtypes for shape in ("square", "skinny")),
            *(f"exp {dtype}" for dtype in dtypes)]


def measure_hierarchy(device: DeviceInfo, size: int, dtypes: tuple[str, ...],
                      progress: Progress | None = None, trace_dir: Path | None = None) -> Hierarchy:
    """This device's hierarchy: every level's copy rate and the lab's matmul shapes at N=``size``
    in each of ``dtypes`` (device time from traces under ``trace_dir``, else wall time); ``progress``
    is told each probe as it starts."""
    progress = progress or (lambda label: None)
    plan, notes = level_plan(device)
    levels = []
    fresh: list[FreshOutput] = []
    for name, what, size_bytes, main in plan:
        progress(f"copy in {name}")
        buffer = _main_buffer(device, plan) if main else max(4096, int(LEVEL_SHARE * (size_bytes or 0)))
        rate, spread, passes = copy_rate(buffer)
        how = (f"{MEASURED}: in-place {COPY_DTYPE} negate of {buffer / 2**10:,.0f} KiB, {passes} pass(es) a call "
               "(wall time)")
        by_call: list[CallRate] = []
        if main:
            total = _rotated_total(device, plan)
            for call in CALL_SIZES_BYTES:
                if call * 2 > total:
                    continue
                progress(f"copy from {name}, calls of {call // 2**10:,} KiB")
                call_rate, call_spread = rotated_copy_rate(call, total, trace_dir)
                by_call.append(CallRate(2.0 * call, call_rate, call_spread))
                if call >= FRESH_OUTPUT_MIN_BYTES:
                    progress(f"fresh outputs of {call // 2**10:,} KiB")
                    fresh.append(fresh_output(call, total, trace_dir, call_rate, call_spread))
        levels.append(Level(name, what, None if main else size_bytes, rate, how, spread, float(buffer), main,
                            tuple(by_call)))
    rates = []
    for dtype in dtypes:
        for shape_name, op, shape in (("square", "matmul", (size, size, size)),
                                      ("skinny", "skinny_matmul", (lab_ops.SKINNY_ROWS, size, size))):
            progress(f"matmul {shape_name} {dtype}")
            sets = _lab_rotation(device, op, size, dtype)
            flops_per_s, spread, how = matmul_rate(shape, dtype, trace_dir, sets)
            rates.append(MatmulRate(shape_name, dtype, shape, flops_per_s, spread,
                                    f"{MEASURED} ({how} time, inputs rotated through {max(2, sets)} sets as the lab's)"))
    exps = []
    for dtype in dtypes:
        progress(f"exp {dtype}")
        per_s, spread = exp_rate((size, size), dtype)
        exps.append(ExpRate(dtype, (size, size), per_s, spread, f"{MEASURED} (wall time, many passes a call)"))
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return Hierarchy(device.device_kind, MEASURED, tuple(levels), tuple(rates), when, tuple(notes), tuple(exps),
                     tuple(fresh))
