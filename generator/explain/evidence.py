"""A miss's evidence: one op of one lab record, every number from the record, and the estimate
the reasons correct.

``OpEvidence`` holds what the record measured and counted (SI units: seconds, bytes, FLOPs,
bytes/s, FLOP/s); ``Estimate`` is the learner's arithmetic as the reasons change it, computed
through ``generator.model.roofline``; ``Finding`` is one reason's verdict on one op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from generator.model import roofline

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
    cost_op: str = ""  # generator.model.costs op name ("matmul", "add", ...) for the misconception check
    shape: tuple[int, ...] = ()  # the op's shape as generator.model.costs counts it
    lacking: tuple[str, ...] = field(default=())  # evidence the record does not have (older schema)
    # (misconception id, name, the time that wrong method gives, its step): the misconception catalogue's own
    # wrong answers to this op's floor problem, priced by its builder (``generator.problems.record_mistakes``);
    # derived from the model, not a number of the record, so never in ``to_dict``
    wrong_methods: tuple[tuple[str, str, float, str], ...] = field(default=(), compare=False)
    noisy_probes: tuple[str, ...] = field(default=())
    emulated_from: str = ""
    working_set_bytes: float | None = None
    cache_bytes: float | None = None
    # The measured hierarchy (generator.model.hierarchy, stored in the record's probes): the level the rotated
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
    # This op kind's own fixed-cost probe (its smallest lattice-legal size): its device time and its counts.
    probe_seconds: float | None = None
    probe_bytes: float | None = None
    probe_flops: float | None = None
    fixed_cost_spread: float | None = None
    copy_spread: float | None = None
    matmul_spread: float | None = None
    # The op's exponentials per call (``generator.model.costs.transcendentals``) and the measured exp rate in its
    # dtype (the hierarchy's elementwise-exp probe).
    exps: float | None = None
    exp_per_s: float | None = None
    exp_spread: float | None = None
    # What the op's output, written to freshly allocated memory, costs beyond writing it in place (the
    # hierarchy's fresh-output probe at the nearest output size, scaled to the op's output bytes).
    fresh_output_seconds: float | None = None
    fresh_output_spread: float | None = None
    # The op's output bytes (``generator.model.costs``), and this op kind's own streaming rate in its dtype, measured
    # at a size whose working set lives in the same level as the op's (the hierarchy's op probes).
    output_bytes: float | None = None
    op_rate_bytes_per_s: float | None = None
    op_rate_spread: float | None = None
    op_rate_level: str = ""
    # Every rate the measured hierarchy holds, (what, bytes/s, spread): each level, and main memory by call
    # size; what is said about which level streams at a rate is checked against these.
    level_rates: tuple[tuple[str, float, float | None], ...] = field(default=())

    @property
    def seconds_per_exp(self) -> float | None:
        """The measured time of one exponential in this dtype (1 / ``exp_per_s``)."""
        return 1 / self.exp_per_s if self.exp_per_s else None

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
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "wrong_methods"}
        for name in ("shape", "lacking", "noisy_probes"):
            out[name] = list(out[name])
        out["level_rates"] = [list(r) for r in self.level_rates]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "OpEvidence":
        known = {f.name for f in fields(cls)} - {"wrong_methods"}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["shape"] = tuple(int(x) for x in kwargs.get("shape") or ())
        kwargs["lacking"] = tuple(str(x) for x in kwargs.get("lacking") or ())
        kwargs["noisy_probes"] = tuple(str(x) for x in kwargs.get("noisy_probes") or ())
        kwargs["level_rates"] = tuple((str(r[0]), float(r[1]), None if r[2] is None else float(r[2]))
                                      for r in kwargs.get("level_rates") or ())
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
