"""The review store: one SQLite file with the FSRS state of every skill and a log of every review.

This module is the repository: every query the quiz, stats and progress run against the store
(``Store``). The schema, file checks, lock, row checks and time rules live beside it in
``drills.store``.
Details: docs/internals.md.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import time
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from fsrs import Card, Rating, Scheduler

from drills.store import integrity as store_integrity
from drills.store.clock import clamp_card, iso, parse_iso, store_time, utc_now  # noqa: F401  (parse_iso: re-exported)
from drills.store.files import (APP_NAME, SIDE_SUFFIXES, SQLITE_MAGIC, STORE_FILENAME, StoreError,  # noqa: F401
                                StoreMissing, bad_file, check_file, check_side_files, check_writable,
                                default_store_path, disk_full, disk_full_error, fingerprint, journal_present,
                                one_line, os_error, shown)
from drills.store.lock import LOCK_TIMEOUT_S, StoreInUse, lock_holder, retry_locked, store_error  # noqa: F401
from drills.store.schema import (APPLICATION_ID, RECALLS_WHERE, SCHEMA_VERSION, check_database,  # noqa: F401
                                 check_schema, has_tallies, has_v4, migrate, needs_migration)

_store_error = store_error  # the name older callers use
_card, _count, _aware = store_integrity.card, store_integrity.count, store_integrity.aware


class UndoRefused(StoreError):
    """Undo would discard a later review of the same skill; nothing was changed."""


@dataclass(frozen=True)
class ReviewRecord:
    """One answered problem, as logged. ``given_value`` is in the answer's unit; seconds for time taken."""

    skill: str
    family: str
    chip: str | None
    problem_id: str
    params: dict[str, Any]
    prompt: str
    expected: dict[str, Any]
    given: str
    given_value: float | None
    correct: bool
    rating: int
    relative_error: float | None
    seconds_taken: float | None
    cram: bool = False
    session: str = field(default_factory=lambda: uuid.uuid4().hex)
    hints: int | None = None  # hints taken (a worked solution seen counts as two); None: not recorded
    source: str | None = None  # None: the quiz; "anki": Anki's review log (``drills.anki_import``)
    anki_revlog: int | None = None  # Anki's revlog id of an imported review

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ReviewRecord":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class CardRow:
    skill: str
    card: Card
    reviews: int
    introduced_at: datetime

    @property
    def due(self) -> datetime:
        return self.card.due


@dataclass(frozen=True)
class Tally:
    """Reviews and right answers of one family on one chip (``chip`` None: skills without one)."""

    family: str
    chip: str | None
    reviews: int
    correct: int
    cram: int


class Store:
    """A drill store on disk. Use ``Store.open(path)``; close it (or use ``with``)."""

    def __init__(self, path: pathlib.Path, conn: sqlite3.Connection,
                 cards: dict[str, tuple[Card, int, datetime]] | None = None):
        self.path, self._conn = path, conn
        # The cards parsed by the open-time check, valid while nothing has written the file since
        # (``data_version`` counts other connections' commits, ``total_changes`` this one's).
        self._cards_cache = (self._version_key(), cards) if cards is not None else None

    def _version_key(self) -> tuple[int, int]:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0]), self._conn.total_changes

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, readonly: bool = False) -> "Store":
        """Open (or create) the store at ``path`` (default: ``default_store_path()``).

        An existing file is checked first through a read-only connection
        (``mode=ro``): it must be a regular file, an SQLite database that is a
        drill store at a version this drill knows, with the tables of its
        version, and every ``cards`` row must parse. Otherwise ``StoreError``
        names the file and what is wrong, and the file is left byte-identical.
        ``readonly`` keeps that read-only connection (``drill stats``: a read
        never writes, not even the header, and never migrates) and raises
        ``StoreMissing`` where there is no store (nothing is created). For
        writing, a store or folder with no write bit is refused
        (``check_writable``), an older schema is migrated, and a store another
        process keeps locked is refused after waiting ``LOCK_TIMEOUT_S`` in all
        (``StoreInUse``), before anything is asked.
        """
        target = pathlib.Path(path).expanduser() if path is not None else default_store_path()
        deadline = time.monotonic() + LOCK_TIMEOUT_S  # one bound for every wait on another's lock
        check_side_files(target)
        existing = check_file(target)
        if readonly and not existing:
            what = "the file is empty" if os.path.lexists(target) else "nothing has been recorded there"
            raise StoreMissing(f"no store at {shown(target)}: {what} (drill quiz creates it); nothing was created")
        if existing:
            ro, cards = _checked_readonly(target, deadline)
            if readonly:
                return cls(target, ro, cards)
            ro.close()
        check_writable(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(target), timeout=0, isolation_level=None)
        except OSError as exc:
            raise os_error(target, exc) from None
        except sqlite3.Error as exc:
            raise _open_error(target, exc) from None
        try:
            retry_locked(conn, lambda: check_database(conn, target), deadline)
            retry_locked(conn, lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), deadline)
            conn.execute("PRAGMA synchronous = FULL")
            if needs_migration(conn):  # a store at the current version is not written to just by opening it
                migrate(conn, deadline)
            else:  # a store another process keeps locked is refused now, before any question is asked
                retry_locked(conn, lambda: conn.execute("BEGIN IMMEDIATE"), deadline)
                conn.execute("ROLLBACK")  # nothing was written
        except StoreError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise store_error(target, exc) from None
        return cls(target, conn)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    def check(self) -> list[str]:
        """The full integrity check (``drill store check``): every problem, one line naming its row."""
        try:
            return store_integrity.check_store(self._conn)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    # -- reviews and scheduling ------------------------------------------------------

    def record_review(self, review: ReviewRecord, scheduler: Scheduler | None = None,
                      now: datetime | Callable[[], datetime] | None = None) -> Card | None:
        """Log one review and, unless it is cram, advance the skill's FSRS card; one transaction.

        Returns the card after the review (None for cram). The card is read and
        written under ``BEGIN IMMEDIATE`` so a concurrent quiz can not interleave.
        ``now`` defaults to the moment the write lock is held, so reviews from two
        quizzes reach each card in the order of their timestamps; a callable ``now`` (the quiz's
        clock) is read at that moment too. A clock read so (``now`` None or callable) that is
        before the newest review (a clock behind) dates the review at the newest review's time,
        so the log never goes back in time. A card last reviewed after an explicit ``now`` is
        reviewed as if that review had been made then (``drills.store.clock.clamp_card``).
        """
        scheduler = scheduler or Scheduler()
        try:
            return self._record(review, scheduler, now)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def newest_review_at(self) -> datetime | None:
        """The time of the newest review in the log (by ``reviewed_at``, through its index), checked as read."""
        return self._first_review_time("reviewed_at DESC")

    def _first_review_time(self, order: str) -> datetime | None:
        """The ``reviewed_at`` of the first review in ``order`` (a fixed ORDER BY clause), checked as read."""
        row = self._query(f"SELECT id, reviewed_at FROM reviews ORDER BY {order} LIMIT 1")
        if not row:
            return None
        try:
            return _aware(row[0][1])
        except ValueError as exc:
            raise bad_file(self.path, f"reviews row {row[0][0]}: {one_line(exc)}") from None

    def store_time(self, clock: datetime | None = None) -> datetime:
        """The time to schedule from: ``clock`` (default: now), or the newest review's time when the
        clock is behind it (``drills.store.clock.store_time``). Reads only; writes nothing."""

        clock = clock or utc_now()
        return store_time(clock, self.newest_review_at())

    def undo_review(self, review_id: int) -> bool:
        """Remove one review and put its skill's card back exactly as it was before it; one transaction.

        Returns False when there is no such review (already undone). A review
        that introduced the skill removes the card, so the skill is new again.
        Raises ``UndoRefused`` (changing nothing) when the skill has been reviewed
        since, by this or any other session: undoing then would throw away that
        later review's effect on the schedule.
        """
        try:
            with self._transaction():
                row = self._conn.execute("SELECT skill, cram, card_before, due_after FROM reviews WHERE id = ?",
                                         (int(review_id),)).fetchone()
                if row is None:
                    return False
                skill, cram, card_before, due_after = row
                later = self._conn.execute("SELECT COUNT(*) FROM reviews WHERE skill = ? AND id > ?",
                                           (skill, int(review_id))).fetchone()[0]
                current = self._conn.execute("SELECT due, reviews FROM cards WHERE skill = ?", (skill,)).fetchone()
                moved = not cram and (current is None or current[0] != due_after)
                if later or moved:
                    raise UndoRefused(f"can not undo: skill {skill} has been reviewed since (in this or another "
                                      f"session), so its schedule is kept; nothing was changed")
                self._conn.execute("DELETE FROM reviews WHERE id = ?", (int(review_id),))
                if not cram:
                    if card_before is None:
                        self._conn.execute("DELETE FROM cards WHERE skill = ?", (skill,))
                    else:
                        try:
                            card = _card(card_before)
                        except (ValueError, TypeError, KeyError) as exc:
                            raise bad_file(self.path, f"the review {review_id} of skill '{skill}': "
                                                       f"{one_line(exc)}") from None
                        self._conn.execute(
                            "UPDATE cards SET card = ?, due = ?, state = ?, reviews = ?, updated_at = ? "
                            "WHERE skill = ?",
                            (card_before, iso(card.due), int(card.state), max(int(current[1]) - 1, 0),
                             iso(utc_now()), skill))
            return True
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def last_review_id(self, session: str) -> int | None:
        row = self._query("SELECT MAX(id) FROM reviews WHERE session = ?", (session,))
        return int(row[0][0]) if row and row[0][0] is not None else None

    def _record(self, review: ReviewRecord, scheduler: Scheduler,
                now: datetime | Callable[[], datetime] | None) -> Card | None:
        with self._transaction():
            live = now is None or callable(now)  # a clock read now, not a time the caller chose
            now = now() if callable(now) else (now or utc_now())
            newest = self._conn.execute("SELECT MAX(reviewed_at) FROM reviews").fetchone()[0] if live else None
            if newest is not None and newest > iso(now):  # the clock is behind: never date before the log
                try:
                    now = _aware(newest)
                except ValueError as exc:
                    raise bad_file(self.path, f"a damaged reviewed_at: {one_line(exc)}") from None
            row = self._conn.execute(
                "SELECT card, reviews, introduced_at FROM cards WHERE skill = ?", (review.skill,)).fetchone()
            try:
                card = _card(row[0]) if row else None
                if row:
                    _count(row[1])
            except (ValueError, TypeError, KeyError) as exc:  # rolled back: nothing written
                raise bad_file(self.path, f"the cards row of skill '{review.skill}': {one_line(exc)}") from None
            state_before = int(card.state) if card else None
            new_card = None
            if not review.cram:
                current = clamp_card(card, now) if card else Card(card_id=zlib.crc32(review.skill.encode()), due=now)
                new_card, _ = scheduler.review_card(
                    current, Rating(review.rating), review_datetime=now.astimezone(timezone.utc),
                    review_duration=None if review.seconds_taken is None else int(review.seconds_taken * 1000))
                # The count is read-modify-written like the card, so a lost update would show in it.
                self._conn.execute(
                    "INSERT INTO cards (skill, card, due, state, reviews, introduced_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(skill) DO UPDATE SET card = excluded.card, due = excluded.due, "
                    "state = excluded.state, reviews = excluded.reviews, updated_at = excluded.updated_at",
                    (review.skill, json.dumps(new_card.to_dict()), iso(new_card.due), int(new_card.state),
                     (row[1] if row else 0) + 1, iso(now), iso(now)))
            self._conn.execute(
                "INSERT INTO reviews (session, reviewed_at, skill, family, chip, problem_id, params, prompt, "
                "expected, given, given_value, correct, rating, relative_error, seconds_taken, cram, "
                "state_before, due_after, card_before, hints, source, anki_revlog) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (review.session, iso(now), review.skill, review.family, review.chip, review.problem_id,
                 json.dumps(review.params, sort_keys=True, default=str), review.prompt,
                 json.dumps(review.expected, sort_keys=True), review.given, review.given_value,
                 int(review.correct), int(review.rating), review.relative_error, review.seconds_taken,
                 int(review.cram), state_before, iso(new_card.due) if new_card else None,
                 row[0] if row else None, review.hints, review.source, review.anki_revlog))
        return new_card

    def cards(self, now: datetime | None = None) -> dict[str, CardRow]:
        """Every skill seen so far with its FSRS card; with ``now``, a card last reviewed after ``now``
        is read as reviewed now (``clamp_card``)."""
        cached = self._cards_cache
        if cached is not None and cached[1] is not None and cached[0] == self._version_key():
            loaded = {skill: CardRow(skill, card, reviews, introduced)
                      for skill, (card, reviews, introduced) in cached[1].items()}
        else:
            self._cards_cache = None
            rows = self._query("SELECT skill, card, reviews, introduced_at FROM cards ORDER BY skill")
            try:
                loaded = {skill: CardRow(skill, _card(card), _count(reviews), _aware(introduced))
                          for skill, card, reviews, introduced in rows}
            except (ValueError, TypeError, KeyError) as exc:  # a row damaged since the open-time check
                raise bad_file(self.path, f"a damaged cards row: {one_line(exc)}") from None
        if now is None:
            return loaded
        return {skill: CardRow(skill, clamp_card(row.card, now), row.reviews, row.introduced_at)
                for skill, row in loaded.items()}

    def skills_seen(self) -> set[str]:
        """The skills with a card (no card parsed)."""
        return {skill for (skill,) in self._query("SELECT skill FROM cards")}

    def _ahead(self, now: datetime) -> dict[str, datetime]:
        """skill -> its due time read by the clock rule, for the cards last reviewed after ``now``.

        ``updated_at`` is the time of a card's last write (its last review, or an undo), so
        ``updated_at > now`` finds the few candidates through the table, not by parsing every card."""
        rows = self._query("SELECT skill, card FROM cards WHERE updated_at > ?", (iso(now),))
        try:
            return {skill: clamp_card(_card(card), now).due for skill, card in rows}
        except ValueError as exc:
            raise bad_file(self.path, f"a damaged cards row: {one_line(exc)}") from None

    def due_skills(self, until: datetime | None = None, now: datetime | None = None) -> list[tuple[str, datetime]]:
        """Skills due at ``until`` (default: now), most overdue first; cards reviewed after ``now``
        (default: ``until``) are due by the clock rule (``drills.store.clock``)."""
        until = until or utc_now()
        ahead = self._ahead(now or until)
        rows = self._query("SELECT skill, due FROM cards WHERE due <= ? ORDER BY due, skill", (iso(until),))
        try:
            due = {skill: _aware(when) for skill, when in rows if skill not in ahead}
        except ValueError as exc:
            raise bad_file(self.path, f"a damaged cards row: {one_line(exc)}") from None
        due.update({skill: when for skill, when in ahead.items() if when <= until})
        return sorted(due.items(), key=lambda item: (item[1], item[0]))

    def next_due(self, now: datetime | None = None) -> datetime | None:
        """The earliest due time; with ``now``, by the clock rule for cards reviewed after ``now``."""
        ahead = self._ahead(now) if now is not None else {}
        if ahead:
            marks = ", ".join("?" * len(ahead))
            row = self._query(f"SELECT MIN(due) FROM cards WHERE skill NOT IN ({marks})", tuple(ahead))
        else:
            row = self._query("SELECT MIN(due) FROM cards")
        try:
            first = _aware(row[0][0]) if row and row[0][0] else None
        except ValueError as exc:
            raise bad_file(self.path, f"a damaged cards row: {one_line(exc)}") from None
        return min([t for t in (first, *ahead.values()) if t is not None], default=None)

    def introduced_skills_since(self, since: datetime) -> set[str]:
        """The skills whose first scheduled review was at or after ``since``."""
        return {skill for (skill,) in self._query("SELECT skill FROM cards WHERE introduced_at >= ?", (iso(since),))}

    def introduced_since(self, since: datetime) -> int:
        """How many skills had their first scheduled review at or after ``since``."""
        return int(self._query("SELECT COUNT(*) FROM cards WHERE introduced_at >= ?", (iso(since),))[0][0])

    # -- what stats reads: indexed ranges and the tallies, never the whole log --------------

    def tallies(self, from_log: bool = False) -> list[Tally]:
        """Reviews, right answers and cram per family and chip: the ``tallies`` summary (schema 3,
        kept by triggers), or, on an older store read without migrating or with ``from_log``, counted
        from the log (a pass over every review: about a second at 10^6)."""
        if has_tallies(self._conn) and not from_log:
            sql = "SELECT family, chip, reviews, correct, cram FROM tallies WHERE reviews > 0 ORDER BY family, chip"
        else:
            sql = ("SELECT family, COALESCE(chip, ''), COUNT(*), SUM(correct), SUM(cram) FROM reviews "
                   "GROUP BY family, COALESCE(chip, '') ORDER BY 1, 2")
        return [Tally(family, chip or None, int(n), int(ok or 0), int(cram or 0))
                for family, chip, n, ok, cram in self._query(sql)]

    def logged_reviews(self) -> int:
        """Every review in the log, counted from the table itself (an index-only count, a few ms at 10^6),
        never from the tallies: what ``drills.stats`` checks the tallies' total against."""
        return int(self._query("SELECT COUNT(*) FROM reviews")[0][0])

    def count_since(self, since: datetime) -> int:
        """Reviews dated at or after ``since`` (later ones included: the clock rule counts them as now)."""
        return int(self._query("SELECT COUNT(*) FROM reviews WHERE reviewed_at >= ?", (iso(since),))[0][0])

    def any_between(self, start: datetime, end: datetime | None) -> bool:
        """Is there a review dated in [start, end) (``end`` None: no upper bound)?"""
        if end is None:
            return self.count_since(start) > 0
        return bool(self._query("SELECT EXISTS (SELECT 1 FROM reviews WHERE reviewed_at >= ? AND reviewed_at < ?)",
                                (iso(start), iso(end)))[0][0])

    def days_with_reviews(self, spans: list[tuple[datetime, datetime]]) -> list[bool]:
        """For each [start, end) span, is there a review in it? One query of indexed probes."""
        if not spans:
            return []
        probe = "EXISTS (SELECT 1 FROM reviews WHERE reviewed_at >= ? AND reviewed_at < ?)"
        args = tuple(iso(t) for span in spans for t in span)
        return [bool(x) for x in self._query("SELECT " + ", ".join([probe] * len(spans)), args)[0]]

    def days_in_a_row(self, start: datetime, end: datetime, limit: int) -> int:
        """How many 24-hour spans in a row, from [start, end) going back, hold a review (at most ``limit``).

        One recursive query walking back inside SQLite, an indexed probe a day: the caller uses it
        where the zone's offset is constant, so every local day is 24 hours long."""
        step = "strftime('%Y-%m-%dT%H:%M:%f', d.s, '-1 day') || '000+00:00'"  # iso() of a whole-second time
        probe = "EXISTS (SELECT 1 FROM reviews WHERE reviewed_at >= {0} AND reviewed_at < {1})"
        sql = (f"WITH RECURSIVE d(k, s) AS (SELECT 1, :s WHERE {probe.format(':s', ':e')} "
               f"UNION ALL SELECT d.k + 1, {step} FROM d WHERE d.k < :limit AND {probe.format(step, 'd.s')}) "
               f"SELECT COALESCE(MAX(k), 0) FROM d")
        return int(self._query(sql, {"s": iso(start), "e": iso(end), "limit": int(limit)})[0][0])

    def recalls_since(self, since: datetime) -> tuple[int, int]:
        """(scheduled reviews of learned skills, right ones) at or after ``since``: a partial index."""
        n, ok = self._query(f"SELECT COUNT(*), SUM(correct) FROM reviews WHERE reviewed_at >= ? AND {RECALLS_WHERE}",
                            (iso(since),))[0]
        return int(n), int(ok or 0)

    def future_reviews(self, now: datetime) -> tuple[int, str | None]:
        """(how many reviews are dated after ``now``, the latest such time): the clock is behind them."""
        n = int(self._query("SELECT COUNT(*) FROM reviews WHERE reviewed_at > ?", (iso(now),))[0][0])
        if not n:
            return 0, None
        rid, latest = self._query("SELECT id, reviewed_at FROM reviews WHERE reviewed_at > ? "
                                  "ORDER BY reviewed_at DESC LIMIT 1", (iso(now),))[0]
        try:  # a damaged time sorts after every real one: it is read, so checked, here
            _aware(latest)
        except ValueError as exc:
            raise bad_file(self.path, f"reviews row {rid}: {one_line(exc)}") from None
        return n, latest

    def last_review_at(self) -> datetime | None:
        """When the latest logged review was made (checked as it is read)."""
        return self._first_review_time("id DESC")

    def count_reviews(self, session: str | None = None) -> int:
        if session is None:
            if has_tallies(self._conn):
                return int(self._query("SELECT COALESCE(SUM(reviews), 0) FROM tallies")[0][0])
            return int(self._query("SELECT COUNT(*) FROM reviews")[0][0])
        return int(self._query("SELECT COUNT(*) FROM reviews WHERE session = ?", (session,))[0][0])

    def last_reviews(self) -> dict[str, dict[str, Any]]:
        """skill -> its last logged review (the row with the highest id), cram included: one row per
        skill through the by-skill index, so ``drill progress`` does not read the whole log."""
        sql = ("SELECT * FROM reviews WHERE id IN (SELECT MAX(id) FROM reviews GROUP BY skill) ORDER BY id")
        try:
            cursor = self._conn.execute(sql)
            names = [d[0] for d in cursor.description]
            return {row["skill"]: row for row in (dict(zip(names, r)) for r in cursor.fetchall())}
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def reviews(self, since: datetime | None = None) -> list[dict[str, Any]]:
        """Logged reviews (oldest first) as dicts with the column names; ``since`` filters by time."""
        sql = "SELECT * FROM reviews"
        args: tuple[Any, ...] = ()
        if since is not None:
            sql, args = sql + " WHERE reviewed_at >= ?", (iso(since),)
        try:
            cursor = self._conn.execute(sql + " ORDER BY id", args)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def skill_summary(self) -> dict[str, dict[str, Any]]:
        """skill_id -> {"reviews": int, "correct": int, "last_correct": bool}, cram included."""
        rows = self._query(
            "SELECT skill, COUNT(*), SUM(correct), "
            "(SELECT r2.correct FROM reviews r2 WHERE r2.skill = r.skill ORDER BY r2.id DESC LIMIT 1) "
            "FROM reviews r GROUP BY skill ORDER BY skill")
        return {skill: {"reviews": int(n), "correct": int(ok or 0), "last_correct": bool(last)}
                for skill, n, ok, last in rows}

    def right_marks(self) -> dict[str, tuple[str, str | None]]:
        """skill -> (its first right answer's time, its newest right answer's time with no hint and no
        worked solution seen), scheduled reviews only: what mastery reads (``drills.mastery``). A row
        from before hints were recorded counts as unhinted only when rated Easy (a hint caps below it)."""
        clean = "hints = 0 OR (hints IS NULL AND rating = 4)" if has_v4(self._conn) else "rating = 4"
        rows = self._query(f"SELECT skill, MIN(reviewed_at), MAX(CASE WHEN {clean} THEN reviewed_at END) "
                           "FROM reviews WHERE cram = 0 AND correct = 1 GROUP BY skill")
        return {skill: (first, newest) for skill, first, newest in rows}

    def last_scheduled_correct(self, skill: str) -> bool:
        """Was the skill's latest scheduled (not cram) review right?"""
        rows = self._query("SELECT correct FROM reviews WHERE skill = ? AND cram = 0 ORDER BY id DESC LIMIT 1",
                           (skill,))
        return bool(rows and rows[0][0])

    def scheduled_history(self) -> list[tuple[str, datetime, int]]:
        """(skill, reviewed_at, rating) of every scheduled review (cram left out), by skill, then time:
        what ``drill fsrs-fit`` fits (the quiz's and Anki's)."""
        rows = self._query("SELECT id, skill, reviewed_at, rating FROM reviews WHERE cram = 0 "
                           "ORDER BY skill, reviewed_at, id")
        try:
            return [(skill, _aware(at), int(rating)) for _, skill, at, rating in rows]
        except ValueError as exc:
            raise bad_file(self.path, f"a damaged reviews row: {one_line(exc)}") from None

    # -- the scheduler's parameters ------------------------------------------------------------

    def fsrs_parameters(self) -> dict[str, Any] | None:
        """The fitted FSRS parameters in use ({parameters, kept_at, reviews, log_loss,
        default_log_loss}), or None: the defaults (an older store read without migrating has none)."""
        if not has_v4(self._conn):
            return None
        row = self._query("SELECT parameters, kept_at, reviews, log_loss, default_log_loss FROM fsrs_params")
        if not row:
            return None
        parameters, kept_at, reviews, log_loss, default_log_loss = row[0]
        try:
            values = [float(x) for x in json.loads(parameters)]
            _aware(kept_at)
        except (ValueError, TypeError) as exc:
            raise bad_file(self.path, f"the fsrs_params row: {one_line(exc)}") from None
        return {"parameters": values, "kept_at": kept_at, "reviews": int(reviews), "log_loss": float(log_loss),
                "default_log_loss": float(default_log_loss)}

    def keep_fsrs_parameters(self, parameters: list[float], reviews: int, log_loss: float,
                             default_log_loss: float, now: datetime | None = None) -> None:
        """Keep fitted parameters: the quiz schedules with them from now on (one row, replaced)."""
        try:
            with self._transaction():
                self._conn.execute(
                    "INSERT OR REPLACE INTO fsrs_params (id, parameters, kept_at, reviews, log_loss, "
                    "default_log_loss) VALUES (1, ?, ?, ?, ?, ?)",
                    (json.dumps([float(x) for x in parameters]), iso(now or utc_now()), int(reviews),
                     float(log_loss), float(default_log_loss)))
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def scheduler(self) -> Scheduler:
        """The FSRS scheduler of this store: the kept fitted parameters, else FSRS's defaults."""
        kept = self.fsrs_parameters()
        if kept is None:
            return Scheduler()
        try:
            return Scheduler(parameters=tuple(kept["parameters"]))
        except (ValueError, TypeError) as exc:
            raise bad_file(self.path, f"the fsrs_params row: {one_line(exc)}") from None

    # -- reviews from Anki -------------------------------------------------------------------

    def import_reviews(self, records: list[tuple[ReviewRecord, datetime]]) -> tuple[int, int]:
        """Add reviews made elsewhere (Anki), each at its own time, in one transaction: (imported,
        already there). A review whose ``anki_revlog`` is in the store already is skipped, so importing
        twice adds nothing. The cards of the skills touched are then replayed from their whole
        scheduled history in time order (``_replay``), so the schedule is the same whichever way
        round the quiz and Anki reviews were added."""
        imported = already = 0
        touched: set[str] = set()
        try:
            with self._transaction():
                for review, when in records:
                    if review.anki_revlog is not None and self._conn.execute(
                            "SELECT 1 FROM reviews WHERE anki_revlog = ?", (int(review.anki_revlog),)).fetchone():
                        already += 1
                        continue
                    self._conn.execute(
                        "INSERT INTO reviews (session, reviewed_at, skill, family, chip, problem_id, params, "
                        "prompt, expected, given, given_value, correct, rating, relative_error, seconds_taken, "
                        "cram, hints, source, anki_revlog) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "0, ?, ?, ?)",
                        (review.session, iso(when), review.skill, review.family, review.chip, review.problem_id,
                         json.dumps(review.params, sort_keys=True, default=str), review.prompt,
                         json.dumps(review.expected, sort_keys=True), review.given, review.given_value,
                         int(review.correct), int(review.rating), review.relative_error, review.seconds_taken,
                         review.hints, review.source, review.anki_revlog))
                    imported += 1
                    touched.add(review.skill)
                scheduler = self.scheduler()
                for skill in sorted(touched):
                    self._replay(skill, scheduler)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None
        return imported, already

    def _replay(self, skill: str, scheduler: Scheduler) -> None:
        """Rebuild ``skill``'s card from its scheduled reviews in time order, and each review's
        ``state_before``, ``card_before`` and ``due_after`` with it (inside the caller's transaction)."""
        rows = self._conn.execute("SELECT id, reviewed_at, rating, seconds_taken FROM reviews "
                                  "WHERE skill = ? AND cram = 0 ORDER BY reviewed_at, id", (skill,)).fetchall()
        card: Card | None = None
        for rid, at, rating, seconds in rows:
            when = _aware(at)
            before = card
            current = before or Card(card_id=zlib.crc32(skill.encode()), due=when)
            card, _ = scheduler.review_card(current, Rating(int(rating)), review_datetime=when,
                                            review_duration=None if seconds is None else int(float(seconds) * 1000))
            self._conn.execute("UPDATE reviews SET state_before = ?, card_before = ?, due_after = ? WHERE id = ?",
                               (int(before.state) if before else None,
                                json.dumps(before.to_dict()) if before else None, iso(card.due), rid))
        if card is None:
            return
        self._conn.execute(
            "INSERT INTO cards (skill, card, due, state, reviews, introduced_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(skill) DO UPDATE SET card = excluded.card, due = excluded.due, state = excluded.state, "
            "reviews = excluded.reviews, introduced_at = excluded.introduced_at, updated_at = excluded.updated_at",
            (skill, json.dumps(card.to_dict()), iso(card.due), int(card.state), len(rows), rows[0][1], rows[-1][1]))

    # -- "Can you" ticks -------------------------------------------------------------------

    def ticks(self) -> set[int]:
        """The "Can you" items ticked by hand."""
        return {int(item) for (item,) in self._query("SELECT item FROM ticks")}

    def set_tick(self, item: int, ticked: bool) -> None:
        try:
            with self._transaction():
                if ticked:
                    self._conn.execute("INSERT OR IGNORE INTO ticks (item, ticked_at) VALUES (?, ?)",
                                       (int(item), iso(utc_now())))
                else:
                    self._conn.execute("DELETE FROM ticks WHERE item = ?", (int(item),))
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    # -- plumbing ---------------------------------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def _transaction(self) -> "_Transaction":
        return _Transaction(self)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any error, including Ctrl-C."""

    def __init__(self, store: Store):
        self.store = store

    def __enter__(self) -> None:
        retry_locked(self.store._conn, lambda: self.store._conn.execute("BEGIN IMMEDIATE"))

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        conn = self.store._conn
        if exc_type is None:
            retry_locked(conn, lambda: conn.execute("COMMIT"))
        elif conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:  # the original error is the one to report
                pass


def _connect_readonly(path: pathlib.Path, deadline: float) -> tuple[sqlite3.Connection, bool]:
    """A connection that can not write the file (``mode=ro``); True when it is ``immutable``.

    With no ``-wal`` or ``-journal`` beside the file no other connection is
    writing it, and ``immutable=1`` reads without creating the ``-wal``/``-shm``
    files a read-only WAL reader would otherwise leave behind (``drill stats``
    and a refused store leave the directory as they found it). With a journal
    present, a plain ``mode=ro`` connection shares the other writer's locks.
    """
    immutable = not journal_present(path)
    uri = path.absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {max(0, int((deadline - time.monotonic()) * 1000))}")
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise _open_error(path, exc) from None
    return conn, immutable


def _open_error(path: pathlib.Path, exc: sqlite3.Error) -> StoreError:
    """SQLite could not open the file: a full disk says so, anything else what SQLite said."""
    if disk_full(path):
        return disk_full_error(path)
    return StoreError(f"can not open the store {shown(path)}: {one_line(exc)}")


def _checked_readonly(path: pathlib.Path, deadline: float,
                      attempts: int = 5) -> tuple[sqlite3.Connection, dict[str, tuple[Card, int, datetime]]]:
    """A read-only connection to ``path`` after the open-time check (StoreError if it fails):
    the database is ours, its schema is whole, every card parses. The review log is not read.

    An ``immutable`` read is trusted only if the file did not change under it
    (a quiz that started or checkpointed meanwhile): otherwise it is read again.
    """
    for attempt in range(attempts):
        before = fingerprint(path)
        conn, immutable = _connect_readonly(path, deadline)
        error: StoreError | None = None
        cards: dict[str, tuple[Card, int, datetime]] = {}
        try:
            check_database(conn, path)
            check_schema(conn, path)
            cards = store_integrity.refuse_cards(conn, path)
        except StoreError as exc:
            error = exc
        except sqlite3.Error as exc:  # damage, or a lock held past LOCK_TIMEOUT_S, or a failing disk
            error = store_error(path, exc)
        except (UnicodeError, ValueError, OverflowError) as exc:
            error = bad_file(path, one_line(exc))
        if immutable and fingerprint(path) != before and attempt < attempts - 1:
            conn.close()  # written while we read: what we saw may be torn
            time.sleep(0.02)
            continue
        if error is not None:
            conn.close()
            raise error
        return conn, cards
    raise StoreError(f"can not read the store {shown(path)}: it kept changing while being checked")  # pragma: no cover
