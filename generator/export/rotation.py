"""Which variant a card shows at a review: the rule, in Python, that the card's script follows.

``count_pick`` uses Anki's review count where the card is given it; otherwise ``pick`` uses Anki's
day (``anki_day``). Integer arithmetic only, so the script computes the same pick.
Details: docs/internals.md.
"""

from __future__ import annotations

import hashlib

MODULUS = 2_147_483_647  # 2**31 - 1, a prime: the Lehmer generator's modulus
MULTIPLIER = 48_271
BLOCK_STRIDE = 7_919  # a prime: consecutive blocks start the generator far apart
DAY_MS = 86_400_000
# Anki's default "next day starts at" hour (Preferences > Review; the collection's ``rollover``).
ROLLOVER_HOUR = 4
ROLLOVER_MS = ROLLOVER_HOUR * 3_600_000


def note_seed(skill: str) -> int:
    """A note's seed in [1, MODULUS - 1], from its skill id (the same on every build)."""
    return int(hashlib.sha256(skill.encode()).hexdigest()[:8], 16) % (MODULUS - 1) + 1


def anki_day(epoch_ms: float, timezone_offset_minutes: float) -> int:
    """Anki's day number, as the card computes it: ``floor((ms - offset - rollover) / 1 day)``.

    ``timezone_offset_minutes`` is JavaScript's ``getTimezoneOffset()`` (UTC minus local time); the day
    starts at ``ROLLOVER_HOUR`` local time, as Anki's does by default, so a review at 23:59 and its
    back or relearning step at 00:10 fall on one day. Days before 1970 are negative; the rule handles
    them (floor division, a true modulo)."""
    return int((epoch_ms - timezone_offset_minutes * 60_000 - ROLLOVER_MS) // DAY_MS)


def count_pick(seed: int, count: int, k: int) -> int:
    """The variant at Anki's scheduling seed ``count`` (card id term + review count): ``(seed + count) mod K``.

    Each side of the sum is reduced first, so the JavaScript (doubles) computes it exactly for any
    count below 2**53."""
    if k <= 1:
        return 0
    return (seed % k + count % k) % k


def _order(seed: int, block: int, k: int) -> list[int]:
    """Block ``block``'s order of the K variants: a Fisher-Yates shuffle driven by a Lehmer generator."""
    x = (seed + block * BLOCK_STRIDE) % MODULUS or 1
    x = x * MULTIPLIER % MODULUS
    x = x * MULTIPLIER % MODULUS
    order = list(range(k))
    for i in range(k - 1, 0, -1):
        x = x * MULTIPLIER % MODULUS
        j = x % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def day_pick(seed: int, day: int, k: int) -> int:
    """The day's variant with no memory of earlier reviews."""
    if k <= 1:
        return 0
    block, j = day // k, day % k
    order = _order(seed, block, k)
    if k >= 3 and order[0] == _order(seed, block - 1, k)[k - 1]:
        order[0], order[1] = order[1], order[0]  # never the previous block's last day again
    return order[j]


def pick(seed: int, day: int, k: int, last: int | None = None) -> int:
    """The variant to show: the day's, or, when the day's is the one shown last time, yesterday's.

    Yesterday's (never today's, for K >= 3) rather than tomorrow's: a review skipped here is a
    same-day relearning step, and the next review is most often tomorrow, which may have no
    memory of today (a new session) and shows tomorrow's variant."""
    i = day_pick(seed, day, k)
    if last is None or k < 2 or i != last:
        return i
    before = day_pick(seed, day - 1, k)
    return before if before != last else (i + 1) % k


def old_pick(offset: int, day: int, k: int) -> int:
    """The older rule, (day + offset) mod K: kept for the benchmark's comparison."""
    return (day + offset) % k
