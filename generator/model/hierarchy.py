"""One device's memory hierarchy and compute rates, as EX·06 lays them out: pure data.

A ``Hierarchy`` comes from the catalogue (``from_chip``) or from a measurement on the lab's device.
``level_for`` names the level an op's working set fits; ``prediction`` is an op's time at its
own measured rates.
Details: docs/internals.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from generator.model import costs
from generator.errors import DrillError
from generator.model.roofline import Ceilings, Estimate, estimate
from generator.model.units import fmt

MEASURED = "measured just now"


class HierarchyError(DrillError, ValueError):
    """A hierarchy that cannot be read: one line saying why."""


def _num(d: Mapping[str, Any], key: str) -> float | None:
    value = d.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HierarchyError(f"hierarchy field '{key}' is not a number")
    return float(value)


@dataclass(frozen=True)
class CallRate:
    """What one call attains streaming a level: ``call_bytes`` moved per call (read + write), its
    bytes/s and spread. A small call cannot use every core; main memory is swept by call size."""

    call_bytes: float
    bytes_per_s: float
    spread: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"call_bytes": self.call_bytes, "bytes_per_s": self.bytes_per_s, "spread": self.spread}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CallRate":
        if not isinstance(d, Mapping):
            raise HierarchyError("a call rate is not an object")
        size, rate = _num(d, "call_bytes"), _num(d, "bytes_per_s")
        if not (size and size > 0 and rate and rate > 0):
            raise HierarchyError("a call rate needs positive call_bytes and bytes_per_s")
        return cls(size, rate, _num(d, "spread"))


@dataclass(frozen=True)
class Level:
    """One level a working set can live in. ``size_bytes`` None: main memory (its size is no limit
    the lab meets); ``bytes_per_s`` None: not published; ``spread`` (IQR / median of the copy
    runs) None for a catalogue figure; ``swept_bytes`` the copy's buffer at this level."""

    name: str
    what: str
    size_bytes: float | None
    bytes_per_s: float | None
    source: str
    spread: float | None = None
    swept_bytes: float | None = None
    main_memory: bool = False
    by_call: tuple[CallRate, ...] = ()
    flagged: bool = False  # out of order or noisy after one re-measure: the hierarchy's notes say which


    def for_call(self, call_bytes: float) -> CallRate | None:
        """The swept call size nearest ``call_bytes`` (on a log scale), or None when not swept."""
        if not self.by_call or call_bytes <= 0:
            return None
        return min(self.by_call, key=lambda c: abs(math.log(c.call_bytes / call_bytes)))

    def holds(self, working_set_bytes: float) -> bool:
        """Whether a working set of this many bytes fits this level."""
        return self.main_memory or (self.size_bytes is not None and working_set_bytes <= self.size_bytes)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "what": self.what, "size_bytes": self.size_bytes,
                "bytes_per_s": self.bytes_per_s, "source": self.source, "spread": self.spread,
                "swept_bytes": self.swept_bytes, "main_memory": self.main_memory,
                "by_call": [c.to_dict() for c in self.by_call], "flagged": self.flagged}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Level":
        if not isinstance(d, Mapping) or not isinstance(d.get("name"), str):
            raise HierarchyError("a hierarchy level needs a name")
        calls = d.get("by_call") or []
        if not isinstance(calls, list):
            raise HierarchyError("a level's by_call is a list")
        return cls(str(d["name"]), str(d.get("what") or ""), _num(d, "size_bytes"), _num(d, "bytes_per_s"),
                   str(d.get("source") or ""), _num(d, "spread"), _num(d, "swept_bytes"),
                   bool(d.get("main_memory")), tuple(CallRate.from_dict(c) for c in calls),
                   bool(d.get("flagged")))


@dataclass(frozen=True)
class MatmulRate:
    """The FLOP/s one matmul shape attains in one dtype (``shape`` as ``generator.model.costs`` counts
    it: B, D, F for [B,D] @ [D,F]); ``name`` says which ("square", "skinny")."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    flops_per_s: float
    spread: float | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape),
                "flops_per_s": self.flops_per_s, "spread": self.spread, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MatmulRate":
        if not isinstance(d, Mapping):
            raise HierarchyError("a matmul rate is not an object")
        rate = _num(d, "flops_per_s")
        if rate is None or not rate > 0:
            raise HierarchyError("a matmul rate needs a positive flops_per_s")
        shape = d.get("shape") or []
        if not isinstance(shape, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in shape):
            raise HierarchyError("a matmul rate's shape is a list of integers")
        return cls(str(d.get("name") or ""), str(d.get("dtype") or ""), tuple(shape), rate, _num(d, "spread"),
                   str(d.get("source") or ""))


@dataclass(frozen=True)
class ExpRate:
    """The exponentials per second one dtype attains: an elementwise exp over the lab's softmax shape,
    many passes a call. The compute rate of an op its exps bound (``generator.model.costs.transcendentals``:
    softmax on a CPU, where exp costs many adds)."""

    dtype: str
    shape: tuple[int, ...]
    per_s: float
    spread: float | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "shape": list(self.shape), "per_s": self.per_s, "spread": self.spread,
                "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ExpRate":
        if not isinstance(d, Mapping):
            raise HierarchyError("an exp rate is not an object")
        rate = _num(d, "per_s")
        if rate is None or not rate > 0:
            raise HierarchyError("an exp rate needs a positive per_s")
        shape = d.get("shape") or []
        if not isinstance(shape, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in shape):
            raise HierarchyError("an exp rate's shape is a list of integers")
        return cls(str(d.get("dtype") or ""), tuple(shape), rate, _num(d, "spread"), str(d.get("source") or ""))


def exp_bound_flops_per_s(flops_per_s: float, flops: float, exps: float, exps_per_s: float) -> float:
    """``flops_per_s``, lowered so that ``flops`` take at least as long as ``exps`` exponentials at
    ``exps_per_s``: the compute rate of an op its exps bound."""
    if not (exps > 0 and exps_per_s > 0 and flops > 0):
        return flops_per_s
    return min(flops_per_s, flops * exps_per_s / exps)


@dataclass(frozen=True)
class FreshOutput:
    """What writing a call's output to freshly allocated memory costs beyond writing it in place: the
    same rotated copy from main memory timed both ways at one output size (seconds a call). On a CPU a
    fresh output of a few MiB pays the allocator's page faults and zeroing; the lab's ops (never
    donated) all write fresh outputs."""

    output_bytes: float
    extra_s: float
    spread: float | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"output_bytes": self.output_bytes, "extra_s": self.extra_s, "spread": self.spread,
                "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FreshOutput":
        if not isinstance(d, Mapping):
            raise HierarchyError("a fresh-output cost is not an object")
        size, extra = _num(d, "output_bytes"), _num(d, "extra_s")
        if size is None or not size > 0 or extra is None or extra < 0:
            raise HierarchyError("a fresh-output cost needs a positive output_bytes and extra_s of at least 0")
        return cls(size, extra, _num(d, "spread"), str(d.get("source") or ""))


# At most this share of a measured op call is taken to be its fixed cost (the rest its streaming): a fixed
# cost probed larger than a whole call of the op is noise in one of the two, not a call that streams nothing.
FIXED_SHARE_MAX = 0.5


@dataclass(frozen=True)
class OpRate:
    """One op kind's streaming rate in one dtype, measured where its working set lives: ``op`` a
    ``generator.model.costs`` op ("add", "reduce_sum", "softmax") or "convert" (a dtype change from ``dtype``),
    ``working_set_bytes`` its rotated inputs in all at the measured size, ``bytes_per_s`` the op's bytes
    as ``generator.model.costs`` counts them over the device time of a whole call, ``level`` the name of the
    level that holds that working set, ``flagged`` noisy even after one re-measure. ``call_bytes``: one
    call's bytes at the measured size."""

    op: str
    dtype: str
    working_set_bytes: float
    bytes_per_s: float
    spread: float | None
    level: str
    source: str
    flagged: bool = False
    call_bytes: float | None = None

    def streaming_bytes_per_s(self, fixed_cost_s: float) -> float:
        """The rate of this op kind's bytes beyond its fixed cost: a whole call of ``call_bytes`` took
        ``call_bytes / bytes_per_s``, of which ``fixed_cost_s`` (at most FIXED_SHARE_MAX of it) is paid
        once per call whatever its size; the whole-call rate where the call size is unknown."""
        if not self.call_bytes or fixed_cost_s <= 0:
            return self.bytes_per_s
        call_s = self.call_bytes / self.bytes_per_s
        return self.call_bytes / (call_s - min(fixed_cost_s, FIXED_SHARE_MAX * call_s))

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "dtype": self.dtype, "working_set_bytes": self.working_set_bytes,
                "bytes_per_s": self.bytes_per_s, "spread": self.spread, "level": self.level,
                "source": self.source, "flagged": self.flagged, "call_bytes": self.call_bytes}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OpRate":
        if not isinstance(d, Mapping):
            raise HierarchyError("an op rate is not an object")
        working, rate = _num(d, "working_set_bytes"), _num(d, "bytes_per_s")
        if not (working and working > 0 and rate and rate > 0):
            raise HierarchyError("an op rate needs positive working_set_bytes and bytes_per_s")
        if not isinstance(d.get("op"), str) or not isinstance(d.get("level"), str):
            raise HierarchyError("an op rate needs its op and level named")
        return cls(str(d["op"]), str(d.get("dtype") or ""), working, rate, _num(d, "spread"), str(d["level"]),
                   str(d.get("source") or ""), bool(d.get("flagged")), _num(d, "call_bytes"))


@dataclass(frozen=True)
class Prediction:
    """What a measured hierarchy predicts for one op: its floor at the op's own measured rates
    (``Hierarchy.ceilings_for``), the fixed cost charged on top of it, and its fresh output's cost."""

    estimate: Estimate
    fixed_cost_s: float
    fresh_output_s: float = 0.0

    @property
    def seconds(self) -> float:
        return self.estimate.floor_s + self.fixed_cost_s + self.fresh_output_s


@dataclass(frozen=True)
class Hierarchy:
    """A device's levels (fastest first, main memory last), its matmul rates and its exp rates."""

    device_kind: str
    source: str  # MEASURED, or "catalogue"
    levels: tuple[Level, ...]
    matmul_rates: tuple[MatmulRate, ...] = ()
    measured_at: str = ""
    notes: tuple[str, ...] = field(default=())
    exp_rates: tuple[ExpRate, ...] = ()
    fresh_outputs: tuple[FreshOutput, ...] = ()
    op_rates: tuple[OpRate, ...] = ()

    @property
    def measured(self) -> bool:
        return self.source == MEASURED

    @property
    def main_memory(self) -> Level | None:
        return next((lv for lv in self.levels if lv.main_memory), None)

    def level_for(self, working_set_bytes: float) -> Level | None:
        """The smallest level with a bandwidth that holds the working set (main memory when none
        smaller does); None when no level has a bandwidth."""
        for level in self.levels:
            if level.bytes_per_s and level.holds(working_set_bytes):
                return level
        return None

    def rate(self, dtype: str, shape: tuple[int, ...]) -> MatmulRate | None:
        """The measured rate of this exact matmul shape in this dtype, or None."""
        return next((r for r in self.matmul_rates if r.dtype == dtype and tuple(r.shape) == tuple(shape)), None)

    def rates_for(self, dtype: str) -> list[MatmulRate]:
        return [r for r in self.matmul_rates if r.dtype == dtype]

    def stream_rate(self, working_set_bytes: float, call_bytes: float) -> float | None:
        """The bytes/s an op streams at: the level its working set fits, at the swept call size nearest
        ``call_bytes`` where that level was swept by call size; None when no level has a bandwidth.
        A cache level never streams slower than main memory does at the same call size: where it
        measured slower (out of order, as a loaded or virtual machine's can), main memory's rate stands."""
        level = self.level_for(working_set_bytes)
        if level is None:
            return None
        call = level.for_call(call_bytes)
        rate = call.bytes_per_s if call is not None else level.bytes_per_s
        main = self.main_memory
        if main is not None and main is not level and rate is not None:
            main_call = main.for_call(call_bytes)
            floor = main_call.bytes_per_s if main_call is not None else main.bytes_per_s
            rate = max(rate, floor or 0.0)
        return rate

    def op_rate_for(self, cost_op: str, dtype: str, working_set_bytes: float,
                    call_bytes: float | None = None) -> OpRate | None:
        """This op kind's rate in ``dtype``, measured at a size whose working set lives in the same level
        as ``working_set_bytes`` (``level_for``); None where none was measured there (never a rate
        measured in another level, nor a small call's time scaled). Where that level was measured at
        several call sizes: the one nearest ``call_bytes`` (log scale), else the largest call."""
        level = self.level_for(working_set_bytes)
        if level is None:
            return None
        found = [r for r in self.op_rates if r.op == cost_op and r.dtype == dtype and r.level == level.name]
        if not found:
            return None
        if call_bytes is None or call_bytes <= 0 or any(not r.call_bytes for r in found):
            return max(found, key=lambda r: r.call_bytes or 0.0)
        return min(found, key=lambda r: abs(math.log((r.call_bytes or 1.0) / call_bytes)))

    def fastest(self, base: Ceilings) -> Ceilings:
        """``base`` with the fastest rates this hierarchy measured where they beat it (any matmul of
        ``base``'s dtype, any level's bandwidth): the least time any work can take here, which is what
        a fixed-cost probe's work is taken to cost (so a slow big probe never hides a call's cost)."""
        rates = [r.flops_per_s for r in self.rates_for(base.dtype)]
        levels = [lv.bytes_per_s for lv in self.levels if lv.bytes_per_s]
        return Ceilings(base.name, max([base.peak_flops_per_s, *rates]), max([base.hbm_bytes_per_s, *levels]),
                        base.dtype, "the fastest measured rates (calibration and hierarchy)")

    def exp_rate(self, dtype: str) -> ExpRate | None:
        """The measured exp rate in this dtype, or None."""
        return next((r for r in self.exp_rates if r.dtype == dtype), None)

    def ceilings_for(self, fallback: Ceilings, cost_op: str, shape: tuple[int, ...], working_set_bytes: float,
                     call_bytes: float) -> Ceilings:
        """``fallback`` with this op's own measured rates in place of its two numbers: the matmul rate of
        this exact shape and dtype, and the stream rate of its working set and call size (each kept
        from ``fallback`` where the hierarchy has none). An op that computes exponentials
        (``costs.transcendentals``) gets no more FLOP/s than lets its exps run at the measured exp rate:
        its compute time is then the larger of FLOPs / FLOP/s and exps / exp rate."""
        rate = self.rate(fallback.dtype, shape) if cost_op == "matmul" else None
        stream = self.stream_rate(working_set_bytes, call_bytes)
        flops_per_s = rate.flops_per_s if rate else fallback.peak_flops_per_s
        exp = self.exp_rate(fallback.dtype)
        if exp is not None:
            cost = costs.cost(cost_op, shape, fallback.dtype)
            flops_per_s = exp_bound_flops_per_s(flops_per_s, cost.flops, costs.transcendentals(cost), exp.per_s)
        return Ceilings(f"{fallback.name}, from the measured hierarchy", flops_per_s,
                        stream if stream else fallback.hbm_bytes_per_s, fallback.dtype,
                        f"{MEASURED}: this shape's matmul rate, its exp rate and its working set's level")

    def fresh_output_for(self, bytes_written: float) -> FreshOutput | None:
        """The measured fresh-output cost at the output size nearest ``bytes_written`` (log scale), or None."""
        if not self.fresh_outputs or not bytes_written > 0:
            return None
        return min(self.fresh_outputs, key=lambda f: abs(math.log(f.output_bytes / bytes_written)))

    def fresh_output_s(self, bytes_written: float) -> float:
        """What an output of ``bytes_written`` costs beyond writing it in place: the measured extra per
        byte at the measured output size nearest it (``fresh_output_for``), times its bytes; 0 without one."""
        nearest = self.fresh_output_for(bytes_written)
        return 0.0 if nearest is None else nearest.extra_s * bytes_written / nearest.output_bytes

    def exp_floor_s(self, cost: costs.OpCost) -> float:
        """The time the op's exponentials take at the measured exp rate of its dtype (0 without one)."""
        exp = self.exp_rate(cost.dtype)
        return costs.transcendentals(cost) / exp.per_s if exp is not None else 0.0

    def fixed_cost_s(self, probe_cost: costs.OpCost, probe_device_s: float, probe_work_floor_s: float) -> float:
        """A fixed-cost probe's time beyond its work: beyond the larger of its floor at the fastest rates
        (``probe_work_floor_s``) and its exps at the exp rate, so a softmax's exps are not counted as
        a fixed cost as well as in its floor."""
        return max(0.0, probe_device_s - max(probe_work_floor_s, self.exp_floor_s(probe_cost)))

    def prediction(self, fallback: Ceilings, cost: costs.OpCost, working_set_bytes: float,
                   fixed_cost_s: float) -> Prediction:
        """What this hierarchy predicts for ``cost``: its floor at the op's own measured rates
        (``ceilings_for``: its working set's level at its call size, its matmul shape's rate, its exps
        at the exp rate) plus the op kind's measured fixed cost. A matmul whose shape was measured is
        not charged the fixed cost again: that rate is a whole call's, its fixed cost already in it. An
        op kind measured in its working set's level (``op_rate_for``) streams its bytes at that rate less
        its fixed cost (``OpRate.streaming_bytes_per_s``: the fixed cost is charged once, not twice), whose
        calls already hold its exps, its dtype's emulation and its fresh output. Otherwise its
        output (``bytes_written``) is charged what a fresh output of its size costs (``fresh_output_s``)."""
        ceilings = self.ceilings_for(fallback, cost.op, cost.shape, working_set_bytes, float(cost.bytes))
        own_shape = cost.op == "matmul" and self.rate(fallback.dtype, cost.shape) is not None
        if own_shape:
            return Prediction(estimate(ceilings, cost), 0.0)
        own_kind = self.op_rate_for(cost.op, cost.dtype, working_set_bytes, float(cost.bytes))
        if own_kind is not None:  # the op kind's own rate: its exps, emulation and fresh output in it
            kind = Ceilings(f"{fallback.name}, from the measured hierarchy", fallback.peak_flops_per_s,
                            own_kind.streaming_bytes_per_s(fixed_cost_s), fallback.dtype,
                            f"{MEASURED}: this op kind's rate in {own_kind.level} ({own_kind.source})")
            return Prediction(estimate(kind, cost), fixed_cost_s)
        return Prediction(estimate(ceilings, cost), fixed_cost_s, self.fresh_output_s(float(cost.bytes_written)))

    def predicted_s(self, fallback: Ceilings, cost: costs.OpCost, working_set_bytes: float,
                    fixed_cost_s: float) -> float:
        """The seconds ``prediction`` gives."""
        return self.prediction(fallback, cost, working_set_bytes, fixed_cost_s).seconds

    def to_dict(self) -> dict[str, Any]:
        return {"device_kind": self.device_kind, "source": self.source,
                "levels": [lv.to_dict() for lv in self.levels],
                "matmul_rates": [r.to_dict() for r in self.matmul_rates],
                "measured_at": self.measured_at, "notes": list(self.notes),
                "exp_rates": [r.to_dict() for r in self.exp_rates],
                "fresh_outputs": [f.to_dict() for f in self.fresh_outputs],
                "op_rates": [r.to_dict() for r in self.op_rates]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Hierarchy":
        """HierarchyError (one line) for anything that is not a hierarchy."""
        if not isinstance(d, Mapping):
            raise HierarchyError("the hierarchy is not an object")
        levels, rates = d.get("levels"), d.get("matmul_rates") or []
        if not isinstance(levels, list) or not isinstance(rates, list):
            raise HierarchyError("the hierarchy's levels and matmul_rates are lists")
        notes = d.get("notes") or []
        exps = d.get("exp_rates") or []  # absent from hierarchies measured before exp was probed
        fresh = d.get("fresh_outputs") or []  # absent from hierarchies measured before fresh outputs were probed
        kinds = d.get("op_rates") or []  # absent from hierarchies measured before op kinds were probed
        if not isinstance(exps, list) or not isinstance(fresh, list) or not isinstance(kinds, list):
            raise HierarchyError("the hierarchy's exp_rates, fresh_outputs and op_rates are lists")
        return cls(str(d.get("device_kind") or ""), str(d.get("source") or ""),
                   tuple(Level.from_dict(x) for x in levels), tuple(MatmulRate.from_dict(x) for x in rates),
                   str(d.get("measured_at") or ""), tuple(str(n) for n in notes) if isinstance(notes, list) else (),
                   tuple(ExpRate.from_dict(x) for x in exps), tuple(FreshOutput.from_dict(x) for x in fresh),
                   tuple(OpRate.from_dict(x) for x in kinds))


def separated_levels(h: Hierarchy) -> int:
    """How many levels' bandwidths differ from the next slower measured level's by more than the
    two spreads together (main memory counts as one): the levels a measurement tells apart."""
    measured = [lv for lv in h.levels if lv.bytes_per_s]
    if not measured:
        return 0
    apart = 1
    for faster, slower in zip(measured, measured[1:]):
        assert faster.bytes_per_s and slower.bytes_per_s
        band = (faster.spread or 0.0) + (slower.spread or 0.0)
        if abs(faster.bytes_per_s - slower.bytes_per_s) > band * min(faster.bytes_per_s, slower.bytes_per_s):
            apart += 1
    return apart


# ----------------------------------------------------------------- from the catalogue (EX·06's page)

def _figure_value(chip: Any, key: str) -> float | None:
    fig = chip.figure(key)
    return None if fig is None or fig.value is None else float(fig.value)


def _figure_source(chip: Any, key: str) -> str:
    fig = chip.figure(key)
    return fig.source.cite() if fig is not None else "not published"


def _joined(size_source: str, what: str, bandwidth_source: str) -> str:
    """A level's two citations, the second only where it differs from the first."""
    return f"{size_source}; {what}" + ("" if bandwidth_source == size_source else f" ({bandwidth_source})")


def from_chip(chip: Any, cat: Any) -> Hierarchy:
    """A catalogued chip's hierarchy as EX·06 shows it: HBM, then VMEM (TPU; its bandwidth from
    the catalogue's VMEM-to-MXU ratio) or L2 and SMEM (GPU); the published bf16 peak as its one
    rate. ``chip``: ``generator.model.catalogue.Chip``; ``cat`` its ``Catalogue``."""
    hbm = Level("HBM", "off-chip high-bandwidth memory", _figure_value(chip, "hbm_bytes"),
                float(chip.hbm_bytes_per_s), f"{_figure_source(chip, 'hbm_bytes_per_s')}", main_memory=True)
    inner: list[Level] = []
    if chip.kind == "tpu":
        ratio = cat.fact("vmem_to_mxu_over_hbm_bandwidth")
        inner.append(Level("VMEM", "on-chip scratchpad, managed by the kernel", _figure_value(chip, "vmem_bytes"),
                           float(ratio.value) * float(chip.hbm_bytes_per_s),
                           _joined(_figure_source(chip, "vmem_bytes"),
                                   f"bandwidth about {ratio.value:g}x HBM", ratio.source.cite())))
        inner.append(Level("SMEM", "scalar memory, the TPU's scalar unit", _figure_value(chip, "smem_bytes"), None,
                           _figure_source(chip, "smem_bytes")))
    else:
        inner.append(Level("SMEM", "per SM (shared memory)", _figure_value(chip, "smem_bytes_per_sm"), None,
                           _figure_source(chip, "smem_bytes_per_sm")))
        inner.append(Level("L2", "cache shared by all SMs", _figure_value(chip, "l2_bytes"), None,
                           _figure_source(chip, "l2_bytes")))
    rates = tuple(MatmulRate("peak", dtype, (), float(fig.value), None, fig.source.cite())
                  for dtype, fig in chip.peak_flops.items() if fig.value is not None)
    return Hierarchy(chip.name, "catalogue", (*inner, hbm), rates)


# ----------------------------------------------------------------- shown as EX·06 lays it out

WIDE = 120  # a row and its source on one line up to this width


def _size(value: float | None, main: bool) -> str:
    if value is None:
        return "main memory" if main else "not published"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale and value % scale == 0:  # a power-of-two size reads as one
            return f"{value / scale:g} {unit}"
    return fmt(value, "B")


def lines(h: Hierarchy) -> list[str]:
    """EX·06 as text: one row per level (size, bandwidth, spread, source), then the matmul rates."""
    title = (f"EX·06 memory hierarchy of this device ({h.device_kind}), {MEASURED}" if h.measured
             else f"EX·06 memory hierarchy of {h.device_kind} (catalogue)")
    head = f"  {'level':<7} {'size':>11} {'bandwidth':>13} {'spread':>7}  source"
    out = [title, head]
    for lv in h.levels:
        bw = "not published" if lv.bytes_per_s is None else fmt(lv.bytes_per_s, "B/s")
        spread = "-" if lv.spread is None else f"{100 * lv.spread:.0f}%" + ("!" if lv.flagged else "")
        row = f"  {lv.name:<7} {_size(lv.size_bytes, lv.main_memory):>11} {bw:>13} {spread:>7}"
        out.append(f"{row}  {lv.source}" if len(row) + len(lv.source) <= WIDE else row)
        if len(row) + len(lv.source) > WIDE:  # a long citation on a line of its own
            out.append(f"          source: {lv.source}")
        for c in lv.by_call:
            cs = "-" if c.spread is None else f"{100 * c.spread:.0f}%"
            out.append(f"  {'':<7} {'calls of':>11} {fmt(c.bytes_per_s, 'B/s'):>13} {cs:>7}  "
                       f"{fmt(c.call_bytes, 'B')} moved a call, rotated through {lv.name}")
    if h.matmul_rates:
        out.append("  matmul rates:")
        for r in h.matmul_rates:
            shape = "x".join(map(str, r.shape)) if r.shape else "published peak"
            spread = "" if r.spread is None else f", spread {100 * r.spread:.0f}%"
            line = f"    {r.dtype:<5} {r.name:<7} {shape:<14} {fmt(r.flops_per_s, 'FLOP/s')}{spread}"
            out.append(f"{line}  ({r.source})" if len(line) + len(r.source) <= WIDE else line)
            if len(line) + len(r.source) > WIDE:
                out.append(f"          source: {r.source}")
    if h.exp_rates:
        out.append("  exp rates (an elementwise exp, the compute a softmax's exps need):")
        for e in h.exp_rates:
            shape = "x".join(map(str, e.shape))
            spread = "" if e.spread is None else f", spread {100 * e.spread:.0f}%"
            line = f"    {e.dtype:<5} {'exp':<7} {shape:<14} {fmt(e.per_s, ' exp/s')}{spread}"
            out.append(f"{line}  ({e.source})" if len(line) + len(e.source) <= WIDE else line)
    if h.op_rates:
        out.append("  op rates (each op kind's bytes over its whole call, in the level holding its working set):")
        for k in h.op_rates:
            spread = "" if k.spread is None else f", spread {100 * k.spread:.0f}%" + (" (flagged)" if k.flagged else "")
            out.append(f"    {k.dtype:<5} {k.op:<10} {fmt(k.bytes_per_s, 'B/s'):>11} in {k.level}, working set "
                       f"{fmt(k.working_set_bytes, 'B')}{spread}")
    if h.fresh_outputs:
        out.append("  fresh outputs (a call's output written to new memory, beyond writing it in place):")
        for f in h.fresh_outputs:
            spread = "" if f.spread is None else f", spread {100 * f.spread:.0f}%"
            out.append(f"    {fmt(f.output_bytes, 'B'):>10} output  +{fmt(f.extra_s, 's')} a call{spread}")
    out.extend(f"  note: {n}" for n in h.notes)
    return out
