"""Make the CPU lab records the hierarchy benchmarks read, as a learner makes them.

For each dtype (bf16, f32) and N (128, 256, 1024): the lab's pipeline (``labs.session``, as the
notebook and ``drill lab`` run it) probes this device and shows its measured datasheet and
hierarchy; each op is then predicted as its floor from that datasheet (the two-number roofline of
the calibrated peak FLOP/s and copy bandwidth, ``generator.model.roofline.estimate``), the predictions are
read, and the ops are measured and saved. The records go to OUT_DIR (default: a new temporary folder,
printed), ready for ``bench/bench_hierarchy_predictions.py OUT_DIR/lab-*.json``.

    python bench/make_cpu_records.py [OUT_DIR] [--sizes 128,256,1024] [--dtypes bf16,f32] [--reps 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.model import roofline  # noqa: E402  (after the path: the repository's own packages)
from generator.model.units import seconds  # noqa: E402
from labs.measure import device  # noqa: E402
from labs import runner, session  # noqa: E402


def make_record(out_dir: Path, size: int, dtype: str, reps: int) -> Path:
    options = runner.LabOptions(size=size, reps=reps, dtype=dtype, out_dir=out_dir)
    plan = runner.make_plan(options, device.detect())
    probed = session.measured_datasheet(plan, say=lambda line: None)
    if probed is None:
        raise SystemExit("this device has a catalogue entry: these records are for an uncatalogued CPU")
    ceilings = probed.calibration.ceilings()
    texts = {op: seconds(roofline.estimate(ceilings, cost).floor_s) for op, cost in plan.costs.items()}
    learner, read = session.read_predictions(texts, plan.options.ops)
    _record, path = session.measure_and_save(plan, learner, read, practice=False, probed=probed)
    return Path(path)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path)
    parser.add_argument("--sizes", default="128,256,1024")
    parser.add_argument("--dtypes", default="bf16,f32")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args(argv)
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="cpu-records-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    for dtype in args.dtypes.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            path = make_record(out_dir, size, dtype, args.reps)
            print(f"{dtype} N={size}: {path}", flush=True)
    print(f"records in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
