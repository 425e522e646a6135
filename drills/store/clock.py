"""Times in the store, calendar days in any time zone, and the rule for a clock behind the store.

Stored times are ISO 8601 strings in UTC that sort as text. A clock behind the store is the
clock's fault: the commands run on the store's time (``store_time``) and rewrite nothing.
Details: docs/internals.md.
"""

from __future__ import annotations

import copy
import time as _time
from datetime import date, datetime, time, timedelta, timezone, tzinfo

from fsrs import Card


def iso(moment: datetime) -> str:
    """UTC, fixed width with microseconds, so stored times compare correctly as text."""
    if moment.tzinfo is None:
        raise ValueError("store times must be timezone-aware")
    # isoformat of a UTC time is exactly "%Y-%m-%dT%H:%M:%S.%f+00:00", and several times faster
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def zone_offset(moment: datetime, zone: tzinfo | None = None) -> timedelta:
    """The UTC offset at ``moment`` in ``zone`` (default: the local zone, ``$TZ``), which may be a whole day."""
    if zone is not None:
        return moment.astimezone(zone).utcoffset() or timedelta(0)
    return timedelta(seconds=_time.localtime(moment.timestamp()).tm_gmtoff)


def wall_clock(moment: datetime, zone: tzinfo | None = None) -> datetime:
    """The naive wall-clock time of ``moment`` in ``zone`` (local by default)."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None) + zone_offset(moment, zone)


def local_date(moment: datetime, zone: tzinfo | None = None) -> date:
    return wall_clock(moment, zone).date()


def day_start(day: date, zone: tzinfo | None = None) -> datetime:
    """Midnight starting ``day`` in ``zone`` (local by default), as an aware UTC time."""
    naive = datetime.combine(day, time(0))
    guess = (naive - zone_offset(naive.replace(tzinfo=timezone.utc), zone)).replace(tzinfo=timezone.utc)
    return (naive - zone_offset(guess, zone)).replace(tzinfo=timezone.utc)  # the offset at that midnight (DST)


def day_starts(last: date, count: int, zone: tzinfo | None = None) -> list[datetime]:
    """The midnights starting ``last``, the day before, ... (``count`` of them), as aware UTC times:
    ``day_start`` of each, with one offset lookup a day (the day after's offset is the first guess)."""
    out: list[datetime] = []
    offset: timedelta | None = None
    day = last
    for _ in range(count):
        naive = datetime.combine(day, time(0))
        if offset is None:
            moment = day_start(day, zone)
        else:
            guess = (naive - offset).replace(tzinfo=timezone.utc)
            found = zone_offset(guess, zone)
            moment = guess if found == offset else day_start(day, zone)
        offset = (naive - moment.replace(tzinfo=None))
        out.append(moment)
        day -= timedelta(days=1)
    return out


def start_of_day(moment: datetime, zone: tzinfo | None = None) -> datetime:
    """Midnight of ``moment``'s calendar day in ``zone`` (local by default), as an aware UTC time."""
    return day_start(local_date(moment, zone), zone)


def clamp_card(card: Card, now: datetime) -> Card:
    """``card`` as if its last review, dated after ``now``, had been made now:
    a copy with ``last_review = now`` and ``due`` moved back by the same amount; else ``card``."""
    last = card.last_review
    if last is None or last <= now:
        return card
    ahead = last - now
    moved = copy.copy(card)
    moved.last_review = now
    moved.due = card.due - ahead
    return moved


def store_time(clock: datetime, newest: datetime | None) -> datetime:
    """The time the store runs on: ``clock``, or the newest review's time when the clock is behind it."""
    return newest if newest is not None and newest > clock else clock


def behind_warning(count: int, latest: str | None, clock: datetime | None = None) -> str | None:
    """The one-line warning for ``count`` reviews dated after the clock (the newest at ``latest``), or None."""
    if not count:
        return None
    reads = f" (it reads {iso(clock)[:16].replace('T', ' ')} UTC)" if clock is not None else ""
    when = f" ({latest[:16].replace('T', ' ')} UTC)" if latest else ""
    return (f"warning: the clock{reads} is behind the newest review{when}: the clock is wrong, not the store; "
            f"{count} review{'s are' if count != 1 else ' is'} dated after it; scheduled from the newest "
            f"review, and nothing in the store was changed")


future_warning = behind_warning  # the name older callers use
