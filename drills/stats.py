"""Statistics over a store: reviews, what is due, retention, streak, accuracy per family and chip.

Days (today, the streak) are calendar days in the time zone of ``now``
(the local zone by default). Definitions:

- ``reviews``: every logged answer, cram included; ``cram_reviews`` counts the cram ones.
- ``due_now`` / ``due_today``: skills whose next review is at or before now / before the end of today.
- ``skills_seen``: skills with an FSRS card; ``skills_learned``: those in FSRS's Review state
  (graduated from the learning steps).
- ``retention_30d``: over the last 30 days, the fraction of scheduled reviews of learned
  skills (state Review before the review) that were right; None when there were none.
- ``streak_days``: days in a row with at least one review, ending today, or yesterday
  when there has been no review yet today (the streak is not broken until the day ends).
- ``accuracy_by_family`` / ``accuracy_by_chip``: {name: {"reviews", "correct", "accuracy"}}, all reviews;
  skills without a chip are listed under "any".
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, time, timedelta
from typing import Any

from fsrs import State

from drills.store import Store, iso, parse_iso
from generator.safeio import display_path

RETENTION_WINDOW_DAYS = 30


def compute_stats(store: Store, now: datetime | None = None) -> dict[str, Any]:
    """The numbers ``drill stats`` prints; keys are an interface (``drill progress`` reads them)."""
    now = now if now is not None else datetime.now().astimezone()
    if now.tzinfo is None:
        now = now.astimezone()
    start_of_today = datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)
    end_of_today = start_of_today + timedelta(days=1)

    reviews = store.reviews()
    cards = store.cards()
    review_days = {parse_iso(r["reviewed_at"]).astimezone(now.tzinfo).date() for r in reviews}

    window_start = now - timedelta(days=RETENTION_WINDOW_DAYS)
    recalls = [r for r in reviews
               if not r["cram"] and r["state_before"] == int(State.Review)
               and parse_iso(r["reviewed_at"]) >= window_start]
    next_due = min((row.due for row in cards.values()), default=None)

    return {
        "store": display_path(store.path),  # bytes that are not UTF-8 as \\xNN, not a lone surrogate
        "reviews": len(reviews),
        "cram_reviews": sum(1 for r in reviews if r["cram"]),
        "reviews_today": sum(1 for r in reviews if parse_iso(r["reviewed_at"]) >= start_of_today),
        "due_now": sum(1 for row in cards.values() if row.due <= now),
        "due_today": sum(1 for row in cards.values() if row.due < end_of_today),
        "skills_seen": len(cards),
        "skills_learned": sum(1 for row in cards.values() if row.card.state == State.Review),
        "retention_30d": (sum(r["correct"] for r in recalls) / len(recalls)) if recalls else None,
        "retention_30d_reviews": len(recalls),
        "streak_days": streak_days(review_days, now.date()),
        "accuracy_by_family": _accuracy(reviews, lambda r: r["family"]),
        "accuracy_by_chip": _accuracy(reviews, lambda r: r["chip"] or "any"),
        "next_due": iso(next_due) if next_due else None,
        "last_review": reviews[-1]["reviewed_at"] if reviews else None,
    }


def streak_days(review_days: set[date], today: date) -> int:
    """Days in a row with reviews, ending today (or yesterday if today has none yet)."""
    day = today if today in review_days else today - timedelta(days=1)
    count = 0
    while day in review_days:
        count += 1
        day -= timedelta(days=1)
    return count


def _accuracy(reviews: list[dict[str, Any]], key: Any) -> dict[str, dict[str, Any]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for review in reviews:
        entry = totals[key(review)]
        entry[0] += 1
        entry[1] += int(review["correct"])
    return {name: {"reviews": n, "correct": ok, "accuracy": ok / n}
            for name, (n, ok) in sorted(totals.items())}


def summary_lines(stats: dict[str, Any]) -> list[str]:
    """The plain-text view of ``compute_stats`` for ``drill stats``."""
    retention = stats["retention_30d"]
    lines = [
        f"store: {stats['store']}",
        f"reviews: {stats['reviews']} ({stats['reviews_today']} today, {stats['cram_reviews']} cram)",
        f"due now: {stats['due_now']}   due today: {stats['due_today']}   next due: {_local(stats['next_due'])}",
        f"skills: {stats['skills_seen']} seen, {stats['skills_learned']} learned",
        "retention (30 days): " + (f"{retention:.0%} of {stats['retention_30d_reviews']} recalls"
                                   if retention is not None else "- (no reviews of learned skills yet)"),
        f"streak: {stats['streak_days']} day{'s' if stats['streak_days'] != 1 else ''}",
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


def _local(moment: str | None) -> str:
    """A stored UTC time as local wall-clock time, to the minute."""
    return parse_iso(moment).astimezone().strftime("%Y-%m-%d %H:%M") if moment else "-"
