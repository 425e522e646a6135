"""The lab's per-op time against the seed's naive method, measured in the same run.

Naive (the seed's LAB·0.1 ``measure()``): one input buffer, one warm call,
median of 20 wall-clock calls. The lab: inputs rotated past the cache, R
timed calls (median, min, spread), plus the device time read from a profiler
trace. Printed per op: both wall medians and their ratio (lab / naive), the
device time, and whether the lab's wall median is within 15% of the device
time (the issue's fidelity target, for ops of at least 1 ms).

    python bench/bench_lab_timing.py [--size 1024] [--reps 20] [--ops seed] [--dtype bf16] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.units import seconds  # noqa: E402
from labs import measure, ops, timing  # noqa: E402
from labs.device import detect  # noqa: E402

NAIVE_REPS = 20
FIDELITY = 0.15
FIDELITY_MIN_SECONDS = 1e-3


def bench(size: int, reps: int, names: tuple[str, ...], dtype: str) -> dict:
    dev = detect()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        for name in names:
            op = ops.OPS[name]
            fn, make = ops.build(name, size, dtype)
            rotation = timing.plan_rotation(op.input_set_bytes(size, dtype), dev.cache_bytes, dev.budget_bytes)
            sets = [make(i) for i in range(rotation.sets)]
            lab = measure.measure_call(lambda i: fn(*sets[i % len(sets)]), op.module_name(), reps,
                                       Path(tmp) / name)
            naive_s = timing.naive_median_s(fn, sets[0], NAIVE_REPS)
            sets.clear()
            fidelity = None
            if lab.device_median_s is not None:
                fidelity = abs(lab.wall.median_s - lab.device_median_s) / lab.device_median_s
            rows.append({
                "op": name, "label": op.label, "buffer_sets": rotation.sets,
                "defeats_cache": rotation.defeats_cache,
                "naive_median_s": naive_s, "lab_wall_median_s": lab.wall.median_s,
                "lab_wall_min_s": lab.wall.min_s, "lab_wall_spread": lab.wall.spread,
                "lab_device_median_s": lab.device_median_s,
                "lab_over_naive": lab.wall.median_s / naive_s,
                "wall_vs_device": fidelity,
                "fidelity_applies": lab.device_median_s is not None and lab.device_median_s >= FIDELITY_MIN_SECONDS,
                "fidelity_ok": None if fidelity is None else fidelity <= FIDELITY,
            })
    return {"device_kind": dev.device_kind, "platform": dev.platform, "size": size, "reps": reps,
            "dtype": dtype, "naive_reps": NAIVE_REPS, "cache_bytes": dev.cache_bytes, "rows": rows}


def print_table(result: dict) -> None:
    print(f"lab timing vs the seed's naive method on {result['device_kind']} ({result['platform']}), "
          f"N={result['size']}, {result['dtype']}; lab: {result['reps']} rotated runs, naive: median of "
          f"{result['naive_reps']} calls on one buffer")
    head = (f"{'op':<20} {'naive':>9} {'lab wall':>9} {'lab/naive':>9} {'device':>9} "
            f"{'|wall-dev|/dev':>14} {'bufs':>5}  fidelity (>= 1 ms: within 15%)")
    print(head)
    print("-" * len(head))
    for r in result["rows"]:
        dev = "-" if r["lab_device_median_s"] is None else seconds(r["lab_device_median_s"])
        gap = "-" if r["wall_vs_device"] is None else f"{100 * r['wall_vs_device']:.1f}%"
        verdict = ("ok" if r["fidelity_ok"] else "OVER") if r["fidelity_applies"] else "n/a (< 1 ms)"
        print(f"{r['label']:<20} {seconds(r['naive_median_s']):>9} {seconds(r['lab_wall_median_s']):>9} "
              f"{r['lab_over_naive']:>8.2f}x {dev:>9} {gap:>14} {r['buffer_sets']:>5}  {verdict}")
    print("lab/naive > 1: the naive method's one buffer stays in cache, so it reads faster than memory allows; "
          "< 1: the naive loop also times freeing each output (the lab frees it after the clock stops).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ops", default="seed")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = bench(args.size, args.reps, ops.parse_ops(args.ops), ops.check_dtype(args.dtype))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
