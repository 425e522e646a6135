"""How many misses over 2x some derivation explains, by cause, and how the judge treats workings it
did not write, on lab records.

For every op whose graded prediction missed by more than 2x (the record's verdict), the smallest
set of reasons with a derivation that reaches measured (``generator.explain.explanations``),
else "unexplained by the evidence". Prints a line per miss, the count per cause and the share
explained; then, over the same misses, the share of honest derivations within 1.5x that the judge
accepts (target >= 90%), the games it accepts (target 0) and the misses that cycling reason ids with
the measured time cracks (target <= 1 in 17), with workings from bench/explain_suites.py.

    python bench/bench_explainable.py [RECORD.json ...]   (default: bench/cpu-records/quiet/)
"""

from __future__ import annotations

import collections
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator import explain as miss_reasons  # noqa: E402  (after the path: the repository's own packages)
from labs.records import folder as records  # noqa: E402
from bench import explain_suites  # noqa: E402

UNEXPLAINED = "unexplained by the evidence"


def causes(record: dict) -> list[tuple[str, str, float]]:
    """(op, smallest explanation or UNEXPLAINED, measured / predicted) for each miss of ``record``."""
    out = []
    for row in record["ops"]:
        if row["verdict"] != "miss":
            continue
        found = miss_reasons.explanations(records.op_evidence(record, row["op"]))
        out.append((row["op"], " + ".join(found[0]) if found else UNEXPLAINED, row["ratios"][record["graded"]]))
    return out


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((REPO / "bench" / "cpu-records" / "quiet").glob("lab-*.json"))
    tally: collections.Counter[str] = collections.Counter()
    for path in paths:
        record = json.loads(path.read_text())
        for op, cause, ratio in causes(record):
            tally[cause] += 1
            print(f"{record['dtype']:<5} N={record['size']:<5} {op:<14} {ratio:6.2f}x  {cause}")
    misses = sum(tally.values())
    explained = misses - tally[UNEXPLAINED]
    print("by cause: " + ", ".join(f"{cause} {n}" for cause, n in tally.most_common()))
    print(f"{explained} of {misses} misses over 2x reached by a derivation the evidence allows"
          + (f" ({explained / misses:.0%})" if misses else "") + f", {len(paths)} records")
    judged = accepted = games = games_passed = cracked = 0
    for path in paths:
        record = json.loads(path.read_text())
        for row in record["ops"]:
            if row["verdict"] != "miss":
                continue
            ev = records.op_evidence(record, row["op"])
            for w in explain_suites.honest(ev):
                stated = miss_reasons.parse_corrected(w.text.rsplit("=", 1)[1])
                if abs(math.log(stated / ev.measured_seconds)) <= math.log(miss_reasons.CORRECTED_FACTOR):
                    judged += 1
                    accepted += miss_reasons.judge(w.text, ev).accepted
            for w in explain_suites.games(ev):
                games += 1
                games_passed += miss_reasons.judge(w.text, ev).accepted
            cracked += any(miss_reasons.judge(w.text, ev).accepted for w in explain_suites.brute(ev))
    print(f"honest derivations within 1.5x accepted: {accepted} of {judged}"
          + (f" ({accepted / judged:.0%})" if judged else ""))
    print(f"games accepted: {games_passed} of {games}; misses cracked by cycling ids with the measured time: "
          f"{cracked} of {misses}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
