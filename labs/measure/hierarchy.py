"""EX·06 as a lab: measure the memory hierarchy, matmul, exp and op rates of the device jax runs on.

``measure_hierarchy`` gives a ``generator.model.hierarchy.Hierarchy``: on a CPU the levels are the
plateaus of a sweep of working sets (``sweep``, ``plateaus``); elsewhere each level's rate is an
in-place negate sized to live in it. Device time from traces where a folder is given.

Details: docs/internals-labs.md.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import math
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from generator.model import costs
from generator.model.hierarchy import MEASURED, CallRate, ExpRate, FreshOutput, Hierarchy, Level, MatmulRate, OpRate
from generator.model.units import DTYPE_BYTES, fmt
from labs.measure import calibrate, calls as measure, timing
from labs.measure import ops as lab_ops
from labs.measure.device import DeviceInfo, cpu_cache_levels

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


def spread_of(meas: measure.Measurement) -> float:
    """The spread of the time a probe reports: device time where it was traced, else the wall clock."""
    return meas.device.spread if meas.device is not None else meas.wall.spread


def _steady(measure_once: Callable[[int], measure.Measurement], keep_last: bool = False) -> measure.Measurement:
    """``measure_once(reps)`` with more reps each time, until the spread is at most TARGET_SPREAD or the
    budget is spent. The quietest measurement is kept; with ``keep_last`` the last (the one with the most
    runs: a traced probe re-measures into the same folder, so only the last one's traces remain)."""
    started = time.monotonic()
    reps = FIRST_REPS
    best = last = measure_once(reps)
    while spread_of(last if keep_last else best) > TARGET_SPREAD and time.monotonic() - started < PROBE_BUDGET_S \
            and reps < MAX_REPS:
        reps *= 2
        last = measure_once(reps)
        if spread_of(last) < spread_of(best):
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
    spread = spread_of(meas)
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
    two hot sets reads faster than the op it stands for); FLOPs from ``generator.model.costs``. With
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
    spread = spread_of(meas)
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
    (``labs.measure.ops.LabOp.rotation``), 2 where it could not hold one."""
    try:
        return lab_ops.rotation(lab_ops.OPS[op], size, dtype, device).sets
    except MemoryError:
        return 2


def _main_buffer(device: DeviceInfo, levels: list[tuple[str, str, float | None, bool]]) -> int:
    wanted = max(MIN_MAIN_MEMORY_BYTES, MAIN_MEMORY_CACHE_MULTIPLE * _largest_cache_bytes(device, levels))
    return wanted if device.budget_bytes is None else min(wanted, int(device.budget_bytes // 2))


def _rotated_total(device: DeviceInfo, levels: list[tuple[str, str, float | None, bool]]) -> int:
    return main_memory_total(device, _largest_cache_bytes(device, levels))


# ----------------------------------------------------------------- CPU: levels from a sweep, probes interleaved

SWEEP_FIRST_BYTES = 16 * 2**10  # the sweep's smallest working set
SWEEP_CHUNK_BYTES = 2**20  # a working set past this is rotated through in chunks of it, one chunk a pass
SWEEP_MOVE_BYTES = 64 * 2**20  # each sweep call moves at least this much (and passes over every chunk)
SWEEP_PAST_LAST_CACHE = 4  # the sweep ends at this many times the largest cache sysfs lists ...
SWEEP_MIN_TOP_BYTES = 64 * 2**20  # ... and at least here
SWEEP_MAX_TOP_BYTES = 2**30  # ... and at most here (a host's L3 shown to a VM can be hundreds of MiB)
ROUNDS = 3  # interleaved probes: each runs this many times, in turn with the others
REPS_PER_ROUND = 3  # timed calls of one probe in one round
NOISY_SPREAD = measure.NOISY_SPREAD  # a probe spread wider than this is re-measured once, then flagged
PLATEAU_STEP = 0.2  # a rate this far (relative) from its plateau's median, beyond the spreads, starts a new one
# main memory's figure: rotated in-place calls of this buffer (twice it moved a call), the lab's calibrated copy's
MAIN_CALL_BYTES = calibrate.CPU_COPY_CALL_BYTES
OP_KINDS = ("add", "reduce_sum", "softmax")  # the op kinds measured per dtype and level (generator.model.costs ops)
# The op probes' arrays are the lab's own shapes, square with these sides: an elementwise op's rate depends on
# its shape, not only its bytes (a bf16 reduce_sum of 256 KiB arrays streamed 20 GB/s as [256, 256], 9.5 GB/s
# as [128, 2048] and 5.8 GB/s as [362, 362], one process, back to back).
OP_SIDES = (256, 512, 1024, 2048)
OP_ROUNDS = 2  # interleaved rounds of the op probes (device time: quieter than the wall clock)
# timed calls of an op probe in one round: an elementwise call's time on a small VM is bimodal (a bf16 add
# of 3 MiB took 88 us in one run, 250-370 us in the next), so a median of few calls lands on either mode
OP_REPS_PER_ROUND = 10
OP_LEVEL_MIN_BYTES = 8 * 2**20  # a cache level this large also gets op probes (the lab's rotated sets can land in it)
OP_LEVEL_ARRAYS = 16  # a cache level's op probe: the largest square side whose this many f32 arrays fill half the level


@dataclass(frozen=True)
class SweepPoint:
    """One working set of the sweep: rotated in-place negates over it, bytes/s and spread, flagged when
    noisy even re-measured once."""

    working_set_bytes: float
    bytes_per_s: float
    spread: float
    flagged: bool = False


@dataclass
class _Probe:
    """One interleaved probe: ``run(reps, round)`` times ``reps`` calls and returns seconds per call;
    ``bytes_per_call`` what one call moves (as ``generator.model.costs`` counts it)."""

    label: str
    run: Callable[[int, int], list[float]]
    bytes_per_call: float
    samples: list[float] = field(default_factory=list)
    flagged: bool = False
    keep: list[Any] = field(default_factory=list)  # its buffers, freed when it is done

    @property
    def seconds(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return timing.summarize(self.samples).spread if len(self.samples) > 1 else 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.bytes_per_call / self.seconds


def settle(probes: list[_Probe], progress: Progress, rounds: int = ROUNDS, reps: int = REPS_PER_ROUND) -> None:
    """Time ``probes`` interleaved (each round runs every probe in turn, so a busy stretch of the machine
    hits them alike), then re-measure once, interleaved again, those whose spread exceeds NOISY_SPREAD;
    those still over it are flagged."""
    def rounds_of(chosen: list[_Probe]) -> None:
        for r in range(rounds):
            for p in chosen:
                progress(p.label)
                p.samples.extend(p.run(reps, r))

    rounds_of(probes)
    noisy = [p for p in probes if p.spread > NOISY_SPREAD]
    for p in noisy:
        p.samples.clear()
    rounds_of(noisy)
    for p in noisy:
        p.flagged = p.spread > NOISY_SPREAD


def sweep_sizes(largest_cache_bytes: int | None, budget_bytes: float | None) -> list[int]:
    """The sweep's working sets: from SWEEP_FIRST_BYTES, doubling, to well past the largest cache."""
    top = min(SWEEP_MAX_TOP_BYTES, max(SWEEP_MIN_TOP_BYTES, SWEEP_PAST_LAST_CACHE * (largest_cache_bytes or 0)))
    if budget_bytes is not None:
        top = min(top, int(budget_bytes // 4))
    sizes, w = [], SWEEP_FIRST_BYTES
    while w <= top:
        sizes.append(w)
        w *= 2
    return sizes


def _sweep_probe(working_set_bytes: int) -> _Probe:
    """Rotated in-place f32 negates over ``working_set_bytes``: chunks of at most SWEEP_CHUNK_BYTES, one a
    pass, as many passes a call (inside it, ``lax.fori_loop``) as move SWEEP_MOVE_BYTES and touch every
    chunk, so the call's dispatch is a small share of its wall time."""
    jax, jnp, lax = _jax()
    cols = 256
    chunk = min(working_set_bytes, SWEEP_CHUNK_BYTES)
    count = max(1, working_set_bytes // chunk)
    rows = max(1, chunk // (cols * DTYPE_BYTES[COPY_DTYPE]))
    moved = costs.in_place_pass_bytes((rows, cols), COPY_DTYPE)
    passes = max(count, math.ceil(SWEEP_MOVE_BYTES / moved))

    def one_pass(p: Any, y: Any) -> Any:
        i = p % count
        return lax.dynamic_update_index_in_dim(y, -lax.dynamic_index_in_dim(y, i, 0, keepdims=False), i, 0)

    def lab_hierarchy_sweep(x: Any) -> Any:
        return lax.fori_loop(0, passes, one_pass, x)

    fn = jax.jit(lab_hierarchy_sweep, donate_argnums=0)
    holder = [jnp.ones((count, rows, cols), lab_ops.jax_dtype(COPY_DTYPE))]

    def step(i: int) -> Any:
        holder[0] = fn(holder[0])
        return holder[0]

    return _Probe(f"sweep, working set {working_set_bytes // 2**10:,} KiB",
                  lambda reps, r: timing.time_calls(step, reps, warmup=1), float(moved * passes), keep=holder)


def sweep(sizes: list[int], progress: Progress) -> list[SweepPoint]:
    """Each working set of ``sizes`` timed interleaved (``settle``): its bytes/s, spread and flag."""
    probes = [_sweep_probe(w) for w in sizes]
    settle(probes, progress)
    points = [SweepPoint(float(w), p.bytes_per_s, p.spread, p.flagged) for w, p in zip(sizes, probes)]
    for p in probes:
        p.keep.clear()
    return points


def plateaus(points: list[SweepPoint], step: float = PLATEAU_STEP) -> list[list[SweepPoint]]:
    """The sweep's plateaus, smallest working sets first: a point joins the plateau before it when its rate
    lies within ``step`` (or the two spreads, where wider) of that plateau's median rate; a lone point
    between two plateaus is the step from one to the next, not a level (its neighbours then merge where
    they agree). The last plateau holds the largest working set: main memory."""
    groups: list[list[SweepPoint]] = []
    for p in points:
        if groups and _agrees(groups[-1], p, step):
            groups[-1].append(p)
        else:
            groups.append([p])
    kept = [g for i, g in enumerate(groups) if len(g) > 1 or i in (0, len(groups) - 1)]
    merged: list[list[SweepPoint]] = []
    for g in kept:
        if merged and all(_agrees(merged[-1], p, step) for p in g):
            merged[-1].extend(g)
        else:
            merged.append(list(g))
    return merged


def _agrees(group: list[SweepPoint], p: SweepPoint, step: float) -> bool:
    mid = statistics.median(q.bytes_per_s for q in group)
    band = max(step, p.spread + statistics.median(q.spread for q in group))
    return abs(p.bytes_per_s - mid) <= band * min(p.bytes_per_s, mid)


def plateau_level(group: list[SweepPoint], name: str, what: str, last: bool) -> Level:
    """A cache level from one plateau: its median rate and spread; its size midway (log scale) between
    its largest working set and the sweep's next; flagged when most of its points were."""
    rate = statistics.median(p.bytes_per_s for p in group)
    spread = statistics.median(p.spread for p in group)
    edge = max(p.working_set_bytes for p in group)
    flagged = sum(p.flagged for p in group) * 2 > len(group)
    lo = min(p.working_set_bytes for p in group)
    how = (f"{MEASURED}: the sweep's plateau from {fmt(lo, 'B')} to {fmt(edge, 'B')} (rotated in-place {COPY_DTYPE} "
           f"negates, {len(group)} working set(s), wall time)")
    return Level(name, what, None if last else edge * math.sqrt(2), rate, how, spread, edge, last, (), flagged)


def label_plateaus(edges: list[float], sysfs: list[tuple[str, int]]) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, what) of each cache plateau (``edges``: each one's largest working set, ascending) from the
    cache sizes sysfs lists, which only label them: each plateau takes the unused sysfs level nearest its
    edge (log scale), in order; notes where the sweep and sysfs disagree by more than 2x, and which
    sysfs levels show no plateau of their own."""
    names: list[tuple[str, str]] = []
    notes: list[str] = []
    nxt = 0
    for k, edge in enumerate(edges):
        left = sysfs[nxt:]
        later = len(edges) - k - 1  # plateaus after this one that still need a name
        usable = left[:max(1, len(left) - later)] if left else []
        if not usable:
            names.append((f"C{k + 1}", "a cache level the sweep found (sysfs lists no more)"))
            continue
        pick = min(range(len(usable)), key=lambda j: abs(math.log(usable[j][1] / edge)))
        name, size = usable[pick]
        skipped = [n for n, _ in left[:pick]]
        if skipped:
            notes.append(f"{', '.join(skipped)} (sysfs) show no plateau of their own in the sweep: their working "
                         f"sets stream as fast as {name}'s")
        nxt += pick + 1
        names.append((name, f"CPU cache (sysfs: {name} {fmt(size, 'B')} per cpu0; the sweep's plateau to "
                            f"{fmt(edge, 'B')})"))
        if not 0.5 <= edge / size <= 2:
            notes.append(f"{name}: sysfs lists {fmt(size, 'B')}; the sweep's plateau ends at {fmt(edge, 'B')}: "
                         "that is what this machine reaches (a VM's L3 may be its host's, and two cores hold two "
                         "private caches)")
    unused = [n for n, _ in sysfs[nxt:]]
    if unused:
        notes.append(f"{', '.join(unused)} (sysfs) show no plateau of their own in the sweep: their working sets "
                     "stream at main memory's rate")
    return names, notes


def out_of_order(levels: list[Level]) -> list[int]:
    """Indices of the levels that measure slower than the next one out, beyond the two spreads together."""
    bad = []
    for i, (inner, outer) in enumerate(zip(levels, levels[1:])):
        if inner.bytes_per_s and outer.bytes_per_s:
            band = (inner.spread or 0.0) + (outer.spread or 0.0)
            if outer.bytes_per_s - inner.bytes_per_s > band * inner.bytes_per_s:
                bad.append(i)
    return bad


def _cache_levels(points: list[SweepPoint], sysfs: list[tuple[str, int]]
                  ) -> tuple[list[Level], list[str], list[list[SweepPoint]]]:
    """The cache levels the sweep's plateaus show (all but the last: main memory), named from sysfs,
    with notes and each level's points."""
    groups = plateaus(points)[:-1]
    labels, notes = label_plateaus([max(p.working_set_bytes for p in g) for g in groups], sysfs)
    return [plateau_level(g, name, what, False) for g, (name, what) in zip(groups, labels)], notes, groups


def _steady_call_rate(call: int, total: int, trace_dir: Path | None, fresh_output: bool = False
                      ) -> tuple[float, float, bool]:
    """``rotated_copy_rate``, re-measured once where its spread exceeds NOISY_SPREAD (the quieter kept);
    (bytes/s, spread, flagged: still noisy)."""
    rate, spread = rotated_copy_rate(call, total, trace_dir, fresh_output=fresh_output)
    if spread > NOISY_SPREAD:
        again, again_spread = rotated_copy_rate(call, total, trace_dir, fresh_output=fresh_output)
        if again_spread < spread:
            rate, spread = again, again_spread
    return rate, spread, spread > NOISY_SPREAD


def main_memory_total(device: DeviceInfo, largest_cache_bytes: float | None = None) -> int:
    """What rotated calls from main memory rotate through: ROTATED_CACHE_MULTIPLE times the largest cache
    (sysfs's, or the sweep's where larger), at least 64 MiB, within a quarter of the memory budget."""
    largest = max(float(device.cache_bytes or 0), largest_cache_bytes or 0.0)
    total = max(64 * 2**20, int(ROTATED_CACHE_MULTIPLE * largest))
    return total if device.budget_bytes is None else min(total, int(device.budget_bytes // 4))


def _op_function(kind: str, dtype: str) -> Callable[..., Any]:
    """The lab's own op (``labs.measure.ops.function``), or for "convert" a change from ``dtype`` to the other dtype."""
    if kind != "convert":
        return lab_ops.function(kind)
    other = lab_ops.jax_dtype("f32" if dtype == "bf16" else "bf16")

    def lab_hierarchy_convert(x: Any) -> Any:
        return x.astype(other)

    return lab_hierarchy_convert


def op_bytes(kind: str, shape: tuple[int, int], dtype: str) -> int:
    """One call's bytes: ``generator.model.costs``' count for an op kind; a convert reads ``dtype`` and writes the other."""
    if kind == "convert":
        return costs.array_bytes(shape, dtype) + costs.array_bytes(shape, "f32" if dtype == "bf16" else "bf16")
    return costs.cost(kind, shape, dtype).bytes


def _op_probe(kind: str, dtype: str, pool: list[Any], shape: tuple[int, int], trace_dir: Path | None,
              tag: str) -> _Probe:
    """One op kind in ``dtype`` over arrays of ``shape`` rotated through ``pool`` (each call's output fresh,
    as the lab's ops write theirs); device time under ``trace_dir``, else wall time."""
    jax, _jnp, _lax = _jax()
    body = _op_function(kind, dtype)
    fn, module = jax.jit(body), f"jit_{body.__name__}"
    arity = 2 if kind == "add" else 1
    count = len(pool)

    def call(i: int) -> Any:
        return fn(*(pool[(arity * i + k) % count] for k in range(arity)))

    def run(reps: int, r: int) -> list[float]:
        if trace_dir is None:
            return timing.time_calls(call, reps, warmup=1)
        # one folder a probe: each round's trace replaces the last (measure_call clears it)
        meas = measure.measure_call(call, module, reps, Path(trace_dir) / f"op-{tag}", traces=1)
        return list(meas.device.runs_s) if meas.device is not None else [meas.wall.median_s] * reps

    return _Probe(f"{kind} {dtype} ({tag})", run, float(op_bytes(kind, shape, dtype)))


def op_rates(levels: list[Level], dtypes: tuple[str, ...], device: DeviceInfo, trace_dir: Path | None,
             progress: Progress) -> tuple[list[OpRate], list[str]]:
    """Each op kind (OP_KINDS) in each dtype, timed interleaved over square arrays of each of OP_SIDES rotated
    through main memory (a small call runs slower than a large one), the converts between bf16 and f32 at
    the middle side, and the op kinds again in the largest cache level where it is at least
    OP_LEVEL_MIN_BYTES (the largest square side whose OP_LEVEL_ARRAYS f32 arrays fill half of it); each
    rate is named with the level ``level_for`` gives its working set."""
    found = Hierarchy("", MEASURED, tuple(levels))
    caches = [lv for lv in levels if not lv.main_memory and lv.size_bytes]
    largest = max((lv.size_bytes or 0.0 for lv in caches), default=0.0)
    total = max(main_memory_total(device, largest), int(2 * largest))
    places: list[tuple[str, int, int, tuple[str, ...]]] = []  # (tag, side, bytes rotated through, kinds)
    for side in OP_SIDES:
        converts = ("convert",) if side == OP_SIDES[len(OP_SIDES) // 2] else ()
        places.append((f"main-{side}", side, total, (*OP_KINDS, *converts)))
    if caches and (caches[-1].size_bytes or 0) >= OP_LEVEL_MIN_BYTES:
        half = int((caches[-1].size_bytes or 0) // 2)
        side = 2 ** int(math.log2(math.sqrt(half / (OP_LEVEL_ARRAYS * DTYPE_BYTES["f32"]))))
        places.append((caches[-1].name, max(64, side), half, OP_KINDS))
    rates: list[OpRate] = []
    notes: list[str] = []
    progress("op rates")
    # Device time from traces, but none kept: a record keeps its ops' and the levels' traces, and 30-odd op
    # probes would more than double them (the rates and spreads are in the hierarchy).
    with contextlib.ExitStack() as stack:
        traces = None if trace_dir is None else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="drill-op-rates-")))
        for tag, side, rotated_bytes, kinds in places:
            progress(f"op rates in {tag}")
            rates_here, notes_here = _op_rates_at(found, dtypes, side, rotated_bytes, kinds, traces, tag, progress)
            rates.extend(rates_here)
            notes.extend(notes_here)
    return rates, notes


def _op_rates_at(found: Hierarchy, dtypes: tuple[str, ...], side: int, rotated_bytes: int, kinds: tuple[str, ...],
                 trace_dir: Path | None, tag: str, progress: Progress) -> tuple[list[OpRate], list[str]]:
    """The op kinds in each dtype over [side, side] arrays, as many as fill ``rotated_bytes`` (at least 4),
    timed interleaved."""
    _jax_mod, jnp, _lax = _jax()
    probes: list[tuple[_Probe, str, str, float]] = []
    pools: list[list[Any]] = []
    shape = (side, side)
    for dtype in dtypes:
        arrays = max(4, math.ceil(rotated_bytes / costs.array_bytes(shape, dtype)))
        base = jnp.linspace(-2.0, 2.0, side * side, dtype=lab_ops.jax_dtype(dtype)).reshape(shape)
        pool = [base + (k / arrays) for k in range(arrays)]
        pools.append(pool)
        working = float(arrays * costs.array_bytes(shape, dtype))
        for kind in kinds:
            probes.append((_op_probe(kind, dtype, pool, shape, trace_dir, f"{kind}-{dtype}-{tag}"), kind, dtype,
                           working))
    settle([p for p, *_ in probes], progress, rounds=OP_ROUNDS, reps=OP_REPS_PER_ROUND)
    rates: list[OpRate] = []
    notes: list[str] = []
    for p, kind, dtype, working in probes:
        level = found.level_for(working)
        rates.append(OpRate(kind, dtype, working, p.bytes_per_s, p.spread, level.name if level else "",
                            f"{MEASURED}: {kind} of [{side}, {side}] {dtype} rotated through {fmt(working, 'B')}, "
                            f"fresh outputs, {'device' if trace_dir is not None else 'wall'} time",
                            p.flagged, p.bytes_per_call))
        if p.flagged:
            notes.append(f"the {kind} {dtype} rate in {level.name if level else '?'} (calls of "
                         f"{fmt(p.bytes_per_call, 'B')}) is noisy even re-measured (spread {100 * p.spread:.0f}%)")
    pools.clear()
    return rates, notes


def _cpu_hierarchy(device: DeviceInfo, size: int, dtypes: tuple[str, ...], progress: Progress,
                   trace_dir: Path | None, main_memory: tuple[float, float] | None) -> Hierarchy:
    """The CPU's hierarchy: cache levels from the sweep's plateaus (sysfs only names them), main memory's
    figure from op-sized rotated calls (``main_memory``: the calibration's, where the lab measured it),
    the order checked (a level slower than the next one out is re-measured once, then flagged), then the
    matmul, exp and op rates."""
    sysfs = cpu_cache_levels()
    progress("sweep")
    sizes = sweep_sizes(max((s for _, s in sysfs), default=None), device.budget_bytes)
    points = sweep(sizes, progress)
    caches, notes, groups = _cache_levels(points, sysfs)
    if not sysfs:
        notes.append("sysfs lists no CPU caches here: the sweep's plateaus are named C1, C2, ...")
    progress("copy in DRAM")
    total = main_memory_total(device, max((lv.size_bytes or 0.0 for lv in caches), default=0.0))
    by_call: list[CallRate] = []
    fresh: list[FreshOutput] = []
    figure: tuple[float, float] | None = main_memory
    for call in CALL_SIZES_BYTES:
        if call * 2 > total:
            continue
        progress(f"copy from DRAM, calls of {call // 2**10:,} KiB")
        if call == MAIN_CALL_BYTES and main_memory is not None:
            call_rate, call_spread, noisy = main_memory[0], main_memory[1], main_memory[1] > NOISY_SPREAD
        else:
            call_rate, call_spread, noisy = _steady_call_rate(call, total, trace_dir)
        if call == MAIN_CALL_BYTES and figure is None:
            figure = (call_rate, call_spread)
        if noisy:
            notes.append(f"DRAM calls of {fmt(2.0 * call, 'B')} are noisy even re-measured (spread "
                         f"{100 * call_spread:.0f}%)")
        by_call.append(CallRate(2.0 * call, call_rate, call_spread))
        if call >= FRESH_OUTPUT_MIN_BYTES:
            progress(f"fresh outputs of {call // 2**10:,} KiB")
            fresh.append(fresh_output(call, total, trace_dir, call_rate, call_spread))
    if figure is None:  # a budget too small for op-sized calls: the largest call swept stands in
        figure = (by_call[-1].bytes_per_s, by_call[-1].spread or 0.0) if by_call else (points[-1].bytes_per_s,
                                                                                       points[-1].spread)
    dram = Level("DRAM", "main memory", None, figure[0],
                 f"{MEASURED}: rotated in-place {COPY_DTYPE} negates, {fmt(2.0 * MAIN_CALL_BYTES, 'B')} moved a call, "
                 f"through {fmt(total, 'B')} (op-sized calls; the lab's datasheet copy bandwidth)",
                 figure[1], float(total), True, tuple(by_call), figure[1] > NOISY_SPREAD)
    levels = [*caches, dram]
    bad = out_of_order(levels)
    if bad:  # re-measured once: the sweep's points of the levels out of order
        redo = sorted({i for b in bad for i in (b, b + 1) if i < len(caches)})
        chosen = [p for i in redo for p in groups[i]]
        if chosen:
            again = sweep([int(p.working_set_bytes) for p in chosen], progress)
            swap = {p.working_set_bytes: p for p in again}
            points = [swap.get(p.working_set_bytes, p) for p in points]
            caches, notes, groups = _cache_levels(points, sysfs)
            levels = [*caches, dram]
        for i in out_of_order(levels):
            inner, outer = levels[i], levels[i + 1]
            levels[i] = dataclasses.replace(inner, flagged=True)
            notes.append(f"{inner.name} measures slower than {outer.name} ({fmt(inner.bytes_per_s or 0, 'B/s')} "
                         f"against {fmt(outer.bytes_per_s or 0, 'B/s')}) beyond their spreads, even re-measured: "
                         f"flagged (a busy machine, or {inner.name}'s small calls running on fewer threads)")
    for lv in levels:
        if lv.flagged and not lv.main_memory and (lv.spread or 0) > NOISY_SPREAD:
            notes.append(f"{lv.name}'s sweep is noisy even re-measured (spread {100 * (lv.spread or 0):.0f}%)")
    if dram.flagged:
        notes.append(f"DRAM's figure is noisy (spread {100 * (dram.spread or 0):.0f}%)")
    rates = _matmul_rates(device, size, dtypes, trace_dir, progress)
    exps = _exp_rates(size, dtypes, progress)
    kinds, kind_notes = op_rates(levels, dtypes, device, trace_dir, progress)
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return Hierarchy(device.device_kind, MEASURED, tuple(levels), tuple(rates), when, tuple(notes + kind_notes),
                     tuple(exps), tuple(fresh), tuple(kinds))


def _matmul_rates(device: DeviceInfo, size: int, dtypes: tuple[str, ...], trace_dir: Path | None,
                  progress: Progress) -> list[MatmulRate]:
    rates = []
    for dtype in dtypes:
        for shape_name, op, shape in (("square", "matmul", (size, size, size)),
                                      ("skinny", "skinny_matmul", (lab_ops.SKINNY_ROWS, size, size))):
            progress(f"matmul {shape_name} {dtype}")
            sets = _lab_rotation(device, op, size, dtype)
            flops_per_s, spread, how = matmul_rate(shape, dtype, trace_dir, sets)
            rates.append(MatmulRate(shape_name, dtype, shape, flops_per_s, spread,
                                    f"{MEASURED} ({how} time, inputs rotated through {max(2, sets)} sets as the lab's)"))
    return rates


def _exp_rates(size: int, dtypes: tuple[str, ...], progress: Progress) -> list[ExpRate]:
    exps = []
    for dtype in dtypes:
        progress(f"exp {dtype}")
        per_s, spread = exp_rate((size, size), dtype)
        exps.append(ExpRate(dtype, (size, size), per_s, spread, f"{MEASURED} (wall time, many passes a call)"))
    return exps


def step_labels(device: DeviceInfo, dtypes: tuple[str, ...]) -> list[str]:
    """The steps ``measure_hierarchy`` reports, in order, on ``device``. On a CPU: the sweep, main memory
    (its calls of each size and its fresh outputs are parts of that step), each dtype's two matmul shapes,
    each dtype's exp, then the op rates (main memory and the largest cache). Elsewhere: each level's copy, the matmuls, the exps."""
    mm = [f"matmul {shape} {dtype}" for dtype in dtypes for shape in ("square", "skinny")]
    exps = [f"exp {dtype}" for dtype in dtypes]
    if device.platform == "cpu":
        return ["sweep", "copy in DRAM", *mm, *exps, "op rates"]
    levels, _notes = level_plan(device)
    return [*(f"copy in {name}" for name, _what, _size, _main in levels), *mm, *exps]


def measure_hierarchy(device: DeviceInfo, size: int, dtypes: tuple[str, ...],
                      progress: Progress | None = None, trace_dir: Path | None = None,
                      main_memory: tuple[float, float] | None = None) -> Hierarchy:
    """This device's hierarchy: its levels' rates, and the lab's matmul shapes at N=``size`` in each of
    ``dtypes`` (device time from traces under ``trace_dir``, else wall time); ``progress`` is told each
    probe as it starts. On a CPU (``_cpu_hierarchy``) the levels come from a sweep, main memory's figure
    is ``main_memory`` (bytes/s, spread: the lab's calibrated copy) where given, and each op kind is
    measured per dtype; elsewhere each catalogued level's copy rate."""
    progress = progress or (lambda label: None)
    if device.platform == "cpu":
        return _cpu_hierarchy(device, size, dtypes, progress, trace_dir, main_memory)
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
    rates = _matmul_rates(device, size, dtypes, trace_dir, progress)
    exps = _exp_rates(size, dtypes, progress)
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return Hierarchy(device.device_kind, MEASURED, tuple(levels), tuple(rates), when, tuple(notes), tuple(exps),
                     tuple(fresh))
