"""How well an op's measured time predicts the same op measured again: the ceiling for any prediction.

Each folder given is one run of lab records (``bench/bench_hierarchy_predictions.py --fresh --out DIR``
makes one; ``--fresh --runs K`` makes K here, one after another). For every op (dtype, N, op) found in
two or more runs, it prints, over the ordered pairs of runs (a, b):
- measured again: run a's measured time as the prediction of run b's (the same code, machine and
  config, minutes apart);
- hierarchy, same run: run b's own hierarchy prediction of run b's op (what
  ``bench_hierarchy_predictions.py`` scores);
- hierarchy, other run: run a's hierarchy prediction of run b's op.
Each line gives the median relative error |predicted - measured| / measured and the share within 1.5x.
No prediction made before a measurement can be expected to beat the first line by much: it is how far
the measurement itself moves between runs.

    python bench/bench_measurement_repeat.py RUN_DIR RUN_DIR [RUN_DIR ...]
    python bench/bench_measurement_repeat.py --fresh [--runs 3] [--busy 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_hierarchy_predictions import add_fresh_options, err, fresh_records, within  # noqa: E402  (jax only inside --fresh)

Key = tuple[str, int, str]


def ops_of(run_dir: Path) -> dict[Key, tuple[float, float]]:
    """(dtype, N, op) -> (measured s, hierarchy prediction s) over one run's records."""
    found: dict[Key, tuple[float, float]] = {}
    for path in sorted(run_dir.glob("lab-*.json")):
        record = json.loads(path.read_text())
        for row in record["ops"]:
            hierarchy = (row.get("predictions") or {}).get("hierarchy") or {}
            found[(record["dtype"], int(record["size"]), row["op"])] = (
                float(row["measured"]["measured_s"]), float(hierarchy.get("seconds") or "nan"))
    return found


def pairs(runs: list[dict[Key, tuple[float, float]]]) -> dict[str, list[tuple[float, float]]]:
    """(predicted s, measured s) for each way of predicting, over ordered pairs of runs."""
    out: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for a, b in itertools.permutations(runs, 2):
        for key in sorted(a.keys() & b.keys()):
            out["measured again"].append((a[key][0], b[key][0]))
            out["hierarchy, other run"].append((a[key][1], b[key][0]))
    for run in runs:
        for measured, mine in run.values():
            out["hierarchy, same run"].append((mine, measured))
    return out


def summary(rows: list[tuple[float, float]]) -> tuple[float, float, int]:
    """(median relative error, share within 1.5x, rows) over rows with a prediction."""
    rows = [(p, m) for p, m in rows if p > 0 and m > 0]  # a missing prediction is nan: never > 0
    return statistics.median(err(p, m) for p, m in rows), sum(within(p, m) for p, m in rows) / len(rows), len(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="folders, each one run's lab records")
    parser.add_argument("--fresh", action="store_true", help="make the runs now, one after another")
    parser.add_argument("--runs", dest="count", type=int, default=3, help="how many runs --fresh makes")
    add_fresh_options(parser)
    args = parser.parse_args(argv)
    dirs = list(args.runs)
    if args.fresh:
        out = args.out or Path(tempfile.mkdtemp(prefix="measurement-repeat-"))
        for k in range(args.count):
            run_dir = out / f"run-{k + 1}"
            run_dir.mkdir(parents=True, exist_ok=True)
            fresh_records(run_dir, [int(s) for s in args.sizes.split(",")], args.dtypes.split(","), args.reps,
                          args.busy)
            dirs.append(run_dir)
        print(f"runs in {out}")
    if len(dirs) < 2:
        parser.error("give two or more runs (folders), or --fresh")
    runs = [ops_of(d) for d in dirs]
    print(f"{len(runs)} runs, {len(set().union(*runs))} ops")
    for name, rows in pairs(runs).items():
        median, share, count = summary(rows)
        print(f"{name:<22} median relative error {median:>5.0%}   within 1.5x {share:>5.0%}   ({count} predictions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
