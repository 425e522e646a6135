"""Explaining a miss: judging a learner's derivation against a record, keeping every attempt.

``judge`` hands an explanation to ``generator.explain.judge`` on the op's evidence; ``apply`` stores
the verdict in the op's ``miss`` object, appending the attempt; ``reveal`` shows which reasons the
numbers support after giving up. Pure Python (no jax).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from generator import explain as miss_reasons
from generator.io.termsafe import visible
from labs.records import evidence
from labs.records.types import Attempt, LabRecord, Miss, OpRow
from generator.model.units import fmt

# An explanation as given: a sentence, or the mapping form (``labs.inputs.ExplanationEntry``, or ``corrected``
# as text), or nothing.
Given = str | Mapping[str, Any] | None


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def split(given: Given) -> tuple[str, list[str] | None, float | None]:
    """(text, reason ids or None, corrected seconds or None) of a sentence or a mapping."""
    if isinstance(given, dict):
        corrected = given.get("corrected_s")
        if corrected is None and given.get("corrected") not in (None, ""):
            corrected = miss_reasons.parse_corrected(str(given["corrected"]))  # CorrectedError: the caller says so
        return str(given.get("text") or ""), list(given.get("reasons") or []) or None, corrected
    return str(given or ""), None, None


def judge(record: LabRecord, op: str, given: Given) -> miss_reasons.Judgement:
    """The judgement of one explanation of ``op`` (KeyError for an unknown reason id or op)."""
    text, reasons, corrected = split(given)
    return miss_reasons.judge(text, evidence.op_evidence(record, op), reasons, corrected)


def finding(record: LabRecord, op: str) -> str | None:
    """Why no set of reasons the evidence allows explains ``op``'s miss (``miss_reasons.unexplainable``),
    or None (it can be explained, or the record has no such miss)."""
    try:
        return miss_reasons.unexplainable(evidence.op_evidence(record, op))
    except KeyError:
        return None


def mark_findings(record: LabRecord) -> tuple[LabRecord, list[str]]:
    """Each miss the evidence cannot explain stored as ``unexplained-by-evidence`` (its ``finding``),
    before any "why?" is asked: (the record so marked, "op: finding" lines)."""
    lines: list[str] = []
    rows = []
    for row in record.ops:
        if row.verdict == "miss" and row.miss is not None:
            found = finding(record, row.op)
            miss = row.miss.replace(finding=found)
            if found:
                if not miss.accepted:
                    miss = miss.replace(why=f"{UNEXPLAINED_BY_EVIDENCE}: {found}")
                lines.append(f"{row.op}: {found}")
            row = row.replace(miss=miss)
        rows.append(row)
    return record.replace(ops=tuple(rows)), lines


UNEXPLAINED_BY_EVIDENCE = "unexplained-by-evidence"


def empty_miss(op: str) -> dict[str, Any]:
    """A miss not yet explained, as the record stores it."""
    return {"op": op, "reasons": [], "corrected_s": None, "text": "", "accepted": False,
            "why": "not explained yet", "revealed": False, "attempts": []}


def _miss_of(row: OpRow) -> Miss:
    miss = row.miss if row.miss is not None else Miss.from_dict(empty_miss(row.op), "$.miss")
    return miss if miss.revealed is not None else miss.replace(revealed=False)


def apply(row: OpRow, judgement: miss_reasons.Judgement, at: str | None = None) -> OpRow:
    """The row with an attempt stored on its miss: appended to ``attempts``; the miss's own fields take it
    unless an accepted explanation is already there (never replaced by a later refused one)."""
    miss = _miss_of(row)
    attempt = judgement.to_dict()
    attempts = (*(miss.attempts or ()), Attempt.from_dict({
        "reasons": attempt["reasons"], "corrected_s": attempt["corrected_s"], "text": attempt["text"],
        "verdict": "accepted" if judgement.accepted else "refused", "why": attempt["why"],
        "at": at or utc_now()}, "$.attempt"))
    if not (miss.accepted and not judgement.accepted):
        given = {"op": row.op, **attempt}
        taken = Miss.from_dict(given, "$.miss")
        miss = miss.replace(**{key: getattr(taken, key) for key in given})
        row = row.replace(explanation=judgement.text if judgement.accepted else None)
    return row.replace(miss=miss.replace(attempts=attempts))


def reveal(record: LabRecord, op: str) -> tuple[OpRow, list[str]]:
    """The row of ``op`` with its miss marked revealed, and the lines that show which reasons explain it,
    with the corrected time each set gives (``drill explain --show``); KeyError for an op it lacks."""
    row = record.op(op)
    if row is None:
        raise KeyError(f"the record has no op '{op}'")
    miss = _miss_of(row).replace(revealed=True)
    row = row.replace(miss=miss if miss.attempts is not None else miss.replace(attempts=()))
    ev = evidence.op_evidence(record, op)

    found = miss_reasons.explanations(ev)
    if not found:
        return row, [visible(f"{op}: no derivation the evidence allows reaches within "
                             f"{miss_reasons.CORRECTED_FACTOR}x of measured {fmt(ev.measured_seconds, 's')}")]
    lines = []
    for combo in found:
        derivation = miss_reasons.best(ev, combo)
        if derivation is not None:
            lines.append(visible(f"{op}: {' + '.join(combo)}: {derivation.text} = "
                                 f"{fmt(derivation.seconds, 's')} (measured {fmt(ev.measured_seconds, 's')})"))
    return row, lines


def accepted(row: OpRow) -> bool:
    """A miss counts as explained when its explanation was accepted and the answer was never revealed
    (records before schema 3: any sentence)."""
    if row.miss is not None:
        return bool(row.miss.accepted) and not row.miss.revealed
    return bool((row.explanation or "").strip())
