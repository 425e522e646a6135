"""The whole CPU lab at ``--size 1024``, end to end, per phase, against its 60 s budget.

One real ``drill lab --size 1024 --predictions FILE --out TMP`` run, in this process through the
click command itself (``CliRunner``), with a predictions file that gives every seed op a time
with a unit. The phases are timed by wrapping the functions the command calls, so the command
runs unchanged:
- start-up: importing the CLI, jax and the lab modules (what a fresh ``drill lab`` pays first);
- probes: ``labs.measure.probes.measure_probes`` (on a CPU, the device's datasheet: matmul FLOP/s,
  copy bandwidth, the fixed cost per op kind), shown before the predictions;
- measure: ``labs.runner.run`` (dispatch overhead and the five ops, compiled, rotated, traced);
- save: ``labs.runner.save`` (the record and the ledger entry);
- the rest: reading the predictions, the plan, judging, the tables and the note.
The total (start-up included) is held against the 60 s budget. The baseline, measured in the
same run before and after the lab (so a busy stretch hits both): ``python -c "import jax"`` in a
fresh process; the ratio total / baseline says how many jax start-ups the lab costs. The load
average is printed with it: on a shared machine the wall time says as much about the neighbours.

    python bench/bench_lab_cpu.py [--size 1024] [--reps 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BUDGET_S = 60.0
# A plausible learner's guesses for N=1024 bf16 on a CPU, each with a unit (the grammar refuses a
# bare number); what they are does not change the run's cost, only its verdicts.
PREDICTIONS = {"matmul": "20 ms", "skinny_matmul": "200 us", "add": "1 ms", "softmax": "3 ms",
               "reduce_sum": "500 us"}


def jax_startup_s() -> float:
    """Wall time of a fresh ``python -c "import jax"`` (the baseline)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import jax"], check=True, capture_output=True)
    return time.perf_counter() - start


def _timed(module, name: str, phases: dict[str, float]):
    """Replace ``module.name`` with a wrapper adding its wall time to ``phases[label]``."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[wrapper.label] = phases.get(wrapper.label, 0.0) + time.perf_counter() - start

    wrapper.label = name
    setattr(module, name, wrapper)
    return wrapper


def lab_run(size: int, reps: int) -> dict:
    """One end-to-end ``drill lab`` run; wall seconds per phase and the record's verdicts."""
    phases: dict[str, float] = {}
    start = time.perf_counter()
    from click.testing import CliRunner  # start-up: only this benchmark step needs it

    from drills.cli import cli  # start-up: only this benchmark step needs it
    import jax  # noqa: F401  (the command imports it too; here it is counted as start-up)

    from labs.records import evidence  # start-up: only this benchmark step needs it
    from labs import runner  # start-up: as above
    phases["start-up"] = time.perf_counter() - start

    _timed(evidence, "measure_probes", phases).label = "probes"
    _timed(runner, "run", phases).label = "measure"
    _timed(runner, "save", phases).label = "save"
    with tempfile.TemporaryDirectory(prefix="bench-lab-cpu-") as tmp:
        preds = Path(tmp) / "predictions.yaml"
        preds.write_text("".join(f"{op}: {text}\n" for op, text in PREDICTIONS.items()), encoding="utf-8")
        began = time.perf_counter()
        res = CliRunner().invoke(cli, ["lab", "--size", str(size), "--reps", str(reps), "--predictions",
                                       str(preds), "--out", str(Path(tmp) / "records"), "--json"])
        command_s = time.perf_counter() - began
        if res.exit_code != 0:
            raise SystemExit(f"drill lab failed ({res.exit_code}): {(res.output or '')[-2000:]} {res.exception!r}")
        out = json.loads(res.stdout[res.stdout.index("{"):])
    record = out["record"]
    # runner.run takes the probes measured before the predictions, so the two do not overlap.
    inner = sum(phases.get(k, 0.0) for k in ("probes", "measure", "save"))
    phases["rest"] = command_s - inner
    total = phases["start-up"] + command_s
    return {"phases_s": phases, "total_s": total, "device_kind": record["device_kind"],
            "jax": record["jax_version"],
            "verdicts": {row["op"]: row["verdict"] for row in record["ops"]}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    load_before = os.getloadavg()
    base = [jax_startup_s()]
    result = lab_run(args.size, args.reps)
    base.append(jax_startup_s())
    load_after = os.getloadavg()
    baseline = statistics.median(base)
    result.update({"size": args.size, "reps": args.reps, "budget_s": BUDGET_S, "cores": os.cpu_count(),
                   "load_average_before": load_before, "load_average_after": load_after,
                   "baseline_import_jax_s": base, "ratio_to_import_jax": result["total_s"] / baseline,
                   "within_budget": result["total_s"] <= BUDGET_S})
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"drill lab on {result['device_kind']} (jax {result['jax']}), N={args.size}, reps {args.reps}, "
          f"{result['cores']} cores; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"(1-min; the machine is shared)")
    for label in ("start-up", "probes", "measure", "save", "rest"):
        print(f"  {label:<10} {result['phases_s'].get(label, 0.0):8.2f} s")
    print(f"  {'total':<10} {result['total_s']:8.2f} s  of a {BUDGET_S:.0f} s budget: "
          f"{'within' if result['within_budget'] else 'OVER'}")
    print(f"  baseline: python -c 'import jax' {', '.join(f'{b:.2f}' for b in base)} s (before, after); "
          f"total / baseline = {result['ratio_to_import_jax']:.1f}x")
    print(f"  verdicts: {', '.join(f'{k} {v}' for k, v in result['verdicts'].items())}")


if __name__ == "__main__":
    main()
