"""`drill hierarchy` on this machine: its run time, and how many levels it tells apart.

Each round runs, in fresh processes and interleaved so a busy stretch hits both alike:
- ``drill hierarchy --json`` (the copy sweep from 16 KiB past the largest cache and its plateaus,
  DRAM by call size, the lab's matmul shapes at N=1024 in bf16 and f32, the exp rates, and each op
  kind's rate per dtype; device time for the matmuls and the op kinds);
- the baseline: ``python -c "import jax"`` (what any lab command pays first).
It prints each round's wall time, the median ratio hierarchy / baseline, the budget (30 s on 2
cores) and, from the last round's hierarchy, each level's bandwidth and spread and how many
levels differ by more than their spreads (``generator.model.hierarchy.separated_levels``). The load
average is printed with it: on a shared machine the wall time says as much about the neighbours.

    python bench/bench_hierarchy.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BUDGET_S = 30.0


def _timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, res.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from generator.model import hierarchy as model  # start-up: only this benchmark step needs it

    ratios, runs, last = [], [], ""
    for n in range(args.rounds):
        base_s, _ = _timed([sys.executable, "-c", "import jax"])
        run_s, last = _timed([sys.executable, "-m", "drills.cli", "hierarchy", "--json"])
        ratios.append(run_s / base_s)
        runs.append(run_s)
        print(f"round {n + 1}: drill hierarchy {run_s:.1f} s, import jax {base_s:.2f} s, ratio {run_s / base_s:.1f}x",
              flush=True)
    h = model.Hierarchy.from_dict(json.loads(last))
    print("\n".join(model.lines(h)))
    print(f"median run {statistics.median(runs):.1f} s (budget {BUDGET_S:.0f} s); median ratio to import jax "
          f"{statistics.median(ratios):.1f}x; levels told apart: {model.separated_levels(h)}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
