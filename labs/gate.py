"""GATE 00: "latency predictions for five ops within 2x of measured, every miss explained".

Judged from lab records (pure Python, no jax): by default the learner's own
(``records.default_dir()``), or any folder given (the course's ``bench/``).
A record counts toward the gate only when it shows the habit the gate is for,
predict, then measure:
(a) the learner's predictions for the seed's five ops were read before the
    first measurement: the record stores them, their SHA-256 (recomputed here)
    and when they were read, and when the measurement began;
(b) every one of the five ops was timed on the device (not the wall clock) and
    is not ``noisy``;
(c) it is the learner's first record on that device kind at that N: later runs
    come after the learner has seen the numbers, so they are practice (scored,
    shown, not counted);
(d) it was made on real hardware (TPU or GPU).
A counted record passes when every op is within 2x of the learner's prediction
and every miss is explained; the gate passes when a counted record passes.
Datasheet and calibrated predictions are teaching, never graded here. Every
record gets ``counted`` and ``why_not`` (the reasons it does not count).
Ratios are recomputed from the stored seconds, not trusted from the record;
a record that does not parse or has an unknown schema is listed and skipped.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from generator.safeio import display_path
from labs import records, score
from labs.ops import OPS, SEED_OPS

GATE = "GATE 00"
CRITERION = "Latency predictions for five ops within 2x of measured, every miss explained"
PENDING_TEXT = "no lab record yet: run `drill lab` on a TPU or GPU with your predictions written first"
STATUSES = ("pass", "fail", "practice", "pending")


@dataclass
class Row:
    path: str
    platform: str
    device_kind: str
    date: str
    size: int
    graded: str
    status: str  # counted: "pass" or "fail"; not counted: "practice"
    verdict: str  # what the record scores on the learner's predictions: "pass", "fail", "incomplete", "ungraded"
    within_2x: int
    ops: int
    counted: bool = False
    why_not: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)
    missing_ops: list[str] = field(default_factory=list)
    started_at: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def measured_text(self) -> str:
        where = f"{self.device_kind}, N={self.size}, {self.date[:10]}"
        if self.missing_ops:
            return f"{where}: incomplete, lacks {', '.join(self.missing_ops)}"
        if self.verdict == "ungraded":
            return f"{where}: no predictions of yours to grade ({self.within_2x}/{self.ops} within 2x of the " \
                   f"{self.graded} predictions, shown for teaching)"
        text = f"{where}: {self.within_2x}/{self.ops} within 2x of your predictions"
        if self.misses:
            explained = [m for m in self.misses if m not in self.unexplained]
            if explained:
                text += f"; explained misses: {', '.join(explained)}"
            if self.unexplained:
                text += f"; UNEXPLAINED: {', '.join(self.unexplained)}"
        return text


@dataclass
class GateResult:
    status: str
    rows: list[Row]
    skipped: list[dict]
    bench: str

    def to_dict(self) -> dict:
        return {"gate": GATE, "criterion": CRITERION, "status": self.status, "bench": self.bench,
                "rows": [r.to_dict() for r in self.rows], "skipped": self.skipped}


def _learner_reasons(record: dict, by_op: dict) -> list[str]:
    """Why the learner's predictions cannot prove they came first (empty: they can)."""
    lacking = [n for n in SEED_OPS if n in by_op and not by_op[n]["predictions"].get("learner")]
    if lacking or record.get("graded") != "learner":
        return [f"no prediction of yours for {', '.join(lacking) or 'the graded column'}: "
                "graded on the datasheet or calibration, which the gate never counts"]
    read = record.get("learner_predictions")
    started = record.get("measurement_started_at")
    if not read or not started:
        return ["the record does not say when your predictions were read and the measurement began "
                f"(schema version {record.get('schema_version')})"]
    why = []
    texts = {n: row["predictions"]["learner"]["text"] for n, row in by_op.items()
             if row["predictions"].get("learner")}
    if records.predictions_sha256(texts) != read.get("sha256"):
        why.append("the predictions in the record do not match their SHA-256 (edited after the run?)")
    read_at, start = _instant(read.get("read_at")), _instant(started)
    if read_at is None or start is None:
        why.append(f"unreadable times: predictions read at {read.get('read_at')!r}, measurement began {started!r}")
    elif not read_at < start:
        why.append(f"predictions read at {read.get('read_at')}, not before the measurement began at {started}")
    return why


def _instant(text) -> _dt.datetime | None:
    """An ISO 8601 time with its zone, or None."""
    try:
        value = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def _order(row: "Row") -> tuple:
    when = _instant(row.started_at)
    return (when is None, when or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc), row.path)


def judge_record(record: dict, path: str = "") -> Row:
    """One record's row: recomputes each seed op's ratio against the learner's prediction
    and lists every reason (a), (b) and (d) the record cannot count; (c) needs the other records."""
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
    why = []
    if record["platform"] not in ("gpu", "tpu"):
        why.append(f"{record['platform'].upper()}: not real hardware (the gate needs a TPU or GPU)")
    if missing:
        why.append(f"lacks {', '.join(missing)}")
    why += _learner_reasons(record, by_op)
    unchecked, by_count = [], []
    for name in SEED_OPS:
        m = by_op.get(name, {}).get("measured")
        if m is None:
            continue
        if m["measured_from"] != "device":
            reason = m.get("measured_reason") or m.get("device_grouping") or "no device time"
            why.append(f"{name}: wall clock, not device time ({reason})")
        elif m.get("noisy"):
            why.append(f"{name}: noisy ({'; '.join(m.get('noisy_why') or [])})")
        elif "noisy" not in m:
            unchecked.append(name)
        if m.get("device_grouping") == "split by count":
            by_count.append(name)
    if unchecked:
        why.append(f"no noise check for {', '.join(unchecked)} (one trace per op; schema version "
                   f"{record.get('schema_version')})")
    if by_count:
        why.append(f"runs told apart by counting events for {', '.join(by_count)} (not by step markers or run ids)")
    if missing:
        verdict = "incomplete"
    elif graded != "learner":
        verdict = "ungraded"
    else:
        verdict = "fail" if unexplained else "pass"
    return Row(path, record["platform"], record["device_kind"], record["date"], record["size"], graded,
               "practice", verdict, within, len(SEED_OPS) - len(missing), False, why, misses, unexplained,
               missing, str(record.get("measurement_started_at") or record["date"]))


def apply_first_run_rule(rows: list[Row]) -> None:
    """(c): only the first record per device kind and N can count; mark the rest and set statuses."""
    first: dict[tuple[str, int], Row] = {}
    for row in sorted(rows, key=_order):
        key = (row.device_kind, row.size)
        if key in first:
            row.why_not.append(f"not your first run on {row.device_kind} at N={row.size} "
                               f"(the first is {Path(first[key].path).name}): practice, scored but not counted")
        else:
            first[key] = row
    for row in rows:
        row.counted = not row.why_not
        row.status = row.verdict if row.counted else "practice"


def evaluate(bench_dir: Path | None = None) -> GateResult:
    bench_dir = records.default_dir() if bench_dir is None else Path(bench_dir)
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
    apply_first_run_rule(rows)
    counted = [r for r in rows if r.counted]
    if any(r.status == "pass" for r in counted):
        status = "pass"
    elif counted:
        status = "fail"
    elif rows:
        status = "practice"
    else:
        status = "pending"
    return GateResult(status, rows, skipped, str(bench_dir))


_HEADLINE = {"pass": "PASS", "fail": "FAIL", "practice": "OPEN (no record counts yet: practice only)",
             "pending": "OPEN (measured half pending)"}


def format_lines(result: GateResult) -> list[str]:
    lines = [f"{GATE} {_HEADLINE[result.status]}", "", f"criterion: {CRITERION}",
             f"records: {result.bench}", "measured:"]
    if not result.rows:
        lines.append(f"  {PENDING_TEXT}")
    order = {"pass": 0, "fail": 1, "practice": 2}
    for row in sorted(result.rows, key=lambda r: (order.get(r.status, 9), r.path)):
        tag = f"counted: {row.status}" if row.counted else "not counted"
        lines.append(f"  [{tag}] {row.measured_text()}")
        lines.append(f"      {row.path}")
        for reason in row.why_not:
            lines.append(f"      why not: {reason}")
    for skip in result.skipped:
        lines.append(f"  [skipped] {skip['path']}: {skip['reason']}")
    lines.append("")
    lines.append("a record counts when your predictions for all five ops were read before the measurement, "
                 "every op is device time and not noisy, it is your first run on that device at that N, "
                 f"on a TPU or GPU; ops judged: {', '.join(OPS[n].label for n in SEED_OPS)}")
    return lines
