"""How close predictions from the measured hierarchy come, against the lab's calibrated ones.

For every op of every lab record given (default: the idle CPU set under bench/cpu-records/quiet/,
made by bench/make_cpu_records.py with the lab's pipeline), three predictions of the same op:
- calibrated: the record's own calibrated floor (one big matmul's FLOP/s, one big copy's bytes/s),
  through ``generator.roofline.estimate``;
- hierarchy: what the lab stores as the hierarchy's prediction (``labs.evidence.hierarchy_prediction``
  over ``generator.hierarchy.Hierarchy.prediction``): the floor at this op's own measured rates (its
  matmul shape's rate in its dtype, the stream rate of the level its rotated working set lives in at
  its call size, its exps at the exp rate), plus this op kind's fixed cost and its fresh output's cost,
  except for a matmul timed at its own shape (that rate is a whole call's);
- calibrated + fixed cost: the baseline with the fixed cost the hierarchy charges, so the ratio shows
  what the hierarchy itself adds.
It prints each op's relative error |predicted - measured| / measured and the median of each
column over all ops (the target for the hierarchy column: at most 15%).

    python bench/bench_hierarchy_predictions.py [RECORD.json ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator import costs, roofline  # noqa: E402  (after the path: the repository's own packages)
from labs import evidence  # noqa: E402


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


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((REPO / "bench" / "cpu-records" / "quiet").glob("lab-*.json"))
    rows = [p for path in paths for p in predictions(json.loads(path.read_text()))]
    err = lambda pred, meas: abs(pred - meas) / meas  # noqa: E731
    print(f"{'op':<28} {'measured':>10} {'calibrated':>11} {'+fixed':>9} {'hierarchy':>10}")
    for label, meas, cal, cal_fixed, mine in rows:
        print(f"{label:<28} {meas * 1e6:>8.1f}us {err(cal, meas):>10.0%} {err(cal_fixed, meas):>8.0%} "
              f"{err(mine, meas):>9.0%}")
    medians = [statistics.median(err(r[i], r[1]) for r in rows) for i in (2, 3, 4)]
    print(f"median relative error over {len(rows)} ops from {len(paths)} records: calibrated {medians[0]:.0%}, "
          f"calibrated + fixed cost {medians[1]:.0%}, hierarchy {medians[2]:.0%} "
          f"(ratio hierarchy / calibrated {medians[2] / medians[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
