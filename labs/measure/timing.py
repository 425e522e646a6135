"""Wall-clock timing: warm-up excluded, inputs rotated, every result blocked on.

Units: seconds and bytes. ``time_calls`` times a call; ``plan_rotation`` sizes the rotated input sets.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

# Rotation never goes past this many buffer sets: tiny ops would otherwise need
# thousands; the record says when the sets still fit in the cache.
MAX_BUFFER_SETS = 256
MIN_BUFFER_SETS = 2
# Untimed calls first: the first pays for compilation, the second for the allocator's first touches.
DEFAULT_WARMUP = 2


@dataclass(frozen=True)
class WallTiming:
    """Summary of R wall-clock samples (seconds). ``spread`` is (p75 - p25) / median."""

    median_s: float
    min_s: float
    max_s: float
    spread: float
    samples: int

    def to_dict(self) -> dict[str, float]:
        return {"wall_median_s": self.median_s, "wall_min_s": self.min_s, "wall_max_s": self.max_s,
                "wall_spread": self.spread, "wall_samples": self.samples}


def summarize(samples_s: list[float]) -> WallTiming:
    if not samples_s:
        raise ValueError("no timing samples")
    ordered = sorted(samples_s)
    median = statistics.median(ordered)
    if len(ordered) >= 4:
        q = statistics.quantiles(ordered, n=4, method="inclusive")
        iqr = q[2] - q[0]
    else:
        iqr = ordered[-1] - ordered[0]
    return WallTiming(median, ordered[0], ordered[-1], iqr / median if median > 0 else 0.0, len(ordered))


@dataclass(frozen=True)
class Rotation:
    """How many input sets a measurement rotates among, and whether that beats the cache."""

    sets: int
    set_bytes: int
    cache_bytes: int | None
    defeats_cache: bool

    @property
    def total_bytes(self) -> int:
        return self.sets * self.set_bytes

    def to_dict(self) -> dict[str, int | bool | None]:
        return {"buffer_sets": self.sets, "buffer_set_bytes": self.set_bytes,
                "cache_bytes": self.cache_bytes, "defeats_cache": self.defeats_cache}


def plan_rotation(set_bytes: int, cache_bytes: int | None, budget_bytes: float | None) -> Rotation:
    """Enough sets that their total exceeds 2x the cache, within the memory budget.

    Raises MemoryError when not even one set (plus its output) fits the budget.
    """
    if budget_bytes is not None and 2 * set_bytes > budget_bytes:
        raise MemoryError(f"one set of inputs and its output need about {2 * set_bytes / 2**30:.2f} GiB; "
                          f"the device has about {budget_bytes / 2**30:.2f} GiB to spare")
    wanted = MIN_BUFFER_SETS
    if cache_bytes:
        wanted = max(wanted, math.floor(2 * cache_bytes / max(set_bytes, 1)) + 1)
    wanted = min(wanted, MAX_BUFFER_SETS)
    if budget_bytes is not None:
        # Leave room for one output the size of a set while the sets are alive.
        wanted = min(wanted, max(1, int(budget_bytes // set_bytes) - 1))
    # No known cache (None, or 0 bytes) is never "defeated": there is nothing to compare with.
    defeats = cache_bytes is not None and cache_bytes > 0 and wanted * set_bytes > 2 * cache_bytes
    return Rotation(wanted, set_bytes, cache_bytes, defeats)


def block(result: Any) -> Any:
    """Wait for every array in ``result`` (an array or a tuple of them)."""
    if isinstance(result, (tuple, list)):
        for r in result:
            r.block_until_ready()
        return result
    return result.block_until_ready()


def time_calls(call: Callable[[int], Any], reps: int, warmup: int = DEFAULT_WARMUP) -> list[float]:
    """Run ``call(i)`` ``warmup`` times untimed, then ``reps`` timed; seconds per call.

    ``call(i)`` must return the call's result (blocked on here): rotation is the
    caller's business (``lambda i: fn(*sets[i % k])``).
    """
    for i in range(warmup):
        block(call(i))
    samples = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(reps):
            t0 = time.perf_counter()
            out = block(call(warmup + i))
            samples.append(time.perf_counter() - t0)
            # Freed after the clock stops: releasing a large output (munmap on a CPU) is not the op.
            del out
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def dispatch_overhead_s(reps: int = 200) -> float:
    """Median wall time of a jitted call that does almost nothing (seconds).

    It is the fixed cost every measured call carries on top of device time:
    Python, dispatch, the device round trip and the wait.
    """
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device

    def lab_dispatch_probe(x: jax.Array) -> jax.Array:
        return x + 1

    fn = jax.jit(lab_dispatch_probe)
    x = jnp.zeros((1,), jnp.float32)
    return statistics.median(time_calls(lambda i: fn(x), reps, warmup=5))
