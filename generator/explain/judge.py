"""Judging one explanation of a miss: a derivation from the record's quantities, against the measurement.

``judge`` reads the working (before the last '=') as arithmetic over quantities with units
(``derivation``). It is accepted when it comes out as a time, every number in it is a quantity of this
op's record that the named reasons may use (``quantities``), each named reason uses one of its own,
its value is the stated time within 2%, and that time is within the band of measured (1.5x, widened by
the probes' spread). The tool's own estimate never judges. A refusal names the rule that failed and
prints no number that is in neither the working nor the evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from generator.errors import DrillError
from generator.explain.derivation import SECONDS, DerivationError, dims_text, evaluate
from generator.explain.derivation import numbers as numbers_of
from generator.explain.evidence import OpEvidence
from generator.explain.quantities import (ADDED_ONCE, LABELS, MATCH, REASON_QUANTITIES,
                                               Quantity, WORK_TERMS, allowed_keys, changes_something, matches,
                                               quantities)
from generator.explain.reading import (HEDGES, WORKING_TOLERANCE, CorrectedError, _normal, check_seconds,
                                            corrected_from_sentence, is_shrug, reason_id, split_reasons)
from generator.explain.reasons import BY_ID, _log_off, _t, band, find
from generator.explain.search import explanations

# --- judging ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judgement:
    """Whether an explanation of one miss is accepted, the reasons and corrected time it gave, and why.
    ``supported`` (the reasons sets that explain the miss) is for showing after acceptance only."""

    accepted: bool
    reasons: list[str]
    text: str
    why: str
    corrected_s: float | None = None
    supported: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"reasons": list(self.reasons), "corrected_s": self.corrected_s, "text": self.text,
                "accepted": self.accepted, "why": self.why}


def pointer(ev: OpEvidence) -> str:
    """What to derive from: the measured time, the learner's prediction, and every quantity of the record
    (the evidence, never the answer: which reason may use which quantity is `drill miss-reasons`)."""
    parts = [f"measured {_t(ev.measured_seconds)}"]
    if ev.predicted_seconds:
        parts.append(f"your {_t(ev.predicted_seconds)}")
    parts.extend(f"{q.label} {q.shown}" for q in quantities(ev))
    if ev.lacking:
        parts.append(f"the record lacks: {', '.join(ev.lacking)}")
    if ev.working_set_bytes and ev.level_name:
        parts.append(f"the working set lives in {ev.level_name}")
    if ev.noisy_probes:
        parts.append(f"noisy probes: {', '.join(ev.noisy_probes)}")
    if ev.emulated_dtype is not None:
        parts.append(f"{ev.dtype} {'converted to f32' if ev.emulated_dtype else 'native'} in the compiled program")
    return "look at: " + "; ".join(parts)


EXAMPLE = "fixed-cost: 21 µs floor + 38 µs per call = 59 µs"


def _off(value: float, measured: float) -> str:
    r = value / measured
    return f"{r:.2f}x above" if r >= 1 else f"{1 / r:.2f}x below"


@dataclass(frozen=True)
class Derived:
    """A working that follows the rules: its seconds and the record's quantities it used."""

    seconds: float
    used: tuple[Quantity, ...]


class RuleError(DrillError, ValueError):
    """A working that breaks a rule of derivation: the message names the rule."""


def _number_is(value: float, dims: Any, ev: OpEvidence) -> str | None:
    """What a number that is no usable quantity is, when it is the measured time or the learner's prediction."""
    if dims == SECONDS and abs(value - ev.measured_seconds) <= MATCH * ev.measured_seconds:
        return "the measured time: a derivation predicts it, never uses it"
    if dims == SECONDS and ev.predicted_seconds and abs(value - ev.predicted_seconds) <= MATCH * ev.predicted_seconds:
        return "your own prediction, which is never a term (what it holds would be counted twice)"
    return None


def derive(working: str, ev: OpEvidence, named: list[str]) -> Derived:
    """The working as a derivation under the named reasons; RuleError naming the rule it breaks."""
    found = quantities(ev)
    try:
        for number in numbers_of(working):
            if not number.has_unit:
                same = [q for q in found if abs(number.value - q.value) <= MATCH * q.value]
                hint = f" (the record's {same[0].label} is {same[0].shown})" if same else ""
                raise RuleError(f"'{number.text}' has no unit: write each quantity with its unit{hint}")
        value, numbers = evaluate(working)
    except DerivationError as exc:
        raise RuleError(str(exc)) from None
    if len(numbers) < 2:
        raise RuleError(f"'{value.text}' alone is no derivation: combine the record's quantities with +, x, / "
                        "or max(a, b)")
    if value.dims != SECONDS:
        raise RuleError(f"the working comes out as {dims_text(value.dims)}, not a time: '{value.text}'")
    usable = allowed_keys(named)
    used: list[Quantity] = []
    for number in numbers:
        candidates = matches(number.value, number.dims, found)
        if not candidates:
            said = _number_is(number.value, number.dims, ev)
            raise RuleError(f"'{number.text}' is {said}" if said else
                            f"'{number.text}' is no quantity of this op's record (within {100 * MATCH:.0f}%): "
                            "use the evidence's numbers")
        mine = [q for q in candidates if q.key in usable]
        if not mine:
            owners = sorted({r for q in candidates for r, keys in REASON_QUANTITIES.items() if q.key in keys})
            raise RuleError(f"'{number.text}' is {candidates[0].label}, which {' + '.join(named)} may not use "
                            f"(it is for {', '.join(owners)})")
        own = [q for q in mine if any(q.key in REASON_QUANTITIES.get(r, ()) for r in named)]
        used.append((own or mine)[0])
    keys = [q.key for q in used]
    for key in sorted(set(keys) & ADDED_ONCE):
        if keys.count(key) > 1:
            raise RuleError(f"{LABELS[key]} appears {keys.count(key)} times: it is counted once")
    if not set(keys) & WORK_TERMS:
        raise RuleError("the working rests on none of the op's work: use its bytes, FLOPs or exps (or the floor)")
    for rid in named:
        own_keys = REASON_QUANTITIES.get(rid, ())
        if not any(changes_something(k, found) for k in set(keys) & set(own_keys)):
            raise RuleError(f"{rid} does no work in the working: it uses none of its quantities "
                            f"({', '.join(LABELS[k] for k in own_keys)}) where they differ from the floor's own")
    return Derived(value.value, tuple(used))


def judge(text: str, ev: OpEvidence, reasons: list[str] | None = None,
          corrected_s: float | None = None) -> Judgement:
    """Judge one explanation of a miss: ``reasons`` (ids or synonyms), else the names before the
    sentence's first ':'; the corrected time is ``corrected_s``, else the time after the last '='; the
    working is what stands before that '=' (the whole sentence when the time is given apart). Accepted
    when the working is a derivation under the rules (``derive``), equals the corrected time within 2%,
    and that time is within the band of measured and closer than the reference. KeyError for an unknown
    reason name in ``reasons``."""
    text = " ".join(str(text or "").split())
    named: list[str]
    unknown: list[str]
    if reasons:
        named = []
        for name in reasons:
            rid = reason_id(str(name))
            if rid is None:
                find(str(name))  # KeyError naming the known ids
            else:
                named.append(rid)
        named = list(dict.fromkeys(named))
        sentence, unknown = text, []
    else:
        named, sentence, unknown = split_reasons(text)
    ids = ", ".join(BY_ID)
    look = pointer(ev)

    def refuse(why: str, corrected: float | None = corrected_s) -> Judgement:
        return Judgement(False, named, text, f"refused: {why} ({look})", corrected)

    if unknown:
        return refuse(f"{', '.join(repr(u) for u in unknown)} is not a reason; the reasons: {ids}")
    if is_shrug(sentence) or is_shrug(text):
        return refuse(f"'{text}' is a shrug, not a reason" if text else "no explanation given")
    low = " " + _normal(sentence) + " "
    if any(f" {h} " in low for h in HEDGES):
        return refuse("a hedge is not an explanation: say what the numbers show")
    if not named:
        return refuse(f"name your reasons first, as ids before ':' (one of {ids}), then your working and "
                      f"your corrected time (e.g. '{EXAMPLE}')")
    if corrected_s is None:
        try:
            corrected_s = corrected_from_sentence(sentence)
        except CorrectedError as exc:
            return refuse(str(exc), None)
    else:
        try:
            corrected_s = check_seconds(float(corrected_s))
        except (CorrectedError, TypeError, ValueError) as exc:
            return refuse(str(exc), None)
    if corrected_s is None:
        return refuse(f"no corrected time: derive one with your reasons, a time with a unit (e.g. '{EXAMPLE}')",
                      None)
    contradicted = [f for f in (find(r).allowed(ev) for r in named) if not f.supported]
    if contradicted:
        return refuse("the evidence does not allow it: " + "; ".join(f"{f.reason_id}: {f.why}" for f in contradicted))
    working = sentence.rsplit("=", 1)[0] if "=" in sentence else sentence
    try:
        derived = derive(working, ev, named)
    except RuleError as exc:
        return refuse(str(exc), corrected_s)
    if abs(derived.seconds - corrected_s) > WORKING_TOLERANCE * corrected_s:
        return refuse(f"your working gives {_t(derived.seconds)}, not the {_t(corrected_s)} you wrote", corrected_s)
    measured = ev.measured_seconds
    allowed_band = band(ev, named)
    if _log_off(corrected_s, measured) > math.log(allowed_band):
        return refuse(f"your derivation gives {_t(corrected_s)}, {_off(corrected_s, measured)} measured "
                      f"{_t(measured)}; it must be within {allowed_band:.2f}x")
    if _log_off(corrected_s, measured) >= _log_off(ev.reference_seconds, measured):
        return refuse(f"your derivation gives {_t(corrected_s)}, no closer to measured {_t(measured)} than "
                      f"{_t(ev.reference_seconds)} was")
    terms = ", ".join(f"{q.label} {q.shown}" for q in dict.fromkeys(derived.used))
    why = (f"accepted: {' + '.join(named)}: your derivation from {terms} gives {_t(corrected_s)}; measured "
           f"{_t(measured)} ({_off(corrected_s, measured)} it, within {allowed_band:.2f}x)")
    return Judgement(True, named, text, why, corrected_s, tuple(explanations(ev)))
