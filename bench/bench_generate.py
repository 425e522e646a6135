"""Benchmark: problems generated per second (target >= 20,000/s on the dev machine).

Times ``generate`` over every family and chip (fresh registry caches, several seeds), and
``draw`` one skill at a time the way a quiz does. As a baseline measured in the same run,
builds the same problems from their dicts (``Problem.from_dict``): the floor of any generator
that returns Problem objects. Prints rates and ratios.

    .venv/bin/python bench/bench_generate.py [--seeds 4] [--count 30]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.families import ops  # noqa: E402
from generator.generate import generate, registry  # noqa: E402
from generator.problem import Problem  # noqa: E402

TARGET_PER_S = 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--count", type=int, default=30, help="problems per skill")
    args = parser.parse_args()
    reg = registry()
    n, elapsed = 0, 0.0
    for seed in range(args.seeds):
        ops._CACHE.clear()  # no head start from an earlier seed's worked arithmetic
        t0 = time.perf_counter()
        got = generate(count=args.count, seed=1000 + seed)
        elapsed += time.perf_counter() - t0
        n += len(got)
    rate = n / elapsed

    ids = [s.id for s in reg.all_skills]
    rng = random.Random(0)
    draws = 20_000
    ops._CACHE.clear()
    t0 = time.perf_counter()
    for i in range(draws):
        reg.draw(ids[i % len(ids)], rng)
    draw_rate = draws / (time.perf_counter() - t0)

    dicts = [p.to_dict() for p in got]
    t0 = time.perf_counter()
    for d in dicts:
        Problem.from_dict(d)
    base_rate = len(dicts) / (time.perf_counter() - t0)

    print(f"generate: {n:,} distinct problems in {elapsed:.2f} s = {rate:,.0f} problems/s "
          f"({len(reg.all_skills)} skills, count {args.count}, {args.seeds} seeds)")
    print(f"draw    : {draw_rate:,.0f} problems/s (one skill at a time, as the quiz does)")
    print(f"baseline: Problem.from_dict {base_rate:,.0f}/s -> generate costs {base_rate / rate:.1f}x building the objects")
    print(f"target  : >= {TARGET_PER_S:,}/s -> generate {rate / TARGET_PER_S:.2f}x, draw {draw_rate / TARGET_PER_S:.2f}x "
          f"({'met' if min(rate, draw_rate) >= TARGET_PER_S else 'MISSED'})")


if __name__ == "__main__":
    main()
