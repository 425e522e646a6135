"""How many misses over 2x the tool's own key explains, by cause, on lab records.

For every op whose graded prediction missed by more than 2x (the record's verdict), the smallest
set of reasons the evidence allows that explains it (``generator.miss_reasons.explanations``),
else "unexplained by the evidence". Prints a line per miss, then the count per cause and the
share explained (the target: at least 90%).

    python bench/bench_explainable.py [RECORD.json ...]   (default: bench/cpu-records/quiet/)
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator import miss_reasons  # noqa: E402  (after the path: the repository's own packages)
from labs import records  # noqa: E402

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
    print(f"{explained} of {misses} misses over 2x explained by the tool's key"
          + (f" ({explained / misses:.0%})" if misses else "") + f", {len(paths)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
