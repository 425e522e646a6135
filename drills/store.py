"""The review store: one SQLite file with the FSRS state of every skill and a log of every review.

Nothing is lost: the file runs in WAL mode with ``synchronous=FULL``; each review
is its own transaction, and the read-modify-write of a skill's FSRS card happens
inside ``BEGIN IMMEDIATE``, so two quizzes on one store (two terminals) queue
for the write lock instead of failing with "database is locked" or overwriting
each other's update. A store locked by another process is waited for at most
``LOCK_TIMEOUT_S`` seconds in total (5 s), then refused with "in use by another
process (PID n)"; only a damaged file gets the advice to move it aside. Undo
undoes only a review that is still the skill's latest (any session's review of
the skill since makes it refuse, changing nothing). A process killed mid-quiz
leaves every committed review in place.

A file that is not a drill store (not a regular file, not SQLite, another
program's database, damaged, or with a row the tool can not read: every field
the scheduler uses is checked with its range) raises
``StoreError`` naming the file, what is wrong and how to move it aside; it is
never written to: every existing file is checked first through a read-only
connection (``mode=ro``; ``immutable=1`` when no journal shows another writer,
so not even ``-wal``/``-shm`` files appear), and only then opened for writing.
Opening a healthy store writes nothing; ``Store.open(path, readonly=True)``
(``drill stats``) keeps the read-only connection, so a read never changes a byte,
and refuses a path with no store instead of creating one. The ``-wal``,
``-journal`` and ``-shm`` files beside the store must be regular files (SQLite
would block on a FIFO or delete a node): anything else is refused, untouched. A
store with no write bit is read-only even for root: refused before any question.
Times are stored as ISO 8601 strings in UTC with a fixed format, so they sort as text.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import sqlite3
import stat
import time
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from fsrs import Card, Rating, Scheduler

from generator import safeio

APPLICATION_ID = 0x5244_4B31  # "RDK1": marks the file as a drill store
SCHEMA_VERSION = 1
LOCK_TIMEOUT_S = 5.0  # the longest a command waits, in total, for another process's lock on the store
SIDE_SUFFIXES = ("-wal", "-journal", "-shm")  # the files SQLite keeps beside the store
SQLITE_MAGIC = b"SQLite format 3\x00"
APP_NAME = "rudrite-kernels"
STORE_FILENAME = "drill.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (
    skill TEXT PRIMARY KEY,
    card TEXT NOT NULL,             -- fsrs Card.to_dict() as JSON
    due TEXT NOT NULL,              -- copy of the card's due time, for ordering
    state INTEGER NOT NULL,         -- fsrs State (1 learning, 2 review, 3 relearning)
    reviews INTEGER NOT NULL,       -- scheduled reviews applied to this card
    introduced_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    reviewed_at TEXT NOT NULL,
    skill TEXT NOT NULL,
    family TEXT NOT NULL,
    chip TEXT,
    problem_id TEXT NOT NULL,
    params TEXT NOT NULL,           -- JSON of the drawn parameters
    prompt TEXT NOT NULL,
    expected TEXT NOT NULL,         -- JSON of generator.problem.Answer.to_dict()
    given TEXT NOT NULL,            -- what the learner typed
    given_value REAL,               -- parsed, in the answer's unit (NULL for choices)
    correct INTEGER NOT NULL,
    rating INTEGER NOT NULL,        -- fsrs Rating (1 Again .. 4 Easy)
    relative_error REAL,
    seconds_taken REAL,
    cram INTEGER NOT NULL,          -- 1: practice that did not touch the schedule
    state_before INTEGER,           -- the card's fsrs State before this review, NULL when new
    due_after TEXT,                 -- when the skill is due next (NULL for cram)
    card_before TEXT                -- the card (JSON) before this review, NULL when new: what undo restores
);
CREATE INDEX IF NOT EXISTS reviews_by_time ON reviews(reviewed_at);
CREATE INDEX IF NOT EXISTS reviews_by_skill ON reviews(skill);
CREATE TABLE IF NOT EXISTS ticks (
    item INTEGER PRIMARY KEY,       -- a "Can you" item, 1..7
    ticked_at TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The store can not be used; the message is one line naming the file."""


class StoreMissing(StoreError):
    """A read (``drill stats``) of a path where there is no store; nothing is created."""


class StoreInUse(StoreError):
    """Another process held the store's lock for longer than ``LOCK_TIMEOUT_S``."""


class UndoRefused(StoreError):
    """Undo would discard a later review of the same skill; nothing was changed."""


def _shown(path: str | os.PathLike[str]) -> str:
    """A path printable on any stream (bytes that are not UTF-8 as ``\\xNN``)."""
    return safeio.display_path(path)


def default_store_path() -> pathlib.Path:
    """``$DRILL_STORE`` if set, else ``drill.sqlite3`` in the platformdirs user data directory."""
    env = os.environ.get("DRILL_STORE", "").strip()
    if env:
        return pathlib.Path(env).expanduser()
    import platformdirs  # only when no store was named

    return platformdirs.user_data_path(APP_NAME, appauthor=False) / STORE_FILENAME


def iso(moment: datetime) -> str:
    """UTC, fixed width with microseconds, so stored times compare correctly as text."""
    if moment.tzinfo is None:
        raise ValueError("store times must be timezone-aware")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


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


class Store:
    """A drill store on disk. Use ``Store.open(path)``; close it (or use ``with``)."""

    def __init__(self, path: pathlib.Path, conn: sqlite3.Connection):
        self.path, self._conn = path, conn
        self._undo_ready = False  # reviews.card_before checked (older stores get it on the first write)

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, readonly: bool = False) -> "Store":
        """Open (or create) the store at ``path`` (default: ``default_store_path()``).

        An existing file is checked first through a read-only connection
        (``mode=ro``): it must be a regular file, an SQLite database that is a
        drill store, pass ``quick_check``, and every row the tool reads must
        parse. Otherwise ``StoreError`` names the file and what is wrong, and
        the file is left byte-identical. ``readonly`` keeps that read-only
        connection (``drill stats``: a read never writes, not even the header)
        and raises ``StoreMissing`` where there is no store (nothing is created).
        For writing, a store with no write bit is refused (``_check_writable``),
        and a store another process keeps locked is refused after waiting
        ``LOCK_TIMEOUT_S`` in all (``StoreInUse``), before anything is asked.
        """
        target = pathlib.Path(path).expanduser() if path is not None else default_store_path()
        deadline = time.monotonic() + LOCK_TIMEOUT_S  # one bound for every wait on another's lock
        _check_side_files(target)
        existing = _check_file(target)
        if readonly and not existing:
            what = "the file is empty" if os.path.lexists(target) else "nothing has been recorded there"
            raise StoreMissing(f"no store at {_shown(target)}: {what} (drill quiz creates it); nothing was created")
        if existing:
            ro = _checked_readonly(target, deadline)
            if readonly:
                return cls(target, ro)
            ro.close()
        _check_writable(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(target), timeout=0, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"can not open the store {_shown(target)}: {_one_line(exc)}") from None
        try:
            _retry_locked(conn, lambda: _check_database(conn, target), deadline)
            _retry_locked(conn, lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), deadline)
            conn.execute("PRAGMA synchronous = FULL")
            if _needs_schema(conn):  # a healthy store is not written to just by opening it
                _create_schema(conn, deadline)
            else:  # a store another process keeps locked is refused now, before any question is asked
                _retry_locked(conn, lambda: conn.execute("BEGIN IMMEDIATE"), deadline)
                conn.execute("ROLLBACK")  # nothing was written
        except StoreError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise _store_error(target, exc) from None
        return cls(target, conn)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reviews and scheduling ------------------------------------------------------

    def record_review(self, review: ReviewRecord, scheduler: Scheduler | None = None,
                      now: datetime | None = None) -> Card | None:
        """Log one review and, unless it is cram, advance the skill's FSRS card; one transaction.

        Returns the card after the review (None for cram). The card is read and
        written under ``BEGIN IMMEDIATE`` so a concurrent quiz can not interleave.
        ``now`` defaults to the moment the write lock is held, so reviews from two
        quizzes reach each card in the order of their timestamps.
        """
        scheduler = scheduler or Scheduler()
        try:
            return self._record(review, scheduler, now)
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    def _ensure_undo_column(self) -> None:
        """Stores made before undo existed lack ``reviews.card_before``: add it on the first write."""
        if self._undo_ready:
            return
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(reviews)")}
        if "card_before" not in columns:
            self._conn.execute("ALTER TABLE reviews ADD COLUMN card_before TEXT")
        self._undo_ready = True

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
                self._ensure_undo_column()
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
                            raise _bad_file(self.path, f"the review {review_id} of skill '{skill}': "
                                                       f"{_one_line(exc)}") from None
                        self._conn.execute(
                            "UPDATE cards SET card = ?, due = ?, state = ?, reviews = ?, updated_at = ? "
                            "WHERE skill = ?",
                            (card_before, iso(card.due), int(card.state), max(int(current[1]) - 1, 0),
                             iso(utc_now()), skill))
            return True
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    def last_review_id(self, session: str) -> int | None:
        row = self._query("SELECT MAX(id) FROM reviews WHERE session = ?", (session,))
        return int(row[0][0]) if row and row[0][0] is not None else None

    def _record(self, review: ReviewRecord, scheduler: Scheduler, now: datetime | None) -> Card | None:
        with self._transaction():
            self._ensure_undo_column()
            now = now or utc_now()
            row = self._conn.execute(
                "SELECT card, reviews, introduced_at FROM cards WHERE skill = ?", (review.skill,)).fetchone()
            try:
                card = _card(row[0]) if row else None
                if row:
                    _count(row[1])
            except (ValueError, TypeError, KeyError) as exc:  # rolled back: nothing written
                raise _bad_file(self.path, f"the cards row of skill '{review.skill}': {_one_line(exc)}") from None
            state_before = int(card.state) if card else None
            new_card = None
            if not review.cram:
                current = card or Card(card_id=zlib.crc32(review.skill.encode()), due=now)
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
                "state_before, due_after, card_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (review.session, iso(now), review.skill, review.family, review.chip, review.problem_id,
                 json.dumps(review.params, sort_keys=True, default=str), review.prompt,
                 json.dumps(review.expected, sort_keys=True), review.given, review.given_value,
                 int(review.correct), int(review.rating), review.relative_error, review.seconds_taken,
                 int(review.cram), state_before, iso(new_card.due) if new_card else None,
                 row[0] if row else None))
        return new_card

    def cards(self) -> dict[str, CardRow]:
        """Every skill seen so far with its FSRS card."""
        rows = self._query("SELECT skill, card, reviews, introduced_at FROM cards ORDER BY skill")
        try:
            return {skill: CardRow(skill, _card(card), _count(reviews), _aware(introduced))
                    for skill, card, reviews, introduced in rows}
        except (ValueError, TypeError, KeyError) as exc:  # a row damaged since the open-time check
            raise _bad_file(self.path, f"a damaged cards row: {_one_line(exc)}") from None

    def due_skills(self, now: datetime | None = None) -> list[tuple[str, datetime]]:
        """Skills due at ``now``, most overdue first."""
        rows = self._query("SELECT skill, due FROM cards WHERE due <= ? ORDER BY due, skill",
                           (iso(now or utc_now()),))
        try:
            return [(skill, _aware(due)) for skill, due in rows]
        except ValueError as exc:
            raise _bad_file(self.path, f"a damaged cards row: {_one_line(exc)}") from None

    def next_due(self) -> datetime | None:
        row = self._query("SELECT MIN(due) FROM cards")
        try:
            return _aware(row[0][0]) if row and row[0][0] else None
        except ValueError as exc:
            raise _bad_file(self.path, f"a damaged cards row: {_one_line(exc)}") from None

    def introduced_since(self, since: datetime) -> int:
        """How many skills had their first scheduled review at or after ``since``."""
        return int(self._query("SELECT COUNT(*) FROM cards WHERE introduced_at >= ?", (iso(since),))[0][0])

    def count_reviews(self, session: str | None = None) -> int:
        if session is None:
            return int(self._query("SELECT COUNT(*) FROM reviews")[0][0])
        return int(self._query("SELECT COUNT(*) FROM reviews WHERE session = ?", (session,))[0][0])

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
            raise _store_error(self.path, exc) from None

    def skill_summary(self) -> dict[str, dict[str, Any]]:
        """skill_id -> {"reviews": int, "correct": int, "last_correct": bool}, cram included."""
        rows = self._query(
            "SELECT skill, COUNT(*), SUM(correct), "
            "(SELECT r2.correct FROM reviews r2 WHERE r2.skill = r.skill ORDER BY r2.id DESC LIMIT 1) "
            "FROM reviews r GROUP BY skill ORDER BY skill")
        return {skill: {"reviews": int(n), "correct": int(ok or 0), "last_correct": bool(last)}
                for skill, n, ok, last in rows}

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
            raise _store_error(self.path, exc) from None

    # -- plumbing ---------------------------------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from None

    def _transaction(self) -> "_Transaction":
        return _Transaction(self)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any error, including Ctrl-C."""

    def __init__(self, store: Store):
        self.store = store

    def __enter__(self) -> None:
        _retry_locked(self.store._conn, lambda: self.store._conn.execute("BEGIN IMMEDIATE"))

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        conn = self.store._conn
        if exc_type is None:
            _retry_locked(conn, lambda: conn.execute("COMMIT"))
        elif conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:  # the original error is the one to report
                pass


def _is_locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _retry_locked(conn: sqlite3.Connection, action: Any, deadline: float | None = None) -> Any:
    """Run ``action`` while another connection holds the lock, until ``deadline`` (default: now + LOCK_TIMEOUT_S).

    Each try lets SQLite's busy handler wait only for the time left, so the total
    wait is bounded by ``LOCK_TIMEOUT_S`` whatever SQLite does; a short sleep and
    retry covers the cases where SQLite skips the busy handler (a deadlock-avoiding
    SQLITE_BUSY on a WAL switch). Past the deadline the "locked" error is raised.
    """
    deadline = time.monotonic() + LOCK_TIMEOUT_S if deadline is None else deadline
    attempt = 0
    while True:
        left_ms = max(0, int((deadline - time.monotonic()) * 1000))
        conn.execute(f"PRAGMA busy_timeout = {left_ms}")
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() >= deadline:
                raise
        attempt += 1
        time.sleep(min(0.05 + 0.01 * attempt, max(0.0, deadline - time.monotonic())))


def _store_error(path: pathlib.Path, exc: sqlite3.Error) -> StoreError:
    """A damaged file ("file is not a database", "malformed") gets the move-aside advice; a lock held
    past ``LOCK_TIMEOUT_S`` says the store is in use; other errors (read-only, disk full) say what happened."""
    if type(exc) is sqlite3.DatabaseError:
        return _bad_file(path, str(exc))
    if _is_locked(exc):
        return _in_use(path)
    return StoreError(f"can not use the store {_shown(path)}: {_one_line(exc)}")


def _in_use(path: pathlib.Path) -> StoreError:
    pid = lock_holder(path)
    who = f" (PID {pid})" if pid else ""
    return StoreInUse(f"the store {_shown(path)} is in use by another process{who}: waited {LOCK_TIMEOUT_S:g} s "
                      f"for its lock; nothing was changed. Try again when it has finished")


def lock_holder(path: pathlib.Path) -> int | None:
    """The PID of another process holding a POSIX lock on the store or its ``-shm``, from ``/proc/locks``.

    Read-only (no file is opened and closed, which would drop this process's
    own SQLite locks); None where ``/proc/locks`` is missing or shows no one.
    """
    keys = set()
    for candidate in (path, pathlib.Path(f"{path}-shm")):
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        keys.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        text = safeio.read_bytes_bounded("/proc/locks", 1 << 20).decode("ascii", "replace")
    except OSError:
        return None
    writers, others = [], []
    for line in text.splitlines():
        fields = line.replace("->", "").split()
        try:
            kind, pid, dev = fields[3], int(fields[4]), fields[5].split(":")
            key = (int(dev[0], 16), int(dev[1], 16), int(dev[2]))
        except (IndexError, ValueError):
            continue
        if key in keys and pid not in (os.getpid(), 0, -1):
            (writers if kind == "WRITE" else others).append(pid)
    found = writers or others
    return found[0] if found else None


def _bad_file(path: pathlib.Path, reason: str) -> StoreError:
    shown = _shown(path)
    return StoreError(
        f"{shown} is not a usable drill store ({reason}); it was left untouched. "
        f"Move it aside (mv '{shown}' '{shown}.bad') to start a fresh store, or pick another with --store PATH")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _check_side_files(path: pathlib.Path) -> None:
    """``-wal``, ``-journal`` and ``-shm`` beside the store must be regular files or absent.

    SQLite opens (a FIFO would block it), truncates or deletes them: a FIFO, a
    device, a directory or a symbolic link there is refused and left as it is.
    """
    for suffix in SIDE_SUFFIXES:
        side = f"{path}{suffix}"
        try:
            st = os.lstat(side)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise StoreError(f"can not check {_shown(side)}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(
                f"{_shown(side)} is {safeio.file_kind(st.st_mode)}, not a regular file: SQLite keeps its "
                f"{suffix.lstrip('-')} file there, so the store {_shown(path)} is not used and both were left "
                f"untouched; remove or rename it, or pick another store with --store PATH")


def _check_writable(path: pathlib.Path) -> None:
    """A store (and its folder, where SQLite puts ``-wal``/``-shm``) with no write bit is read-only,
    for root too: refused before anything is asked or written."""
    for what, target in (("the store", path), ("the store's folder", path.parent)):
        try:
            st = os.stat(target)
        except OSError:
            continue  # a new store, or a folder still to create: the open reports real problems
        if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
            writable = os.access(target, os.W_OK | (os.X_OK if stat.S_ISDIR(st.st_mode) else 0))
            if safeio._read_only_by_mode(st.st_mode) or not writable:
                raise StoreError(
                    f"{what} {_shown(target)} is read-only (mode {stat.S_IMODE(st.st_mode):04o}) and drill "
                    f"records answers and ticks there, so nothing was asked or written. Make it writable or "
                    f"pick another store with --store PATH")


def _check_file(path: pathlib.Path) -> bool:
    """Refuse a path that is not a regular file, or a non-empty file without the SQLite header,
    reading only and never blocking (``generator.safeio``). True when there is a store to check."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # a new store (mkdir reports a bad parent)
        return False
    except OSError as exc:
        raise StoreError(f"can not read the store {_shown(path)}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{_shown(path)} is a directory; pass a file path with --store PATH")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{_shown(path)} is {safeio.file_kind(st.st_mode)}, not a regular file; "
                         f"a store must be a file: pass one with --store PATH")
    try:
        head = safeio.read_head(path, 100)
    except safeio.SafeIOError as exc:
        raise StoreError(f"can not read the store: {exc}") from None
    if head and not head.startswith(SQLITE_MAGIC):
        raise _bad_file(path, "not an SQLite database")
    if head and len(head) < 100:
        raise _bad_file(path, "truncated SQLite header")
    return bool(head)


def _fingerprint(path: pathlib.Path) -> tuple[Any, ...]:
    """What changes when another connection writes the file or starts a journal beside it."""
    st = os.stat(path)
    sides = tuple(os.path.exists(f"{path}{suffix}") for suffix in ("-wal", "-journal"))
    return st.st_ino, st.st_size, st.st_mtime_ns, sides


def _connect_readonly(path: pathlib.Path, deadline: float) -> tuple[sqlite3.Connection, bool]:
    """A connection that can not write the file (``mode=ro``); True when it is ``immutable``.

    With no ``-wal`` or ``-journal`` beside the file no other connection is
    writing it, and ``immutable=1`` reads without creating the ``-wal``/``-shm``
    files a read-only WAL reader would otherwise leave behind (``drill stats``
    and a refused store leave the directory as they found it). With a journal
    present, a plain ``mode=ro`` connection shares the other writer's locks.
    """
    immutable = not any(os.path.exists(f"{path}{suffix}") for suffix in ("-wal", "-journal"))
    uri = path.absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {max(0, int((deadline - time.monotonic()) * 1000))}")
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise StoreError(f"can not open the store {_shown(path)}: {_one_line(exc)}") from None
    return conn, immutable


def _checked_readonly(path: pathlib.Path, deadline: float, attempts: int = 5) -> sqlite3.Connection:
    """A read-only connection to ``path`` after the whole-file check (StoreError if it fails).

    An ``immutable`` read is trusted only if the file did not change under it
    (a quiz that started or checkpointed meanwhile): otherwise it is read again.
    """
    for attempt in range(attempts):
        before = _fingerprint(path)
        conn, immutable = _connect_readonly(path, deadline)
        error: StoreError | None = None
        try:
            _check_database(conn, path)
            _check_rows(conn, path)
        except StoreError as exc:
            error = exc
        except sqlite3.Error as exc:  # damage, or a lock held past LOCK_TIMEOUT_S, or a failing disk
            error = _store_error(path, exc)
        except (UnicodeError, ValueError, OverflowError) as exc:
            error = _bad_file(path, _one_line(exc))
        if immutable and _fingerprint(path) != before and attempt < attempts - 1:
            conn.close()  # written while we read: what we saw may be torn
            time.sleep(0.02)
            continue
        if error is not None:
            conn.close()
            raise error
        return conn
    raise StoreError(f"can not read the store {_shown(path)}: it kept changing while being checked")  # pragma: no cover


def _check_database(conn: sqlite3.Connection, path: pathlib.Path) -> None:
    """Reads only: the file must be ours (application_id) or an empty database."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except (UnicodeError, ValueError) as exc:
        raise _bad_file(path, _one_line(exc)) from None
    if app_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise StoreError(f"{_shown(path)} was written by a newer version of drill (schema {version}); "
                             f"upgrade drill")
        return
    if app_id != 0 or tables:
        raise _bad_file(path, "an SQLite database, but not a drill store")


_TABLES = ("cards", "reviews", "ticks")


def _needs_schema(conn: sqlite3.Connection) -> bool:
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    return app_id != APPLICATION_ID or not set(_TABLES) <= names


MAX_STEP = 1000  # a learning step index; the scheduler's lists have a few entries


def _finite(value: Any, name: str, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"card {name} {str(value)[:40]!r} is not a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"card {name} {value!r} is outside {low:g}..{high:g}")


def _card(text: Any) -> Card:
    """A stored card, or ValueError saying what is wrong with it.

    Every field the scheduler uses is checked with its range: state 1..3
    (learning, review, relearning); step a whole number 0..MAX_STEP, present in
    states 1 and 3 and absent in state 2; stability in (0, 1e6] days and
    difficulty in [1, 10], both present except on a new learning card; due and
    last review times with a time zone.
    """
    if not isinstance(text, str):
        raise ValueError("card is not JSON text")
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise ValueError("card is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("card is not a JSON object")
    if "card_id" not in data:
        raise ValueError("card has no card_id")
    state, step = data.get("state"), data.get("step")
    if isinstance(state, bool) or state not in (1, 2, 3):
        raise ValueError(f"card state {str(state)[:40]!r} is not 1, 2 or 3")
    if state == 2:
        if step is not None:
            raise ValueError("card step is set on a card in review (state 2)")
    elif isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        raise ValueError(f"card step {str(step)[:40]!r} is not a whole number 0..{MAX_STEP} (state {state})")
    for name, low, high in (("stability", 1e-6, 1e6), ("difficulty", 1.0, 10.0)):
        value = data.get(name)
        if value is None:
            if state != 1:
                raise ValueError(f"card {name} is missing (state {state})")
            continue
        _finite(value, name, low, high)
    try:
        card = Card.from_dict(data)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"card does not load ({_one_line(exc)})") from None
    if card.due.tzinfo is None or (card.last_review is not None and card.last_review.tzinfo is None):
        raise ValueError("card has a time without a time zone")
    return card


def _count(value: Any) -> int:
    """A stored review count (``cards.reviews``), or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"reviews {str(value)[:40]!r} is not a whole number >= 0")
    return value


def _aware(text: Any) -> datetime:
    """A stored time (ISO 8601 with a zone), or ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"time {text!r} is not text")
    try:
        moment = parse_iso(text)
    except ValueError:
        raise ValueError(f"time {text[:40]!r} is not ISO 8601") from None
    if moment.tzinfo is None:
        raise ValueError(f"time {text[:40]!r} has no time zone")
    return moment


def _check_rows(conn: sqlite3.Connection, path: pathlib.Path) -> None:
    """Reads only: the file is intact (``quick_check``) and every row the tool parses parses.

    A damaged row is reported (naming the table and row), never dropped or recreated.
    """
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise _bad_file(path, "damaged file: " + "; ".join(map(str, problems)))
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names:
        return  # an empty database: the schema is created on the first write
    damaged: list[str] = []
    if "cards" in names:
        for skill, card, due, introduced, _, reviews in conn.execute(
                "SELECT skill, card, due, introduced_at, updated_at, reviews FROM cards"):
            for check in (lambda: _card(card), lambda: _aware(due), lambda: _aware(introduced),
                          lambda: _count(reviews)):
                try:
                    check()
                except ValueError as exc:
                    damaged.append(f"cards row of skill {str(skill)[:60]!r}: {exc}")
                    break
    if "reviews" in names:
        cursor = conn.execute("SELECT * FROM reviews")  # every column decoded: text that is not UTF-8 fails here
        columns = [d[0] for d in cursor.description]
        for row in cursor:
            rid, reviewed_at, due_after = (row[columns.index(k)] for k in ("id", "reviewed_at", "due_after"))
            try:
                _aware(reviewed_at)
                if due_after is not None:
                    _aware(due_after)
            except ValueError as exc:
                damaged.append(f"reviews row {rid}: {exc}")
        number = "(({0}) IS NOT NULL AND (typeof({0}) NOT IN ('real', 'integer') OR abs({0}) > 1e300))"
        bad_types = conn.execute(
            "SELECT id FROM reviews WHERE typeof(skill) != 'text' OR typeof(family) != 'text' "
            "OR (chip IS NOT NULL AND typeof(chip) != 'text') OR typeof(session) != 'text' "
            "OR typeof(problem_id) != 'text' OR typeof(given) != 'text' "
            "OR typeof(correct) != 'integer' OR correct NOT IN (0, 1) "
            "OR typeof(cram) != 'integer' OR cram NOT IN (0, 1) "
            "OR typeof(rating) != 'integer' OR rating NOT BETWEEN 1 AND 4 "
            "OR (state_before IS NOT NULL AND (typeof(state_before) != 'integer' OR state_before NOT BETWEEN 1 AND 3)) "
            f"OR {number.format('given_value')} OR {number.format('relative_error')} "
            f"OR {number.format('seconds_taken')} OR seconds_taken < 0 "
            "ORDER BY id").fetchall()
        damaged.extend(f"reviews row {rid}: a column of the wrong type or out of range" for (rid,) in bad_types)
    if damaged:
        more = f" (and {len(damaged) - 1} more damaged row{'s' if len(damaged) > 2 else ''})" if len(damaged) > 1 else ""
        raise _bad_file(path, f"{damaged[0]}{more}")


def _create_schema(conn: sqlite3.Connection, deadline: float | None = None) -> None:
    _retry_locked(conn, lambda: conn.execute("BEGIN IMMEDIATE"), deadline)
    try:
        # executescript() would COMMIT first; run the statements inside this transaction instead.
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise

