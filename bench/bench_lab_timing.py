"""The lab's timing method taken apart, interleaved in the same run: rotation and profiler overhead.

Per op, in rounds, three ways of timing the same jitted call, their order flipping every round
so a busy stretch of the machine hits all three:
- naive: the seed's LAB·0.1 ``measure()``: one input buffer, wall clock, untraced;
- rotated: inputs rotated past the cache (the lab's sets), wall clock, untraced;
- traced: rotated, inside the lab's step markers and a profiler trace (``measure_call`` with
  one trace), wall clock, and the device time read from the trace.
Printed per op (medians over the rounds): rotated / naive = what rotation changes (above 1:
the naive buffer sat in cache); traced / rotated = what the profiler and markers add to the
wall clock; and the device time beside the traced wall time. The lab scores device time, so
the profiler's cost on the wall clock does not enter a score; this shows how big it is.

    python bench/bench_lab_timing.py [--size 1024] [--reps 20] [--rounds 5] [--ops seed] [--dtype bf16] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.model.units import seconds  # noqa: E402
from labs.measure import calls as measure, ops, timing  # noqa: E402
from labs.measure.device import detect  # noqa: E402

WAYS = ("naive", "rotated", "traced")


def one_round(way: str, fn, sets: list, module: str, reps: int, folder: Path) -> tuple[float, float | None]:
    """(wall median, device p50 or None) of ``reps`` calls timed one way."""
    if way == "naive":
        return statistics.median(timing.time_calls(lambda i: fn(*sets[0]), reps)), None
    if way == "rotated":
        return statistics.median(timing.time_calls(lambda i: fn(*sets[i % len(sets)]), reps)), None
    m = measure.measure_call(lambda i: fn(*sets[i % len(sets)]), module, reps, folder, traces=1)
    return m.wall.median_s, (m.device.p50_s if m.device is not None else None)


def bench(size: int, reps: int, rounds: int, names: tuple[str, ...], dtype: str) -> dict:
    dev = detect()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        for name in names:
            op = ops.OPS[name]
            fn, make = ops.build(name, size, dtype)
            rotation = timing.plan_rotation(op.input_set_bytes(size, dtype), dev.cache_bytes, dev.budget_bytes)
            sets = [make(i) for i in range(rotation.sets)]
            walls: dict[str, list[float]] = {w: [] for w in WAYS}
            device: list[float] = []
            for r in range(rounds):
                order = WAYS if r % 2 == 0 else tuple(reversed(WAYS))
                for way in order:
                    wall, dev_s = one_round(way, fn, sets, op.module_name(), reps, Path(tmp) / f"{name}-{r}")
                    walls[way].append(wall)
                    if dev_s is not None:
                        device.append(dev_s)
            sets.clear()
            med = {w: statistics.median(v) for w, v in walls.items()}
            rows.append({"op": name, "label": op.label, "buffer_sets": rotation.sets,
                         "defeats_cache": rotation.defeats_cache,
                         **{f"{w}_wall_median_s": med[w] for w in WAYS},
                         "device_median_s": statistics.median(device) if device else None,
                         "rotation_effect": med["rotated"] / med["naive"],
                         "profiler_overhead": med["traced"] / med["rotated"]})
    return {"device_kind": dev.device_kind, "platform": dev.platform, "size": size, "reps": reps,
            "rounds": rounds, "dtype": dtype, "cache_bytes": dev.cache_bytes, "rows": rows}


def print_table(result: dict) -> None:
    print(f"lab timing taken apart on {result['device_kind']} ({result['platform']}), N={result['size']}, "
          f"{result['dtype']}: {result['rounds']} interleaved rounds of {result['reps']} calls per way")
    head = (f"{'op':<20} {'naive':>9} {'rotated':>9} {'traced':>9} {'device':>9} "
            f"{'rotated/naive':>13} {'traced/rotated':>14} {'bufs':>5}")
    print(head)
    print("-" * len(head))
    for r in result["rows"]:
        dev = "-" if r["device_median_s"] is None else seconds(r["device_median_s"])
        print(f"{r['label']:<20} {seconds(r['naive_wall_median_s']):>9} {seconds(r['rotated_wall_median_s']):>9} "
              f"{seconds(r['traced_wall_median_s']):>9} {dev:>9} {r['rotation_effect']:>12.2f}x "
              f"{r['profiler_overhead']:>13.2f}x {r['buffer_sets']:>5}")
    print("rotated/naive > 1: the naive method's one buffer stays in cache (it reads faster than memory allows); "
          "traced/rotated: the profiler's and the step markers' cost on the wall clock (device time, the lab's "
          "score, does not include it)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", default="seed")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = bench(args.size, args.reps, args.rounds, ops.parse_ops(args.ops), ops.check_dtype(args.dtype))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
