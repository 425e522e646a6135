"""Miss reasons: the concrete reasons a measured time misses its prediction by more than 2x.

"Explain every miss" is the third half of the course's habit (predict, measure,
explain). An explanation is a *corrected estimate*: the learner names the effect
(a reason id, or words), re-predicts with it (a time with a unit) and says why in
a sentence. Each ``MissReason`` is data (an id, one line of meaning, one line
saying which numbers it needs, one line giving its corrected time in words) plus
two small functions of an ``OpEvidence`` (one op of one lab record): ``check``,
whether the record's numbers allow the reason at all (a noisy probe, a dtype the
compiled program computes natively ... rule it out), and ``correct``, how the
reason changes the estimate (``Estimate``: the learner's arithmetic, the FLOPs
and bytes, the rates they run at, the fixed cost). Reasons compose: naming
``learner-arithmetic`` and ``fixed-cost`` gives the right floor plus the fixed cost.

``judge`` accepts an explanation when its corrected time is within 1.5x of
measured and closer than the original prediction, agrees within 15% with the
corrected time the named reasons give from the record's own numbers, every
named reason is allowed by the evidence and changes that time, and the sentence
says why (not a shrug). A refusal says which way the corrected time is off and
by how much, and names the numbers to look at, never the reason or number that
would be accepted. ``supported_reasons`` is computed when judging, never stored.

Pure Python (no jax): the lab (``labs.evidence``) builds ``OpEvidence`` from a
record; ``drill miss-reasons`` lists the catalogue.
Units: seconds, bytes, FLOPs, bytes/s, FLOP/s.

One module for one job (over 400 lines): the catalogue of reasons, each a line of data and
its one test of the evidence, and ``judge``, which reads them all.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

from generator import costs, roofline
from generator import misconceptions
from generator.units import fmt, normalize_dtype

if TYPE_CHECKING:  # annotations only: the catalogue is imported where a record's one is built
    from generator.catalogue import Catalogue

WITHIN_FACTOR = 2.0  # a miss is a disagreement over 2x (Can-you item 6, GATE 00)
CORRECTED_FACTOR = 1.5  # an accepted corrected estimate is within 1.5x of measured
FORMULA_TOLERANCE = 0.15  # ... and within 15% of the corrected time its reasons give from the record
TRAFFIC_FACTOR = 1.5  # XLA's byte count differs from the hand count by this much or more
ARITHMETIC_FACTOR = 1.5  # a prediction this far from the record's own floor is an arithmetic slip
MATCH_TOLERANCE = 0.10  # a wrong method reproduces the learner's number within 10%
MAX_SECONDS = 86400.0  # a corrected time over a day is not an estimate of one op
MAX_COMBINED = 3  # supported_reasons looks for explanations naming at most this many reasons


@dataclass(frozen=True)
class OpEvidence:
    """One op of one lab record: every number from the record itself, SI units.

    ``predicted_seconds`` is the learner's prediction (None: none written); the
    reference is then the model's floor. ``bound`` is the roofline verdict of the
    model ("compute" or "memory"). ``noisy_probes`` names the probes whose runs
    were still noisy after one re-measurement ("fixed cost", "copy", "matmul"):
    their spreads widen the band a corrected time is judged in. ``emulated_dtype`` comes from the compiled
    program (``emulated_from`` says how); ``working_set_bytes`` is the rotated
    inputs' total and ``cache_bytes`` the largest cache level the device reports.
    """

    op: str
    bound: str
    platform: str
    dtype: str
    predicted_seconds: float | None
    measured_seconds: float
    floor_seconds: float
    model_flops: float
    model_bytes: float
    xla_flops: float | None
    xla_bytes: float | None
    fixed_cost_seconds: float | None
    attained_bytes_per_s: float | None
    attained_flops_per_s: float | None
    peak_bytes_per_s: float
    peak_flops_per_s: float
    emulated_dtype: bool | None
    prediction_text: str = ""
    cost_op: str = ""  # generator.costs op name ("matmul", "add", ...) for the misconception check
    shape: tuple[int, ...] = ()  # the op's shape as generator.costs counts it
    lacking: tuple[str, ...] = field(default=())  # evidence the record does not have (older schema)
    noisy_probes: tuple[str, ...] = field(default=())
    emulated_from: str = ""
    working_set_bytes: float | None = None
    cache_bytes: float | None = None
    # The measured hierarchy (generator.hierarchy, stored in the record's probes): the level the rotated
    # working set fits, this op's matmul shape measured in its dtype and in f32, and each probe's spread.
    level_name: str = ""
    level_size_bytes: float | None = None
    level_bytes_per_s: float | None = None
    level_main_memory: bool = False
    level_spread: float | None = None
    shape_flops_per_s: float | None = None
    shape_spread: float | None = None
    f32_shape_flops_per_s: float | None = None
    catalogued: bool = False  # the floor's peaks are a catalogued chip's datasheet
    hierarchy_measured: bool = False  # the record holds a measured hierarchy (what ``unexplainable`` needs)
    fixed_cost_spread: float | None = None
    copy_spread: float | None = None
    matmul_spread: float | None = None

    @property
    def reference_seconds(self) -> float:
        """What the measurement is compared with: the learner's prediction, else the floor."""
        return self.predicted_seconds if self.predicted_seconds else self.floor_seconds

    @property
    def ratio(self) -> float:
        """measured / reference (3.0: three times slower than predicted)."""
        ref = self.reference_seconds
        return self.measured_seconds / ref if ref > 0 else math.inf

    @property
    def is_miss(self) -> bool:
        return not (1 / WITHIN_FACTOR <= self.ratio <= WITHIN_FACTOR)

    @property
    def slower(self) -> bool:
        """The measurement took longer than predicted."""
        return self.ratio > 1

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("shape", "lacking", "noisy_probes"):
            out[name] = list(out[name])
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "OpEvidence":
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["shape"] = tuple(int(x) for x in kwargs.get("shape") or ())
        kwargs["lacking"] = tuple(str(x) for x in kwargs.get("lacking") or ())
        kwargs["noisy_probes"] = tuple(str(x) for x in kwargs.get("noisy_probes") or ())
        return cls(**kwargs)


@dataclass(frozen=True)
class Estimate:
    """A time estimate as the reasons correct it:
    ``scale * max(flops / flops_per_s, bytes / bytes_per_s) + fixed_s``.

    It starts as the learner's own arithmetic: the model's floor terms scaled by
    prediction / floor (``scale``); each named reason changes one part of it."""

    scale: float
    flops: float
    flops_per_s: float
    bytes: float
    bytes_per_s: float
    fixed_s: float = 0.0

    @property
    def seconds(self) -> float:
        t_math = self.flops / self.flops_per_s if self.flops_per_s > 0 else 0.0
        t_mem = self.bytes / self.bytes_per_s if self.bytes_per_s > 0 else 0.0
        return self.scale * roofline.floor_seconds(t_math, t_mem) + self.fixed_s


def start(ev: OpEvidence) -> Estimate:
    """The estimate before any reason: the prediction (the floor when there is none)."""
    scale = ev.predicted_seconds / ev.floor_seconds if ev.predicted_seconds and ev.floor_seconds > 0 else 1.0
    return Estimate(scale, ev.model_flops, ev.peak_flops_per_s, ev.model_bytes, ev.peak_bytes_per_s)


@dataclass(frozen=True)
class Finding:
    """What one reason's test says about one op: supported or not, and the deciding numbers."""

    reason_id: str
    supported: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"reason_id": self.reason_id, "supported": self.supported, "why": self.why}


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

    def test(self, ev: OpEvidence) -> Finding:
        """Supported: allowed by the evidence, and alone or after ``learner-arithmetic`` its corrected
        time lands within 1.5x of measured."""
        allowed = self.allowed(ev)
        if not allowed.supported:
            return allowed
        combos = [(self.id,)] + ([("learner-arithmetic", self.id)] if self.id != "learner-arithmetic" else [])
        for combo in combos:
            if explains(ev, combo):
                t = corrected_time(ev, combo)
                return Finding(self.id, True, f"{allowed.why}; {' + '.join(combo)} gives {_t(t)} vs measured "
                                              f"{_t(ev.measured_seconds)}")
        return Finding(self.id, False, f"{allowed.why}; but it does not bring the estimate within "
                                       f"{CORRECTED_FACTOR}x of measured {_t(ev.measured_seconds)}")

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


RECORD_CHIP = "lab-record"  # the name of the one-chip catalogue a record's own peaks make


def _record_catalogue(ev: OpEvidence) -> Catalogue:
    return _peaks_catalogue(ev.dtype, float(ev.peak_flops_per_s), float(ev.peak_bytes_per_s))


@functools.lru_cache(maxsize=None)  # kept alive: generator.catalogue indexes a catalogue by its id()
def _peaks_catalogue(dtype: str, peak_flops_per_s: float, peak_bytes_per_s: float) -> Catalogue:
    """A one-chip catalogue whose chip has the record's peaks (the figures the floor was computed
    from, datasheet or calibrated), so ``generator.misconceptions`` prices its wrong methods on them."""
    import dataclasses
    from types import SimpleNamespace

    from generator import catalogue

    ev = SimpleNamespace(dtype=dtype, peak_flops_per_s=peak_flops_per_s, peak_bytes_per_s=peak_bytes_per_s)

    cat = catalogue.load()
    base = cat.chips[0]
    source = catalogue.Source("lab-record", "this lab record's own constants", "", "")
    chip = dataclasses.replace(
        base, name=RECORD_CHIP, display="the record's device", kind="tpu", aliases=(), device_kinds=(),
        peak_flops={ev.dtype: catalogue.Figure(ev.peak_flops_per_s, source)},
        figures={**base.figures, "hbm_bytes_per_s": catalogue.Figure(ev.peak_bytes_per_s, source)})
    return catalogue.Catalogue((chip,), cat.sources, cat.facts)


def wrong_methods(ev: OpEvidence) -> list[tuple[str, float, str]]:
    """(misconception id, the time that wrong method gives, the step) for this op: the misconception
    catalogue's own wrong answers to this op's floor problem (``generator.misconceptions.wrong_answers``
    on a floor problem with the record's shape, dtype and peaks); empty when the record lacks them."""
    if not (ev.cost_op and ev.shape) or ev.peak_flops_per_s <= 0 or ev.peak_bytes_per_s <= 0:
        return []
    from generator.problem import Answer, Problem

    try:
        dtype = normalize_dtype(ev.dtype)
        costs.cost(ev.cost_op, tuple(ev.shape), dtype)
    except (ValueError, KeyError, TypeError):
        return []
    problem = Problem(family="floor", skill="floor:record", id="floor:record", prompt="",
                      answer=Answer(value=ev.floor_seconds, unit="s"), tolerance=MATCH_TOLERANCE, solution=(),
                      params={"chip": RECORD_CHIP, "op": ev.cost_op, "shape": list(ev.shape), "dtype": dtype,
                              "quantity": "floor"})
    return [(w.misconception.id, float(w.value), w.step)
            for w in misconceptions.wrong_answers(problem, _record_catalogue(ev))
            if isinstance(w.value, (int, float))]


def matching_misconception(ev: OpEvidence) -> tuple[str, str] | None:
    """(misconception name, step) of the wrong method that reproduces the learner's number, or None."""
    if not ev.predicted_seconds:
        return None
    for mid, value, step in wrong_methods(ev):
        if value > 0 and abs(ev.predicted_seconds - value) <= MATCH_TOLERANCE * value:
            return misconceptions.BY_ID[mid].name, f"{step}: {_t(value)}"
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
    """A probe that attains ``rate`` (a large copy or matmul) below the ``peak`` the floor uses."""
    ok, why = _probe_ok(ev, rate, probe, unit)
    if not ok or rate is None:
        return False, why
    if rate >= peak:
        return False, f"{why}, not below the {fmt(peak, unit)} the floor uses"
    return True, why + (f", {100 * rate / peak:.0f}% of the {fmt(peak, unit)} peak" if peak > 0 else "")


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
        return ev.shape_flops_per_s, "this shape's matmul"
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
    used = ev.peak_flops_per_s
    why = (f"this {'x'.join(map(str, ev.shape))} {ev.dtype} matmul measured at {fmt(ev.shape_flops_per_s, 'FLOP/s')}"
           f" vs the {fmt(used, 'FLOP/s')} the floor uses")
    if used > 0 and abs(ev.shape_flops_per_s - used) <= SHAPE_RATE_DIFFERS * used:
        return False, f"{why}: the same rate"
    return True, why


def _shape_rate_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, flops_per_s=float(ev.shape_flops_per_s or est.flops_per_s))


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

# Words that name no reason: refused however they are dressed (compared after lowercasing and
# dropping punctuation).
SHRUGS: frozenset[str] = frozenset({
    "", "x", "xx", "xxx", "-", "overhead", "overheads", "noise", "noisy", "idk", "i dont know", "dunno",
    "no idea", "not sure", "unknown", "random", "variance", "jitter", "bad luck", "luck", "hardware",
    "it is slow", "its slow", "slow", "fast", "machine", "the machine", "system", "os", "because",
    "reasons", "n/a", "na", "none", "?", "whatever", "measurement error", "error", "timing", "magic",
})
HEDGES = ("i dont know", "i do not know", "dunno", "no idea", "not sure", "maybe", "perhaps", "i guess",
          "who knows", "no clue", "not a clue", "beats me", "cant say", "cannot say", "hard to say", "cant tell",
          "for some reason", "somehow", "it just is", "just because", "who cares", "no reason")


def find(reason_id: str) -> MissReason:
    """The reason with this id; KeyError naming the known ids for an unknown one."""
    try:
        return BY_ID[reason_id]
    except KeyError:
        raise KeyError(f"unknown miss reason '{reason_id}'; known: {', '.join(BY_ID)}") from None


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


def explains(ev: OpEvidence, reason_ids: Iterable[str]) -> bool:
    """The named reasons, all allowed by the evidence and each one needed, give a corrected time
    within the band (``band``) of measured and closer than the reference."""
    ids = list(dict.fromkeys(reason_ids))
    if not ids or not all(find(r).allowed(ev).supported for r in ids):
        return False
    t = corrected_time(ev, ids)
    if _log_off(t, ev.measured_seconds) > math.log(band(ev, ids)):
        return False
    if _log_off(t, ev.measured_seconds) >= _log_off(ev.reference_seconds, ev.measured_seconds):
        return False
    return not _idle(ev, ids)


def _idle(ev: OpEvidence, ids: list[str]) -> list[str]:
    """The named reasons that change the corrected time by under 15% (each must do some of the work)."""
    t = corrected_time(ev, ids)
    return [r for r in ids if abs(corrected_time(ev, [x for x in ids if x != r]) - t) <= FORMULA_TOLERANCE * t]


def explanations(ev: OpEvidence, most: int = MAX_COMBINED) -> list[tuple[str, ...]]:
    """Every set of at most ``most`` reasons that explains the miss (``explains``), smallest first."""
    ids = [r.id for r in REASONS]
    return [combo for k in range(1, most + 1) for combo in itertools.combinations(ids, k) if explains(ev, combo)]


def assess(ev: OpEvidence) -> list[Finding]:
    """One Finding per reason, in catalogue order (computed when judging; never stored in a record)."""
    return [reason.test(ev) for reason in REASONS]


def supported_reasons(ev: OpEvidence) -> list[str]:
    """The reasons that explain the miss alone or with ``learner-arithmetic``: the answer key."""
    return [f.reason_id for f in assess(ev) if f.supported]


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w/ ]+", " ", text.lower().replace("'", "").replace("’", "")).split())


def is_shrug(text: str) -> bool:
    return _normal(text) in SHRUGS or text.strip() in SHRUGS


# --- the reasons a learner names: ids (or their synonyms), never read from the sentence's words ------------

_EXPLICIT = re.compile(r"\s*reasons?\s*:\s*", re.IGNORECASE)
_NAME_SEP = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)


def reason_id(name: str) -> str | None:
    """The reason id a name stands for (an id or one of its synonyms, any case, '_' for '-'), or None."""
    return BY_NAME.get(name.strip().lower().replace("_", "-"))


def split_reasons(text: str) -> tuple[list[str], str, list[str]]:
    """(reason ids, the sentence after them, unknown names) of an explanation that names its reasons
    first: "fixed-cost: 21 µs floor + 38 µs per call = 59 µs", "cache-level + fixed-cost: ...",
    "reasons: cache-level, fixed-cost. ...". Without a "reasons:" prefix, a head that is not all reason
    names is no head: nothing is named and the whole text is the sentence."""
    explicit = _EXPLICIT.match(text)
    body = text[explicit.end():] if explicit else text
    stop = re.search(r"[:;.]" if explicit else r":", body)
    if stop is None:
        return [], text.strip(), []
    head, rest = body[:stop.start()], body[stop.end():].strip()
    names = [n for n in _NAME_SEP.split(head.strip()) if n]
    ids = [reason_id(n) for n in names]
    unknown = [n for n, i in zip(names, ids) if i is None]
    if not names or (unknown and not explicit):
        return [], text.strip(), []
    return list(dict.fromkeys(i for i in ids if i)), rest, unknown


# --- the working: the record's numbers in the sentence, and its own arithmetic -------------------------------

NUMBER_TOLERANCE = 0.02  # a number of the record appears in the working within 2%
WORKING_TOLERANCE = 0.02  # the corrected time equals the working's own arithmetic within 2%

# The record's numbers each reason's corrected time is computed from (OpEvidence fields), with their units.
NEEDED: dict[str, tuple[tuple[str, str], ...]] = {
    "learner-arithmetic": (("floor_seconds", "s"), ("model_flops", "FLOP"), ("model_bytes", "B"),
                           ("peak_flops_per_s", "FLOP/s"), ("peak_bytes_per_s", "B/s")),
    "fixed-cost": (("fixed_cost_seconds", "s"),),
    "below-peak-bandwidth": (("attained_bytes_per_s", "B/s"), ("level_bytes_per_s", "B/s"), ("model_bytes", "B")),
    "below-peak-compute": (("attained_flops_per_s", "FLOP/s"), ("shape_flops_per_s", "FLOP/s"),
                           ("model_flops", "FLOP")),
    "extra-traffic": (("xla_bytes", "B"), ("attained_bytes_per_s", "B/s")),
    "less-traffic": (("xla_bytes", "B"), ("attained_bytes_per_s", "B/s")),
    "cache-level": (("level_bytes_per_s", "B/s"), ("model_bytes", "B"), ("working_set_bytes", "B"),
                    ("level_size_bytes", "B")),
    "shape-rate": (("shape_flops_per_s", "FLOP/s"), ("model_flops", "FLOP")),
    "emulated-dtype": (("shape_flops_per_s", "FLOP/s"), ("f32_shape_flops_per_s", "FLOP/s"),
                       ("attained_flops_per_s", "FLOP/s"), ("model_flops", "FLOP"), ("xla_bytes", "B")),
}


def needed_numbers(ev: OpEvidence, reason_ids: Iterable[str]) -> list[tuple[str, float, str]]:
    """(field, value, unit) of the record's numbers the named reasons rest on, each once."""
    out: dict[str, tuple[str, float, str]] = {}
    for rid in reason_ids:
        for name, unit in NEEDED.get(rid, ()):
            value = getattr(ev, name)
            if isinstance(value, (int, float)) and value > 0:
                out[name] = (name, float(value), unit)
    return list(out.values())


@functools.lru_cache(maxsize=None)
def _dims(unit: str) -> Any:
    from generator.answers import parse_quantity

    return parse_quantity(f"1 {unit}").dims


def _quantities(text: str) -> list[Any]:
    """Every number in ``text`` as a ``generator.answers.Quantity`` (with its unit where one follows)."""
    from generator.answers import AnswerError, parse_quantity

    found = []
    for m in _QUANTITY.finditer(text):
        number = m.group(1).replace(" ", "")
        for candidate in ((f"{number} {m.group(2)}", number) if m.group(2) else (number,)):
            try:
                found.append(parse_quantity(candidate))
                break
            except (AnswerError, ValueError, ZeroDivisionError, OverflowError):
                continue
    return found


def uses_record_numbers(text: str, ev: OpEvidence, reason_ids: Iterable[str]) -> bool:
    """At least one number of the record that the named reasons need appears in ``text`` within 2%
    (in its unit, or as a bare number)."""
    needed = needed_numbers(ev, reason_ids)
    for q in _quantities(text):
        for _, value, unit in needed:
            if q.has_unit and q.dims != _dims(unit):
                continue
            if abs(q.value - value) <= NUMBER_TOLERANCE * value:
                return True
    return False


_WORD = re.compile(r"^[^\W\d_]+(?:['’][^\W\d_]+)*[;,:.!?]*$")


def working_seconds(working: str) -> float | None:
    """The time the working's own arithmetic gives ("2.1 MB / 3.88 GB/s" -> 541 µs): the longest
    stretch at its end, words that are not units left out, that parses as a time with an operator;
    None when it shows no arithmetic."""
    from generator.answers import AnswerError, parse_quantity, parse_unit

    kept: list[str] = []
    for token in working.split():
        if _WORD.match(token):
            try:
                parse_unit(token.rstrip(";,:.!?"))
            except (AnswerError, ValueError):
                if token[-1] in ";:,":
                    kept = []  # a clause ends: the working starts after it
                continue
        kept.append(token)
    for start in range(len(kept)):
        piece = " ".join(kept[start:]).rstrip(";,.")
        if not re.search(r"[+*/]|\s-\s", piece.replace("B/s", "").replace("FLOP/s", "").replace("/s", "")):
            continue
        try:
            q = parse_quantity(piece)
        except (AnswerError, ValueError, ZeroDivisionError, OverflowError):
            continue
        if q.dims == _dims("s") and q.value > 0:
            return float(q.value)
    return None


# --- reading a corrected time out of a sentence -----------------------------------------------------------

_QUANTITY = re.compile(r"(?<![\w.])(-?\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµμ]+(?:/[A-Za-z]+)?)?")


class CorrectedError(ValueError):
    """A corrected time that cannot be used: one line saying why."""


def check_seconds(value: float, shown: str = "") -> float:
    """``value`` when it is a usable corrected time; CorrectedError (one line) otherwise."""
    what = f"'{shown}'" if shown else fmt(value, "s") if math.isfinite(value) else str(value)
    if not math.isfinite(value):
        raise CorrectedError(f"{what} is not a number of seconds")
    if value <= 0:
        raise CorrectedError(f"{what}: a corrected time must be positive")
    if value > MAX_SECONDS:
        raise CorrectedError(f"{what} is over a day: not the time of one op")
    return value


def parse_corrected(text: str) -> float:
    """Seconds from a corrected time with a unit ("59 us", "21us + 38us"); CorrectedError otherwise:
    a bare number asks for a unit, a rate or a size says it is not a time."""
    from generator.answers import AnswerError, NeedsUnitError, WrongDimensionError, parse_duration_seconds

    text = str(text).strip()
    try:
        value = parse_duration_seconds(text, None)
    except NeedsUnitError:
        raise CorrectedError(f"{text} what? e.g. {text} us, {text} ms or {text} s") from None
    except WrongDimensionError as exc:
        raise CorrectedError(f"'{text}' is not a time ({exc}); a corrected estimate is a time") from None
    except AnswerError as exc:
        raise CorrectedError(f"'{text}': {exc}") from None
    return check_seconds(value, text)


def corrected_from_sentence(text: str) -> float | None:
    """The corrected time in a sentence: the time after its last '=' (or its only time); None when it
    names no time; CorrectedError when the time cannot be used or several stand without an '='."""
    for after in reversed(text.split("=")[1:]):  # the last '=' followed by a time ("N=128 the ..." is none)
        after = after.strip().rstrip(".;,)")
        try:
            return parse_corrected(after)  # the whole of it: "= 21 us + 38 us" or "= 59 µs"
        except CorrectedError:
            pass
        m = _QUANTITY.match(after)
        if not m:
            continue
        if m.group(2) is None:
            return parse_corrected(m.group(1))  # "= 59": what unit? (CorrectedError)
        from generator.answers import AnswerError, parse_unit

        try:
            parse_unit(m.group(2))
        except (AnswerError, ValueError):
            continue  # "N=128 the fixed cost": a word, not a unit
        return parse_corrected(m.group(0))  # "= 3 GB/s": not a time (CorrectedError)
    times = []
    for m in _QUANTITY.finditer(text):
        try:
            times.append(parse_corrected(m.group(0)))
        except CorrectedError:
            continue
    if not times:
        return None
    if len(times) > 1:
        raise CorrectedError(f"{len(times)} times in the sentence: write the corrected one after '=' "
                             "(e.g. '21 us floor + 38 us per call = 59 us')")
    return times[0]


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


def unexplainable(ev: OpEvidence) -> str | None:
    """None when some set of reasons the evidence allows explains the miss; else one line, with the
    numbers that show why none does (asked before any "why?": a miss the evidence cannot explain
    is a finding about the measurement, not a question for the learner)."""
    if not ev.hierarchy_measured or not ev.is_miss or explanations(ev):
        return None  # a record without the measured hierarchy is judged as before: asked
    parts = [f"no reason the evidence allows brings the estimate within {CORRECTED_FACTOR}x of measured "
             f"{_t(ev.measured_seconds)}"]
    if ev.bound == "memory" and ev.model_bytes > 0:
        rate = ev.model_bytes / ev.measured_seconds
        where = (f"; {fmt(ev.model_bytes, 'B')} in {_t(ev.measured_seconds)} is {fmt(rate, 'B/s')}, and no measured "
                 "level of this device streams at that")
        if ev.level_name and ev.level_bytes_per_s:
            where += f" ({ev.level_name}, which holds the working set, measured {fmt(ev.level_bytes_per_s, 'B/s')})"
        parts.append(where)
    elif ev.model_flops > 0:
        rate = ev.model_flops / ev.measured_seconds
        parts.append(f"; {fmt(ev.model_flops, 'FLOP')} in {_t(ev.measured_seconds)} is {fmt(rate, 'FLOP/s')}, "
                     "and no measured rate of this device matches it")
    spreads = [(name, getattr(ev, f"{key}_spread")) for name, key in
               (("fixed-cost", "fixed_cost"), ("copy", "copy"), ("matmul", "matmul"), ("level", "level"),
                ("shape", "shape"))]
    loud = [f"the {name} probe's spread was {100 * v:.0f}%" for name, v in spreads if v and v > MAX_WIDENING / 2]
    if loud:
        parts.append(f"; re-measure: {', '.join(loud)}")
    return "".join(parts)


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
    working = sentence.rsplit("=", 1)[0] if "=" in sentence else sentence
    if not uses_record_numbers(working, ev, named):
        return refuse(f"your working uses none of this record's numbers that {' + '.join(named)} rest on: "
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
    tool = corrected_time(ev, named)
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
