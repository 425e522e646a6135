"""Explaining a miss: judging a learner's derivation against a record, keeping every attempt.

``judge`` hands an explanation to ``generator.explain.judge`` on the op's evidence; ``apply`` stores
the verdict in the op's ``miss`` object, appending the attempt; ``reveal`` shows which reasons the
numbers support after giving up. Pure Python (no jax).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from generator import explain as miss_reasons
from generator.io.termsafe import visible
from labs.records import evidence
from labs.records.types import OpRow
from generator.model.units import fmt

if TYPE_CHECKING:  # annotations only: the record as JSON (a record being judged is edited in place)
    from labs.records.folder import RecordJSON

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


def judge(record: RecordJSON, op: str, given: Given) -> miss_reasons.Judgement:
    """The judgement of one explanation of ``op`` (KeyError for an unknown reason id or op)."""
    text, reasons, corrected = split(given)
    return miss_reasons.judge(text, evidence.op_evidence(record, op), reasons, corrected)


def finding(record: RecordJSON, op: str) -> str | None:
    """Why no set of reasons the evidence allows explains ``op``'s miss (``miss_reasons.unexplainable``),
    or None (it can be explained, or the record has no such miss)."""
    try:
        return miss_reasons.unexplainable(evidence.op_evidence(record, op))
    except KeyError:
        return None


def mark_findings(record: RecordJSON) -> list[str]:
    """Store each miss the evidence cannot explain as ``unexplained-by-evidence`` (its ``finding``) before
    any "why?" is asked; returns "op: finding" lines."""
    lines: list[str] = []
    for row in record["ops"]:
        if row.get("verdict") != "miss" or not isinstance(row.get("miss"), dict):
            continue
        found = finding(record, row["op"])
        row["miss"]["finding"] = found
        if found:
            if not row["miss"].get("accepted"):
                row["miss"]["why"] = f"{UNEXPLAINED_BY_EVIDENCE}: {found}"
            lines.append(f"{row['op']}: {found}")
    return lines


UNEXPLAINED_BY_EVIDENCE = "unexplained-by-evidence"


def empty_miss(op: str) -> dict[str, Any]:
    return {"op": op, "reasons": [], "corrected_s": None, "text": "", "accepted": False,
            "why": "not explained yet", "revealed": False, "attempts": []}


def apply(row: RecordJSON, judgement: miss_reasons.Judgement, at: str | None = None) -> None:
    """Store an attempt on a miss: appended to ``attempts``; the miss's own fields take it unless an
    accepted explanation is already there (never replaced by a later refused one)."""
    stored = row.get("miss")
    miss: dict[str, Any] = stored if isinstance(stored, dict) else empty_miss(row["op"])
    miss.setdefault("revealed", False)
    attempts = list(miss.get("attempts") or [])
    attempt = judgement.to_dict()
    attempts.append({"reasons": attempt["reasons"], "corrected_s": attempt["corrected_s"], "text": attempt["text"],
                     "verdict": "accepted" if judgement.accepted else "refused", "why": attempt["why"],
                     "at": at or utc_now()})
    if not (miss.get("accepted") and not judgement.accepted):
        miss.update({"op": row["op"], **attempt})
        row["explanation"] = judgement.text if judgement.accepted else None
    miss["attempts"] = attempts
    row["miss"] = miss


def reveal(record: RecordJSON, row: RecordJSON) -> list[str]:
    """Mark the miss revealed and return the lines that show which reasons explain it, with the
    corrected time each set gives (``drill explain --show``)."""
    stored = row.get("miss")
    miss: dict[str, Any] = stored if isinstance(stored, dict) else empty_miss(row["op"])
    miss["revealed"] = True
    miss.setdefault("attempts", [])
    row["miss"] = miss
    ev = evidence.op_evidence(record, row["op"])

    found = miss_reasons.explanations(ev)
    if not found:
        return [visible(f"{row['op']}: no derivation the evidence allows reaches within "
                        f"{miss_reasons.CORRECTED_FACTOR}x of measured {fmt(ev.measured_seconds, 's')}")]
    lines = []
    for combo in found:
        derivation = miss_reasons.best(ev, combo)
        if derivation is not None:
            lines.append(visible(f"{row['op']}: {' + '.join(combo)}: {derivation.text} = "
                                 f"{fmt(derivation.seconds, 's')} (measured {fmt(ev.measured_seconds, 's')})"))
    return lines


def accepted(row: RecordJSON | OpRow) -> bool:
    """A miss counts as explained when its explanation was accepted and the answer was never revealed
    (records before schema 3: any sentence). A typed row (``labs.records.types.OpRow``) or its dict."""
    if isinstance(row, OpRow):
        if row.miss is not None:
            return bool(row.miss.accepted) and not row.miss.revealed
        return bool((row.explanation or "").strip())
    miss = row.get("miss")
    if isinstance(miss, dict):
        return bool(miss.get("accepted")) and not miss.get("revealed")
    return bool((row.get("explanation") or "").strip())
