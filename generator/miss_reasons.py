"""Miss reasons: the concrete reasons a measured time misses its prediction by more than 2x.

"Explain every miss" is the third half of the course's habit (predict, measure,
explain). A shrug ("overhead", "noise") explains nothing; a reason is a claim
about numbers the lab recorded, so it can be checked. Each ``MissReason`` is
data (an id, one line of meaning, one line saying which numbers support it)
plus one small test of an ``OpEvidence`` (one op of one lab record) that
returns a ``Finding``: supported or not, and the deciding numbers, printed with
``generator.units.fmt``. ``judge`` accepts a learner's explanation only when a
reason it names is supported by the record's own evidence.

Pure Python (no jax): the lab (``labs``) builds ``OpEvidence`` from a record
(``labs.records.op_evidence``); ``drill miss-reasons`` lists the catalogue.
Units: seconds, bytes, FLOPs, bytes/s, FLOP/s.

One module for one job (over 400 lines): the catalogue of reasons, each a line of data and
its one test of the evidence, and ``judge``, which reads them all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from generator import costs
from generator import misconceptions
from generator.units import fmt, normalize_dtype

WITHIN_FACTOR = 2.0  # a miss is a disagreement over 2x (Can-you item 6, GATE 00)
FRACTION_OF_PEAK = 0.5  # "a fraction of peak": at most half of it (a 2x miss needs at least that)
TRAFFIC_FACTOR = 1.5  # XLA's byte count differs from the hand count by this much or more
MATCH_TOLERANCE = 0.10  # a wrong method reproduces the learner's number within 10%
MAX_MIXED_REASONS = 2  # naming more reasons than this, some contradicted, is guessing: refused


@dataclass(frozen=True)
class OpEvidence:
    """One op of one lab record: every number from the record itself, SI units.

    ``predicted_seconds`` is the learner's prediction (None: none written); a
    reason is then judged against ``floor_seconds``. ``bound`` is the roofline
    verdict of the catalogue model ("compute" or "memory").
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
    # Additions (defaults keep the contract's constructor working):
    cost_op: str = ""  # generator.costs op name ("matmul", "add", ...) for the misconception check
    shape: tuple[int, ...] = ()  # the op's shape as generator.costs counts it
    lacking: tuple[str, ...] = field(default=())  # evidence the record does not have (older schema)

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
        out["shape"] = list(self.shape)
        out["lacking"] = list(self.lacking)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "OpEvidence":
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["shape"] = tuple(int(x) for x in kwargs.get("shape") or ())
        kwargs["lacking"] = tuple(str(x) for x in kwargs.get("lacking") or ())
        return cls(**kwargs)


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
    """A named reason a measurement misses: ``evidence`` says in one line which numbers support it."""

    id: str
    meaning: str
    evidence: str
    check: Callable[[OpEvidence], tuple[bool, str]] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    words: tuple[str, ...] = ()  # words in a learner's sentence that name this reason

    def test(self, ev: OpEvidence) -> Finding:
        supported, why = self.check(ev)
        return Finding(self.id, bool(supported), why)

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "meaning": self.meaning, "evidence": self.evidence}


# --- the tests, one small function per reason ---------------------------------------------------------

def _t(value: float | None) -> str:
    return "n/a" if value is None else fmt(value, "s")


def _direction(ev: OpEvidence, want_slower: bool) -> str | None:
    """None when the miss goes the way this reason explains; else why it cannot explain it."""
    if not ev.is_miss:
        return (f"no miss: measured {_t(ev.measured_seconds)} is within 2x of "
                f"{_t(ev.reference_seconds)} ({ev.ratio:.2f}x)")
    if ev.slower != want_slower:
        return (f"measured {_t(ev.measured_seconds)} is {'slower' if ev.slower else 'faster'} than "
                f"{_t(ev.reference_seconds)} ({ev.ratio:.2f}x); this reason only explains a "
                f"{'slower' if want_slower else 'faster'} run")
    return None


def wrong_methods(ev: OpEvidence) -> list[tuple[str, float, str]]:
    """(misconception id, the floor that wrong method gives, the step) for this op: the misconception
    catalogue's classic slips replayed on the record's own counts and peaks."""
    peak, bw = ev.peak_flops_per_s, ev.peak_bytes_per_s
    if peak <= 0 or bw <= 0:
        return []
    flops, nbytes = ev.model_flops, ev.model_bytes

    def floor(f=flops, b=nbytes, pk=peak, w=bw) -> float:
        return max(f / pk, b / w)

    out: list[tuple[str, float, str]] = []
    written = 0
    elements = None
    if ev.cost_op and ev.shape:
        try:
            cost = costs.cost(ev.cost_op, tuple(ev.shape), normalize_dtype(ev.dtype))
            written = cost.bytes_written
            elements = costs.cost(ev.cost_op, tuple(ev.shape), "int8").bytes
        except (ValueError, KeyError, TypeError):
            pass
    if elements is not None and elements != nbytes:
        out.append(("elements-not-bytes", floor(b=elements), f"bytes counted as elements ({fmt(elements, 'B')})"))
    if written:
        out.append(("forgot-output-write", floor(b=nbytes - written),
                    f"the output write ({fmt(written, 'B')}) left out"))
    if flops:
        out.append(("macs-not-flops", floor(f=flops / 2), "a multiply-add counted as one FLOP"))
    out.append(("sum-not-max", flops / peak + nbytes / bw, "T_math + T_comms instead of their max"))
    base = floor()
    out.append(("gb-gib", base * misconceptions.GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s"))
    out.append(("unit-slip-1000", base * 1e3, "1000x too large (ms for µs)"))
    out.append(("unit-slip-1000", base * 1e-3, "1000x too small (µs for ms)"))
    return out


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
    floor_ratio = ev.measured_seconds / ev.floor_seconds if ev.floor_seconds > 0 else math.inf
    floor_ok = 1 / WITHIN_FACTOR <= floor_ratio <= WITHIN_FACTOR
    if not ev.is_miss:
        return False, f"no miss: your {_t(ev.predicted_seconds)} is within 2x of measured {_t(ev.measured_seconds)}"
    if not floor_ok:
        return False, (f"the roofline floor {_t(ev.floor_seconds)} is itself {floor_ratio:.2f}x off measured "
                       f"{_t(ev.measured_seconds)}: the miss is in the machine, not only in your arithmetic")
    why = (f"the roofline floor {_t(ev.floor_seconds)} is within 2x of measured {_t(ev.measured_seconds)} "
           f"({floor_ratio:.2f}x) but your {_t(ev.predicted_seconds)} is {ev.ratio:.2f}x off")
    match = matching_misconception(ev)
    if match:
        why += f"; your number matches '{match[0]}' ({match[1]})"
    return True, why


def _fixed_cost(ev: OpEvidence) -> tuple[bool, str]:
    wrong = _direction(ev, want_slower=True)
    if wrong:
        return False, wrong
    if ev.fixed_cost_seconds is None:
        return False, "the record has no fixed cost (a trivial op's device time) to compare with"
    fixed, floor, measured = ev.fixed_cost_seconds, ev.floor_seconds, ev.measured_seconds
    numbers = (f"this device's trivial op takes {_t(fixed)}; your {ev.op}'s floor is {_t(floor)}, "
               f"measured {_t(measured)}")
    if fixed < floor:
        return False, f"{numbers}: the fixed cost is below the floor, so it cannot dominate"
    if measured > WITHIN_FACTOR * (fixed + floor):
        return False, f"{numbers}: floor + fixed cost = {_t(fixed + floor)} is still over 2x short of measured"
    return True, f"{numbers}: the fixed cost dominates and floor + fixed cost = {_t(fixed + floor)} is within 2x"


def _probe(value: float | None, peak: float, unit: str, probe: str) -> str:
    if value is None:
        return f"; no {probe} probe in the record"
    return f"; the {probe} probe attains {fmt(value, unit)} ({100 * value / peak:.0f}% of it)" if peak > 0 else ""


def _fixed_explains(ev: OpEvidence) -> bool:
    return ev.fixed_cost_seconds is not None and ev.fixed_cost_seconds >= ev.measured_seconds / WITHIN_FACTOR


def _below_peak(ev: OpEvidence, kind: str) -> tuple[bool, str]:
    memory = kind == "memory"
    wrong = _direction(ev, want_slower=True)
    if wrong:
        return False, wrong
    if ev.bound != kind:
        return False, f"the model calls {ev.op} {ev.bound}-bound, not {kind}-bound"
    amount, peak = (ev.model_bytes, ev.peak_bytes_per_s) if memory else (ev.model_flops, ev.peak_flops_per_s)
    unit = "B/s" if memory else "FLOP/s"
    rate = amount / ev.measured_seconds if ev.measured_seconds > 0 else math.inf
    share = rate / peak if peak > 0 else math.inf
    probe = _probe(ev.attained_bytes_per_s if memory else ev.attained_flops_per_s, peak, unit,
                   "copy" if memory else "matmul")
    numbers = (f"{ev.op} {'streams' if memory else 'computes'} at {fmt(rate, unit)} = {100 * share:.0f}% "
               f"of the {fmt(peak, unit)} peak{probe}")
    if share > FRACTION_OF_PEAK:
        return False, f"{numbers}: over half of peak, not a fraction of it"
    if _fixed_explains(ev):
        return False, (f"{numbers}, but the fixed cost {_t(ev.fixed_cost_seconds)} is at least half of measured "
                       f"{_t(ev.measured_seconds)}: the time is per-call cost, not {'streaming' if memory else 'math'}")
    return True, numbers


def _below_peak_bandwidth(ev: OpEvidence) -> tuple[bool, str]:
    return _below_peak(ev, "memory")


def _below_peak_compute(ev: OpEvidence) -> tuple[bool, str]:
    return _below_peak(ev, "compute")


def _traffic(ev: OpEvidence, more: bool) -> tuple[bool, str]:
    if ev.xla_bytes is None:
        compiled = "the record has no XLA cost analysis (bytes accessed)"
    else:
        share = ev.xla_bytes / ev.model_bytes if ev.model_bytes > 0 else math.inf
        compiled = (f"XLA's compiled program accesses {fmt(ev.xla_bytes, 'B')}, {share:.2f}x the hand count "
                    f"{fmt(ev.model_bytes, 'B')}")
    wrong = _direction(ev, want_slower=more)
    if wrong:
        return False, wrong
    if more:
        if ev.xla_bytes is None:
            return False, compiled
        if ev.xla_bytes < TRAFFIC_FACTOR * ev.model_bytes:
            return False, f"{compiled}: under {TRAFFIC_FACTOR}x, not enough extra traffic"
        xla_time = ev.xla_bytes / ev.peak_bytes_per_s if ev.peak_bytes_per_s > 0 else math.inf
        if xla_time <= ev.floor_seconds:
            return False, (f"{compiled}, but even those bytes stream in {_t(xla_time)} at "
                           f"{fmt(ev.peak_bytes_per_s, 'B/s')}, within the {_t(ev.floor_seconds)} floor: "
                           "the extra traffic does not lengthen this op")
        return True, (f"{compiled}: at {fmt(ev.peak_bytes_per_s, 'B/s')} they take {_t(xla_time)}, "
                      f"beyond the {_t(ev.floor_seconds)} floor")
    # Fewer HBM bytes than counted: the compiled program says so, or the op beat its own memory roofline.
    t_comms = ev.model_bytes / ev.peak_bytes_per_s if ev.peak_bytes_per_s > 0 else 0.0
    beat = ev.measured_seconds < t_comms / TRAFFIC_FACTOR
    fewer = ev.xla_bytes is not None and ev.xla_bytes * TRAFFIC_FACTOR <= ev.model_bytes
    memory = (f"measured {_t(ev.measured_seconds)} vs the hand count's memory time {_t(t_comms)} at "
              f"{fmt(ev.peak_bytes_per_s, 'B/s')}")
    if beat:
        return True, f"{memory}: faster than the bytes could stream, so fewer bytes came from HBM; {compiled}"
    if fewer:
        return True, f"{compiled}: the compiled program moves fewer bytes; {memory}"
    return False, f"{compiled}; {memory}: neither shows fewer bytes than counted"


def _extra_traffic(ev: OpEvidence) -> tuple[bool, str]:
    return _traffic(ev, more=True)


def _less_traffic(ev: OpEvidence) -> tuple[bool, str]:
    return _traffic(ev, more=False)


def _emulated_dtype(ev: OpEvidence) -> tuple[bool, str]:
    wrong = _direction(ev, want_slower=True)
    if wrong:
        return False, wrong
    if ev.emulated_dtype is None:
        return False, f"the record does not say whether {ev.platform} computes {ev.dtype} natively"
    if not ev.emulated_dtype:
        return False, f"{ev.platform} computes {ev.dtype} natively (no upcast)"
    if ev.measured_seconds <= WITHIN_FACTOR * ev.floor_seconds:
        return False, (f"{ev.dtype} is emulated on {ev.platform}, but measured {_t(ev.measured_seconds)} is within "
                       f"2x of the floor {_t(ev.floor_seconds)}: the conversion is not what makes this op miss")
    return True, (f"{ev.platform} has no native {ev.dtype} arithmetic: each element is converted to f32 and back, "
                  f"measured {_t(ev.measured_seconds)} vs {_t(ev.reference_seconds)} ({ev.ratio:.2f}x)")


REASONS: tuple[MissReason, ...] = (
    MissReason("learner-arithmetic",
               "the roofline floor is within 2x of measured but your number is not: the slip is in the arithmetic",
               "measured / floor within [1/2, 2] while measured / your prediction is not; the misconception "
               "catalogue names the wrong method that gives your number",
               _learner_arithmetic,
               ("arithmetic", "miscalculat", "miscount", "my math", "calculation", "i counted", "counted wrong",
                "typo", "wrong unit", "unit slip", *misconceptions.BY_ID)),
    MissReason("fixed-cost",
               "a per-call launch/dispatch/sync cost dominates a small op",
               "a trivial op's device time (fixed cost) is at least the op's floor, and floor + fixed cost is "
               "within 2x of measured",
               _fixed_cost,
               ("launch", "dispatch", "fixed cost", "fixed-cost", "per-call", "per call", "sync", "startup",
                "kernel start", "small op", "too small")),
    MissReason("below-peak-bandwidth",
               "a memory-bound op streams at a fraction of the HBM peak",
               "memory-bound, and hand-count bytes / measured time is at most half the peak bytes/s (the copy "
               "probe shows what the device attains)",
               _below_peak_bandwidth,
               ("bandwidth", "streams", "streaming", "hbm peak", "memory peak", "bytes/s", "not saturat")),
    MissReason("below-peak-compute",
               "a compute-bound op reaches a fraction of the peak FLOP/s (padding to the MXU/tile size is a sub-case)",
               "compute-bound, and hand-count FLOPs / measured time is at most half the peak FLOP/s (the matmul "
               "probe shows what the device attains)",
               _below_peak_compute,
               ("flop/s", "flops/s", "mxu", "tensor core", "utilization", "utilisation", "padding", "padded",
                "tile", "compute peak", "peak flop")),
    MissReason("extra-traffic",
               "the compiled program moves more bytes than the hand count: two passes, a transpose, an unfused op",
               "XLA's bytes accessed at least 1.5x the hand count's, and those bytes at peak bandwidth take longer "
               "than the floor",
               _extra_traffic,
               ("extra traffic", "more bytes", "two passes", "second pass", "transpose", "unfused", "not fused",
                "materializ", "materialis", "extra copy", "re-read", "reread")),
    MissReason("less-traffic",
               "caches, VMEM residency or fusion move fewer HBM bytes than counted",
               "measured beats the hand count's memory time by 1.5x, or XLA's bytes accessed at most 1/1.5 of "
               "the hand count",
               _less_traffic,
               ("cache", "vmem", "l2", "fusion", "fused", "fewer bytes", "less traffic", "resident", "reuse",
                "on-chip", "on chip")),
    MissReason("emulated-dtype",
               "the device has no native arithmetic for the dtype and computes it in f32 (bf16 on a CPU)",
               "the record's platform computes the op's dtype by converting to f32 (bf16 on CPU), and the run "
               "is over 2x slower than both the prediction and the roofline floor",
               _emulated_dtype,
               ("upcast", "emulat", "f32", "float32", "fp32", "convert", "conversion", "no native bf16",
                "bf16 on cpu", "bf16 on a cpu")),
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


def find(reason_id: str) -> MissReason:
    """The reason with this id; KeyError naming the known ids for an unknown one."""
    try:
        return BY_ID[reason_id]
    except KeyError:
        raise KeyError(f"unknown miss reason '{reason_id}'; known: {', '.join(BY_ID)}") from None


def assess(ev: OpEvidence) -> list[Finding]:
    """One Finding per reason, in catalogue order."""
    return [reason.test(ev) for reason in REASONS]


def supported_reasons(ev: OpEvidence) -> list[str]:
    return [f.reason_id for f in assess(ev) if f.supported]


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w/ ]+", " ", text.lower().replace("'", "")).split())


def is_shrug(text: str) -> bool:
    return _normal(text) in SHRUGS or text.strip() in SHRUGS


def read_reasons(text: str) -> list[str]:
    """The reason ids a learner's sentence names: ids themselves, or words mapped to them
    ("launch", "dispatch" -> fixed-cost; "upcast" -> emulated-dtype ...), in catalogue order."""
    low = " " + text.lower().replace("_", "-") + " "
    named = []
    for reason in REASONS:
        if re.search(rf"(?<![\w-]){re.escape(reason.id)}(?![\w-])", low) or \
                re.search(rf"(?<![\w-]){re.escape(reason.id.replace('-', ' '))}(?![\w-])", low):
            named.append(reason.id)
            continue
        for word in reason.words:
            if re.search(rf"(?<![\w]){re.escape(word.lower())}", low):
                named.append(reason.id)
                break
    return named


@dataclass(frozen=True)
class Judgement:
    """Whether an explanation of one miss is accepted, the reasons it named, and why (with numbers)."""

    accepted: bool
    reasons: list[str]
    text: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"reasons": list(self.reasons), "text": self.text, "accepted": self.accepted, "why": self.why}


def pointer(ev: OpEvidence) -> str:
    """What to look at for this op: the numbers the reasons are decided on (not the answer)."""
    parts = [f"measured {_t(ev.measured_seconds)}", f"floor {_t(ev.floor_seconds)} ({ev.bound}-bound)"]
    if ev.predicted_seconds:
        parts.append(f"your {_t(ev.predicted_seconds)}")
    parts.append(f"fixed cost {_t(ev.fixed_cost_seconds)}")
    if ev.xla_bytes is not None:
        parts.append(f"XLA bytes {fmt(ev.xla_bytes, 'B')} vs counted {fmt(ev.model_bytes, 'B')}")
    if ev.attained_bytes_per_s is not None:
        parts.append(f"copy probe {fmt(ev.attained_bytes_per_s, 'B/s')} vs peak {fmt(ev.peak_bytes_per_s, 'B/s')}")
    if ev.attained_flops_per_s is not None:
        parts.append(f"matmul probe {fmt(ev.attained_flops_per_s, 'FLOP/s')} vs peak "
                     f"{fmt(ev.peak_flops_per_s, 'FLOP/s')}")
    if ev.emulated_dtype is not None:
        parts.append(f"{ev.dtype} {'emulated in f32' if ev.emulated_dtype else 'native'} on {ev.platform}")
    return "look at: " + "; ".join(parts)


def judge(text: str, ev: OpEvidence, reasons: list[str] | None = None) -> Judgement:
    """Accept ``text`` only when a reason it names (``reasons``, else read from the text) is supported
    by ``ev``; a shrug, no reason, only contradicted reasons, or a list of more than
    ``MAX_MIXED_REASONS`` reasons some of which are contradicted (guessing) is refused with a pointer
    to the numbers to look at. KeyError for an unknown reason id."""
    text = " ".join(str(text or "").split())
    named = list(dict.fromkeys(reasons)) if reasons else read_reasons(text)
    for rid in named:
        find(rid)  # KeyError for an unknown id: the caller says so in one line
    ids = ", ".join(BY_ID)
    if text and is_shrug(text):  # a shrug is refused even beside a reason id: say why in a sentence
        return Judgement(False, named, text, f"refused: '{text}' is a shrug, not a reason; name one of {ids} "
                                             f"and say why ({pointer(ev)})")
    if not named:
        if is_shrug(text):
            lead = f"refused: '{text}' is a shrug, not a reason" if text else "refused: no explanation given"
        else:
            lead = "refused: your sentence names no reason"
        return Judgement(False, [], text, f"{lead}; name one of {ids} ({pointer(ev)})")
    findings = [find(rid).test(ev) for rid in named]
    good = [f for f in findings if f.supported]
    bad = [f for f in findings if not f.supported]
    if good and (len(named) <= MAX_MIXED_REASONS or not bad):
        why = "; ".join(f"accepted: {f.reason_id}: {f.why}" for f in good)
        if bad:
            why += "; not supported: " + "; ".join(f"{f.reason_id}: {f.why}" for f in bad)
        return Judgement(True, named, text, why)
    if good:
        return Judgement(False, named, text,
                         f"refused: {len(named)} reasons named and {len(bad)} of them contradicted by the evidence "
                         f"(a list of guesses is not an explanation): name the one the numbers support "
                         f"({pointer(ev)})")
    refused = "; ".join(f"{f.reason_id}: {f.why}" for f in findings)
    return Judgement(False, named, text, f"refused: the evidence contradicts it: {refused} ({pointer(ev)})")
