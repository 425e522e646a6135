"""Benchmark: rebuilding a problem from its id (what `drill check` does), against a baseline in the same run.

Every id ``generate`` exports (every family and chip, several seeds) is rebuilt with
``registry.problem``; the target is under 0.5 s for each. The baseline, interleaved
id by id on equal work: drawing and solving the same skill once from a fresh ``Random`` (the
least work any rebuild does). The ratio (rebuild time / baseline) is printed, and the worst
absolute rebuild time, which is what the 0.5 s target judges.

    .venv/bin/python bench/bench_check_ids.py [--seeds 3] [--count 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.problems.generate import registry  # noqa: E402

LIMIT_S = 0.5


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--count", type=int, default=3)
    args = ap.parse_args()
    reg = registry()
    ids = {p.id: p for seed in range(args.seeds) for p in reg.generate(count=args.count, seed=seed)}
    rebuild = baseline = worst = 0.0
    failed = 0
    for pid, p in ids.items():
        t0 = time.perf_counter()
        try:
            again = reg.problem(pid)
            failed += again != p
        except Exception:  # an id that does not resolve is a failure, counted
            failed += 1
        t1 = time.perf_counter()
        reg.draw(p.skill, random.Random(pid))
        t2 = time.perf_counter()
        rebuild += t1 - t0
        baseline += t2 - t1
        worst = max(worst, t1 - t0)
    n = len(ids)
    print(f"ids: {n}  failed to round-trip: {failed}")
    print(f"rebuild: {rebuild / n * 1e3:.2f} ms/id  baseline (one draw): {baseline / n * 1e3:.2f} ms/id  "
          f"ratio {rebuild / baseline:.2f}")
    print(f"worst rebuild: {worst * 1e3:.1f} ms (limit {LIMIT_S * 1e3:.0f} ms)")
    return 0 if failed == 0 and worst < LIMIT_S else 1


if __name__ == "__main__":
    sys.exit(main())
