"""GATE 00: "latency predictions for five ops within 2x of measured, every miss explained".

Judged from lab records (pure Python, no jax): by default the learner's own (``records.default_dir()``),
or any folder given (the course's ``bench/``). ``evaluate`` gives each record's verdict (pass, fail,
incomplete), whether it counts and why not; ``format_lines`` prints the gate's report.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from generator.model import catalogue
from generator.io.safeio import display_path
from generator.io.termsafe import visible_lines
from labs.records import folder as records
from labs.records import score
from labs.measure.ops import OPS, SEED_OPS
from labs.records.types import LabRecord, Measured, Miss, OpRow, RecordError, as_record
from labs.records.folder import LedgerEntry, RecordJSON
from labs.gate import consistency
from generator.model.roofline import UnpublishedFigureError
from generator import explain as miss_reasons
from labs.measure.calls import noise_reasons, NOISY_SPREAD, quantile
from labs.records.predictions import InputError, parse_prediction

GATE = "GATE 00"
CRITERION = "Latency predictions for five ops within 2x of measured, every miss explained"
PENDING_TEXT = "no lab record yet: run `drill lab` on a TPU or GPU with your predictions written first"
STATUSES = ("pass", "fail", "practice", "pending")  # the gate's; a record's status may also be "incomplete"
RELATIVE_TOLERANCE = 1e-9  # stored seconds re-derived exactly (floating-point noise only)


class _JudgedMissKeys(TypedDict):
    op: str
    text: str
    accepted: bool
    why: str
    refused_attempts: int


class JudgedMiss(_JudgedMissKeys, total=False):
    """One miss re-judged (``Row.explanations``); ``finding`` is set when no set of reasons the
    evidence allows explains it."""
    finding: bool


class Skipped(TypedDict):
    """A file of the folder the gate could not judge, and why (one line)."""
    path: str
    reason: str


@dataclass
class Row:
    path: str
    platform: str
    device_kind: str
    date: str
    size: int
    graded: str
    status: str  # counted: the verdict; not counted: "practice"
    verdict: str  # "pass", "fail", "incomplete", "ungraded" (no predictions of yours)
    within_2x: int
    ops: int
    counted: bool = False
    why_not: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    explained: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)
    missing_ops: list[str] = field(default_factory=list)
    started_at: str = ""
    explanations: list[JudgedMiss] = field(default_factory=list)  # each miss re-judged: op, accepted, why
    lacking: list[str] = field(default_factory=list)  # evidence the record does not have
    takes_slot: bool = False  # made with the learner's predictions: competes for the first-run slot
    blockers: list[str] = field(default_factory=list)  # why it cannot count (why_not's first part)
    findings: list[str] = field(default_factory=list)  # misses the evidence cannot explain: "op: why"

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out.pop("blockers")
        return out

    def measured_text(self) -> str:
        where = f"{self.device_kind}, N={self.size}, {self.date[:10]}"
        if self.missing_ops:
            return f"{where}: incomplete, lacks {', '.join(self.missing_ops)}"
        if self.verdict == "ungraded":
            return f"{where}: no predictions of yours to grade ({self.within_2x}/{self.ops} within 2x of the " \
                   f"{self.graded} predictions, shown for teaching)"
        text = f"{where}: {self.within_2x}/{self.ops} within 2x of your predictions"
        if self.explained:
            # Guessing leaves a trail, and the public line shows it: a miss explained after refusals says how many.
            refused = {j["op"]: j.get("refused_attempts", 0) for j in self.explanations}
            text += "; explained misses: " + ", ".join(
                f"{op} (after {refused[op]} refused)" if refused.get(op) else op for op in self.explained)
        if self.unexplained:
            text += f"; UNEXPLAINED: {', '.join(self.unexplained)}"
        if self.findings:
            text += "; unexplained by the evidence (a finding, not blocking): " + ", ".join(
                f.split(":", 1)[0] for f in self.findings)
        return text


@dataclass
class GateResult:
    status: str
    rows: list[Row]
    skipped: list[Skipped]
    bench: str

    def to_dict(self) -> dict[str, Any]:
        return {"gate": GATE, "criterion": CRITERION, "status": self.status, "bench": self.bench,
                "rows": [r.to_dict() for r in self.rows], "skipped": self.skipped}


def _instant(text: object) -> _dt.datetime | None:
    """An ISO 8601 time with its zone, or None."""
    try:
        value = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def _order(row: Row) -> tuple[bool, _dt.datetime, str]:
    when = _instant(row.started_at)
    return (when is None, when or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc), row.path)


def _close(a: float, b: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)


# ----------------------------------------------------------------- (a) predictions first

def _learner_reasons(record: LabRecord, by_op: dict[str, OpRow]) -> list[str]:
    """Why the learner's predictions cannot prove they came first (empty: they can)."""

    lacking = [n for n in SEED_OPS if n in by_op and not by_op[n].predictions.learner]
    if lacking or record.graded != "learner":
        return [f"no prediction of yours for {', '.join(lacking) or 'the graded column'}: "
                "graded on the datasheet or calibration, which the gate never counts (practice)"]
    read = record.learner_predictions
    started = record.measurement_started_at
    if not read or not started:
        return ["the record does not say when your predictions were read and the measurement began "
                f"(schema version {record.schema_version})"]
    why = []
    learner = {n: row.predictions.learner for n, row in by_op.items() if row.predictions.learner}
    texts = {n: p.text for n, p in learner.items()}
    if records.predictions_sha256(texts) != read.sha256:
        why.append("the predictions in the record do not match their SHA-256 (edited after the run?)")
    for name, text in texts.items():
        stored = learner[name].seconds
        try:
            seconds = parse_prediction(text)
        except InputError:
            why.append(f"{name}: your prediction's text '{text}' does not read as a time")
            continue
        if not _close(seconds, stored):
            why.append(f"{name}: your prediction reads '{text}' = {seconds:g} s but the record grades "
                       f"{stored:g} s (seconds edited after the run?)")
    read_at, start = _instant(read.read_at), _instant(started)
    if read_at is None or start is None:
        why.append(f"unreadable times: predictions read at {read.read_at!r}, measurement began {started!r}")
    elif not read_at < start:
        why.append(f"predictions read at {read.read_at}, not before the measurement began at {started}")
    return why


# ----------------------------------------------------------------- (b) device time, not noisy

def _measured_reasons(name: str, m: Measured) -> list[str]:
    if m.measured_from != "device":
        reason = m.measured_reason or m.device_grouping or "no device time"
        return [f"{name}: wall clock, not device time ({reason})"]
    median, runs = m.device_median_s, m.device_runs or 0
    if median is None or runs < 1:
        return [f"{name}: labelled device time but the record has no device median and runs "
                f"(device_median_s {median!r}, device_runs {runs!r})"]
    if not _close(m.measured_s, median):
        return [f"{name}: measured {m.measured_s:g} s is not the device median {median:g} s"]
    why = []
    samples = m.device_runs_s
    medians = list(m.device_trace_medians_s or [])
    if samples:
        ordered = sorted(float(x) for x in samples)
        if len(ordered) != runs or not _close(quantile(ordered, 0.5), median):
            why.append(f"{name}: the stored runs ({len(ordered)}, median {quantile(ordered, 0.5):g} s) do not "
                       f"give the stored device median {median:g} s over {runs} runs")
        _, noisy = noise_reasons(ordered, medians)
    elif m.device_p20_s is not None and m.device_p80_s is not None and m.has("noisy"):
        # Older records: (p80 - p20) / median bounds the IQR / median from above.
        wide = (m.device_p80_s - m.device_p20_s) / median if median > 0 else math.inf
        _, noisy = noise_reasons([median], medians)
        if wide > NOISY_SPREAD and not m.noisy:
            why.append(f"{name}: the noise check cannot be redone from the stored quantiles "
                       f"((p80 - p20) / median = {100 * wide:.0f}% > {100 * NOISY_SPREAD:.0f}%; "
                       f"schema version without the runs)")
    else:
        noisy = ()
        why.append(f"{name}: no noise check (one trace per op, no stored runs or quantiles)")
    if noisy or m.noisy:
        why.append(f"{name}: noisy ({'; '.join(noisy or m.noisy_why or [])})")
    if m.device_grouping == "split by count":
        why.append(f"{name}: runs told apart by counting events (not by step markers or run ids)")
    return why


# ----------------------------------------------------------------- (d) the device is what it says

def _device_reasons(record: LabRecord) -> list[str]:
    platform, kind, chip_name = record.platform, str(record.device_kind), record.chip
    why = []
    if not (kind.isascii() and kind.isprintable()) or kind != " ".join(kind.split()):
        # A device reports its kind in plain ASCII, single-spaced: a lookalike letter or an extra
        # space would escape the catalogue (and its physics) while printing as the chip.
        why.append(f"device_kind {ascii(kind)} is not as a device reports it (non-ASCII letters, control "
                   "characters or extra spaces: edited?)")
    if platform not in ("gpu", "tpu"):
        why.append(f"{platform.upper()}: not real hardware (the gate needs a TPU or GPU)")
    cat = catalogue.load()
    by_kind = cat.for_device_kind(kind)
    if platform == "cpu":
        if by_kind is not None:
            why.append(f"platform 'cpu' but device_kind '{kind}' is the {by_kind.display} ({by_kind.kind})")
        return why
    if kind.strip().lower() == "cpu":
        why.append(f"platform '{platform}' but device_kind 'cpu' (edited?)")
    elif by_kind is None:
        if chip_name is not None:  # an unknown accelerator predicts from its own probes, never a named chip
            why.append(f"chip '{chip_name}' predicted, but device_kind '{kind}' is no chip in the catalogue")
    elif by_kind.kind != platform:
        why.append(f"platform '{platform}' but device_kind '{kind}' is the {by_kind.display}, a {by_kind.kind}")
    if chip_name is not None and by_kind is not None and chip_name != by_kind.name:
        why.append(f"chip '{chip_name}' predicted, but device_kind '{kind}' is '{by_kind.name}'")
    return why


# ----------------------------------------------------------------- explanations

def stored_has_time(text: str) -> bool:
    """Whether a stored sentence holds a corrected time (older explanations do not)."""

    try:
        return miss_reasons.corrected_from_sentence(text) is not None
    except miss_reasons.CorrectedError:
        return True


def _judge_misses(record: LabRecord, by_op: dict[str, OpRow], graded: str, findings: list[str] | None = None
                  ) -> tuple[list[str], list[str], list[str], list[JudgedMiss], list[str], list[str]]:
    """(misses, explained, unexplained, re-judged explanations, evidence lacking, inconsistencies);
    a miss no set of reasons the evidence allows explains goes to ``findings`` ("op: why"), never to
    unexplained."""

    misses: list[str] = []
    explained: list[str] = []
    unexplained: list[str] = []
    judged: list[JudgedMiss] = []
    lacking: set[str] = set()
    odd: list[str] = []
    findings = findings if findings is not None else []
    for name in SEED_OPS:
        row = by_op.get(name)
        if row is None:
            continue
        prediction = row.predictions.get(graded)
        ratio = score.ratio(row.measured.measured_s, prediction.seconds if prediction is not None else None)
        if score.within(ratio):
            continue
        misses.append(name)
        stored: Miss | None = row.miss
        text = (stored.text if stored else "") or row.explanation or ""
        given_reasons = list(stored.reasons if stored else ())
        given_corrected_s = stored.corrected_s if stored else None
        try:
            ev = records.op_evidence(record, name)
            lacking.update(ev.lacking)
            finding = miss_reasons.unexplainable(ev)
            if finding:
                findings.append(f"{name}: {finding}")
                judged.append({"op": name, "text": text, "accepted": False, "why": f"unexplained-by-evidence: {finding}",
                               "refused_attempts": 0, "finding": True})
                continue
            j = miss_reasons.judge(text, ev, given_reasons or None, given_corrected_s)
            ok, why = j.accepted, j.why
        except (miss_reasons.UnknownReasonError, UnpublishedFigureError) as exc:  # not accepted
            ok, why = False, f"refused: {exc}"
        if ok and stored and stored.revealed:  # the answer was shown before it was given
            ok, why = False, "revealed (drill explain --show): a miss explained after seeing the answer does not count"
        if not ok and text and given_corrected_s is None and not stored_has_time(text):
            lacking.add("a corrected time in the explanation (made before explanations were corrected estimates)")
        if stored and stored.accepted and not ok and not stored.revealed and record.schema_version >= 4:
            odd.append(f"{name}: the record says its explanation was accepted, but the evidence does not "
                       "support it (edited?)")
        refused = sum(a.verdict == "refused" for a in (stored.attempts or ())) if stored else 0
        judged.append({"op": name, "text": text, "accepted": ok, "why": why, "refused_attempts": refused})
        (explained if ok else unexplained).append(name)
    return misses, explained, unexplained, judged, sorted(lacking), odd


# ----------------------------------------------------------------- one record

def judge_record(record: LabRecord | RecordJSON, path: str = "") -> Row:
    """One record's row: re-derives each seed op's ratio against the graded prediction, re-judges
    every explanation, and lists every reason (a), (b) and (d) the record cannot count; (c) needs
    the other records and the ledger (``apply_first_run_rule``). A dict is read as a typed record."""
    record = as_record(record)
    graded = record.graded
    by_op = record.by_op()
    missing = [name for name in SEED_OPS if name not in by_op]
    findings: list[str] = []
    misses, explained, unexplained, judged, lacking, odd = _judge_misses(record, by_op, graded, findings)
    within = len(SEED_OPS) - len(missing) - len(misses)
    blockers = _device_reasons(record)
    for name in SEED_OPS:  # by_op keeps one row per op: a second row would go unjudged
        rows_of = sum(1 for row in record.ops if row.op == name)
        if rows_of > 1:
            blockers.append(f"ops: {name} has {rows_of} rows (one measurement per op: edited?)")
    if missing:
        blockers.append(f"lacks {', '.join(missing)}")
    learner = _learner_reasons(record, by_op)
    blockers += learner
    for name in SEED_OPS:
        if name in by_op:
            blockers += _measured_reasons(name, by_op[name].measured)
    blockers += odd
    if missing:
        verdict = "incomplete"
    elif graded != "learner":
        verdict = "ungraded"
    elif unexplained:
        verdict = "incomplete"
    else:
        verdict = "pass" if not misses else "fail"
    if not records.counted_size(record.size):
        blockers.append(f"size: N={record.size} is practice: a counted run is at "
                        f"N={' or '.join(map(str, records.COUNTED_SIZES))} (the seed's N, and the next size "
                        "where it fits the device's memory)")
    takes_slot = (graded == "learner" and bool(record.learner_predictions)
                  and records.counted_size(record.size))
    return Row(path, record.platform, record.device_kind, record.date, record.size, graded,
               "practice", verdict, within, len(SEED_OPS) - len(missing), False, [], misses, explained,
               unexplained, missing, record.started, judged, lacking, takes_slot, blockers, findings)


def _verdict_reasons(row: Row) -> list[str]:
    """Why a graded record did not pass (empty for a pass or an ungraded record)."""
    why: list[str] = []
    if row.verdict in ("ungraded",) or row.missing_ops:
        return why
    if row.misses:
        why.append(f"{len(row.misses)} of {row.ops} predictions more than 2x off ({', '.join(row.misses)}): "
                   "a pass needs all five within 2x")
    for j in row.explanations:
        if j["accepted"]:
            continue
        if j.get("finding"):  # the evidence explains it by no reason: nothing to ask
            why.append(f"{j['op']}: {j['why']}")
            continue
        if not j["text"]:
            why.append(f"{j['op']}: miss not explained yet; explain it: drill explain")
        else:  # the refusal names the numbers to look at
            why.append(f"{j['op']}: miss not explained ({j['why']}); try again: drill explain")
    return why


def _ledger_reasons(loaded: records.Loaded, row: Row, ledger: list[LedgerEntry] | None, present: set[str]) -> list[str]:
    """``ledger:`` the folder's ledger vouches for this record (its lines name the record's SHA-256,
    platform, device_kind, chip, N, schema version and start time), and (c): this run's place
    among the runs that took the device kind's slot, and earlier runs whose records are gone.
    Records older than the current schema never count (``consistency.schema_reasons``)."""
    record = loaded.record
    if record is None or record.schema_version != records.SCHEMA_VERSION:
        return []
    stem = (record.run.stem if record.run else None) or loaded.path.stem
    if ledger is None:
        return [f"ledger: the records folder has no ledger ({records.LEDGER_NAME}) to show this is your first "
                "run (deleted?)"]
    why = []
    if any(e.get("damaged") for e in ledger):
        why.append(f"ledger: {records.LEDGER_NAME} has damaged lines (edited?)")
    mine = [e for e in ledger if e.get("stem") == stem and not e.get("damaged")]
    if stem != loaded.path.stem or not mine:
        why.append(f"ledger: not in the records folder's ledger ({records.LEDGER_NAME}) under this name: "
                   "a record copied in or renamed")
        return why
    for ledger_key, record_key in records.LEDGER_FIELDS:
        stated = getattr(record, record_key)
        differ = next((e for e in mine if e.get(ledger_key) != stated), None)
        if differ is not None:
            why.append(f"ledger: {record_key} is {stated!r} in the record but "
                       f"{differ.get(ledger_key)!r} in its ledger line (edited?)")
    vouched = [e.get("sha256") for e in mine if e.get("sha256")]
    if not vouched:
        why.append("ledger: the run was interrupted before its save completed (only its pending line): "
                   "it took the slot, and no line vouches for this record's SHA-256")
    elif vouched[-1] != loaded.sha256:
        why.append("ledger: the record's SHA-256 is not the one its ledger line holds (the record was "
                   "changed outside drill)")
    if not row.takes_slot:
        return why
    # Earlier = began measuring first (two labs may save in either order); ties by ledger order.
    # A line whose start time does not read counts as earlier.
    slot = records.slot_runs(ledger)
    index = next((i for i, e in enumerate(slot) if e.get("stem") == stem), len(slot))
    started = _instant(record.measurement_started_at)

    def before(i: int, e: LedgerEntry) -> bool:
        when = _instant(e.get("started_at"))
        if when is None or started is None:
            return True
        return when < started or (when == started and i < index)
    earlier = [e for i, e in enumerate(slot) if e.get("stem") != stem
               and records.run_key(e) == records.run_key(record) and before(i, e)]
    if earlier:
        gone = [str(e.get("stem")) for e in earlier if e.get("stem") not in present]
        text = (f"the ledger lists {len(earlier)} earlier run(s) with your predictions on {row.device_kind} "
                f"at a counted size")
        if gone:
            text += f", whose record(s) are gone or were never saved: {', '.join(gone[:3])} (deleted? interrupted?)"
        why.append(text + ": practice, not your first run")
    return why


def apply_first_run_rule(rows: list[Row]) -> None:
    """(c): only the first record made with the learner's predictions per device kind (at a counted
    size) can count; a record without predictions is practice and takes no slot. Sets ``counted``,
    ``status``, ``why_not``."""
    first: dict[str, Row] = {}
    for row in sorted(rows, key=_order):
        if not row.takes_slot:
            continue
        key = records.run_key({"device_kind": row.device_kind})
        if key in first:
            row.blockers.append(f"not your first run on {row.device_kind} "
                                f"(the first is {Path(first[key].path).name}): practice, scored but not counted")
        else:
            first[key] = row
    for row in rows:
        row.counted = not row.blockers
        row.status = row.verdict if row.counted else "practice"
        row.why_not = [*row.blockers, *_verdict_reasons(row)]


def evaluate(bench_dir: Path | None = None) -> GateResult:
    """The gate over a records folder, read under its shared lock; ``records.FolderLocked`` (one
    line naming the holder's PID) when another command holds the folder past the wait."""
    bench_dir = records.default_dir() if bench_dir is None else Path(bench_dir)
    skipped: list[Skipped] = []
    if not bench_dir.is_dir():
        return _evaluate(bench_dir, [], None, skipped)
    try:  # read under the folder's lock: never half a save (a save holds it for milliseconds)
        with records.folder_lock(bench_dir, shared=True):
            loaded_all = records.scan(bench_dir)
            try:
                ledger = records.read_ledger(bench_dir) if (bench_dir / records.LEDGER_NAME).exists() else None
            except RecordError as exc:
                ledger = None
                skipped.append({"path": display_path(bench_dir / records.LEDGER_NAME), "reason": str(exc)})
    except records.FolderLocked:
        raise  # a gate read while another command holds the folder would be a false "pending"
    except RecordError as exc:
        skipped.append({"path": display_path(bench_dir), "reason": str(exc)})
        loaded_all, ledger = [], None
    return _evaluate(bench_dir, loaded_all, ledger, skipped)


def _refusals_from_ledger(row: Row, stem: str, ledger: list[LedgerEntry] | None) -> None:
    """Each explanation's refused attempts: the most the record or any of its ledger lines counts, so a
    record rewritten without its trail still shows it."""
    counted = [e.get("refused_attempts") for e in ledger or [] if e.get("stem") == stem]
    for judged in row.explanations:
        seen = [c.get(judged["op"]) for c in counted if isinstance(c, dict)]
        most = max([n for n in seen if isinstance(n, int) and not isinstance(n, bool)] or [0])
        judged["refused_attempts"] = max(int(judged.get("refused_attempts") or 0), most)


def _evaluate(bench_dir: Path, loaded_all: list[records.Loaded], ledger: list[LedgerEntry] | None,
              skipped: list[Skipped]) -> GateResult:
    rows = []
    present = {l.path.stem for l in loaded_all}
    for loaded in loaded_all:
        shown = display_path(loaded.path)  # a file name that is not UTF-8 still prints
        if loaded.record is None:
            skipped.append({"path": shown, "reason": str(loaded.error)})  # set whenever the record is None
            continue
        try:
            row = judge_record(loaded.record, shown)
            row.blockers += consistency.reasons(loaded.record, loaded.path.parent)
            row.blockers += _ledger_reasons(loaded, row, ledger, present)
            _refusals_from_ledger(row, loaded.path.stem, ledger)
            rows.append(row)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            # valid by schema yet inconsistent: listed and skipped, never a crash
            skipped.append({"path": shown, "reason": f"cannot judge: {exc!r}"})
    apply_first_run_rule(rows)
    counted = [r for r in rows if r.counted]
    if any(r.status == "pass" for r in counted):
        status = "pass"
    elif counted:  # fail, or incomplete: a miss, explained or not, means it cannot pass
        status = "fail"
    elif rows:
        status = "practice"
    else:
        status = "pending"
    return GateResult(status, rows, skipped, str(bench_dir))


_HEADLINE = {"pass": "PASS", "fail": "FAIL",
             "practice": "OPEN (no record counts yet: practice only)", "pending": "OPEN (measured half pending)"}


def format_lines(result: GateResult, skipped: bool = True) -> list[str]:
    """The gate's report, each line safe for a terminal (``generator.io.termsafe``); ``skipped`` False
    leaves out the unreadable files (the CLI says them on stderr)."""
    headline = _HEADLINE[result.status]
    if result.status == "fail" and any(r.counted and r.status == "incomplete" for r in result.rows):
        headline = "FAIL (and incomplete: explain every miss: drill explain)"
    lines = [f"{GATE} {headline}", "", f"criterion: {CRITERION}",
             f"records: {result.bench}", "measured:"]
    if not result.rows:
        lines.append(f"  {PENDING_TEXT}")
    order = {"pass": 0, "fail": 1, "incomplete": 2, "practice": 3}
    for row in sorted(result.rows, key=lambda r: (order.get(r.status, 9), r.path)):
        tag = f"counted: {row.status}" if row.counted else "not counted"
        lines.append(f"  [{tag}] {row.measured_text()}")
        lines.append(f"      {row.path}")
        for reason in row.why_not:
            lines.append(f"      why not: {reason}")
        if row.lacking:
            lines.append(f"      evidence lacking (older record): {', '.join(row.lacking)}")
    for skip in result.skipped if skipped else ():
        lines.append(f"  [skipped] {skip['path']}: {skip['reason']}")
    lines.append("")
    lines.append("a record counts when your predictions for all five ops were read before the measurement, "
                 "every op is device time and not noisy, it is your first run on that device kind at "
                 f"N={' or '.join(map(str, records.COUNTED_SIZES))}, on a TPU or GPU, the ledger vouches for it, "
                 "its traces re-derive every time on the claimed device and it is physically possible "
                 "on the claimed chip; it passes when all five are within 2x and every miss has an accepted "
                 f"explanation; ops judged: {', '.join(OPS[n].label for n in SEED_OPS)}")
    return visible_lines(lines)  # a record's strings can not move the cursor or erase "[not counted]"
