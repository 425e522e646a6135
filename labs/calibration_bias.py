"""The learner's calibration: how their own predictions compare with what they measured, over their records.

``prediction_bias`` gives the ratio measured / predicted seconds per op kind and overall (median,
spread, fraction within 2x) and its trend over runs; ``drill progress`` and the page both call it.
Pure Python (no jax).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from generator.model.units import fmt
from labs.records.types import LabRecord

WITHIN_FACTOR = 2.0  # the course's criterion, as labs.records.score.WITHIN_FACTOR
TREND_FACTOR = 1.2  # the typical miss must shrink or grow by this much between the first and latest run


@dataclass(frozen=True)
class OpBias:
    """One op kind over every run that predicted it. Ratios are measured / predicted (dimensionless)."""

    op: str
    label: str
    predictions: int
    median_ratio: float
    low_ratio: float  # 25th percentile
    high_ratio: float  # 75th percentile
    within_2x: float  # fraction of predictions within 2x, 0..1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunBias:
    """One record: the ratios of the learner's predictions in it."""

    path: str
    started_at: str
    device_kind: str
    size: int
    predictions: int
    median_ratio: float
    within_2x: float  # fraction, 0..1
    typical_miss: float  # exp(mean |ln ratio|), a factor >= 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PredictionBias:
    ops: list[OpBias] = field(default_factory=list)
    runs: list[RunBias] = field(default_factory=list)
    predictions: int = 0
    median_ratio: float | None = None
    spread_factor: float | None = None  # exp(stdev of ln ratio); None with fewer than two predictions
    within_2x: float | None = None  # fraction, 0..1
    leaning: str = "none"  # "too fast" (ratio > 1: ops took longer), "too slow", "balanced" or "none"
    trend: str = "none"  # "closer", "further", "steady" (two runs or more), "one run" or "none"

    def to_dict(self) -> dict[str, Any]:
        return {"ops": [o.to_dict() for o in self.ops], "runs": [r.to_dict() for r in self.runs],
                "predictions": self.predictions, "median_ratio": self.median_ratio,
                "spread_factor": self.spread_factor, "within_2x": self.within_2x, "leaning": self.leaning,
                "trend": self.trend}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PredictionBias":
        return cls([OpBias(**o) for o in d.get("ops", ())], [RunBias(**r) for r in d.get("runs", ())],
                   d.get("predictions", 0), d.get("median_ratio"), d.get("spread_factor"), d.get("within_2x"),
                   d.get("leaning", "none"), d.get("trend", "none"))


def learner_ratios(record: LabRecord | Mapping[str, Any]) -> list[tuple[str, str, float]]:
    """(op, label, measured / the learner's predicted seconds) for each op the learner predicted
    (a typed record from the records folder, or a record dict as the lab builds it)."""
    out: list[tuple[str, str, float]] = []
    if isinstance(record, LabRecord):
        for op_row in record.ops:
            learner = op_row.predictions.learner
            predicted = learner.seconds if learner else None
            if _positive(predicted) and _positive(op_row.measured.measured_s):
                ratio = float(op_row.measured.measured_s) / float(predicted)
                if math.isfinite(ratio) and ratio > 0:
                    out.append((op_row.op, op_row.label or op_row.op, ratio))
        return out
    for row in record.get("ops") or ():
        if not isinstance(row, dict):
            continue
        mine = (row.get("predictions") or {}).get("learner")
        measured = (row.get("measured") or {}).get("measured_s")
        predicted = mine.get("seconds") if isinstance(mine, dict) else None
        if not _positive(predicted) or not _positive(measured):
            continue
        ratio = float(measured) / float(predicted)
        if math.isfinite(ratio) and ratio > 0:
            out.append((str(row.get("op")), str(row.get("label") or row.get("op")), ratio))
    return out


def _positive(value: object) -> TypeGuard[float]:
    """A finite number above zero (never a bool): a ratio can be taken of it."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _within(ratio: float) -> bool:
    return 1 / WITHIN_FACTOR <= ratio <= WITHIN_FACTOR


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default), on sorted values."""
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _typical_miss(ratios: list[float]) -> float:
    return math.exp(statistics.fmean(abs(math.log(r)) for r in ratios))


def _leaning(median_ratio: float) -> str:
    if median_ratio > 1.25:
        return "too fast"
    if median_ratio < 1 / 1.25:
        return "too slow"
    return "balanced"


def prediction_bias(records: Iterable[tuple[str, LabRecord | Mapping[str, Any]]]) -> PredictionBias:
    """The learner's bias and spread over ``records`` ((path, record) pairs, any order)."""
    runs: list[tuple[tuple[str, str], RunBias, list[tuple[str, str, float]]]] = []
    for path, record in records:
        found = learner_ratios(record)
        if not found:
            continue
        ratios = [r for _, _, r in found]
        if isinstance(record, LabRecord):
            started, kind, size = record.started, str(record.device_kind), int(record.size or 0)
        else:
            started = str(record.get("measurement_started_at") or record.get("date") or "")
            kind, size = str(record.get("device_kind", "")), int(record.get("size") or 0)
        run = RunBias(str(path), started, kind, size,
                      len(ratios), statistics.median(ratios), sum(map(_within, ratios)) / len(ratios),
                      _typical_miss(ratios))
        runs.append(((started, str(path)), run, found))
    if not runs:
        return PredictionBias()
    runs.sort(key=lambda item: item[0])
    by_op: dict[str, tuple[str, list[float]]] = {}
    for _, _, found in runs:
        for op, label, ratio in found:
            by_op.setdefault(op, (label, []))[1].append(ratio)
    ops = []
    for op, (label, ratios) in by_op.items():
        s = sorted(ratios)
        ops.append(OpBias(op, label, len(s), statistics.median(s), _quantile(s, 0.25), _quantile(s, 0.75),
                          sum(map(_within, s)) / len(s)))
    every = [r for _, _, found in runs for _, _, r in found]
    spread = math.exp(statistics.stdev(math.log(r) for r in every)) if len(every) >= 2 else None
    median = statistics.median(every)
    ordered = [run for _, run, _ in runs]
    if len(ordered) == 1:
        trend = "one run"
    else:
        first, last = ordered[0].typical_miss, ordered[-1].typical_miss
        trend = "closer" if last * TREND_FACTOR <= first else "further" if last >= first * TREND_FACTOR else "steady"
    return PredictionBias(ops, ordered, len(every), median, spread, sum(map(_within, every)) / len(every),
                          _leaning(median), trend)


def ratio_text(ratio: float) -> str:
    """``2.3x`` (measured / predicted), through the one formatter."""
    return f"{fmt(ratio, '')}x"


_LEANING_TEXT = {"too fast": "your predictions run fast: ops take longer than you predict",
                 "too slow": "your predictions run slow: ops finish sooner than you predict",
                 "balanced": "no habitual lean: your median prediction is within 1.25x of measured"}
_TREND_TEXT = {"closer": "closer: your latest run misses by less than your first",
               "further": "further: your latest run misses by more than your first",
               "steady": "steady: your latest run misses by about as much as your first",
               "one run": "one run so far"}


def trend_text(trend: str) -> str:
    """The sentence for a ``PredictionBias.trend`` word ("closer", "further", "steady", "one run")."""
    return _TREND_TEXT[trend]


def format_lines(bias: PredictionBias) -> list[str]:
    """The calibration section of ``drill progress`` (ratios are measured / your prediction)."""
    if not bias.runs:
        return ["  no predictions of yours in these records yet: write them before `drill lab` measures"]
    assert bias.median_ratio is not None  # a run holds at least one prediction
    lines = [f"  over {bias.predictions} prediction(s) in {len(bias.runs)} run(s): median measured/predicted "
             f"{ratio_text(bias.median_ratio)}, {bias.within_2x:.0%} within 2x"
             + (f", spread x{fmt(bias.spread_factor, '')}" if bias.spread_factor is not None else ""),
             f"  {_LEANING_TEXT[bias.leaning]}"]
    for o in bias.ops:
        lines.append(f"    {o.label:<22} median {ratio_text(o.median_ratio):>7}  middle half "
                     f"{ratio_text(o.low_ratio)}..{ratio_text(o.high_ratio)}  {o.within_2x:.0%} within 2x "
                     f"({o.predictions})")
    lines.append(f"  trend: {trend_text(bias.trend)}")
    for r in bias.runs:
        lines.append(f"    {r.started_at[:16]}  {r.device_kind}, N={r.size}: median {ratio_text(r.median_ratio)}, "
                     f"{r.within_2x:.0%} within 2x, typical miss x{fmt(r.typical_miss, '')}")
    return lines
