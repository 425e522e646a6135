"""The chapter checklist behind ``drill progress``: "Can you" items, labs done, streak, gate.

A drill view: it reads the quiz store and the lab records (pure Python, no jax).
Details: docs/internals.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drills import can_you_needs, mastery as mastery_rule
from drills.store.clock import local_date
from generator.problems import families, generate
from generator.errors import DrillError
from generator.problems.families.base import Mastery
from generator.io.termsafe import visible_lines
from labs import calibration_bias
from labs.gate import verdict as lab_gate
from labs.records.types import LabRecord, Miss
from generator.model.units import fmt
from labs.calibration_bias import prediction_bias
from drills.stats import compute_stats
from labs.records import folder as records
from generator.problems.generate import CAN_YOU
from generator import explain as miss_reasons

if TYPE_CHECKING:  # annotations only: `drill` loads a command's dependencies only when it runs
    from drills.store.repository import Store
    from generator.problems.families.base import Skill

# (path, typed record) pairs of a records folder (``load_records``).
LabRecords = Sequence[tuple[str, LabRecord]]  # read more than once

LAB_TITLE = "LAB·0.1 Rooflines by hand"


class ProgressError(DrillError, ValueError):
    pass




@dataclass(frozen=True)
class CanYou:
    number: int
    text: str
    skill_id: str
    by_quiz: bool  # a right last answer on the item's own card
    by_hand: bool
    reviews: int
    correct: int
    by_skills: bool = False  # the skills the item describes are mastered (the families' MASTERY)
    missing: str = ""  # what mastery still needs ("" when mastered)
    evidence: list[str] = field(default_factory=list)  # the skills (or records) that count so far
    command: str = ""  # the command that ticks the item ("" when ticked; the lab's for item 6)
    by_lab: bool = False  # shown by a lab record alone: no quiz answer ticks it
    pending: tuple[tuple[str, str], ...] = ()  # (skill, what it still needs) right but not yet mastered

    @property
    def ticked(self) -> bool:
        return self.by_skills or self.by_quiz or self.by_hand

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "text": self.text, "skill_id": self.skill_id, "ticked": self.ticked,
                "by_skills": self.by_skills, "by_quiz": self.by_quiz, "by_hand": self.by_hand,
                "reviews": self.reviews, "correct": self.correct, "missing": self.missing,
                "evidence": list(self.evidence), "command": self.command, "by_lab": self.by_lab,
                "pending": [{"skill": skill, "status": status} for skill, status in self.pending]}


def last_reviews(store: Store) -> dict[str, dict[str, Any]]:
    """skill -> its last review row (the store's columns), cram included (``Store.last_reviews``)."""
    return store.last_reviews()


def miss_entries(record: LabRecord) -> dict[str, Miss]:
    """op -> its ``miss`` object (``reasons``, ``text``, ``accepted``, ``why``; schema 3), where it has one."""
    return {row.op: row.miss for row in record.ops if row.miss is not None}


def missed_ops(record: LabRecord) -> list[str]:
    """The ops whose graded prediction missed by more than 2x (the record's own verdicts)."""
    return [row.op for row in record.ops if row.verdict == "miss"]


def accepted(record: LabRecord, op: str, entry: Miss) -> bool:
    """The tool accepted this explanation, and still does: ``accepted: true`` in the record (an older
    record has no such field and never counts), and judging its text and reasons again against the
    record's own evidence (``generator.explain.judge``) accepts it, so an edited flag or a shrug
    ("overhead") never counts."""
    if entry.accepted is not True or entry.revealed:  # a revealed answer never ticks Can-you 6
        return False

    reasons = [str(r) for r in entry.reasons] if entry.reasons else None
    try:
        evidence = records.op_evidence(record, op)
        corrected = entry.corrected_s  # schema 4: the corrected estimate (older records lack it: not accepted)
        return miss_reasons.judge(str(entry.text or ""), evidence, reasons,
                                  float(corrected) if corrected is not None else None).accepted
    except (KeyError, ValueError, TypeError, AttributeError, ArithmeticError):
        return False  # evidence the catalogue cannot judge: not accepted


def unexplainable(record: LabRecord, op: str) -> bool:
    """No set of reasons the record's evidence allows explains this miss (judged again, never read
    from the record's own flag): a finding, which asks nothing of the learner."""

    try:
        return miss_reasons.unexplainable(records.op_evidence(record, op)) is not None
    except (KeyError, ValueError, TypeError, AttributeError, ArithmeticError):
        return False


def unaccepted(record: LabRecord) -> list[str]:
    """The record's missed ops without an explanation the tool accepts (``accepted``), leaving out
    the misses the evidence cannot explain (``unexplainable``)."""
    entries = miss_entries(record)
    return [op for op in missed_ops(record) if (op not in entries or not accepted(record, op, entries[op]))
            and not unexplainable(record, op)]


def accepted_records(lab_records: LabRecords) -> list[tuple[str, list[str]]]:
    """(path, its missed ops) for each record with at least one miss, every one of them explained and
    accepted; practice runs (a CPU, a second run) count: explaining a miss is the skill."""
    return [(str(path), missed_ops(record)) for path, record in lab_records
            if missed_ops(record) and not unaccepted(record)
            and any(not unexplainable(record, op) for op in missed_ops(record))]


def _lab_gap(rule: Mastery, lab_records: LabRecords) -> str:
    """What item 6 still needs: the newest record with a miss, and its misses not yet accepted."""
    with_misses = [(record.started, path, record) for path, record in lab_records if missed_ops(record)]
    if not with_misses:
        return rule.what
    _, path, record = max(with_misses, key=lambda t: (t[0], t[1]))
    left = unaccepted(record)
    if not left:  # every miss of the newest record is a finding: another run's miss is needed
        return (f"{rule.what}; in {Path(path).name}, no miss the evidence can explain (each is unexplained by "
                "the evidence): explain a miss of another run (drill lab, then drill explain)")
    return (f"{rule.what}; in {Path(path).name}, still no accepted explanation for "
            f"{', '.join(left)} (drill explain)")


def mastery(rule: Mastery, last: dict[str, dict[str, Any]], lab_records: LabRecords
            ) -> tuple[bool, str, list[str]]:
    """(mastered, what is missing, evidence) for one item; ``lab_records``: (path, record) pairs."""
    if rule.lab:
        done = accepted_records(lab_records)
        return (bool(done), "" if done else _lab_gap(rule, lab_records),
                [f"{Path(p).name} ({', '.join(ops)})" for p, ops in done])
    found = can_you_needs.standing(rule, last)
    return found.done, found.missing(), sorted(found.right)


def mastered(rules: list[Mastery], last: dict[str, dict[str, Any]], lab_records: LabRecords
             ) -> tuple[bool, str, list[str]]:
    """(mastered, what is missing, evidence) for one item from all of its rules (none: not by skills)."""
    if not rules:
        return False, "", []
    found = [mastery(rule, last, lab_records) for rule in rules]
    return (all(done for done, _, _ in found), "; ".join(gap for _, gap, _ in found if gap),
            sorted({e for _, _, evidence in found for e in evidence}))


def can_you_items() -> list[tuple[int, str, str]]:
    return list(CAN_YOU)


def check_item(number: int) -> int:
    known = [n for n, _, _ in can_you_items()]
    if number not in known:
        raise ProgressError(f"no 'Can you' item {number}; items are {known[0]}..{known[-1]}")
    return number


def can_you(store: Store, lab_records: LabRecords = (), now: datetime | None = None) -> list[CanYou]:
    """The seven items; ``lab_records``: (path, record) pairs (``load_records``). Skills count once
    mastered (``drills.mastery``), at the store's time (a clock behind reads as the newest review's)."""
    summary = store.skill_summary()
    hand = store.ticks()
    last = last_reviews(store)
    now = store.store_time(now)
    found = mastery_rule.standings(store, now, last)
    rows = mastery_rule.ticking_rows(last, found)
    today = local_date(now)
    rules = families.mastery_rules()
    out = []
    for number, text, skill_id in can_you_items():
        s = summary.get(skill_id, {})
        item_rules = rules.get(number, [])
        by_skills, _, evidence = mastered(item_rules, rows, lab_records)
        # What is still to answer: a pending skill is on its way (its line says what it needs).
        missing = "" if by_skills else mastered(item_rules, last, lab_records)[1]
        lab = any(rule.lab for rule in item_rules)
        # A lab item ticks from the lab alone: its quiz card is practice, not the skill shown.
        own = found.get(skill_id)
        by_quiz = bool(own and own.mastered) and not lab
        ticked = by_skills or by_quiz or number in hand
        how = "" if ticked else can_you_needs.command(item_rules, last, _every_chip)
        pending = () if ticked or lab else tuple(
            (skill, standing.pending_text(today)) for skill, standing in sorted(found.items())
            if standing.pending and (skill == skill_id or any(can_you_needs.counts(r, skill) for r in item_rules)))
        out.append(CanYou(number, text, skill_id, by_quiz, number in hand,
                          int(s.get("reviews", 0)), int(s.get("correct", 0)), by_skills, missing, evidence,
                          how, lab, pending))
    return out


def _every_chip(names: tuple[str, ...]) -> list[Skill]:
    """Every skill of these families on every chip (the generator's order), for an item's command."""

    return generate.skills(list(names), None)


def load_records(bench_dir: Path | None) -> list[tuple[str, LabRecord]]:
    """(path, typed record) for each readable record in the folder (unreadable ones: the gate lists them)."""

    folder = records.default_dir() if bench_dir is None else Path(bench_dir)
    return [(str(loaded.path), loaded.record) for loaded in records.scan(folder) if loaded.record is not None]


def lab_status(result: lab_gate.GateResult) -> dict[str, Any]:
    counted = [r for r in result.rows if r.counted]
    if counted:
        status = "done"
        where = sorted({r.device_kind for r in counted})
    elif result.rows:
        status, where = "practice", sorted({r.device_kind for r in result.rows})
    else:
        status, where = "not run", []
    return {"lab": LAB_TITLE, "status": status, "records": len(result.rows), "devices": where}


def checklist(store: Store, bench_dir: Path | None = None) -> dict[str, Any]:
    result = lab_gate.evaluate(bench_dir)
    loaded = load_records(bench_dir)
    items = can_you(store, loaded)
    return {
        "can_you": [i.to_dict() for i in items],
        "can_you_ticked": sum(i.ticked for i in items),
        "can_you_total": len(items),
        "labs": [lab_status(result)],
        "streak_days": compute_stats(store)["streak_days"],
        "gate": {"gate": lab_gate.GATE, "criterion": lab_gate.CRITERION, "status": result.status},
        "calibration": prediction_bias(loaded).to_dict(),
        "store": str(store.path),
        "bench": result.bench,
    }


_GATE_TEXT = {"pass": "PASS", "fail": "FAIL", "practice": "OPEN (CPU practice only)",
              "pending": "OPEN (measured half pending)"}


@dataclass(frozen=True)
class Trend:
    """Whether the learner's predictions are getting closer, over their records: the one trend
    ``drill progress`` and the page both show. ``word`` is ``PredictionBias.trend`` (the latest
    record's typical miss against the first's, by ``calibration_bias.TREND_FACTOR``); ``typical_miss``
    is that measure per record, oldest first (exp of the mean |ln measured/predicted|: 1.0 = exact)."""

    word: str
    text: str
    typical_miss: tuple[float, ...]

    def line(self) -> str:
        """``trend: further: ... (typical miss per record, oldest to newest: x1.2 → x2.5)``."""

        series = " → ".join(f"x{fmt(m, '')}" for m in self.typical_miss)
        return f"trend: {self.text}" + (f" (typical miss per record, oldest to newest: {series})"
                                        if len(self.typical_miss) > 1 else "")

    def to_dict(self) -> dict[str, Any]:
        return {"trend": self.word, "text": self.text, "typical_miss": list(self.typical_miss)}


def trend(bias: calibration_bias.PredictionBias) -> Trend | None:
    """The trend of ``bias`` (None when no record has a prediction of the learner's own)."""
    if not bias.runs:
        return None
    return Trend(bias.trend, calibration_bias.trend_text(bias.trend), tuple(r.typical_miss for r in bias.runs))


def _pending_groups(pending: list[dict[str, str]]) -> list[tuple[str, list[str]]]:
    """The pending skills grouped by what they still need, today's first."""
    groups: dict[str, list[str]] = {}
    for entry in pending:
        groups.setdefault(entry["status"], []).append(entry["skill"])
    return sorted(groups.items(), key=lambda g: g[0] != mastery_rule.PENDING_TODAY)


def format_lines(data: dict[str, Any]) -> list[str]:
    lines = [f"Can you ({data['can_you_ticked']}/{data['can_you_total']})"]
    for item in data["can_you"]:
        why = []
        if item["by_skills"]:
            why.append("skills mastered: " + ", ".join(item["evidence"][:4])
                       + (" ..." if len(item["evidence"]) > 4 else ""))
        if item["by_quiz"]:
            why.append("quiz: its own card mastered")
        if item["by_hand"]:
            why.append("ticked by hand")
        if not why and item["reviews"] and item.get("by_lab"):  # its card is practice: only a lab record ticks it
            why.append(f"its quiz card: {item['correct']}/{item['reviews']} right, practice only")
        elif not why and item["reviews"] and not item.get("pending"):
            why.append(f"quiz: {item['correct']}/{item['reviews']} right, last one wrong")
        mark = "x" if item["ticked"] else " "
        lines.append(f"  [{mark}] {item['number']}. {item['text']}" + (f"  ({'; '.join(why)})" if why else ""))
        for status, skills in _pending_groups(item.get("pending", [])):
            lines.append(f"        {status} ({', '.join(skills[:4])}{' ...' if len(skills) > 4 else ''})")
        if not item["ticked"] and item["missing"]:
            lines.append(f"        missing: {item['missing']}")
        if not item["ticked"] and item.get("command"):
            cannot = " (no quiz answer ticks this item)" if item.get("by_lab") else ""
            lines.append(f"        ticks it: {item['command']}{cannot}")
    lines.append("")
    lines.append("Labs")
    marks = {"done": "x", "practice": "~", "not run": " "}
    for lab in data["labs"]:
        detail = {"done": f"done on {', '.join(lab['devices'])}",
                  "practice": f"practised on {', '.join(lab['devices'])} (no record counts yet: see drill gate)",
                  "not run": "not run yet: drill lab"}[lab["status"]]
        lines.append(f"  [{marks[lab['status']]}] {lab['lab']}: {detail} ({lab['records']} record(s))")
    lines.append("")
    days = data["streak_days"]
    lines.append(f"Streak: {days} day{'s' if days != 1 else ''} in a row with a quiz review")
    lines.append(f"{data['gate']['gate']}: {_GATE_TEXT[data['gate']['status']]} — {data['gate']['criterion']}")
    lines.append("")
    lines.append("Your calibration (measured / your prediction: above 1x, the op took longer than you predicted)")
    bias = calibration_bias.PredictionBias.from_dict(data["calibration"])
    shown = trend(bias)
    for line in calibration_bias.format_lines(bias):  # its trend line becomes the one the page shows too
        lines.append(f"  {shown.line()}" if shown and line.startswith("  trend:") else line)
    return visible_lines(lines)  # strings from records and the store, shown safe for a terminal
