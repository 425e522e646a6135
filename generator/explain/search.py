"""The derivations the evidence allows, and whether any reaches the measured time.

For a set of reasons, ``candidates`` writes the derivations an expert would write from the op's record:
its bytes over each bandwidth the reasons may use, its FLOPs over each FLOP/s, its exps over the exp
rate, combined by max (or summed), plus the fixed and fresh-output costs the reasons name. Each is
a ``Candidate``: its text, its value and the quantities it uses. ``explanations`` lists the reason
sets with a candidate that the judge's rules accept within the band of measured; ``unexplainable``
says, with true numbers, when none exists: a miss that is a finding about the measurement.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from generator.explain.evidence import CORRECTED_FACTOR, MAX_COMBINED, Finding, OpEvidence
from generator.explain.quantities import REASON_QUANTITIES, Quantity, changes_something, quantities
from generator.explain.reasons import BY_ID, MAX_WIDENING, REASONS, _log_off, _t, band, find
from generator.model.units import fmt

# The measured quantities a derivation may put in each place; which reasons may use each is
# REASON_QUANTITIES's, the judge's own table (never a second copy of it).
_BYTE_COUNTS = ("xla_bytes",)
_BANDWIDTHS = ("level_bytes_per_s", "attained_bytes_per_s", "op_rate_bytes_per_s")
_FLOP_RATES = ("shape_flops_per_s", "attained_flops_per_s", "f32_shape_flops_per_s")
_ADDED = {"fixed_cost_seconds": "fixed-cost", "fresh_output_seconds": "fresh-output"}
# A derivation the search offers is closer to measured than the reference by at least this factor: one
# closer by a rounding hair explains nothing, and written to a few figures it would not be closer at all.
CLOSER_BY = 1.01


@dataclass(frozen=True)
class Candidate:
    """One derivation from the record's quantities: its text, its seconds and the quantities it uses."""

    reasons: tuple[str, ...]
    text: str
    seconds: float
    keys: frozenset[str]


def _term(q: dict[str, Quantity], top: str, bottom: str) -> tuple[str, float, frozenset[str]] | None:
    if top not in q or bottom not in q:
        return None
    return f"{q[top].shown} / {q[bottom].shown}", q[top].value / q[bottom].value, frozenset((top, bottom))


def candidates(ev: OpEvidence, reason_ids: tuple[str, ...]) -> list[Candidate]:
    """The derivations an expert writes for these reasons from this record, each naming at least one
    quantity of every reason (a reason that does no work is not named)."""
    qs = quantities(ev)
    q = {x.key: x for x in qs}
    named = set(reason_ids)
    usable = {k for r in named for k in REASON_QUANTITIES.get(r, ())}
    byte_keys = ["model_bytes"] + [k for k in _BYTE_COUNTS if k in usable]
    bw_keys = ["peak_bytes_per_s"] + [k for k in _BANDWIDTHS if k in usable]
    fr_keys = ["peak_flops_per_s"] + [k for k in _FLOP_RATES if k in usable]
    mem = [t for b in byte_keys for r in bw_keys if (t := _term(q, b, r))]
    comp = [t for r in fr_keys if (t := _term(q, "model_flops", r))]
    exp = [t for t in [_term(q, "exps", "exp_per_s")] if t] if "exp-rate" in named else []
    added = [(q[k].shown, q[k].value, k) for k, r in _ADDED.items() if r in named and k in q]
    if len(added) < sum(1 for r in _ADDED.values() if r in named):
        return []  # a named cost the record does not have
    tail_text = "".join(f" + {text}" for text, _, _ in added)
    tail_s = sum(v for _, v, _ in added)
    tail_keys = frozenset(k for _, _, k in added)
    cores: list[tuple[str, float, frozenset[str]]] = []
    if "floor_seconds" in q and added:
        cores.append((q["floor_seconds"].shown, q["floor_seconds"].value, frozenset({"floor_seconds"})))
    for m, c, e in itertools.product([None, *mem], [None, *comp], [None, *exp]):
        parts = [p for p in (m, c, e) if p is not None]
        if not parts:
            continue
        keys = frozenset().union(*(p[2] for p in parts))
        if len(parts) == 1:
            cores.append(parts[0])
            continue
        cores.append((f"max({', '.join(p[0] for p in parts)})", max(p[1] for p in parts), keys))
        cores.append((" + ".join(p[0] for p in parts), sum(p[1] for p in parts), keys))
    out = []
    for text, seconds, keys in cores:
        used = keys | tail_keys
        if all(any(changes_something(k, qs) for k in used & set(REASON_QUANTITIES.get(r, ()))) for r in reason_ids):
            out.append(Candidate(tuple(reason_ids), text + tail_text, seconds + tail_s, used))
    return out


def _reaches(ev: OpEvidence, reason_ids: tuple[str, ...], seconds: float) -> bool:
    measured = ev.measured_seconds
    return (_log_off(seconds, measured) <= math.log(band(ev, reason_ids))
            and _log_off(seconds, measured) + math.log(CLOSER_BY) <= _log_off(ev.reference_seconds, measured))


def best(ev: OpEvidence, reason_ids: tuple[str, ...]) -> Candidate | None:
    """The candidate of these reasons nearest measured that lands within the band, or None."""
    if not all(find(r).allowed(ev).supported for r in reason_ids):
        return None
    found = [c for c in candidates(ev, reason_ids) if _reaches(ev, reason_ids, c.seconds)]
    return min(found, key=lambda c: _log_off(c.seconds, ev.measured_seconds), default=None)


def explains(ev: OpEvidence, reason_ids: tuple[str, ...] | list[str]) -> bool:
    """Some derivation the named reasons allow lands within the band of measured, closer than the reference."""
    return best(ev, tuple(dict.fromkeys(reason_ids))) is not None


@functools.lru_cache(maxsize=4096)
def _explanations(ev: OpEvidence, most: int) -> tuple[tuple[str, ...], ...]:
    allowed = [r.id for r in REASONS if r.allowed(ev).supported]
    return tuple(combo for k in range(1, most + 1) for combo in itertools.combinations(allowed, k)
                 if best(ev, combo) is not None)


def explanations(ev: OpEvidence, most: int = MAX_COMBINED) -> list[tuple[str, ...]]:
    """Every set of at most ``most`` reasons with a derivation that reaches measured, smallest first."""
    return list(_explanations(ev, most))


def test(reason_id: str, ev: OpEvidence) -> Finding:
    """One reason's finding: allowed by the evidence, and a derivation of it alone (or after
    ``learner-arithmetic``) reaches measured."""
    reason = BY_ID[reason_id]
    allowed = reason.allowed(ev)
    if not allowed.supported:
        return allowed
    combos = [(reason.id,)] + ([("learner-arithmetic", reason.id)] if reason.id != "learner-arithmetic" else [])
    for combo in combos:
        found = best(ev, combo)
        if found is not None:
            return Finding(reason.id, True, f"{allowed.why}; {' + '.join(combo)}: {found.text} = "
                                            f"{_t(found.seconds)} vs measured {_t(ev.measured_seconds)}")
    return Finding(reason.id, False, f"{allowed.why}; but no derivation of it reaches within "
                                     f"{CORRECTED_FACTOR}x of measured {_t(ev.measured_seconds)}")


def assess(ev: OpEvidence) -> list[Finding]:
    """One Finding per reason, in catalogue order (computed when judging; never stored in a record)."""
    return [test(reason.id, ev) for reason in REASONS]


def supported_reasons(ev: OpEvidence) -> list[str]:
    """The reasons that explain the miss alone or with ``learner-arithmetic``."""
    return [f.reason_id for f in assess(ev) if f.supported]


def _streams_at(ev: OpEvidence, rate: float) -> list[str]:
    """The measured levels (and main-memory call sizes) whose rate, within its spread, is ``rate``."""
    out = []
    for name, bytes_per_s, spread in ev.level_rates:
        width = max(float(spread or 0.0), 0.0)
        if bytes_per_s / (1 + width) <= rate <= bytes_per_s * (1 + width):
            out.append(f"{name} ({fmt(bytes_per_s, 'B/s')})")
    return out


def unexplainable(ev: OpEvidence) -> str | None:
    """None when some derivation the evidence allows reaches measured; else one line of true statements
    about why none does (a finding about the measurement, said before any "why?" is asked)."""
    if not ev.hierarchy_measured or not ev.is_miss or explanations(ev):
        return None  # a record without the measured hierarchy is judged as before: asked
    parts = [f"no derivation the evidence allows reaches within {CORRECTED_FACTOR}x of measured "
             f"{_t(ev.measured_seconds)}"]
    if ev.bound == "memory" and ev.model_bytes > 0:
        rate = ev.model_bytes / ev.measured_seconds
        where = _streams_at(ev, rate)
        said = (f"; {fmt(ev.model_bytes, 'B')} in {_t(ev.measured_seconds)} is {fmt(rate, 'B/s')}, which "
                + (f"{', '.join(where)} streams at, but the working set does not live there" if where
                   else "no measured level of this device streams at, within its spread"))
        if ev.level_name and ev.level_bytes_per_s:
            said += f" ({ev.level_name}, which holds the working set, measured {fmt(ev.level_bytes_per_s, 'B/s')})"
        parts.append(said)
    elif ev.model_flops > 0:
        rate = ev.model_flops / ev.measured_seconds
        parts.append(f"; {fmt(ev.model_flops, 'FLOP')} in {_t(ev.measured_seconds)} is {fmt(rate, 'FLOP/s')}")
    spreads = [(name, getattr(ev, f"{key}_spread")) for name, key in
               (("fixed-cost", "fixed_cost"), ("copy", "copy"), ("matmul", "matmul"), ("level", "level"),
                ("shape", "shape"), ("exp", "exp"), ("fresh-output", "fresh_output"), ("op-rate", "op_rate"))]
    loud = [f"the {name} probe's spread was {100 * v:.0f}%" for name, v in spreads if v and v > MAX_WIDENING / 2]
    if loud:
        parts.append(f"; re-measure: {', '.join(loud)}")
    return "".join(parts)
