"""Judging one explanation of a miss against the record's evidence.

``judge`` accepts a corrected estimate when the working uses the record's numbers and its own
arithmetic gives the corrected time, every named reason is allowed and does some of the work,
and the corrected time is within the band of measured, closer than the prediction and within
15% of what the named reasons give. A refusal points at the numbers, never at the answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from generator.miss_reasons.evidence import FORMULA_TOLERANCE, OpEvidence
from generator.miss_reasons.reading import (HEDGES, WORKING_TOLERANCE, CorrectedError, _normal, check_seconds,
                                            corrected_from_sentence, is_shrug, needed_numbers, reason_id,
                                            split_reasons, uses_record_numbers, working_seconds)
from generator.miss_reasons.reasons import (BY_ID, _idle, _log_off, _t, band, corrected_time, explanations, find)
from generator.units import fmt

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
    """What to look at for this op: the numbers the reasons are decided on (not the answer)."""
    parts = [f"measured {_t(ev.measured_seconds)}", f"floor {_t(ev.floor_seconds)} ({ev.bound}-bound; "
             f"{fmt(ev.model_flops, 'FLOP')}, {fmt(ev.model_bytes, 'B')} counted)"]
    if ev.predicted_seconds:
        parts.append(f"your {_t(ev.predicted_seconds)}")
    parts.append(f"fixed cost {_t(ev.fixed_cost_seconds)}")
    if ev.xla_bytes is not None:
        parts.append(f"XLA bytes {fmt(ev.xla_bytes, 'B')}")
    if ev.attained_bytes_per_s is not None:
        parts.append(f"copy probe {fmt(ev.attained_bytes_per_s, 'B/s')} vs peak {fmt(ev.peak_bytes_per_s, 'B/s')}")
    if ev.attained_flops_per_s is not None:
        parts.append(f"matmul probe {fmt(ev.attained_flops_per_s, 'FLOP/s')} vs peak "
                     f"{fmt(ev.peak_flops_per_s, 'FLOP/s')}")
    if ev.noisy_probes:
        parts.append(f"noisy probes: {', '.join(ev.noisy_probes)}")
    if ev.emulated_dtype is not None:
        parts.append(f"{ev.dtype} {'converted to f32' if ev.emulated_dtype else 'native'} in the compiled program")
    if ev.working_set_bytes and ev.level_name and ev.level_bytes_per_s:
        parts.append(f"rotated inputs {fmt(ev.working_set_bytes, 'B')} live in {ev.level_name}, measured at "
                     f"{fmt(ev.level_bytes_per_s, 'B/s')}")
    elif ev.working_set_bytes and ev.cache_bytes:
        parts.append(f"rotated inputs {fmt(ev.working_set_bytes, 'B')} vs cache {fmt(ev.cache_bytes, 'B')}")
    if ev.shape_flops_per_s:
        parts.append(f"this shape measured at {fmt(ev.shape_flops_per_s, 'FLOP/s')} in {ev.dtype}"
                     + (f", {fmt(ev.f32_shape_flops_per_s, 'FLOP/s')} in f32" if ev.f32_shape_flops_per_s else ""))
    return "look at: " + "; ".join(parts)


EXAMPLE = "fixed-cost: 21 µs floor + 38 µs per call = 59 µs"


def _off(value: float, measured: float) -> str:
    r = value / measured
    return f"{r:.2f}x above" if r >= 1 else f"{1 / r:.2f}x below"


def judge(text: str, ev: OpEvidence, reasons: list[str] | None = None,
          corrected_s: float | None = None) -> Judgement:
    """Judge one explanation of a miss. The learner names the reasons: ``reasons`` (ids or synonyms),
    else the names before the sentence's first ':' ("cache-level: ..."; ``split_reasons``); no word
    elsewhere in the sentence adds or denies one. The corrected time is ``corrected_s``, else the time
    after the sentence's last '='. Accepted when the sentence's working uses a number of the record that
    the named reasons need (within 2%), its own arithmetic (where it shows some) gives the corrected
    time, every named reason is allowed by the evidence and does some of the work, and the corrected
    time is within the band of measured (1.5x, widened by the probes' spread), closer than the
    reference and within 15% of what the named reasons give from the record's numbers. Refusals point
    at the numbers, never at the answer. KeyError for an unknown reason name in ``reasons``."""
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
        return refuse(f"no corrected time: re-predict with your reason, a time with a unit "
                      f"(e.g. '{EXAMPLE}')", None)
    contradicted = [f for f in (find(r).allowed(ev) for r in named) if not f.supported]
    if contradicted and not needed_numbers(ev, named):  # nothing to quote: say why the evidence refuses it
        return refuse("the evidence contradicts it: " + "; ".join(f"{f.reason_id}: {f.why}" for f in contradicted))
    working = sentence.rsplit("=", 1)[0] if "=" in sentence else sentence
    if not uses_record_numbers(working, ev, named):
        rest = "rests" if len(named) == 1 else "rest"
        return refuse(f"your working uses none of this record's numbers that {' + '.join(named)} {rest} on: "
                      "show the arithmetic with them", corrected_s)
    shown = working_seconds(working)
    if shown is not None and abs(shown - corrected_s) > WORKING_TOLERANCE * shown:
        return refuse(f"your working gives {_t(shown)}, not the {_t(corrected_s)} you wrote", corrected_s)
    contradicted = [f for f in (find(r).allowed(ev) for r in named) if not f.supported]
    if contradicted:
        return refuse("the evidence contradicts it: " + "; ".join(f"{f.reason_id}: {f.why}" for f in contradicted))
    measured = ev.measured_seconds
    allowed_band = band(ev, named)
    if _log_off(corrected_s, measured) > math.log(allowed_band):
        return refuse(f"your corrected {_t(corrected_s)} is {_off(corrected_s, measured)} measured "
                      f"{_t(measured)}; it must be within {allowed_band:.2f}x")
    if _log_off(corrected_s, measured) >= _log_off(ev.reference_seconds, measured):
        return refuse(f"your corrected {_t(corrected_s)} is no closer to measured {_t(measured)} than "
                      f"{_t(ev.reference_seconds)} was")
    # The named reasons correct the learner's own arithmetic; a learner whose prediction was the floor
    # (within ARITHMETIC_FACTOR) may also redo it from the record's numbers, i.e. correct the floor itself.
    options = [corrected_time(ev, named)]
    if "learner-arithmetic" not in named and not find("learner-arithmetic").allowed(ev).supported:
        options.append(corrected_time(ev, ["learner-arithmetic", *named]))
    tool = min(options, key=lambda t: abs(corrected_s - t) / t)
    if abs(corrected_s - tool) > FORMULA_TOLERANCE * tool:
        return refuse(f"{' + '.join(named)} applied to this record's numbers do not give {_t(corrected_s)} "
                      f"(more than {100 * FORMULA_TOLERANCE:.0f}% apart; the formulas: drill miss-reasons)")
    idle = _idle(ev, named)
    if idle and len(named) > 1:
        return refuse(f"{', '.join(idle)} changes the estimate by under {100 * FORMULA_TOLERANCE:.0f}% here: "
                      "name only the reasons that do the work")
    allowed = "; ".join(f"{r}: {find(r).allowed(ev).why}" for r in named)
    why = (f"accepted: {' + '.join(named)} give{'s' if len(named) == 1 else ''} {_t(tool)} from this record's numbers, your {_t(corrected_s)}; "
           f"measured {_t(measured)} ({_off(corrected_s, measured)} it); {allowed}")
    return Judgement(True, named, text, why, corrected_s, tuple(explanations(ev)))
