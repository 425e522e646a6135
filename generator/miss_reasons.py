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

from generator import costs
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
    a noisy probe supports nothing. ``emulated_dtype`` comes from the compiled
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
        return self.scale * max(t_math, t_mem) + self.fixed_s


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
    words: tuple[str, ...] = ()  # whole words and phrases in a learner's sentence that name this reason

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
    if probe in ev.noisy_probes:
        return False, (f"the {probe} probe ({fmt(value, unit)}) was noisy even re-measured: a noisy probe "
                       "supports nothing")
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


def _below_peak_bandwidth(ev: OpEvidence) -> tuple[bool, str]:
    return _below_peak(ev, ev.attained_bytes_per_s, ev.peak_bytes_per_s, "copy", "B/s")


def _below_peak_bandwidth_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, bytes_per_s=float(ev.attained_bytes_per_s or est.bytes_per_s))


def _below_peak_compute(ev: OpEvidence) -> tuple[bool, str]:
    return _below_peak(ev, ev.attained_flops_per_s, ev.peak_flops_per_s, "matmul", "FLOP/s")


def _below_peak_compute_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    return replace(est, flops_per_s=float(ev.attained_flops_per_s or est.flops_per_s))


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


def _fits_cache(ev: OpEvidence) -> bool:
    return bool(ev.cache_bytes and ev.working_set_bytes and ev.working_set_bytes <= ev.cache_bytes)


def _less_traffic(ev: OpEvidence) -> tuple[bool, str]:
    fewer = ev.xla_bytes is not None and ev.xla_bytes * TRAFFIC_FACTOR <= ev.model_bytes
    cache = (f"the rotated inputs ({fmt(ev.working_set_bytes, 'B')}) vs the largest cache the device reports "
             f"({fmt(ev.cache_bytes, 'B')})" if ev.working_set_bytes and ev.cache_bytes
             else "the record has no working set and cache size to compare")
    if fewer:
        ok, why = _probe_ok(ev, ev.attained_bytes_per_s, "copy", "B/s")
        return ok, f"{_xla_share(ev)}: fewer bytes than counted; {why}"
    if _fits_cache(ev):
        return True, f"{cache}: they fit, so the bytes come from the cache, not from memory"
    return False, f"{_xla_share(ev)}; {cache}: neither shows fewer bytes from memory than counted"


def _less_traffic_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    if ev.xla_bytes is not None and ev.xla_bytes * TRAFFIC_FACTOR <= ev.model_bytes:
        return _traffic_fix(ev, est)
    if _fits_cache(ev):
        return replace(est, bytes=0.0)  # from the cache: only the math (and any fixed cost) remains
    return est


def _emulated_dtype(ev: OpEvidence) -> tuple[bool, str]:
    how = f" ({ev.emulated_from})" if ev.emulated_from else ""
    if ev.emulated_dtype is None:
        return False, f"the record does not say whether the compiled program computes {ev.dtype} natively"
    if not ev.emulated_dtype:
        return False, f"the compiled program computes {ev.dtype} natively on {ev.platform}{how}"
    ok, why = _probe_ok(ev, ev.attained_flops_per_s, "matmul", "FLOP/s")
    return ok, f"the compiled program converts {ev.dtype} to f32 on {ev.platform}{how}; {why} in {ev.dtype} (upcast too)"


def _emulated_dtype_fix(ev: OpEvidence, est: Estimate) -> Estimate:
    """The upcast rate: the FLOPs at the matmul probe's rate in this dtype (itself upcast), and the
    converts' traffic (XLA's bytes, when more than counted) at the copy probe's rate."""
    est = replace(est, flops_per_s=float(ev.attained_flops_per_s or est.flops_per_s))
    if ev.xla_bytes is not None and ev.xla_bytes > est.bytes:
        est = replace(est, bytes=float(ev.xla_bytes), bytes_per_s=float(ev.attained_bytes_per_s or est.bytes_per_s))
    return est


def _words(*phrases: str) -> tuple[str, ...]:
    return phrases


REASONS: tuple[MissReason, ...] = (
    MissReason("learner-arithmetic",
               "your number is not the roofline floor of the record's own counts and peaks: the slip is in the "
               "arithmetic (the misconception catalogue names the wrong method that gives it)",
               "your prediction differs from the record's floor by over 1.5x",
               "the floor itself: max(FLOPs / peak FLOP/s, bytes / peak bytes/s), in place of your number "
               "(other reasons then correct the floor, not your number)",
               _learner_arithmetic, _learner_arithmetic_fix,
               _words("learner-arithmetic", "arithmetic", "miscalculated", "miscalculation", "miscounted",
                      "my math", "my maths", "calculation", "counted wrong", "typo", "wrong unit", "unit slip", "slip", "slipped",
                      "gib", "gb", "elements", "macs", "multiply-add", "multiply-adds", "sum of", "ms for us",
                      "us for ms", "ns for us", "us for ns", "ms for s", "s for ms", "typed", "mixed up", "wrong peak",
                      "wrong bandwidth", "my floor", "factor of 1000", "1000x", "forgot the output", "forgot the write",
                      *misconceptions.BY_ID)),
    MissReason("fixed-cost",
               "a per-call launch/dispatch/sync cost dominates a small op",
               "the fixed cost probe: this op kind at its smallest size, same operand count (device time), "
               "not noisy",
               "the estimate + the fixed cost (e.g. floor 21 µs + 38 µs per call = 59 µs)",
               _fixed_cost, _fixed_cost_fix,
               _words("fixed-cost", "fixed cost", "launch", "launches", "dispatch", "per-call", "per call",
                      "per-call cost", "sync", "startup", "kernel start", "small op", "too small", "overhead of a call",
                      "call overhead")),
    MissReason("below-peak-bandwidth",
               "a memory-bound op streams at a fraction of the peak bandwidth",
               "the copy probe's attained bytes/s below the peak, not noisy",
               "bytes / the copy probe's attained bytes/s (in place of the peak)",
               _below_peak_bandwidth, _below_peak_bandwidth_fix,
               _words("below-peak-bandwidth", "bandwidth", "streams", "streaming", "hbm peak", "memory peak",
                      "bytes/s", "not saturated", "copy probe", "attained bandwidth", "gb/s", "tb/s")),
    MissReason("below-peak-compute",
               "a compute-bound op reaches a fraction of the peak FLOP/s (padding to the MXU/tile size is a sub-case)",
               "the matmul probe's attained FLOP/s below the peak, not noisy",
               "FLOPs / the matmul probe's attained FLOP/s (in place of the peak)",
               _below_peak_compute, _below_peak_compute_fix,
               _words("below-peak-compute", "flop/s", "flops/s", "mxu", "tensor core", "tensor cores",
                      "utilization", "utilisation", "padding", "padded", "tile", "tiles", "compute peak",
                      "peak flop", "peak flops", "matmul probe", "gflop/s", "tflop/s")),
    MissReason("extra-traffic",
               "the compiled program moves more bytes than the hand count: several passes, a transpose, an unfused op",
               "XLA's bytes accessed at least 1.5x the hand count, and a copy probe that is not noisy",
               "XLA's bytes accessed / the copy probe's attained bytes/s",
               _extra_traffic, _traffic_fix,
               _words("extra-traffic", "extra traffic", "more bytes", "more traffic", "two passes", "three passes",
                      "several passes", "second pass", "third pass", "passes", "reads x three times",
                      "reads it three times", "three times", "twice", "transpose", "unfused", "not fused",
                      "materialized", "materialised", "extra copy", "re-read", "reread", "re-reads", "xlas bytes",
                      "xla bytes", "bytes accessed")),
    MissReason("less-traffic",
               "caches, VMEM residency or fusion move fewer bytes from memory than counted",
               "XLA's bytes accessed at most 1/1.5 of the hand count, or rotated inputs that fit a cache level "
               "the device reports",
               "XLA's bytes / the copy probe's bytes/s; inputs that fit a cache: the math time alone",
               _less_traffic, _less_traffic_fix,
               _words("less-traffic", "cache", "cached", "caches", "vmem", "l2", "l3", "fusion", "fused",
                      "fewer bytes", "less traffic", "resident", "reuse", "on-chip", "on chip", "fits in cache")),
    MissReason("emulated-dtype",
               "the device has no native arithmetic for the dtype and the compiled program converts it to f32",
               "converts in the optimized HLO (or XLA's bytes over the hand count) for the op's dtype",
               "FLOPs at the upcast rate (the matmul probe in this dtype, itself upcast), with the converts' "
               "traffic (XLA's bytes) at the copy probe's rate",
               _emulated_dtype, _emulated_dtype_fix,
               _words("emulated-dtype", "upcast", "upcasts", "emulated", "emulation", "f32", "float32", "fp32",
                      "convert", "converts", "conversion", "conversions", "no native bf16")),
)
BY_ID = {r.id: r for r in REASONS}

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


def explains(ev: OpEvidence, reason_ids: Iterable[str]) -> bool:
    """The named reasons, all allowed by the evidence and each one needed, give a corrected time
    within 1.5x of measured and closer than the reference."""
    ids = list(dict.fromkeys(reason_ids))
    if not ids or not all(find(r).allowed(ev).supported for r in ids):
        return False
    t = corrected_time(ev, ids)
    if _log_off(t, ev.measured_seconds) > math.log(CORRECTED_FACTOR):
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


def _phrase_pattern(phrase: str) -> str:
    """Whole words: 'fused' does not match in 'unfused' or 'not fused'; 'cache' matches 'cache' only."""
    words = _normal(phrase.replace("-", " ")).split()
    return r"(?<![\w/])" + r"[\s\-]+".join(re.escape(w) for w in words) + r"(?![\w/])"


# Words that deny what follows them in the same clause ("no upcast", "it isn't launch-bound",
# "nothing to do with the cache"): compared after ``_normal`` (apostrophes dropped).
NEGATORS = frozenset({"not", "no", "never", "without", "isnt", "wasnt", "arent", "werent", "doesnt", "didnt",
                      "dont", "cant", "cannot", "wont", "nothing", "neither", "nor", "non", "un", "hardly"})
NEGATION_REACH = 5  # a negator denies a reason word at most this many words after it
# A verb between the negator and a shortfall reason's word takes the negation, and a negated success
# affirms the shortfall: "does not reach peak bandwidth", "cannot use the MXU", "XLA does not fuse the three
# passes", "could not hide the launch cost" each say their reason, where "no upcast", "not a typo" and "did
# not use the cache" deny theirs (a benefit reason's words are denied by any negator).
_REACH = ("reach", "reaches", "reached", "hit", "hits", "attain", "attains", "attained", "achieve", "achieves",
          "achieved", "saturate", "saturates", "saturated", "use", "uses", "used", "get", "gets", "approach",
          "approaches", "fill", "fills", "sustain", "sustains", "keep", "keeps", "come", "comes", "near")
NEGATION_TAKERS: dict[str, frozenset[str]] = {
    "below-peak-bandwidth": frozenset(_REACH),
    "below-peak-compute": frozenset(_REACH),
    "extra-traffic": frozenset({"fuse", "fuses", "merge", "merges", "combine", "combines", "avoid", "avoids",
                                "avoided"}),
    "fixed-cost": frozenset({"hide", "hides", "hidden", "overlap", "overlaps", "amortize", "amortizes",
                             "amortized", "amortise", "amortises", "amortised"}),
}
_CLAUSE = re.compile(r"[.;:!?,()]|\bbut\b|\bhowever\b|\bso\b|\bthough\b", re.IGNORECASE)


def _denies(before: list[str], reason_id: str) -> bool:
    """Whether the words just before one of ``reason_id``'s words deny it: a negator among them, and
    no verb that takes the negation (``NEGATION_TAKERS``) between the last negator and the word."""
    negators = [i for i, w in enumerate(before) if w in NEGATORS]
    takers = NEGATION_TAKERS.get(reason_id, frozenset())
    return bool(negators) and not any(w in takers for w in before[negators[-1] + 1:])


# A rate with its number ("82.2 GFLOP/s", "35 GB/s") is working, not a reason: the floor's own arithmetic
# quotes peaks. A rate named without a number ("the GB/s it attains") still reads as its reason.
_RATE_QUANTITY = re.compile(r"(?<![\w.])[0-9][0-9.]*(?:[eE][+-]?[0-9]+)?\s*[A-Za-zµμ]*/[A-Za-z]+")


@functools.lru_cache(maxsize=1)
def _phrases() -> tuple[tuple[str, tuple[str, ...], "re.Pattern[str]"], ...]:
    """(reason id, the phrase's words, its pattern) for every id and phrase, longest first."""
    found = []
    for reason in REASONS:
        for phrase in (reason.id, *reason.words):
            words = tuple(_normal(phrase.replace("-", " ")).split())
            if words:
                found.append((reason.id, words, re.compile(_phrase_pattern(phrase))))
    return tuple(sorted(found, key=lambda item: -len(item[1])))


def _mentions(text: str) -> tuple[list[str], list[str]]:
    """(affirmed, denied): the reason ids a sentence names, by id or by whole words and phrases, and
    those it denies (a negator at most ``NEGATION_REACH`` words before in the same clause). Longer
    phrases are read first and their words are not read again: "wrong bandwidth" is the arithmetic,
    not "bandwidth"; a phrase that carries its own negator ("not fused", "no native bf16") affirms
    its reason."""
    plain = _RATE_QUANTITY.sub(" ", text.replace("’", "'"))
    clauses = [" " + _normal(c.replace("_", "-").replace("-", " ")) + " " for c in _CLAUSE.split(plain)]
    said: set[str] = set()
    refused: set[str] = set()
    for clause in clauses:
        taken: list[tuple[int, int]] = []  # spans a longer phrase has read
        for reason_id, words, pattern in _phrases():
            for m in pattern.finditer(clause):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue
                taken.append((m.start(), m.end()))
                before = clause[:m.start()].split()[-NEGATION_REACH:]
                if words[0] not in NEGATORS and _denies(before, reason_id):
                    refused.add(reason_id)
                else:
                    said.add(reason_id)
    order = [reason.id for reason in REASONS]
    return ([r for r in order if r in said and r not in refused], [r for r in order if r in refused])


def read_reasons(text: str) -> list[str]:
    """The reason ids a learner's sentence names, by id or by whole words and phrases mapped to them
    ("launch", "dispatch" -> fixed-cost; "upcast" -> emulated-dtype; "three passes", "XLA's bytes" ->
    extra-traffic; "GiB" -> learner-arithmetic), in catalogue order. A denied reason is not named
    ("no upcast", "it wasn't a typo"; ``denied_reasons``); "not fused" names extra traffic, never
    less-traffic. A sentence that both says and denies a reason's words denies it."""
    return _mentions(text)[0]


def denied_reasons(text: str) -> list[str]:
    """The reason ids a sentence denies ("no upcast" -> emulated-dtype), in catalogue order."""
    return _mentions(text)[1]


MIN_OWN_WORDS = 3  # a sentence says why in at least this many words besides reason ids and quantities


def _without_ids(text: str) -> str:
    """The sentence with the reason ids as written ("fixed-cost", "fixed_cost") taken out; the same
    words spaced ("the fixed cost of a call") stay: they are the learner's own."""
    low = text.lower().replace("_", "-")
    for reason in REASONS:
        low = re.sub(r"(?<![\w-])" + re.escape(reason.id) + r"(?![\w-])", " ", low)
    return low


def own_words(text: str) -> list[str]:
    """The sentence's words besides the reason ids and the quantities (numbers and their units)."""
    low = _QUANTITY.sub(" ", _without_ids(text))
    return [w for w in _normal(low).split() if any(c.isalpha() for c in w)]


def _shows_working(text: str, named: list[str]) -> bool:
    """Beyond the ids, the sentence names its reason in words or shows a number of its working
    (a quantity before the corrected one): "per call", "three passes", "21 us floor + 38 us"."""
    if set(named) & set(read_reasons(_without_ids(text))):
        return True
    before = text.rsplit("=", 1)[0] if "=" in text else ""
    return bool(_QUANTITY.search(before))


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
    if ev.working_set_bytes and ev.cache_bytes:
        parts.append(f"rotated inputs {fmt(ev.working_set_bytes, 'B')} vs cache {fmt(ev.cache_bytes, 'B')}")
    return "look at: " + "; ".join(parts)


EXAMPLE = "fixed-cost: 21 µs floor + 38 µs per call = 59 µs"


def _off(value: float, measured: float) -> str:
    r = value / measured
    return f"{r:.2f}x above" if r >= 1 else f"{1 / r:.2f}x below"


def judge(text: str, ev: OpEvidence, reasons: list[str] | None = None,
          corrected_s: float | None = None) -> Judgement:
    """Judge one explanation of a miss: ``reasons`` (ids; else read from the text), a corrected time
    (``corrected_s``; else read from the text) and the sentence. Accepted when the corrected time is
    within 1.5x of measured and closer than the reference, agrees within 15% with ``corrected_time``
    for the named reasons, every named reason is allowed by the evidence and changes the estimate,
    and the sentence says why. Refusals point at the numbers, never at the answer. KeyError for an
    unknown reason id."""
    text = " ".join(str(text or "").split())
    named = list(dict.fromkeys(reasons)) if reasons else read_reasons(text)
    for rid in named:
        find(rid)  # KeyError for an unknown id: the caller says so in one line
    ids = ", ".join(BY_ID)
    look = pointer(ev)

    def refuse(why: str, corrected: float | None = corrected_s) -> Judgement:
        return Judgement(False, named, text, f"refused: {why} ({look})", corrected)

    if is_shrug(text):
        return refuse(f"'{text}' is a shrug, not a reason" if text else "no explanation given")
    low = " " + _normal(text) + " "
    if any(f" {h} " in low for h in HEDGES):
        return refuse("a hedge is not an explanation: say what the numbers show")
    if not named:
        return refuse(f"your sentence names no reason; name one of {ids} and re-predict with it")
    affirmed, denied = _mentions(text)
    against = [r for r in named if r in denied]
    if against:
        return refuse(f"your sentence denies {', '.join(against)} while naming it: say what the numbers show")
    in_words = set(affirmed)
    silent = [r for r in named if r not in in_words]
    if silent:
        return refuse(f"your sentence does not say why ({', '.join(silent)} named, but the sentence says "
                      "nothing about it): say what the numbers show")
    if corrected_s is None:
        try:
            corrected_s = corrected_from_sentence(text)
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
    if len(own_words(text)) < MIN_OWN_WORDS or not _shows_working(text, named):
        return refuse("a reason's name is not a sentence: say in your own words what the numbers show "
                      f"(e.g. '{EXAMPLE}')", corrected_s)
    contradicted = [f for f in (find(r).allowed(ev) for r in named) if not f.supported]
    if contradicted:
        return refuse("the evidence contradicts it: " + "; ".join(f"{f.reason_id}: {f.why}" for f in contradicted))
    measured = ev.measured_seconds
    if _log_off(corrected_s, measured) > math.log(CORRECTED_FACTOR):
        return refuse(f"your corrected {_t(corrected_s)} is {_off(corrected_s, measured)} measured "
                      f"{_t(measured)}; it must be within {CORRECTED_FACTOR}x")
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
