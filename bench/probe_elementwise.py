"""Why an elementwise op streams slower than the copy probe of the level that holds it.

One add of two [N, N] arrays (N=1024 by default: its rotated inputs live in main memory) is timed four
ways on this CPU, wall time, inputs rotated through 64 arrays, interleaved rounds:
- f32 / bf16: the dtype (XLA's CPU backend computes bf16 in f32: a convert in and out of every element);
- fresh / in place: a fresh output each call (as the lab's ops) or the first input donated and written
  over (as the copy probe does: no page of a new buffer to touch for the first time);
run once with XLA's default threads and once with one (``--threads 1`` re-runs this script under
``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``).
It prints each variant's bytes/s (``generator.model.costs``' count: two reads and a write) and the ratios that
split the gap: dtype, fresh output and threads. ``bench/NOTES-cpu-hierarchy.md`` holds this machine's run.

    python bench/probe_elementwise.py [--size 1024] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def measure(size: int, rounds: int) -> dict[str, float]:
    import jax  # start-up: only the child runs import jax (the parent only starts them)
    import jax.numpy as jnp  # start-up: as above

    from generator.model import costs  # start-up: as above
    from labs.measure import timing  # start-up: as above

    out: dict[str, list[float]] = {}
    variants = []
    for dtype, jdt in (("f32", jnp.float32), ("bf16", jnp.bfloat16)):
        pool = [jnp.full((size, size), 1.0 + k / 64, jdt) for k in range(64)]
        fresh = jax.jit(lambda x, y: x + y)
        donated = jax.jit(lambda x, y: x + y, donate_argnums=0)
        holder = [jnp.zeros((size, size), jdt) for _ in range(32)]

        def fresh_call(i: int, pool=pool, fresh=fresh) -> object:
            return fresh(pool[(2 * i) % 64], pool[(2 * i + 1) % 64])

        def donated_call(i: int, pool=pool, donated=donated, holder=holder) -> object:
            k = i % len(holder)
            holder[k] = donated(holder[k], pool[i % 64])
            return holder[k]

        moved = costs.cost("add", (size, size), dtype).bytes
        variants += [(f"{dtype} fresh", fresh_call, moved), (f"{dtype} in place", donated_call, moved)]
    for _ in range(rounds):
        for label, call, moved in variants:
            samples = timing.time_calls(call, 5, warmup=1)
            out.setdefault(label, []).append(moved / statistics.median(samples))
    return {label: statistics.median(rates) for label, rates in out.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", choices=["default", "1"], default=None)
    args = parser.parse_args(argv)
    if args.threads is not None:  # a child run: one thread setting, JSON out
        print(json.dumps(measure(args.size, args.rounds)))
        return 0
    runs = {}
    for threads, flags in (("default", os.environ.get("XLA_FLAGS", "")), ("1", ONE_THREAD)):
        env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
        res = subprocess.run([sys.executable, __file__, "--size", str(args.size), "--rounds", str(args.rounds),
                              "--threads", threads], env=env, capture_output=True, text=True, check=True)
        runs[threads] = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"add [{args.size}, {args.size}], load {os.getloadavg()[0]:.1f}, GB/s (median of {args.rounds} rounds)")
    print(f"{'variant':<16} {'threads: default':>17} {'one thread':>11}")
    for label in runs["default"]:
        print(f"{label:<16} {runs['default'][label] / 1e9:>17.1f} {runs['1'][label] / 1e9:>11.1f}")
    d = runs["default"]
    print(f"f32 / bf16 (fresh): {d['f32 fresh'] / d['bf16 fresh']:.2f}x; in place / fresh (bf16): "
          f"{d['bf16 in place'] / d['bf16 fresh']:.2f}x, (f32): {d['f32 in place'] / d['f32 fresh']:.2f}x; "
          f"default threads / one (bf16 fresh): {d['bf16 fresh'] / runs['1']['bf16 fresh']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
