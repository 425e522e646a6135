"""The quantities of one op's record that a derivation may use, and which reason may use each.

A quantity is one of the op's counts (FLOPs and bytes as hand-counted or as XLA counted, exps,
working-set bytes, output bytes) or the floor's own constants, which every reason may use, or one
of the device's measured rates and costs, which only the reasons that name it may use
(``REASON_QUANTITIES``). The measured time and the learner's own prediction are never quantities.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.explain.derivation import Dims, parse_unit
from generator.explain.evidence import OpEvidence
from generator.model.units import si

# (OpEvidence field, what it is, unit): the counts and the floor's constants, usable under any reason.
COUNTS: tuple[tuple[str, str, str], ...] = (
    ("model_flops", "FLOPs, hand-counted", "FLOP"),
    ("model_bytes", "bytes, hand-counted", "B"),
    ("xla_flops", "FLOPs, as XLA counted", "FLOP"),
    ("xla_bytes", "bytes, as XLA counted", "B"),
    ("exps", "exponentials", "exps"),
    ("working_set_bytes", "the rotated working set", "B"),
    ("output_bytes", "the output's bytes", "B"),
)
FLOOR: tuple[tuple[str, str, str], ...] = (
    ("floor_seconds", "the floor", "s"),
    ("peak_flops_per_s", "the FLOP/s the floor uses", "FLOP/s"),
    ("peak_bytes_per_s", "the bandwidth the floor uses", "B/s"),
)
# The device's measured rates and costs: each usable only under the reasons that name it.
MEASURED: tuple[tuple[str, str, str], ...] = (
    ("fixed_cost_seconds", "this op kind's fixed cost", "s"),
    ("level_bytes_per_s", "the bandwidth of the level that holds the working set", "B/s"),
    ("attained_bytes_per_s", "the copy probe's bandwidth", "B/s"),
    ("attained_flops_per_s", "the matmul probe's FLOP/s", "FLOP/s"),
    ("shape_flops_per_s", "this matmul shape's rate in its dtype", "FLOP/s"),
    ("f32_shape_flops_per_s", "this matmul shape's rate in f32", "FLOP/s"),
    ("exp_per_s", "the exp rate in its dtype", "exp/s"),
    ("seconds_per_exp", "one exp's time in its dtype", "s/exp"),
    ("op_rate_bytes_per_s", "this op kind's streaming rate at its working set's level", "B/s"),
    ("fresh_output_seconds", "the fresh-output cost of its output", "s"),
)

# The quantities each reason may use beyond the counts and the floor's constants.
REASON_QUANTITIES: dict[str, tuple[str, ...]] = {
    "learner-arithmetic": ("floor_seconds", "peak_flops_per_s", "peak_bytes_per_s"),
    "fixed-cost": ("fixed_cost_seconds",),
    "below-peak-bandwidth": ("level_bytes_per_s", "attained_bytes_per_s"),
    "below-peak-compute": ("shape_flops_per_s", "attained_flops_per_s"),
    "extra-traffic": ("xla_bytes", "level_bytes_per_s", "attained_bytes_per_s"),
    "less-traffic": ("xla_bytes", "level_bytes_per_s", "attained_bytes_per_s"),
    "cache-level": ("level_bytes_per_s",),
    "shape-rate": ("shape_flops_per_s",),
    "op-rate": ("op_rate_bytes_per_s",),
    "exp-rate": ("exp_per_s", "seconds_per_exp"),
    "fresh-output": ("fresh_output_seconds",),
    "emulated-dtype": ("shape_flops_per_s", "f32_shape_flops_per_s", "attained_flops_per_s", "xla_bytes"),
}
# Times a derivation adds: each at most once (a cost counted twice is counted wrong).
ADDED_ONCE = frozenset({"fixed_cost_seconds", "fresh_output_seconds", "floor_seconds"})
# The op's work: a derivation rests on at least one of these (its bytes, FLOPs or exps, or the floor).
WORK_TERMS = frozenset({"model_bytes", "xla_bytes", "working_set_bytes", "output_bytes", "model_flops", "xla_flops",
                        "exps", "floor_seconds"})
MATCH = 0.01  # a number of the working is a record's quantity within 1% of it (as printed, 3-4 figures)


@dataclass(frozen=True)
class Quantity:
    """One quantity of an op's record: the OpEvidence field, what it is, its value (SI) and unit."""

    key: str
    label: str
    value: float
    unit: str

    @property
    def dims(self) -> Dims:
        parsed = parse_unit(self.unit)
        assert parsed is not None, self.unit
        return parsed[1]

    @property
    def shown(self) -> str:
        """The quantity as the evidence table prints it (4 figures, SI prefix)."""
        return si(self.value, self.unit, 4)

    @property
    def free(self) -> bool:
        """Usable under any reason: a count or one of the floor's own constants."""
        return self.key in _FREE


_FREE = frozenset(k for k, _, _ in (*COUNTS, *FLOOR))
_ALL = (*COUNTS, *FLOOR, *MEASURED)
LABELS = {k: label for k, label, _ in _ALL}


def quantities(ev: OpEvidence) -> list[Quantity]:
    """Every quantity this op's record has (positive and finite), counts first."""
    out = []
    for key, label, unit in _ALL:
        value = getattr(ev, key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf"):
            out.append(Quantity(key, label, float(value), unit))
    return out


def allowed_keys(reason_ids: list[str]) -> set[str]:
    """The quantities the named reasons may use: the counts and the floor's constants, and each one's own."""
    keys = set(_FREE)
    for rid in reason_ids:
        keys.update(REASON_QUANTITIES.get(rid, ()))
    return keys


_XLA_COUNTS = {"xla_bytes": "model_bytes", "xla_flops": "model_flops"}  # XLA's count, and the hand count it replaces


def changes_something(key: str, qs: list[Quantity]) -> bool:
    """Whether using quantity ``key`` changes the floor's arithmetic: a rate or cost that is not one of the
    floor's own constants (a copy probe that is the bandwidth the floor uses changes nothing), or XLA's
    count where it differs from the hand count. The floor's own constants change the learner's arithmetic,
    so they always do."""
    by_key = {q.key: q for q in qs}
    mine = by_key.get(key)
    if mine is None:
        return False
    if key in _XLA_COUNTS:
        hand = by_key.get(_XLA_COUNTS[key])
        return hand is None or abs(hand.value - mine.value) > MATCH * hand.value
    if mine.free:
        return True
    return not any(q.free and q.dims == mine.dims and abs(q.value - mine.value) <= MATCH * mine.value for q in qs)


def matches(value: float, dims: Dims, qs: list[Quantity]) -> list[Quantity]:
    """The quantities a number of the working is (same dims, within ``MATCH``)."""
    return [q for q in qs if q.dims == dims and abs(value - q.value) <= MATCH * q.value]
