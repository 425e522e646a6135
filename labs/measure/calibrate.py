"""Measure the device's own two speeds: a large matmul for FLOP/s, a large copy for bytes/s.

``calibrate`` returns a ``Calibration``, whose ``ceilings()`` feed the same roofline as the datasheet.
The copy is an in-place float32 negate whatever the lab's dtype: a bf16 copy understated the ceiling.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.model import costs, roofline
from generator.model.units import DTYPE_BYTES
from labs.measure import calls as measure, ops
from labs.measure.device import DeviceInfo

# Matmul edge for the FLOP/s ceiling: big enough to fill an accelerator's units
# (an H200 reaches its measured plateau around 8192^3); on a CPU, where bf16 is
# upcast and slow, 512 already saturates the cores (on this 2-core machine, 2026-12-01:
# 10.6 GFLOP/s at 1024, the same within noise at 512) and keeps the lab under a minute.
ACCELERATOR_MATMUL_DIM = 8192
CPU_MATMUL_DIM = 512
# Timed runs per probe trace, at most: the probes give a median speed, not a graded time,
# and on a CPU each 1024^3 run took 0.2 s (the probes were half of a 46 s lab).
PROBE_MAX_REPS = 10

# Copy buffer: several times the cache so the copy streams from memory; float32
# elements (docs/internals-labs.md says why not the lab's dtype). On a CPU the buffer is cut into
# calls of CPU_COPY_CALL_BYTES (each read and written in place: twice that moved a call), rotated: the
# same calls as the measured hierarchy's DRAM figure (labs.measure.hierarchy.MAIN_CALL_BYTES).
COPY_DTYPE = "f32"
COPY_CACHE_MULTIPLE = 8
MIN_COPY_BYTES = 256 * 2**20
CPU_COPY_CALL_BYTES = 4 * 2**20


@dataclass(frozen=True)
class Calibration:
    device_kind: str
    dtype: str
    flops_per_s: float
    bytes_per_s: float
    matmul_dim: int
    matmul_flops: int
    matmul: measure.Measurement
    copy_bytes_moved: int
    copy: measure.Measurement

    def ceilings(self) -> roofline.Ceilings:
        source = (f"calibrated on {self.device_kind}: {self.matmul_dim}^3 {self.dtype} matmul "
                  f"({self.matmul.measured_from} time), in-place {COPY_DTYPE} copy of "
                  f"{self.copy_bytes_moved // 2 / 2**20:.0f} MiB a call ({self.copy.measured_from} time)")
        return roofline.Ceilings(f"{self.device_kind} (calibrated)", self.flops_per_s,
                                 self.bytes_per_s, self.dtype, source)

    def to_dict(self, stored_path: Callable[[str | None], str | None] = lambda p: None if p is None else str(p)
                ) -> dict[str, Any]:
        """The record's view; ``stored_path`` rewrites trace paths (relative to the record)."""
        matmul, copy = self.matmul.to_dict(), self.copy.to_dict()
        matmul["trace_dir"], copy["trace_dir"] = stored_path(matmul["trace_dir"]), stored_path(copy["trace_dir"])
        return {"name": f"{self.device_kind} (calibrated)", "dtype": self.dtype,
                "peak_flops_per_s": self.flops_per_s, "hbm_bytes_per_s": self.bytes_per_s,
                "source": self.ceilings().source,
                "matmul": {"dim": self.matmul_dim, "flops": self.matmul_flops, **matmul},
                "copy": {"bytes_moved": self.copy_bytes_moved, **copy}}


def plan_sizes(device: DeviceInfo, dtype: str) -> tuple[int, int]:
    """(matmul edge, copy buffer bytes) that fit the device's memory budget."""
    elem = DTYPE_BYTES[dtype]
    dim = CPU_MATMUL_DIM if device.platform == "cpu" else ACCELERATOR_MATMUL_DIM
    budget = device.budget_bytes
    copy_bytes = max(MIN_COPY_BYTES, COPY_CACHE_MULTIPLE * (device.cache_bytes or 0))
    if budget is not None:
        # two rotating pairs of inputs plus an output: 5 matrices alive at once
        while dim > 256 and 5 * dim * dim * elem > budget:
            dim //= 2
        copy_bytes = min(copy_bytes, int(budget // 2))
    copy_elem = DTYPE_BYTES[COPY_DTYPE]
    return dim, max(1, copy_bytes // copy_elem) * copy_elem


def calibrate(device: DeviceInfo, dtype: str, reps: int, trace_dir: Path | None) -> Calibration:
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device

    dt = ops.jax_dtype(dtype)
    dim, copy_bytes = plan_sizes(device, dtype)
    reps = min(reps, PROBE_MAX_REPS)

    def lab_calibrate_matmul(x: jax.Array, y: jax.Array) -> jax.Array:
        return x @ y

    mm = jax.jit(lab_calibrate_matmul)
    keys = jax.random.split(jax.random.key(2024), 4)
    sets = [(jax.random.normal(keys[0], (dim, dim), dt), jax.random.normal(keys[1], (dim, dim), dt)),
            (jax.random.normal(keys[2], (dim, dim), dt), jax.random.normal(keys[3], (dim, dim), dt))]
    mm_flops = costs.cost("matmul", (dim, dim, dim), dtype).flops
    mm_meas = measure.measure_call(lambda i: mm(*sets[i % 2]), "jit_lab_calibrate_matmul", reps,
                                   None if trace_dir is None else Path(trace_dir) / "calibrate_matmul")
    sets.clear()  # free the matmul inputs before the copy's buffer

    def lab_calibrate_copy(x: jax.Array) -> jax.Array:
        # lax.neg, which -x runs: jax >= 0.11 types -x with typing.Self, Any to mypy at python_version 3.10
        return jax.lax.neg(x)

    cp = jax.jit(lab_calibrate_copy, donate_argnums=0)
    # A 2D buffer: one very long axis can take a slower path on some backends. On a CPU, op-sized calls
    # (CPU_COPY_CALL_BYTES) rotated through buffers past every cache: the rate the lab's ops can reach,
    # where one pass over a buffer of several GB (a host's L3 of hundreds of MiB, times 8) ran 3x slower.
    cols = 1024
    call_bytes = CPU_COPY_CALL_BYTES if device.platform == "cpu" else copy_bytes
    rows = max(1, call_bytes // (cols * DTYPE_BYTES[COPY_DTYPE]))
    count = max(1, copy_bytes // (rows * cols * DTYPE_BYTES[COPY_DTYPE]))
    holder = [jnp.full((rows, cols), float(k), ops.jax_dtype(COPY_DTYPE)) for k in range(count)]

    def step(i: int) -> jax.Array:
        holder[i % count] = cp(holder[i % count])
        return holder[i % count]

    cp_meas = measure.measure_call(step, "jit_lab_calibrate_copy", reps,
                                   None if trace_dir is None else Path(trace_dir) / "calibrate_copy")
    moved = costs.in_place_pass_bytes((rows, cols), COPY_DTYPE)
    holder.clear()
    flops_per_s = mm_flops / mm_meas.measured_s
    bytes_per_s = moved / cp_meas.measured_s
    if not (math.isfinite(flops_per_s) and math.isfinite(bytes_per_s)):
        raise RuntimeError("calibration measured a zero time; increase --reps or the size")
    return Calibration(device.device_kind, dtype, flops_per_s, bytes_per_s, dim, mm_flops, mm_meas,
                       moved, cp_meas)

