"""Workings written from a record's numbers as a learner copies them: the honest ones an expert writes,
the games a guesser tries, and the brute force of cycling reason ids with the measured time.

Written from the templates below, never from the search (``search.candidates``), so the judge is held
to workings it did not produce. ``tests/labs/test_explain_held_out.py`` and ``bench/bench_explainable.py``
run them over every miss of the CPU records (this machine's and the Xeon's, held out).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from generator.explain.derivation import DerivationError, evaluate
from generator.explain.evidence import OpEvidence
from generator.explain.reasons import BY_ID
from generator.model.units import fmt


@dataclass(frozen=True)
class Working:
    """One working for one miss: its text (reasons, working, '=', stated time) and what kind it is."""

    kind: str
    text: str


def _n(value: float | None, unit: str) -> str | None:
    """A record's number as the evidence table prints it (3 figures), or None where the record lacks it."""
    return fmt(value, unit) if value else None


def _stated(working: str) -> str | None:
    """The working's own value, printed as a learner writes the result (4 figures), or None."""
    try:
        value, _ = evaluate(working)
    except DerivationError:
        return None
    return f"{value.value * 1e6:.4g} us"


def honest(ev: OpEvidence) -> list[Working]:
    """What an expert writes for this op from the record's numbers, one working per applicable template."""
    b, f = _n(ev.model_bytes, "B"), _n(ev.model_flops, "FLOP")
    level, fixed = _n(ev.level_bytes_per_s, "B/s"), _n(ev.fixed_cost_seconds, "s")
    copy, peak_b = _n(ev.attained_bytes_per_s, "B/s"), _n(ev.peak_bytes_per_s, "B/s")
    shape, matmul = _n(ev.shape_flops_per_s, "FLOP/s"), _n(ev.attained_flops_per_s, "FLOP/s")
    exps, exp_rate = _n(ev.exps, "exps"), _n(ev.exp_per_s, "exp/s")
    fresh, op_rate = _n(ev.fresh_output_seconds, "s"), _n(ev.op_rate_bytes_per_s, "B/s")
    xla, floor = _n(ev.xla_bytes, "B"), _n(ev.floor_seconds, "s")
    templates: list[tuple[str, tuple[str | None, ...]]] = [
        ("fixed-cost: {floor} + {fixed}", (floor, fixed)),
        ("below-peak-bandwidth: {b} / {level}", (b, level)),
        ("below-peak-bandwidth + fixed-cost: {b} / {level} + {fixed}", (b, level, fixed)),
        ("below-peak-bandwidth + fixed-cost: {b} / {copy} + {fixed}", (b, copy, fixed) if copy != peak_b else (None,)),
        ("below-peak-bandwidth + fixed-cost + fresh-output: {b} / {level} + {fixed} + {fresh}", (b, level, fixed, fresh)),
        ("cache-level + fixed-cost: {b} / {level} + {fixed}", (b, level, fixed) if not ev.level_main_memory else (None,)),
        ("op-rate: {b} / {op_rate}", (b, op_rate)),
        ("op-rate + fixed-cost: {b} / {op_rate} + {fixed}", (b, op_rate, fixed)),
        ("exp-rate + fixed-cost: {exps} / {exp_rate} + {fixed}", (exps, exp_rate, fixed)),
        ("exp-rate + below-peak-bandwidth + fixed-cost: max({b} / {level}, {exps} / {exp_rate}) + {fixed}",
         (b, level, exps, exp_rate, fixed)),
        ("below-peak-compute: {f} / {shape}", (f, shape)),
        ("shape-rate: {f} / {shape}", (f, shape)),
        ("below-peak-compute: {f} / {matmul}", (f, matmul)),
        ("emulated-dtype: {f} / {shape}", (f, shape)),
        ("extra-traffic: {xla} / {level}", (xla, level)),
    ]
    names = dict(b=b, f=f, level=level, fixed=fixed, copy=copy, shape=shape, matmul=matmul, exps=exps,
                 exp_rate=exp_rate, fresh=fresh, op_rate=op_rate, xla=xla, floor=floor)
    out = []
    for template, needs in templates:
        if not all(needs):
            continue
        head, working = template.split(": ", 1)
        if not all(BY_ID[r.strip()].allowed(ev).supported for r in head.split("+")):
            continue  # an expert does not name a reason the evidence rules out
        working = working.format(**names)
        stated = _stated(working)
        if stated:
            out.append(Working("honest", f"{head}: {working} = {stated}"))
    return out


def games(ev: OpEvidence) -> list[Working]:
    """Workings that must never pass: number lists, words with one record number, a bare X = X, the fixed
    cost counted twice (the prediction already holds it, or twice over), and dimensionally wrong ones."""
    b, level, fixed = _n(ev.model_bytes, "B"), _n(ev.level_bytes_per_s, "B/s"), _n(ev.fixed_cost_seconds, "s")
    measured, mine = fmt(ev.measured_seconds, "s"), _n(ev.predicted_seconds, "s")
    out = []
    for rid in BY_ID:
        out.append(Working("words", f"{rid}: lorem ipsum {b} dolor = {measured}"))
        out.append(Working("bare", f"{rid}: {measured} = {measured}"))
        if level and fixed:
            out.append(Working("list", f"{rid}: {b} {level} {fixed} = {measured}"))
            out.append(Working("list", f"{rid}: {b}, {level}, {fixed} = {measured}"))
            out.append(Working("dimensions", f"{rid}: {b} x {level} + {fixed} = {measured}"))
            out.append(Working("dimensions", f"{rid}: {b} + {fixed} = {measured}"))
    if fixed:
        out.append(Working("bare", f"fixed-cost: {fixed} = {measured}"))
        if mine and ev.predicted_seconds and abs(ev.predicted_seconds / ev.floor_seconds - 1) > 0.01:
            # the prediction already holds a fixed cost (it is not the floor): adding another counts it twice
            out.append(Working("twice", f"fixed-cost: {mine} + {fixed} = {_stated(f'{mine} + {fixed}')}"))
        if level:
            twice = f"{b} / {level} + {fixed} + {fixed}"
            out.append(Working("twice", f"below-peak-bandwidth + fixed-cost: {twice} = {_stated(twice)}"))
    return out


def brute(ev: OpEvidence) -> list[Working]:
    """Cycling the reason ids and their pairs, each with the measured time, written as a guesser does."""
    measured = fmt(ev.measured_seconds, "s")
    out = []
    for k in (1, 2):
        for combo in itertools.combinations(BY_ID, k):
            head = " + ".join(combo)
            out.append(Working("brute", f"{head}: = {measured}"))
            out.append(Working("brute", f"{head}: {measured} = {measured}"))
    return out
