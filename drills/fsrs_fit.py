"""`drill fsrs-fit`: FSRS parameters fitted to the learner's own reviews, kept only when they predict better.

Fits with fsrs-rs (imported only here), scores the fit and the defaults on the same held-out
reviews, and keeps the fit only when its held-out log loss is lower.
Details: docs/internals.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

import fsrs_rs_python as engine
from fsrs import Card, Scheduler, State

from drills.store.clock import local_date

TRAIN_SHARE = 0.8  # the first 80% of each skill's history trains, the rest is held out
# fsrs-rs (src/training.rs, compute_parameters): under 64 training items it returns the defaults
# or fits only the initial stabilities, never the whole model.
MIN_TRAINING_ITEMS = 64
P_FLOOR = 1e-4  # a prediction is clipped to [P_FLOOR, 1 - P_FLOOR] before its log is taken
DEFAULT_PARAMETERS = tuple(float(x) for x in engine.DEFAULT_PARAMETERS)

History = Sequence[tuple[datetime, int]]  # one skill's (reviewed_at, rating), oldest first


@dataclass(frozen=True)
class Score:
    log_loss: float
    rmse_bins: float

    def to_dict(self) -> dict[str, float]:
        return {"log_loss": self.log_loss, "rmse_bins": self.rmse_bins}


@dataclass(frozen=True)
class FitResult:
    reviews: int  # the scheduled reviews fitted and scored
    training_items: int  # training reviews a day or more after the one before
    held_out: int  # held-out reviews scored
    default: Score | None
    fitted: Score | None
    fitted_parameters: tuple[float, ...] | None
    kept: bool

    @property
    def more_needed(self) -> int:
        return max(0, MIN_TRAINING_ITEMS - self.training_items)


def day_intervals(history: History) -> list[tuple[int, int]]:
    """(rating, days since the review before: 0 for the first and for one on the same day)."""
    out, before = [], None
    for when, rating in history:
        days = 0 if before is None else (local_date(when) - local_date(before)).days
        out.append((int(rating), max(0, days)))
        before = when
    return out


def cutoff(histories: Sequence[History]) -> datetime | None:
    """The moment with ``TRAIN_SHARE`` of all reviews before it (None: no review)."""
    times = sorted(when for history in histories for when, _ in history)
    return times[min(len(times) - 1, math.floor(len(times) * TRAIN_SHARE))] if times else None


def split_at(history: History, cut: datetime | None) -> int:
    """How many of the history's reviews train: those before ``cut`` (the rest is held out)."""
    return sum(1 for when, _ in history if cut is None or when < cut)


def _item(reviews: Sequence[tuple[int, int]]) -> Any:
    return engine.FSRSItem([engine.FSRSReview(rating, days) for rating, days in reviews])


def training_items(histories: Sequence[History], cut: datetime | None) -> tuple[list[Any], int]:
    """fsrs-rs's items of the training part (for each review after the first, its history up to
    it), and how many of them end with a review a day or more after the one before."""
    items, long_term = [], 0
    for history in histories:
        reviews = day_intervals(history)
        for end in range(2, split_at(history, cut) + 1):
            items.append(_item(reviews[:end]))
            long_term += reviews[end - 1][1] > 0
    return items, long_term


@dataclass(frozen=True)
class HeldOut:
    """One held-out review: what came before it, its interval, the outcome, and the benchmark's bin keys."""

    before: tuple[tuple[int, int], ...]
    days: int
    recalled: bool
    index: int  # its number in the skill's history (1 = the first review)
    lapses: int  # Again answers before it, at reviews a day or more apart


def held_out(histories: Sequence[History], cut: datetime | None) -> list[HeldOut]:
    out = []
    for history in histories:
        reviews = day_intervals(history)
        for i in range(max(1, split_at(history, cut)), len(reviews)):
            rating, days = reviews[i]
            if days < 1:
                continue
            lapses = sum(1 for r, d in reviews[:i] if d > 0 and r == 1)
            out.append(HeldOut(tuple(reviews[:i]), days, rating > 1, i + 1, lapses))
    return out


def predictions(parameters: Sequence[float], reviews: Sequence[HeldOut]) -> list[float]:
    """FSRS's retrievability of each held-out review under ``parameters``."""
    model = engine.FSRS(list(parameters))
    scheduler = Scheduler(parameters=tuple(parameters), enable_fuzzing=False)
    base = datetime(2000, 1, 1, tzinfo=timezone.utc)
    out = []
    for review in reviews:
        state = model.memory_state(_item(review.before))
        card = Card(state=State.Review, stability=float(state.stability), difficulty=float(state.difficulty),
                    last_review=base, due=base)
        out.append(float(scheduler.get_card_retrievability(card, base + timedelta(days=review.days))))
    return out


def log_loss(p: Sequence[float], y: Sequence[bool]) -> float:
    clipped = [min(max(x, P_FLOOR), 1 - P_FLOOR) for x in p]
    return -sum(math.log(q) if hit else math.log(1 - q) for q, hit in zip(clipped, y)) / len(y)


def _bucket(x: float, base: float, scale: float, digits: int) -> float:
    return round(scale * base ** math.floor(math.log(x) / math.log(base)), digits)


def rmse_bins(p: Sequence[float], reviews: Sequence[HeldOut]) -> float:
    """srs-benchmark's RMSE(bins): reviews binned by interval (days, log base 3.62), review number
    (log base 1.89) and lapses (log base 1.73; 0 its own bin); in each bin the mean prediction
    against the mean outcome; the root of the squared gaps weighted by the bins' sizes."""
    bins: dict[tuple[float, float, float], list[float]] = {}
    for q, review in zip(p, reviews):
        key = (_bucket(max(review.days, 1e-6), 3.62, 2.48, 2), _bucket(review.index, 1.89, 1.99, 0),
               _bucket(review.lapses, 1.73, 1.65, 0) if review.lapses else 0.0)
        sums = bins.setdefault(key, [0.0, 0.0, 0.0])
        sums[0] += float(review.recalled)
        sums[1] += q
        sums[2] += 1
    total = sum(n for _, _, n in bins.values())
    return math.sqrt(sum(n * (y / n - q / n) ** 2 for y, q, n in bins.values()) / total)


def score(parameters: Sequence[float], reviews: Sequence[HeldOut]) -> Score | None:
    if not reviews:
        return None
    p = predictions(parameters, reviews)
    return Score(log_loss(p, [r.recalled for r in reviews]), rmse_bins(p, reviews))


def fit(histories: Sequence[History], baseline: Sequence[float] = DEFAULT_PARAMETERS) -> FitResult:
    """Fit on the training part, score ``baseline`` (FSRS's defaults) and the fit on the held-out part."""
    cut = cutoff(histories)
    items, enough = training_items(histories, cut)
    reviews = sum(len(h) for h in histories)
    scored = held_out(histories, cut)
    default = score(baseline, scored)
    if enough < MIN_TRAINING_ITEMS:
        return FitResult(reviews, enough, len(scored), default, None, None, False)
    fitted = tuple(float(x) for x in engine.FSRS(list(baseline)).compute_parameters(items))
    fitted_score = score(fitted, scored)
    kept = default is not None and fitted_score is not None and fitted_score.log_loss < default.log_loss
    return FitResult(reviews, enough, len(scored), default, fitted_score, fitted, kept)


def histories_of(rows: Sequence[tuple[str, datetime, int]]) -> list[list[tuple[datetime, int]]]:
    """The store's scheduled history (``Store.scheduled_history``: by skill, then time) per skill."""
    by_skill: dict[str, list[tuple[datetime, int]]] = {}
    for skill, when, rating in rows:
        by_skill.setdefault(skill, []).append((when, rating))
    return list(by_skill.values())
