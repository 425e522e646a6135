"""GATE 00: "latency predictions for five ops within 2x of measured, every miss explained".

Judged from the lab records in ``bench/`` (pure Python, no jax):
- only records made on a real accelerator (TPU or GPU) can pass or fail;
- a record passes when it holds the seed's five ops and every one is within 2x
  of its graded prediction or carries an explanation; the gate passes when any
  accelerator record passes (a gate is an achievement; the rows show the rest);
- CPU records count as practice; with no record the measured half is pending;
- a record that does not parse or has an unknown schema is listed and skipped.
Ratios are recomputed from the stored seconds, not trusted from the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.safeio import display_path
from labs import records, score
from labs.ops import OPS, SEED_OPS

GATE = "GATE 00"
CRITERION = "Latency predictions for five ops within 2x of measured, every miss explained"
PENDING_TEXT = "predictions computed (see bench); measured half pending a TPU run"
STATUSES = ("pass", "fail", "practice", "pending")


@dataclass
class Row:
    path: str
    platform: str
    device_kind: str
    date: str
    size: int
    graded: str
    status: str  # "pass", "fail", "practice" (CPU), "incomplete" (not the five ops)
    within_2x: int
    ops: int
    misses: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)
    missing_ops: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def measured_text(self) -> str:
        where = f"{self.device_kind}, N={self.size}, {self.date[:10]}"
        text = f"{where}: {self.within_2x}/{self.ops} within 2x of {self.graded} predictions"
        if self.missing_ops:
            return f"{where}: incomplete, lacks {', '.join(self.missing_ops)}; not judged"
        if self.misses:
            explained = [m for m in self.misses if m not in self.unexplained]
            if explained:
                text += f"; explained misses: {', '.join(explained)}"
            if self.unexplained:
                text += f"; UNEXPLAINED: {', '.join(self.unexplained)}"
        return text + (" (CPU: practice)" if self.status == "practice" else "")


@dataclass
class GateResult:
    status: str
    rows: list[Row]
    skipped: list[dict]
    bench: str

    def to_dict(self) -> dict:
        return {"gate": GATE, "criterion": CRITERION, "status": self.status, "bench": self.bench,
                "rows": [r.to_dict() for r in self.rows], "skipped": self.skipped}


def judge_record(record: dict, path: str = "") -> Row:
    """One record's row: recomputes each seed op's ratio against the graded prediction."""
    graded = record["graded"]
    by_op = {row["op"]: row for row in record["ops"]}
    missing = [name for name in SEED_OPS if name not in by_op]
    misses, unexplained, within = [], [], 0
    for name in SEED_OPS:
        row = by_op.get(name)
        if row is None:
            continue
        prediction = row["predictions"].get(graded)
        ok = score.within(score.ratio(row["measured"]["measured_s"], prediction and prediction["seconds"]))
        if ok:
            within += 1
        else:
            misses.append(name)
            if not (row.get("explanation") or "").strip():
                unexplained.append(name)
    if record["platform"] not in ("gpu", "tpu"):
        status = "practice"
    elif missing:
        status = "incomplete"
    else:
        status = "fail" if unexplained else "pass"
    return Row(path, record["platform"], record["device_kind"], record["date"], record["size"], graded,
               status, within, len(SEED_OPS) - len(missing), misses, unexplained, missing)


def evaluate(bench_dir: Path) -> GateResult:
    rows, skipped = [], []
    for loaded in records.scan(bench_dir):
        shown = display_path(loaded.path)  # a file name that is not UTF-8 still prints
        if loaded.record is None:
            skipped.append({"path": shown, "reason": loaded.error})
            continue
        try:
            rows.append(judge_record(loaded.record, shown))
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            # valid by schema yet inconsistent: listed and skipped, never a crash
            skipped.append({"path": shown, "reason": f"cannot judge: {exc!r}"})
    judged = [r for r in rows if r.status in ("pass", "fail")]
    if any(r.status == "pass" for r in judged):
        status = "pass"
    elif judged:
        status = "fail"
    elif any(r.status == "practice" for r in rows):
        status = "practice"
    else:
        status = "pending"
    return GateResult(status, rows, skipped, str(bench_dir))


_HEADLINE = {"pass": "PASS", "fail": "FAIL", "practice": "OPEN (practice only: CPU records)",
             "pending": "OPEN (measured half pending)"}


def format_lines(result: GateResult) -> list[str]:
    lines = [f"{GATE} {_HEADLINE[result.status]}", "", f"criterion: {CRITERION}", "measured:"]
    if not result.rows:
        lines.append(f"  {PENDING_TEXT}")
    order = {"pass": 0, "fail": 1, "incomplete": 2, "practice": 3}
    for row in sorted(result.rows, key=lambda r: (order.get(r.status, 9), r.path)):
        lines.append(f"  [{row.status}] {row.measured_text()}")
        lines.append(f"      {row.path}")
    for skip in result.skipped:
        lines.append(f"  [skipped] {skip['path']}: {skip['reason']}")
    lines.append("")
    lines.append(f"gates pass only on real hardware (TPU or GPU); CPU records are practice; "
                 f"ops judged: {', '.join(OPS[n].label for n in SEED_OPS)}")
    return lines
