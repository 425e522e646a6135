"""Which "large copy" shows a device's real HBM bandwidth? A one-off probe for calibration.

Run on an accelerator (device time from the profiler trace, as the lab measures):
    PYTHONPATH=. python3 bench/probe_bandwidth.py [OUT_DIR]

Why: on the H200 (2026-11-29) the lab's calibration copy, an in-place bf16 negate
of 381 MiB, moved 3.36 TB/s while the lab's own elementwise add moved 4.2-4.3 TB/s.
Expectation written before running: the in-place bf16 negate is held back by narrow
per-thread accesses (one kernel, 16 registers, 1 KiB per block in the trace), so
out-of-place and f32 variants and a plain copy should reach ~4.2-4.4 TB/s (the
workplace measured a device-to-device copy at about 4.3 TB/s).
Prints bytes moved / device time for each probe at two sizes.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp

from labs.measure import calls as measure


def probes(n_bytes: int):
    cols = 1024
    out = {}

    def probe_negate_inplace_bf16(x):
        return -x

    def probe_negate_bf16(x):
        return -x

    def probe_copy_bf16(x):
        return jnp.copy(x)

    def probe_negate_inplace_f32(x):
        return -x

    def probe_add_bf16(x, y):
        return x + y

    bf16_rows = n_bytes // (cols * 2)
    f32_rows = n_bytes // (cols * 4)
    out["negate in place bf16"] = (jax.jit(probe_negate_inplace_bf16, donate_argnums=0), "inplace", bf16_rows, jnp.bfloat16, 2)
    out["negate out of place bf16"] = (jax.jit(probe_negate_bf16), "rotate", bf16_rows, jnp.bfloat16, 2)
    out["copy bf16"] = (jax.jit(probe_copy_bf16), "rotate", bf16_rows, jnp.bfloat16, 2)
    out["negate in place f32"] = (jax.jit(probe_negate_inplace_f32, donate_argnums=0), "inplace", f32_rows, jnp.float32, 2)
    out["add bf16 (2 reads, 1 write)"] = (jax.jit(probe_add_bf16), "binary", bf16_rows, jnp.bfloat16, 3)
    return cols, out


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    print("device:", jax.devices()[0].device_kind)
    sizes = os.environ.get("PROBE_BYTES", "400e6,1600e6")
    for n_bytes in (int(float(s)) for s in sizes.split(",")):
        cols, table = probes(n_bytes)
        for label, (fn, mode, rows, dtype, passes) in table.items():
            name = "jit_" + fn.__wrapped__.__name__ if hasattr(fn, "__wrapped__") else None
            key = jax.random.key(0)
            if mode == "inplace":
                holder = [jnp.ones((rows, cols), dtype)]

                def call(i, fn=fn, holder=holder):
                    holder[0] = fn(holder[0])
                    return holder[0]
            elif mode == "rotate":
                bufs = [jax.random.normal(jax.random.fold_in(key, i), (rows, cols), dtype) for i in range(2)]

                def call(i, fn=fn, bufs=bufs):
                    return fn(bufs[i % 2])
            else:
                bufs = [jax.random.normal(jax.random.fold_in(key, i), (rows, cols), dtype) for i in range(4)]

                def call(i, fn=fn, bufs=bufs):
                    return fn(bufs[(2 * i) % 4], bufs[(2 * i + 1) % 4])
            module = name or "jit_" + label
            m = measure.measure_call(call, module, 20, out_dir / f"{module}-{n_bytes}")
            moved = passes * rows * cols * (4 if dtype == jnp.float32 else 2)
            print(f"{n_bytes / 1e6:6.0f} MB  {label:<28} {m.measured_from:>6} {m.measured_s * 1e6:9.1f} us"
                  f"  {moved / m.measured_s / 1e12:5.2f} TB/s")


if __name__ == "__main__":
    main()
