"""The misconception catalogue's wrong answers to a lab record's op: its floor problem, on a one-chip
catalogue with the record's own peaks, priced by every classic wrong method (``families.mistakes``).

The judge of an explanation (``generator.explain``) stands on the model alone; the builders of an op's
evidence (``labs.records.evidence``, the miss_reason family) price it here, so the judge can say which
wrong method the learner's number is.
"""

from __future__ import annotations

import dataclasses
import functools

from generator.explain.evidence import MATCH_TOLERANCE, OpEvidence
from generator.model import catalogue, costs
from generator.model.catalogue import Catalogue
from generator.model.units import normalize_dtype
from generator.problems.families import mistakes, ops
from generator.problems.problem import Answer, Problem

RECORD_CHIP = "lab-record"  # the name of the one-chip catalogue a record's own peaks make
RECORD_CASE = "lab-record"  # the op case of the floor problem a record's op makes (no spec case: the record's shape)


def _record_catalogue(ev: OpEvidence) -> Catalogue:
    return _peaks_catalogue(ev.dtype, float(ev.peak_flops_per_s), float(ev.peak_bytes_per_s))


@functools.lru_cache(maxsize=None)  # kept alive: generator.model.catalogue indexes a catalogue by its id()
def _peaks_catalogue(dtype: str, peak_flops_per_s: float, peak_bytes_per_s: float) -> Catalogue:
    """A one-chip catalogue whose chip has the record's peaks (the figures the floor was computed
    from, datasheet or calibrated), so ``generator.problems.misconceptions`` prices its wrong methods on them."""
    cat = catalogue.load()
    base = cat.chips[0]
    source = catalogue.Source("lab-record", "this lab record's own constants", "", "")
    chip = dataclasses.replace(
        base, name=RECORD_CHIP, display="the record's device", kind="tpu", aliases=(), device_kinds=(),
        peak_flops={dtype: catalogue.Figure(peak_flops_per_s, source)},
        # the record's device: its own HBM rate, and no core count borrowed from the chip it is copied from
        figures={**{k: f for k, f in base.figures.items() if k != "tensorcores_per_chip"},
                 "hbm_bytes_per_s": catalogue.Figure(peak_bytes_per_s, source)})
    return catalogue.Catalogue((chip,), cat.sources, cat.facts)


def wrong_methods(ev: OpEvidence) -> tuple[tuple[str, str, float, str], ...]:
    """(misconception id, name, the time that wrong method gives, the step) for this op: the misconception
    catalogue's own wrong answers to this op's floor problem (``generator.problems.families.mistakes.wrong_answers``
    on a floor problem with the record's shape, dtype and peaks); empty when the record lacks them."""
    if not (ev.cost_op and ev.shape) or ev.peak_flops_per_s <= 0 or ev.peak_bytes_per_s <= 0:
        return ()
    try:
        dtype = normalize_dtype(ev.dtype)
        costs.cost(ev.cost_op, tuple(ev.shape), dtype)
    except (ValueError, KeyError, TypeError):
        return ()
    params: ops.FloorParams = {"chip": RECORD_CHIP, "op": ev.cost_op, "case": RECORD_CASE, "shape": list(ev.shape),
                               "dtype": dtype, "quantity": "floor"}
    problem = Problem(family="floor", skill="floor:record", id="floor:record", prompt="",
                      answer=Answer(value=ev.floor_seconds, unit="s"), tolerance=MATCH_TOLERANCE, solution=(),
                      params=dict(params))
    return tuple((w.misconception.id, w.misconception.name, float(w.value), w.step)
                 for w in mistakes.wrong_answers(problem, _record_catalogue(ev))
                 if isinstance(w.value, (int, float)))


def priced(ev: OpEvidence) -> OpEvidence:
    """``ev`` with its ``wrong_methods``: what ``generator.explain`` names when the learner's number is one."""
    return dataclasses.replace(ev, wrong_methods=wrong_methods(ev))
