"""The catalogue of miss reasons (``REASONS``): each a line of data plus its test of the evidence
and its correction of the estimate.

``corrected_time`` applies the named reasons to the estimate; ``band`` is the factor a corrected
time is judged within. The search for explanations is ``generator.explain.search``.
Details: docs/internals.md.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from generator.errors import UsageError
from generator.model import hierarchy
from generator.explain.evidence import (ARITHMETIC_FACTOR, CORRECTED_FACTOR, FORMULA_TOLERANCE,
                                             MATCH_TOLERANCE, MAX_COMBINED, TRAFFIC_FACTOR, Estimate, Finding,
                                             OpEvidence, start)
from generator.model.units import fmt


class UnknownReasonError(UsageError, KeyError):
    """A reason id that is not in the catalogue; the message lists the known ones."""


@dataclass(frozen=True)
class MissReason:
    """A named reason a measurement misses: ``evidence`` says in one line which numbers it needs,
    ``corrected_time`` in words what time it predicts instead; ``check`` says whether the record's
    numbers allow it, ``correct`` applies it to an ``Estimate``."""

    id: str
    meaning: str
    evidence: str
    corrected_time: str
    check: Callable[[OpEvidence], tuple[bool, str]] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]  # None only as a placeholder: every REASONS entry passes one
    correct: Callable[[OpEvidence, Estimate], Estimate] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]  # None as for check
    synonyms: tuple[str, ...] = ()  # other names the learner may give this reason (in ``reasons`` or the prefix)

    def allowed(self, ev: OpEvidence) -> Finding:
        ok, why = self.check(ev)
        return Finding(self.id, bool(ok), why)

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "meaning": self.meaning, "evidence": self.evidence,
                "corrected_time": self.corrected_time}


# --- the evidence each reason needs and its corrected time, one small pair of functions each -----------

def _t(value: float | None) -> str:
    return "n/a" if value is None else fmt(value, "s")


def _probe_ok(ev: OpEvidence, value: float | None, probe: str, unit: str) -> tuple[bool, str]:
    if value is None:
        return False, f"the record has no {probe} probe"
    if not value > 0:
        return False, f"the {probe} probe found nothing beyond the work itself ({fmt(value, unit)})"
    if unit == "s":
        return True, f"the {probe} probe: {fmt(value, unit)} a call beyond its work"
    return True, f"the {probe} probe attains {fmt(value, unit)}"


def matching_misconception(ev: OpEvidence) -> tuple[str, str] | None:
    """(misconception name, step) of the wrong method (``ev.wrong_methods``) that reproduces the learner's
    number, or None."""
    if not ev.predicted_seconds:
        return None
    for _mid, name, value, step in ev.wrong_methods:
        if value > 0 and abs(ev.predicted_seconds - value) <= MATCH_TOLERANCE * value:
            return name, f"{step}: {_t(value)}"
    return None


def _learner_arithmetic(ev: OpEvidence) -> tuple[bool, str]:
    if ev.predicted_seconds is None:
        return False, "no prediction of yours to check"
    off = ev.predicted_seconds / ev.floor_seconds if ev.floor_seconds > 0 else math.inf
    numbers = f"your {_t(ev.predicted_seconds)} vs the record's floor {_t(ev.floor_seconds)} ({off:.3g}x)"
    if 1 / ARITHMETIC_FACTOR <= off <= ARITHMETIC_FACTOR:
        return False, f"{numbers}: your arithmetic gives the floor; the miss is elsewhere"
    match = matching_misconception(ev)
    return True, numbers + (f"; your number matches '{match[0]}' ({match[1]})" if match else "")


def _learner_arithmetic_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, scale=1.0)


def _fixed_cost(ev: OpEvidence) -> tuple[bool, str]:
    return _probe_ok(ev, ev.fixed_cost_seconds, "fixed cost", "s")


def _fixed_cost_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, fixed_s=float(ev.fixed_cost_seconds or 0.0))


def _below_peak(ev: OpEvidence, rate: float | None, peak: float, probe: str, unit: str) -> tuple[bool, str]:
    """A measured rate (a level's bandwidth, a copy or matmul probe) in place of the ``peak`` the floor uses:
    allowed wherever the record measured one (the measurement, not its direction, decides)."""
    ok, why = _probe_ok(ev, rate, probe, unit)
    if not ok or rate is None:
        return False, why
    return True, why + (f", {100 * rate / peak:.0f}% of the {fmt(peak, unit)} the floor uses" if peak > 0 else "")


def _attained_bandwidth(ev: OpEvidence) -> tuple[float | None, str]:
    """The bandwidth below-peak-bandwidth compares with the floor's: on a catalogued chip the copy
    probe (against the datasheet); elsewhere the measured level the op's working set lives in."""
    if not ev.catalogued and ev.level_bytes_per_s:
        return ev.level_bytes_per_s, f"{ev.level_name} copy"
    return ev.attained_bytes_per_s, "copy"


def _attained_compute(ev: OpEvidence) -> tuple[float | None, str]:
    """The FLOP/s below-peak-compute compares with the floor's: on a catalogued chip the matmul probe;
    elsewhere this op's own matmul shape, measured in its dtype."""
    if not ev.catalogued and ev.shape_flops_per_s:
        return ev.shape_flops_per_s, "same-shape matmul"
    return ev.attained_flops_per_s, "matmul"


def _below_peak_bandwidth(ev: OpEvidence) -> tuple[bool, str]:
    rate, probe = _attained_bandwidth(ev)
    return _below_peak(ev, rate, ev.peak_bytes_per_s, probe, "B/s")


def _below_peak_bandwidth_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    rate, _ = _attained_bandwidth(ev)
    return replace(est, bytes_per_s=float(rate or est.bytes_per_s))


def _below_peak_compute(ev: OpEvidence) -> tuple[bool, str]:
    rate, probe = _attained_compute(ev)
    return _below_peak(ev, rate, ev.peak_flops_per_s, probe, "FLOP/s")


def _below_peak_compute_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    rate, _ = _attained_compute(ev)
    return replace(est, flops_per_s=float(rate or est.flops_per_s))


def _cache_level(ev: OpEvidence) -> tuple[bool, str]:
    if not ev.level_name or not ev.level_bytes_per_s:
        return False, "the record has no measured hierarchy level for this op's working set (drill hierarchy)"
    ws = fmt(ev.working_set_bytes, "B") if ev.working_set_bytes else "the inputs"
    if ev.level_main_memory:
        return False, f"the rotated inputs ({ws}) fit no cache level: they stream from {ev.level_name}"
    size = fmt(ev.level_size_bytes, "B") if ev.level_size_bytes else "its size"
    return True, (f"the rotated inputs ({ws}) fit {ev.level_name} ({size}), measured at "
                  f"{fmt(ev.level_bytes_per_s, 'B/s')}")


def _cache_level_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, bytes_per_s=float(ev.level_bytes_per_s or est.bytes_per_s))


SHAPE_RATE_DIFFERS = 0.15  # a shape's measured rate names a reason when this far from the big probe's


def _shape_rate(ev: OpEvidence) -> tuple[bool, str]:
    if ev.cost_op != "matmul":
        return False, "only a matmul has a measured rate of its own shape"
    if not ev.shape_flops_per_s:
        return False, "the record has no measured rate for this matmul shape (drill hierarchy)"
    return True, (f"this {'x'.join(map(str, ev.shape))} {ev.dtype} matmul measured at "
                  f"{fmt(ev.shape_flops_per_s, 'FLOP/s')} vs the {fmt(ev.peak_flops_per_s, 'FLOP/s')} the floor uses")


def _shape_rate_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, flops_per_s=float(ev.shape_flops_per_s or est.flops_per_s))


def _op_rate(ev: OpEvidence) -> tuple[bool, str]:
    if not ev.op_rate_bytes_per_s:
        return False, (f"the record has no streaming rate of {ev.cost_op or ev.op} in {ev.dtype} measured with its "
                       "working set in the same level (drill hierarchy measures one per op kind)")
    where = f" in {ev.op_rate_level}" if ev.op_rate_level else ""
    return True, (f"{ev.cost_op or ev.op} in {ev.dtype} streams at {fmt(ev.op_rate_bytes_per_s, 'B/s')}{where}, "
                  "measured at a size whose working set lives in the same level")


def _op_rate_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    """The bytes at this op kind's own streaming rate."""
    return replace(est, bytes_per_s=float(ev.op_rate_bytes_per_s or est.bytes_per_s))


def _exp_rate(ev: OpEvidence) -> tuple[bool, str]:
    if not ev.exps:
        return False, f"this op computes no exponentials ({ev.cost_op or ev.op})"
    if not ev.exp_per_s:
        return False, f"the record has no measured exp rate in {ev.dtype} (drill hierarchy)"
    return True, (f"{ev.exps:.3g} exps at {_t(1 / ev.exp_per_s)} each (measured in {ev.dtype}: "
                  f"{ev.exp_per_s:.3g} a second) take {_t(ev.exps / ev.exp_per_s)}")


def _exp_rate_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    """The compute term at least the exps at the measured exp rate: no more FLOP/s than lets them run
    (``generator.model.hierarchy.exp_bound_flops_per_s``, as the hierarchy's own prediction caps it)."""
    return replace(est, flops_per_s=hierarchy.exp_bound_flops_per_s(est.flops_per_s, est.flops, ev.exps or 0.0,
                                                                    ev.exp_per_s or 0.0))


def _fresh_output(ev: OpEvidence) -> tuple[bool, str]:
    if ev.fresh_output_seconds is None:
        return False, "the record has no measured fresh-output cost (drill hierarchy)"
    if not ev.fresh_output_seconds > 0:
        return False, "the hierarchy measured no cost for a fresh output of this size"
    return True, (f"its output, written to new memory each call, costs {_t(ev.fresh_output_seconds)} beyond "
                  "writing it in place (the hierarchy's fresh-output probe)")


def _fresh_output_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, fixed_s=est.fixed_s + float(ev.fresh_output_seconds or 0.0))


def _xla_share(ev: OpEvidence) -> str:
    if ev.xla_bytes is None:
        return "the record has no XLA cost analysis (bytes accessed)"
    share = ev.xla_bytes / ev.model_bytes if ev.model_bytes > 0 else math.inf
    return f"XLA's compiled program accesses {fmt(ev.xla_bytes, 'B')}, {share:.2f}x the hand count {fmt(ev.model_bytes, 'B')}"


def _extra_traffic(ev: OpEvidence) -> tuple[bool, str]:
    if ev.xla_bytes is None:
        return False, _xla_share(ev)
    if ev.xla_bytes < TRAFFIC_FACTOR * ev.model_bytes:
        return False, f"{_xla_share(ev)}: under {TRAFFIC_FACTOR}x, not extra traffic"
    ok, why = _probe_ok(ev, ev.attained_bytes_per_s, "copy", "B/s")
    return ok, f"{_xla_share(ev)}; {why}"


def _traffic_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    """XLA's bytes at the copy probe's rate."""
    return replace(est, bytes=float(ev.xla_bytes if ev.xla_bytes is not None else est.bytes),
                   bytes_per_s=float(ev.attained_bytes_per_s or est.bytes_per_s))


def _less_traffic(ev: OpEvidence) -> tuple[bool, str]:
    if ev.xla_bytes is None or ev.xla_bytes * TRAFFIC_FACTOR > ev.model_bytes:
        return False, f"{_xla_share(ev)}: not fewer bytes than counted (a working set in a cache: cache-level)"
    ok, why = _probe_ok(ev, ev.attained_bytes_per_s, "copy", "B/s")
    return ok, f"{_xla_share(ev)}: fewer bytes than counted; {why}"


EMULATED_RATE_SHARE = 0.75  # a dtype measured below this share of f32's rate (same shape) is emulated


def _rate_emulated(ev: OpEvidence) -> bool:
    return bool(ev.dtype != "f32" and ev.shape_flops_per_s and ev.f32_shape_flops_per_s
                and ev.shape_flops_per_s < EMULATED_RATE_SHARE * ev.f32_shape_flops_per_s)


def _emulated_dtype(ev: OpEvidence) -> tuple[bool, str]:
    how = f" ({ev.emulated_from})" if ev.emulated_from else ""
    if _rate_emulated(ev):
        assert ev.shape_flops_per_s and ev.f32_shape_flops_per_s
        return True, (f"this matmul shape measured at {fmt(ev.shape_flops_per_s, 'FLOP/s')} in {ev.dtype} vs "
                      f"{fmt(ev.f32_shape_flops_per_s, 'FLOP/s')} in f32 "
                      f"({100 * ev.shape_flops_per_s / ev.f32_shape_flops_per_s:.0f}%): {ev.dtype} runs slower "
                      "than the f32 it would be upcast to")
    if ev.emulated_dtype is None:
        return False, f"the record does not say whether the compiled program computes {ev.dtype} natively"
    if not ev.emulated_dtype:
        rates = (f"; measured {ev.dtype} {fmt(ev.shape_flops_per_s, 'FLOP/s')} vs f32 "
                 f"{fmt(ev.f32_shape_flops_per_s, 'FLOP/s')} for this shape"
                 if ev.shape_flops_per_s and ev.f32_shape_flops_per_s else "")
        return False, f"the compiled program computes {ev.dtype} natively on {ev.platform}{how}{rates}"
    ok, why = _probe_ok(ev, ev.attained_flops_per_s, "matmul", "FLOP/s")
    return ok, f"the compiled program converts {ev.dtype} to f32 on {ev.platform}{how}; {why} in {ev.dtype} (upcast too)"


def _emulated_dtype_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    """The upcast rate: the FLOPs at this shape's measured rate in this dtype (else the matmul probe's,
    itself upcast), and the converts' traffic (XLA's bytes, when more than counted) at the copy probe's rate."""
    est = replace(est, flops_per_s=float(ev.shape_flops_per_s or ev.attained_flops_per_s or est.flops_per_s))
    if ev.xla_bytes is not None and ev.xla_bytes > est.bytes:
        est = replace(est, bytes=float(ev.xla_bytes), bytes_per_s=float(ev.attained_bytes_per_s or est.bytes_per_s))
    return est


REASONS: tuple[MissReason, ...] = (
    MissReason("learner-arithmetic",
               "your number is not the roofline floor of the record's own counts and peaks: the slip is in the "
               "arithmetic (the misconception catalogue names the wrong method that gives it)",
               "your prediction differs from the record's floor by over 1.5x",
               "the floor itself: max(FLOPs / peak FLOP/s, bytes / peak bytes/s), in place of your number "
               "(other reasons then correct the floor, not your number)",
               _learner_arithmetic, _learner_arithmetic_fix, ("arithmetic", "slip", "typo")),
    MissReason("fixed-cost",
               "a per-call launch/dispatch/sync cost dominates a small op",
               "the fixed cost probe: this op kind at its smallest size, same operand count (device time)",
               "the estimate + the fixed cost (e.g. floor 21 µs + 38 µs per call = 59 µs)",
               _fixed_cost, _fixed_cost_fix, ("launch", "dispatch", "per-call", "overhead-per-call")),
    MissReason("below-peak-bandwidth",
               "a memory-bound op streams at a fraction of the peak bandwidth",
               "a catalogued chip: the copy probe's attained bytes/s below the datasheet's; elsewhere: the measured "
               "level the op's working set lives in, below the bandwidth the floor uses",
               "bytes / that attained bytes/s (in place of the peak)",
               _below_peak_bandwidth, _below_peak_bandwidth_fix, ("bandwidth", "slow-memory")),
    MissReason("below-peak-compute",
               "a compute-bound op reaches a fraction of the peak FLOP/s (padding to the MXU/tile size is a sub-case)",
               "a catalogued chip: the matmul probe's attained FLOP/s below the datasheet's; elsewhere: this "
               "matmul shape's measured rate in its dtype, below the FLOP/s the floor uses",
               "FLOPs / that attained FLOP/s (in place of the peak)",
               _below_peak_compute, _below_peak_compute_fix, ("compute", "utilization", "utilisation", "padding")),
    MissReason("extra-traffic",
               "the compiled program moves more bytes than the hand count: several passes, a transpose, an unfused op",
               "XLA's bytes accessed at least 1.5x the hand count, and a copy probe",
               "XLA's bytes accessed / the copy probe's attained bytes/s",
               _extra_traffic, _traffic_fix, ("traffic", "passes", "unfused")),
    MissReason("less-traffic",
               "fusion or reuse moves fewer bytes than the hand count",
               "XLA's bytes accessed at most 1/1.5 of the hand count",
               "XLA's bytes / the copy probe's bytes/s",
               _less_traffic, _traffic_fix, ("fusion", "fused", "fewer-bytes")),
    MissReason("cache-level",
               "the op's rotated working set fits a cache level, which streams faster (or slower) than main memory",
               "the measured hierarchy (drill hierarchy): the rotated inputs fit a level smaller than main memory",
               "bytes / that level's measured bandwidth (in place of the bandwidth the floor uses)",
               _cache_level, _cache_level_fix, ("cache", "cached", "l1", "l1d", "l2", "l3", "vmem")),
    MissReason("shape-rate",
               "this matmul shape runs at its own rate, not the big square probe's (a skinny or small matmul)",
               "the measured hierarchy's rate for this shape and dtype, over 15% from the FLOP/s the floor uses",
               "FLOPs / this shape's measured FLOP/s",
               _shape_rate, _shape_rate_fix, ("shape", "skinny", "measured-rate")),
    MissReason("op-rate",
               "this op kind streams at its own rate on this device (a reduction that does not vectorize, an "
               "elementwise op on one thread): not the copy's",
               "the hierarchy's streaming rate of this op kind in its dtype, measured with its working set in the "
               "same level as the op's",
               "bytes / this op kind's streaming rate",
               _op_rate, _op_rate_fix, ("own-rate", "probe-rate")),
    MissReason("exp-rate",
               "the op's exponentials bound it: on this device an exp costs many FLOPs' time (a softmax on a CPU)",
               "the op computes exponentials (one per softmax element), and the measured hierarchy has the exp "
               "rate in its dtype",
               "the larger of the estimate's compute time and exps / the measured exp rate, with its memory time",
               _exp_rate, _exp_rate_fix, ("exp", "exps", "exponentials", "transcendentals", "exp-bound")),
    MissReason("fresh-output",
               "the op writes its output to freshly allocated memory each call, which costs page faults and "
               "zeroing beyond the traffic (a CPU output of a few MiB)",
               "the measured hierarchy's fresh-output probe: a rotated copy into a new output, less the same in place",
               "the estimate + that extra time, scaled to the op's output bytes",
               _fresh_output, _fresh_output_fix, ("allocation", "page-faults", "first-touch", "fresh")),
    MissReason("emulated-dtype",
               "the device has no native arithmetic for the dtype: the compiled program converts it, or it runs "
               "well below f32's rate",
               "converts in the optimized HLO for the op's dtype, or this shape measured in the dtype below "
               f"{EMULATED_RATE_SHARE:.0%} of f32's rate",
               "FLOPs at the dtype's measured rate (this shape's, else the matmul probe's), with the converts' "
               "traffic (XLA's bytes) at the copy probe's rate",
               _emulated_dtype, _emulated_dtype_fix, ("upcast", "emulated", "emulation")),
)
BY_ID = {r.id: r for r in REASONS}
BY_NAME = {name: r.id for r in REASONS for name in (r.id, *r.synonyms)}


def find(reason_id: str) -> MissReason:
    """The reason with this id; ``UnknownReasonError`` (a ``KeyError``) naming the known ids for an unknown one."""
    try:
        return BY_ID[reason_id]
    except KeyError:
        raise UnknownReasonError(f"unknown miss reason '{reason_id}'; known: {', '.join(BY_ID)}") from None


def corrected_time(ev: OpEvidence, reason_ids: Iterable[str]) -> float:
    """The corrected time the named reasons give from the record's numbers, applied in catalogue order
    (``learner-arithmetic`` first: the other reasons then correct the floor)."""
    named = set(reason_ids)
    est = start(ev)
    for reason in REASONS:
        if reason.id in named:
            est = reason.correct(ev, est)
    return est.seconds


def _log_off(value: float, measured: float) -> float:
    return abs(math.log(value / measured)) if value > 0 and measured > 0 else math.inf


MAX_WIDENING = 0.5  # a probe's spread widens the accepted band by at most this share

# The probes each reason's corrected time rests on: their spreads widen the band it is judged in.
_SPREADS: dict[str, tuple[str, ...]] = {
    "fixed-cost": ("fixed_cost_spread",),
    "below-peak-bandwidth": ("copy_spread", "level_spread"),
    "below-peak-compute": ("matmul_spread", "shape_spread"),
    "extra-traffic": ("copy_spread",),
    "less-traffic": ("copy_spread",),
    "cache-level": ("level_spread",),
    "shape-rate": ("shape_spread",),
    "op-rate": ("op_rate_spread",),
    "exp-rate": ("exp_spread",),
    "fresh-output": ("fresh_output_spread",),
    "emulated-dtype": ("matmul_spread", "shape_spread"),
}


def spread(ev: OpEvidence, reason_ids: Iterable[str]) -> float:
    """The largest spread (IQR / median) of the probes the named reasons rest on, at most MAX_WIDENING."""
    found = [getattr(ev, name) for r in reason_ids for name in _SPREADS.get(r, ())]
    return min(MAX_WIDENING, max([float(x) for x in found if x is not None and x > 0] or [0.0]))


def band(ev: OpEvidence, reason_ids: Iterable[str]) -> float:
    """The factor a corrected time must land within of measured: 1.5x, widened by the probes' spread
    (a noisy probe widens the band; it never vetoes its reason)."""
    return CORRECTED_FACTOR * (1 + spread(ev, reason_ids))
