"""Mastery: a skill counts for a "Can you" tick only once it was recalled on a later day.

``standings`` gives each skill's ``SkillMastery`` (mastered or pending); ``ticking_rows`` turns
the store's last reviews into the rows the "Can you" rules read.
Details: docs/internals.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Mapping

from drills.store.clock import local_date, parse_iso

if TYPE_CHECKING:
    from drills.store.repository import Store

MIN_RETRIEVABILITY = 0.9  # the recall probability a mastered skill keeps now (FSRS's default target)
PENDING_TODAY = "learned today: recall it on a later day to tick"
PENDING_EARLIER = "right, not yet recalled on a later day without a hint: recall it again to tick"


@dataclass(frozen=True)
class SkillMastery:
    """One skill's standing: ``mastered``, or ``pending`` (right at its last review, not yet mastered)."""

    skill: str
    mastered: bool
    pending: bool
    learned_on: date | None  # the local day of its first right answer
    retrievability: float | None

    def pending_text(self, today: date) -> str:
        return PENDING_TODAY if self.learned_on == today else PENDING_EARLIER


def standings(store: Store, now: datetime, last: Mapping[str, Mapping[str, Any]] | None = None
              ) -> dict[str, SkillMastery]:
    """skill -> its mastery at ``now`` for every skill reviewed (``last``: ``Store.last_reviews()``)."""
    last = store.last_reviews() if last is None else last
    marks = store.right_marks()
    cards = store.cards(now)
    scheduler = store.scheduler()
    out: dict[str, SkillMastery] = {}
    for skill, row in last.items():
        first, clean = marks.get(skill, (None, None))
        learned = local_date(parse_iso(first)) if first else None
        recalled_later = bool(learned and clean and local_date(parse_iso(clean)) > learned)
        card = cards.get(skill)
        r = float(scheduler.get_card_retrievability(card.card, now)) if card is not None else None
        right_now = bool(row["correct"]) and not row.get("cram")
        if row.get("cram"):  # a cram answer is practice: the standing is the latest scheduled review's
            right_now = _last_scheduled_right(store, skill)
        mastered = right_now and recalled_later and r is not None and r >= MIN_RETRIEVABILITY
        out[skill] = SkillMastery(skill, mastered, right_now and not mastered, learned, r)
    return out


def _last_scheduled_right(store: Store, skill: str) -> bool:
    return store.last_scheduled_correct(skill)


def ticking_rows(last: Mapping[str, Mapping[str, Any]], found: Mapping[str, SkillMastery]
                 ) -> dict[str, dict[str, Any]]:
    """``last`` with ``correct`` True only where the skill is mastered: what ticks an item."""
    return {skill: {**row, "correct": bool(found.get(skill) and found[skill].mastered)}
            for skill, row in last.items()}
