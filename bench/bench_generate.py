"""Benchmark: the generator's cost per problem against a baseline measured in the same run.

Times ``generate`` over every family and chip (fresh registry caches, several seeds), and
``draw`` one skill at a time the way a quiz does. The baseline, interleaved with every
generate round: building the same number of plain problem dicts with ``random`` (random
numbers, formatted prompt, answer and four solution lines: the least work any generator of
these problems does), then ``Problem.from_dict`` on them. The ratio (generate's time per
problem / the baseline's) is what is judged, since both slow down together on a busy
machine; the problems/s figure is printed as information only (the old absolute target,
20,000/s, measured 10,000/s on a busy machine).

    .venv/bin/python bench/bench_generate.py [--seeds 4] [--count 30]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.problems.families import ops  # noqa: E402
from generator.problems.generate import generate, registry  # noqa: E402
from generator.problems.problem import Problem  # noqa: E402

# Generating a problem may cost at most this many times building a plain one with random.
# A judgement, not a measurement: a real problem evaluates the roofline and formats worked
# arithmetic with its sources, several times a plain dict's work; 20x leaves room for that and
# still catches a change that makes generation an order of magnitude slower. Measured
# 2026-11-30 on the shared 2-core dev machine (busy): generate 14.1x, draw 10.3x.
TARGET_RATIO = 20.0
INFO_PER_S = 20_000


def plain_dicts(n: int, rng: random.Random) -> list[dict]:
    """n problem-shaped dicts from random numbers and f-strings: the baseline's work."""
    out = []
    for i in range(n):
        peak, bw = rng.uniform(1e14, 1e15), rng.uniform(5e11, 5e12)
        value = peak / bw
        out.append({"family": "ridge", "skill": f"ridge:c{i % 7}:bf16", "id": f"ridge:c{i}:bf16",
                    "prompt": f"What is the bf16 ridge point of chip {i % 7}, in FLOPs per byte?",
                    "answer": {"value": value, "unit": "FLOP/byte"}, "tolerance": 0.05,
                    "solution": ["ridge = peak FLOP/s / HBM bytes/s", f"peak bf16 = {peak:.3g} FLOP/s",
                                 f"HBM bandwidth = {bw:.3g} B/s", f"ridge = {peak:.3g} / {bw:.3g} = {value:.1f}"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--count", type=int, default=30, help="problems per skill")
    args = parser.parse_args()
    reg = registry()
    rng = random.Random(0)
    n, elapsed, base_elapsed = 0, 0.0, 0.0
    for seed in range(args.seeds):
        ops._CACHE.clear()  # no head start from an earlier seed's worked arithmetic
        t0 = time.perf_counter()
        got = generate(count=args.count, seed=1000 + seed)
        elapsed += time.perf_counter() - t0
        n += len(got)
        # the baseline right after, the same number of problems
        t0 = time.perf_counter()
        plain_dicts(len(got), rng)
        base_elapsed += time.perf_counter() - t0
    rate, base_rate = n / elapsed, n / base_elapsed

    ids = [s.id for s in reg.all_skills]
    draws = 20_000
    ops._CACHE.clear()
    t0 = time.perf_counter()
    for i in range(draws):
        reg.draw(ids[i % len(ids)], rng)
    draw_rate = draws / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    plain_dicts(draws, rng)
    draw_base_rate = draws / (time.perf_counter() - t0)

    dicts = [p.to_dict() for p in got]
    t0 = time.perf_counter()
    for d in dicts:
        Problem.from_dict(d)
    objects_rate = len(dicts) / (time.perf_counter() - t0)

    ratio, draw_ratio = base_rate / rate, draw_base_rate / draw_rate
    print(f"generate: {n:,} distinct problems in {elapsed:.2f} s ({len(reg.all_skills)} skills, count "
          f"{args.count}, {args.seeds} seeds, interleaved with the baseline)")
    print(f"baseline: plain problem dicts with random: {base_rate:,.0f}/s")
    print(f"ratio   : generate costs {ratio:.1f}x the baseline per problem; draw (one skill at a time, "
          f"as the quiz does) {draw_ratio:.1f}x   (target <= {TARGET_RATIO:g}x: "
          f"{'met' if max(ratio, draw_ratio) <= TARGET_RATIO else 'MISSED'})")
    print(f"info    : generate {rate:,.0f} problems/s, draw {draw_rate:,.0f}/s, Problem.from_dict "
          f"{objects_rate:,.0f}/s (the old absolute target was {INFO_PER_S:,}/s on a quiet dev machine)")


if __name__ == "__main__":
    main()
