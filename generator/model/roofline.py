"""The roofline: one op's cost against a chip's two speeds.

``estimate`` gives an op's T_math, T_comms, floor, intensity, ridge and verdict on a chip,
evaluated from ``generator.model.formulas``; ``worked_lines`` shows the working.
Details: docs/internals.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Protocol

from generator.model import formulas
from generator.model.costs import OpCost
from generator.model.units import fmt, sci, seconds, si
from generator.errors import UsageError


class UnpublishedFigureError(UsageError, KeyError):
    """A figure a chip does not publish (a dtype's peak, a link's bandwidth); the message names what it does."""


class UnknownQuantityError(UsageError, KeyError):
    """A roofline quantity that is not one of ``QUANTITIES``."""


class _Source(Protocol):
    def cite(self) -> str: ...


class _Figure(Protocol):
    @property
    def value(self) -> Any: ...

    @property
    def source(self) -> _Source: ...


class ChipFigures(Protocol):
    """What the roofline reads of a chip: ``generator.model.catalogue.Chip`` has it. Named here rather than
    imported so the catalogue can use this module's formulas (``Chip.ridge_flops_per_byte``) without
    an import cycle."""

    @property
    def name(self) -> str: ...

    @property
    def peak_flops(self) -> Mapping[str, _Figure]: ...

    @property
    def figures(self) -> Mapping[str, _Figure]: ...


def floor_seconds(t_math_s: float, t_comms_s: float) -> float:
    """The floor (lower bound), in seconds: compute and memory traffic overlap, so the larger term."""
    return float(formulas.value("floor", t_math=t_math_s, t_comms=t_comms_s))


def upper_seconds(t_math_s: float, t_comms_s: float) -> float:
    """The upper bound, in seconds: no overlap at all, the two terms one after the other."""
    return float(formulas.value("upper", t_math=t_math_s, t_comms=t_comms_s))


def ridge_flops_per_byte(peak_flops_per_s: float, bytes_per_s: float) -> float:
    """The ridge (critical intensity), in FLOPs per byte: peak FLOP/s / memory-side bytes/s."""
    return float(formulas.value("ridge", peak=peak_flops_per_s, bw=bytes_per_s))


def bound_of(intensity_flops_per_byte: float, ridge_flops_per_byte: float) -> str:
    """The verdict: "compute" when the intensity (FLOPs/byte) reaches the ridge, else "memory"."""
    return str(formulas.value("verdict", intensity=intensity_flops_per_byte, ridge=ridge_flops_per_byte))


def bound_of_seconds(t_math_s: float, t_comms_s: float) -> str:
    """The same verdict from the two times: FLOPs/bytes >= peak/bandwidth is FLOPs/peak >= bytes/bandwidth,
    so ``bound_of`` compares T_math with T_comms (for a comms side that is not one bandwidth: a collective)."""
    return bound_of(t_math_s, t_comms_s)


@dataclass(frozen=True)
class Ceilings:
    """The two speeds a prediction uses: from the datasheet or calibrated on the device."""

    name: str
    peak_flops_per_s: float
    hbm_bytes_per_s: float
    dtype: str = "bf16"
    source: str = ""  # where the two numbers come from, for the worked arithmetic

    @classmethod
    def from_chip(cls, chip: ChipFigures, dtype: str = "bf16") -> "Ceilings":
        peak = chip.peak_flops[dtype] if dtype in chip.peak_flops else None
        if peak is None:
            raise UnpublishedFigureError(
                f"{chip.name} has no published {dtype} peak; published: {', '.join(chip.peak_flops)}")
        bw = chip.figures["hbm_bytes_per_s"]
        cited = {peak.source.cite(), bw.source.cite()}
        return cls(chip.name, float(peak.value), float(bw.value), dtype, "; ".join(sorted(cited)))

    @property
    def ridge_flops_per_byte(self) -> float:
        """peak FLOP/s / HBM bytes/s, in FLOPs per byte (``ridge_flops_per_byte``)."""
        return ridge_flops_per_byte(self.peak_flops_per_s, self.hbm_bytes_per_s)

    def with_peak(self, peak_flops_per_s: float, dtype: str | None = None) -> "Ceilings":
        """The same ceilings with another peak (FLOP/s): a wrong method's peak (sparse, another dtype's)."""
        return replace(self, peak_flops_per_s=float(peak_flops_per_s), dtype=dtype or self.dtype)

    def with_bandwidth(self, bytes_per_s: float) -> "Ceilings":
        """The same ceilings with another memory-side bandwidth (bytes/s): another edition's, a GiB slip."""
        return replace(self, hbm_bytes_per_s=float(bytes_per_s))


# What ``Estimate.quantity`` answers: the numbers a problem asks of a roofline (and "bound", a verdict).
QUANTITIES = ("intensity", "ridge", "bound", "t_math", "t_comms", "floor", "upper")


@dataclass(frozen=True)
class Estimate:
    ceilings: Ceilings
    cost: OpCost
    t_math_s: float
    t_comms_s: float

    @property
    def floor_s(self) -> float:
        return floor_seconds(self.t_math_s, self.t_comms_s)

    @property
    def upper_s(self) -> float:
        return upper_seconds(self.t_math_s, self.t_comms_s)

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.cost.intensity_flops_per_byte

    @property
    def ridge_flops_per_byte(self) -> float:
        return self.ceilings.ridge_flops_per_byte

    @property
    def bound(self) -> str:
        return bound_of(self.intensity_flops_per_byte, self.ridge_flops_per_byte)

    def quantity(self, name: str) -> float | str:
        """One of ``QUANTITIES``: intensity and ridge in FLOPs/byte, times in seconds, bound a verdict."""
        if name == "bound":
            return self.bound
        value = _QUANTITY.get(name)
        if value is None:
            raise UnknownQuantityError(f"unknown quantity '{name}'; known: {', '.join(QUANTITIES)}")
        return value(self)

    @property
    def attainable_flops_per_s(self) -> float:
        roof = formulas.value("memory_roof", intensity=self.intensity_flops_per_byte, bw=self.ceilings.hbm_bytes_per_s)
        return float(formulas.value("attainable", peak=self.ceilings.peak_flops_per_s, memory_roof=roof))

    def to_dict(self) -> dict[str, Any]:
        """The JSON view of ``drill roofline --json`` (these keys are an interface)."""
        return {
            "chip": self.ceilings.name,
            "op": self.cost.op,
            "shape": list(self.cost.shape),
            "dtype": self.cost.dtype,
            "flops": self.cost.flops,
            "bytes": self.cost.bytes,
            "intensity_flops_per_byte": self.intensity_flops_per_byte,
            "ridge_flops_per_byte": self.ridge_flops_per_byte,
            "bound": self.bound,
            "t_math_s": self.t_math_s,
            "t_comms_s": self.t_comms_s,
            "floor_s": self.floor_s,
            "upper_s": self.upper_s,
            "attainable_flops_per_s": self.attainable_flops_per_s,
            "peak_flops_per_s": self.ceilings.peak_flops_per_s,
            "hbm_bytes_per_s": self.ceilings.hbm_bytes_per_s,
            "operand_dtypes": dict(self.cost.operand_dtypes),
            "convention": self.cost.convention,
            "source": self.ceilings.source,
        }


# How ``Estimate.quantity`` reads each numeric quantity (only the one asked is worked out).
_QUANTITY: dict[str, Callable[[Estimate], float]] = {
    "intensity": lambda e: e.intensity_flops_per_byte, "ridge": lambda e: e.ridge_flops_per_byte,
    "t_math": lambda e: e.t_math_s, "t_comms": lambda e: e.t_comms_s, "floor": lambda e: e.floor_s,
    "upper": lambda e: e.upper_s}


def estimate(target: ChipFigures | Ceilings, cost: OpCost) -> Estimate:
    """The roofline estimate of ``cost`` on a chip (datasheet) or on measured ceilings."""
    ceilings = target if isinstance(target, Ceilings) else Ceilings.from_chip(target, cost.dtype)
    return Estimate(ceilings, cost,
                    t_math_s=float(formulas.value("t_math", flops=cost.flops, peak=ceilings.peak_flops_per_s)),
                    t_comms_s=float(formulas.value("t_comms", bytes=cost.bytes, bw=ceilings.hbm_bytes_per_s)))


def summary_lines(est: Estimate) -> list[str]:
    """The EX·01 playground view: intensity, verdict, attainable, floor latency."""
    return [
        f"intensity: {fmt(est.intensity_flops_per_byte, 'FLOP/byte')}",
        f"verdict: {est.bound}-bound",
        f"attainable: {si(est.attainable_flops_per_s, 'FLOP/s')}",
        f"floor latency: {seconds(est.floor_s)}",
    ]


def worked_lines(est: Estimate) -> list[str]:
    """The arithmetic behind ``summary_lines``, each term with its constants."""
    c, k = est.cost, est.ceilings
    peak, bw = k.peak_flops_per_s, k.hbm_bytes_per_s
    return [
        f"FLOPs      = {c.flops_formula} = {c.flops_working} = {sci(c.flops)}",
        f"bytes      = {c.bytes_formula} = {c.bytes_working} = {sci(c.bytes)}",
        f"intensity  = FLOPs / bytes = {sci(c.flops)} / {sci(c.bytes)} = {fmt(est.intensity_flops_per_byte, 'FLOP/byte')}",
        f"ridge      = peak / HBM bandwidth = {sci(peak)} FLOP/s / {sci(bw)} B/s = {fmt(est.ridge_flops_per_byte, 'FLOP/byte')} ({k.dtype})",
        f"verdict    = intensity {'>=' if est.bound == 'compute' else '<'} ridge -> {est.bound}-bound",
        f"T_math     = FLOPs / peak = {sci(c.flops)} / {sci(peak)} = {seconds(est.t_math_s)}",
        f"T_comms    = bytes / HBM bandwidth = {sci(c.bytes)} / {sci(bw)} = {seconds(est.t_comms_s)}",
        f"floor      = max(T_math, T_comms) = {seconds(est.floor_s)}   (upper bound: T_math + T_comms = {seconds(est.upper_s)})",
        f"attainable = min(peak, intensity × bandwidth) = min({sci(peak)}, {sci(formulas.value('memory_roof', intensity=est.intensity_flops_per_byte, bw=bw))}) = {si(est.attainable_flops_per_s, 'FLOP/s')}",
        f"constants  : {k.name} {k.dtype} peak {sci(peak)} FLOP/s, HBM {sci(bw)} B/s — {k.source}",
        f"convention : {c.convention}",
    ]
