"""Statistics over a store: reviews, what is due, retention, streak, accuracy per family and chip.

Days are calendar days in the time zone of ``now`` (the local zone by default).
Details: docs/internals.md.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any

from fsrs import State

from drills.store.repository import Store, Tally
from drills.store.clock import day_start, day_starts, iso, local_date, parse_iso, utc_now, wall_clock
from generator.io.safeio import display_path

RETENTION_WINDOW_DAYS = 30


def compute_stats(store: Store, now: datetime | None = None) -> dict[str, Any]:
    """The numbers ``drill stats`` prints; keys are an interface (``drill progress`` reads them).

    Nothing here reads the whole review log: totals and accuracy come from the
    store's tallies, today's count, the retention window and the streak from
    indexed ranges of ``reviewed_at``, so the cost follows the skills and the
    last 30 days, not the history. Days are in ``now``'s zone when ``now`` is
    given with one, else in the local zone (any ``$TZ``, ``UTC-24`` included).
    A ``now`` behind the newest review is the clock's fault (``drills.store.clock``):
    everything is read at the newest review's time instead.
    """
    zone: tzinfo | None = None
    if now is None:
        now = utc_now()
    elif now.tzinfo is None:
        now = datetime.fromtimestamp(now.timestamp(), timezone.utc)  # a naive time is local wall-clock time
    else:
        zone = now.tzinfo
    clock = now
    future, latest = store.future_reviews(clock)
    if future:
        now = store.store_time(clock).astimezone(now.tzinfo)
    today = local_date(now, zone)
    start_of_today = day_start(today, zone)
    end_of_today = day_start(today + timedelta(days=1), zone)

    cards = store.cards(now)
    tallies = store.tallies()
    recounted = not tallies_agree(tallies, store.logged_reviews())
    if recounted:  # a hand-edited summary is never shown as fact: the log itself is counted instead
        tallies = store.tallies(from_log=True)
    recalls, recalled = store.recalls_since(now - timedelta(days=RETENTION_WINDOW_DAYS))
    next_due = min((row.due for row in cards.values()), default=None)
    last = store.last_review_at()

    return {
        "store": display_path(store.path),  # bytes that are not UTF-8 as \\xNN, not a lone surrogate
        "reviews": sum(t.reviews for t in tallies),
        "cram_reviews": sum(t.cram for t in tallies),
        "reviews_today": store.count_since(start_of_today),
        "due_now": sum(1 for row in cards.values() if row.due <= now),
        "due_today": sum(1 for row in cards.values() if row.due < end_of_today),
        "skills_seen": len(cards),
        "skills_learned": sum(1 for row in cards.values() if row.card.state == State.Review),
        "retention_30d": (recalled / recalls) if recalls else None,
        "retention_30d_reviews": recalls,
        "streak_days": _streak(store, today, zone),
        "accuracy_by_family": _accuracy(tallies, lambda t: t.family),
        "accuracy_by_chip": _accuracy(tallies, lambda t: t.chip or "any"),
        "next_due": iso(next_due) if next_due else None,
        "last_review": iso(min(last, now)) if last else None,  # a review dated in the future counts as now
        "future_reviews": future,
        "future_latest": latest,
        "clock": iso(clock),
        "tallies_recounted": recounted,
        "scheduler": _scheduler(store),
    }


def _scheduler(store: Store) -> dict[str, Any]:
    """Which FSRS parameters the quiz schedules with: fitted (``drill fsrs-fit``) since when, or the defaults."""
    kept = store.fsrs_parameters()
    if kept is None:
        return {"parameters": "default", "since": None, "fitted_reviews": None, "log_loss": None,
                "default_log_loss": None}
    return {"parameters": "fitted", "since": kept["kept_at"], "fitted_reviews": kept["reviews"],
            "log_loss": kept["log_loss"], "default_log_loss": kept["default_log_loss"]}


def tallies_agree(tallies: list[Tally], logged: int) -> bool:
    """Do the tallies hold together with the log, as far as a cheap check can tell: their reviews sum to
    the log's count, and no row has more right answers or cram reviews than reviews, or fewer than none?"""
    return (sum(t.reviews for t in tallies) == logged
            and all(0 <= t.correct <= t.reviews and 0 <= t.cram <= t.reviews for t in tallies))


STREAK_PROBE_DAYS = 64  # days walked back in one query through a streak


def _streak(store: Store, today: date, zone: tzinfo | None) -> int:
    """``streak_days`` by walking back from today a batch of ``STREAK_PROBE_DAYS`` days at a time,
    an indexed probe a day inside one SQLite query (reviews dated after today count as today's, by
    the clock rule): the cost follows the streak's length in days, never the number of reviews.
    A batch whose two ends have different UTC offsets (a daylight-saving change in it) is probed a
    day at a time with each day's own midnight."""
    days: set[date] = set()
    end = day_start(today, zone)
    if store.any_between(end, None):
        days.add(today)
    day = today - timedelta(days=1)
    while True:
        start = day_start(day, zone)
        oldest = day_start(day - timedelta(days=STREAK_PROBE_DAYS - 1), zone)
        if start - oldest == timedelta(days=STREAK_PROBE_DAYS - 1) and end - start == timedelta(days=1):
            found = store.days_in_a_row(start, end, STREAK_PROBE_DAYS)  # every day in the batch is 24 h
        else:
            starts = day_starts(day, STREAK_PROBE_DAYS, zone)
            hits = store.days_with_reviews(list(zip(starts, [end, *starts[:-1]])))
            found = hits.index(False) if False in hits else len(hits)
        days.update(day - timedelta(days=k) for k in range(found))
        if found < STREAK_PROBE_DAYS:
            return streak_days(days, today)
        day -= timedelta(days=STREAK_PROBE_DAYS)
        end = day_start(day + timedelta(days=1), zone)


def streak_days(review_days: set[date], today: date) -> int:
    """Days in a row with reviews, ending today (or yesterday if today has none yet)."""
    day = today if today in review_days else today - timedelta(days=1)
    count = 0
    while day in review_days:
        count += 1
        day -= timedelta(days=1)
    return count


def _accuracy(tallies: list[Tally], key: Any) -> dict[str, dict[str, Any]]:
    totals: dict[str, list[int]] = {}
    for tally in tallies:
        entry = totals.setdefault(key(tally), [0, 0])
        entry[0] += tally.reviews
        entry[1] += tally.correct
    return {name: {"reviews": n, "correct": ok, "accuracy": ok / n}
            for name, (n, ok) in sorted(totals.items()) if n}


def summary_lines(stats: dict[str, Any]) -> list[str]:
    """The plain-text view of ``compute_stats`` for ``drill stats``."""
    retention = stats["retention_30d"]
    lines = [
        f"store: {stats['store']}",
        *(["tallies: the store's summary disagrees with its reviews (edited by hand?); these numbers are counted "
           "from the reviews themselves (drill store check names the rows)"] if stats.get("tallies_recounted") else []),
        f"reviews: {stats['reviews']} ({stats['reviews_today']} today, {stats['cram_reviews']} cram)",
        f"due now: {stats['due_now']}   due today: {stats['due_today']}   next due: {_local(stats['next_due'])}",
        f"skills: {stats['skills_seen']} seen, {stats['skills_learned']} learned",
        "retention (30 days): " + (f"{retention:.0%} of {stats['retention_30d_reviews']} recalls"
                                   if retention is not None else "- (no reviews of learned skills yet)"),
        f"streak: {stats['streak_days']} day{'s' if stats['streak_days'] != 1 else ''}",
        _scheduler_line(stats.get("scheduler")),
    ]
    for title, key in (("accuracy by family", "accuracy_by_family"), ("accuracy by chip", "accuracy_by_chip")):
        table = stats[key]
        if not table:
            continue
        lines.append(f"{title}:")
        width = max(len(name) for name in table)
        for name, entry in table.items():
            lines.append(f"  {name:<{width}}  {entry['accuracy']:>4.0%}  ({entry['correct']}/{entry['reviews']})")
    return lines


def _scheduler_line(scheduler: dict[str, Any] | None) -> str:
    if not scheduler or scheduler["parameters"] != "fitted":
        return "scheduler: FSRS's default parameters (drill fsrs-fit fits them to your reviews)"
    return (f"scheduler: FSRS parameters fitted to your {scheduler['fitted_reviews']} reviews, in use since "
            f"{_local(scheduler['since'])} (held-out log loss {scheduler['log_loss']:.4f}, defaults "
            f"{scheduler['default_log_loss']:.4f})")


def _local(moment: str | None) -> str:
    """A stored UTC time as local wall-clock time, to the minute."""
    return wall_clock(parse_iso(moment)).strftime("%Y-%m-%d %H:%M") if moment else "-"
