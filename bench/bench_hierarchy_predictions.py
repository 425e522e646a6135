"""How close predictions from the measured hierarchy come, against the lab's calibrated ones.

For every op of every lab record given (default: the idle CPU set under bench/cpu-records/quiet/,
made by bench/make_cpu_records.py with the lab's pipeline), three predictions of the same op:
- calibrated: the record's own calibrated floor (one big matmul's FLOP/s, one big copy's bytes/s),
  through ``generator.model.roofline.estimate``;
- hierarchy: what the lab stores as the hierarchy's prediction (``labs.records.evidence.hierarchy_prediction``
  over ``generator.model.hierarchy.Hierarchy.prediction``): the floor at this op's own measured rates (its
  matmul shape's rate in its dtype, the stream rate of the level its rotated working set lives in at
  its call size, its exps at the exp rate), plus this op kind's fixed cost and its fresh output's cost,
  except for a matmul timed at its own shape (that rate is a whole call's);
- calibrated + fixed cost: the baseline with the fixed cost the hierarchy charges, so the ratio shows
  what the hierarchy itself adds.
It prints each op's relative error |predicted - measured| / measured, the median of each column over
all ops and the share of ops each predicts within 1.5x (targets for the hierarchy column: a median of at
most 15%, at least 90% within 1.5x).

``--fresh`` makes the records in the same run (``bench/make_cpu_records.make_record``: the lab's own
pipeline, as a learner runs it) at ``--sizes`` and ``--dtypes``, with ``--busy N`` processes spinning
beside it for a loaded machine: held-out conditions, not the records the model was built on.

    python bench/bench_hierarchy_predictions.py [RECORD.json ...]
    python bench/bench_hierarchy_predictions.py --fresh [--sizes 256,512,1024,2048] [--dtypes bf16,f32] [--busy 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.model import costs, roofline  # noqa: E402  (after the path: the repository's own packages)
from labs.records import evidence  # noqa: E402


def predictions(record: dict) -> list[tuple[str, float, float, float, float]]:
    """(label, measured s, calibrated s, calibrated + fixed s, hierarchy s) for each op."""
    probes = record.get("probes") or {}
    consts = record["constants"]["calibrated"]
    base = roofline.Ceilings("calibrated", consts["peak_flops_per_s"], consts["hbm_bytes_per_s"], record["dtype"])
    out = []
    for row in record["ops"]:
        cost = costs.cost(row["cost_op"], tuple(row["shape"]), row["dtype"])
        mine = evidence.hierarchy_prediction(probes, record["dtype"], row)
        assert mine is not None, f"{row['op']}: the record has no measured hierarchy"
        calibrated = roofline.estimate(base, cost).floor_s
        label = f"{record['dtype']} N={record['size']} {row['op']}"
        out.append((label, float(row["measured"]["measured_s"]), calibrated, calibrated + mine["fixed_cost_s"],
                    mine["seconds"]))
    return out


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` busy loops beside the run (a loaded machine), stopped when it ends."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for proc in spinners:
        proc.start()
    try:
        yield
    finally:
        for proc in spinners:
            proc.terminate()
            proc.join()


def fresh_records(out_dir: Path, sizes: list[int], dtypes: list[str], reps: int, load: int) -> list[Path]:
    """Lab records made now, by the lab's pipeline, with ``load`` busy processes beside it."""
    sys.path.insert(0, str(REPO / "bench"))
    from make_cpu_records import make_record  # bench's own helper: jax, only for --fresh

    paths = []
    with busy(load):
        for dtype in dtypes:
            for size in sizes:
                paths.append(make_record(out_dir, size, dtype, reps))
                print(f"made {dtype} N={size} at load {load}: {paths[-1].name}", flush=True)
    return paths


def err(pred: float, meas: float) -> float:
    """Relative error |predicted - measured| / measured."""
    return abs(pred - meas) / meas


def within(pred: float, meas: float, factor: float = 1.5) -> bool:
    """Whether a prediction is within ``factor`` of measured, either way."""
    return max(pred / meas, meas / pred) <= factor


def report(rows: list[tuple[str, float, float, float, float]], records: int) -> None:
    print(f"{'op':<28} {'measured':>10} {'calibrated':>11} {'+fixed':>9} {'hierarchy':>10}")
    for label, meas, cal, cal_fixed, mine in rows:
        print(f"{label:<28} {meas * 1e6:>8.1f}us {err(cal, meas):>10.0%} {err(cal_fixed, meas):>8.0%} "
              f"{err(mine, meas):>9.0%}")
    medians = [statistics.median(err(r[i], r[1]) for r in rows) for i in (2, 3, 4)]
    shares = [sum(within(r[i], r[1]) for r in rows) for i in (2, 4)]
    print(f"median relative error over {len(rows)} ops from {records} records: calibrated {medians[0]:.0%}, "
          f"calibrated + fixed cost {medians[1]:.0%}, hierarchy {medians[2]:.0%} "
          f"(ratio hierarchy / calibrated {medians[2] / medians[0]:.2f})")
    print(f"within 1.5x of measured: calibrated {shares[0]} of {len(rows)}, hierarchy {shares[1]} of {len(rows)} "
          f"({shares[1] / len(rows):.0%})")


def add_fresh_options(parser: argparse.ArgumentParser) -> None:
    """What a --fresh run is made of: sizes, dtypes, reps, busy processes, and where its records go."""
    parser.add_argument("--sizes", default="256,512,1024,2048")
    parser.add_argument("--dtypes", default="bf16,f32")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--busy", type=int, default=0, help="busy processes beside a --fresh run")
    parser.add_argument("--out", type=Path, help="where --fresh keeps its records (default: a new temporary folder)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="*", type=Path)
    parser.add_argument("--fresh", action="store_true", help="make the records now, in this run")
    add_fresh_options(parser)
    args = parser.parse_args(argv)
    if args.fresh:
        out_dir = args.out or Path(tempfile.mkdtemp(prefix="hierarchy-bench-"))
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = fresh_records(out_dir, [int(s) for s in args.sizes.split(",")], args.dtypes.split(","), args.reps,
                              args.busy)
        print(f"records in {out_dir}")
    else:
        paths = args.records or sorted((REPO / "bench" / "cpu-records" / "quiet").glob("lab-*.json"))
    rows = [p for path in paths for p in predictions(json.loads(path.read_text()))]
    report(rows, len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
