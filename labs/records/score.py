"""Scoring a prediction against a measurement: ratio = measured / predicted, within 2x or not.

Pure Python (the gate uses it without jax). The 2x is the course's criterion
(GATE 00: "latency predictions for five ops within 2x of measured").
"""

from __future__ import annotations

import math

WITHIN_FACTOR = 2.0

# Which prediction a run is graded on: the learner's own when given (the point of
# the lab), else the datasheet roofline, else the calibrated one.
PREDICTION_KINDS = ("learner", "datasheet", "calibrated")


def ratio(measured_s: float | None, predicted_s: float | None) -> float | None:
    """measured / predicted (1.0 = exact; 3.0 = three times slower than predicted)."""
    if measured_s is None or predicted_s is None or predicted_s <= 0 or measured_s < 0:
        return None
    value = measured_s / predicted_s
    return value if math.isfinite(value) else None


def within(value: float | None, factor: float = WITHIN_FACTOR) -> bool | None:
    """True when 1/factor <= ratio <= factor; None when there is no ratio."""
    if value is None:
        return None
    return 1.0 / factor <= value <= factor


def graded_kind(available: dict[str, float | None]) -> str | None:
    """The first of PREDICTION_KINDS with a prediction, or None."""
    for kind in PREDICTION_KINDS:
        if available.get(kind) is not None:
            return kind
    return None


def describe_ratio(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1:
        return f"{value:.2f}x (slower)" if value > WITHIN_FACTOR else f"{value:.2f}x"
    return f"{value:.2f}x (faster)" if value < 1 / WITHIN_FACTOR else f"{value:.2f}x"
