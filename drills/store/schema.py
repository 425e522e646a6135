"""The store's schema and its migrations, versioned with SQLite's ``user_version``.

``MIGRATIONS[v]`` takes a store from version ``v - 1`` to ``v``; opening a store for writing
runs the missing steps in one transaction, and a read never migrates.
Details: docs/internals.md.
"""

from __future__ import annotations

import pathlib
import sqlite3
from typing import Callable

from drills.store.files import StoreError, bad_file, one_line, shown
from drills.store.lock import retry_locked

APPLICATION_ID = 0x5244_4B31  # "RDK1": marks the file as a drill store
TABLES = ("cards", "reviews", "ticks")

_V1 = """
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
    expected TEXT NOT NULL,         -- JSON of generator.problems.problem.Answer.to_dict()
    given TEXT NOT NULL,            -- what the learner typed
    given_value REAL,               -- parsed, in the answer's unit (NULL for choices)
    correct INTEGER NOT NULL,
    rating INTEGER NOT NULL,        -- fsrs Rating (1 Again .. 4 Easy)
    relative_error REAL,
    seconds_taken REAL,
    cram INTEGER NOT NULL,          -- 1: practice that did not touch the schedule
    state_before INTEGER,           -- the card's fsrs State before this review, NULL when new
    due_after TEXT                  -- when the skill is due next (NULL for cram)
);
CREATE INDEX IF NOT EXISTS reviews_by_time ON reviews(reviewed_at);
CREATE INDEX IF NOT EXISTS reviews_by_skill ON reviews(skill);
CREATE TABLE IF NOT EXISTS ticks (
    item INTEGER PRIMARY KEY,       -- a "Can you" item, 1..7
    ticked_at TEXT NOT NULL
);
"""

# The recalls retention counts (drills.stats): the WHERE clause must be repeated exactly in a query
# for SQLite to use this partial index.
RECALLS_WHERE = "cram = 0 AND state_before = 2"

_V3 = f"""
CREATE INDEX IF NOT EXISTS cards_by_due ON cards(due);
CREATE INDEX IF NOT EXISTS reviews_by_session ON reviews(session);
CREATE INDEX IF NOT EXISTS reviews_recalls ON reviews(reviewed_at, correct) WHERE {RECALLS_WHERE};
CREATE TABLE IF NOT EXISTS tallies (
    family TEXT NOT NULL,
    chip TEXT NOT NULL,             -- '' for a skill without a chip
    reviews INTEGER NOT NULL,
    correct INTEGER NOT NULL,
    cram INTEGER NOT NULL,
    PRIMARY KEY (family, chip)
);
DELETE FROM tallies;
INSERT INTO tallies (family, chip, reviews, correct, cram)
    SELECT family, COALESCE(chip, ''), COUNT(*), SUM(correct), SUM(cram) FROM reviews GROUP BY family, COALESCE(chip, '');
CREATE TRIGGER IF NOT EXISTS tallies_insert AFTER INSERT ON reviews BEGIN
    INSERT OR IGNORE INTO tallies VALUES (NEW.family, COALESCE(NEW.chip, ''), 0, 0, 0);
    UPDATE tallies SET reviews = reviews + 1, correct = correct + NEW.correct, cram = cram + NEW.cram
        WHERE family = NEW.family AND chip = COALESCE(NEW.chip, '');
END;
CREATE TRIGGER IF NOT EXISTS tallies_delete AFTER DELETE ON reviews BEGIN
    UPDATE tallies SET reviews = reviews - 1, correct = correct - OLD.correct, cram = cram - OLD.cram
        WHERE family = OLD.family AND chip = COALESCE(OLD.chip, '');
    DELETE FROM tallies WHERE reviews <= 0;
END;
CREATE TRIGGER IF NOT EXISTS tallies_update AFTER UPDATE OF family, chip, correct, cram ON reviews BEGIN
    UPDATE tallies SET reviews = reviews - 1, correct = correct - OLD.correct, cram = cram - OLD.cram
        WHERE family = OLD.family AND chip = COALESCE(OLD.chip, '');
    INSERT OR IGNORE INTO tallies VALUES (NEW.family, COALESCE(NEW.chip, ''), 0, 0, 0);
    UPDATE tallies SET reviews = reviews + 1, correct = correct + NEW.correct, cram = cram + NEW.cram
        WHERE family = NEW.family AND chip = COALESCE(NEW.chip, '');
    DELETE FROM tallies WHERE reviews <= 0;
END;
"""


_V4 = """
CREATE INDEX IF NOT EXISTS reviews_by_anki ON reviews(anki_revlog);
CREATE TABLE IF NOT EXISTS fsrs_params (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    parameters TEXT NOT NULL,       -- JSON list of the fitted FSRS parameters
    kept_at TEXT NOT NULL,          -- when they were kept (ISO 8601, UTC)
    reviews INTEGER NOT NULL,       -- the reviews they were fitted to
    log_loss REAL NOT NULL,         -- held-out log loss of these parameters
    default_log_loss REAL NOT NULL  -- held-out log loss of the defaults, on the same reviews
);
"""

# Columns version 4 adds to ``reviews`` (name, declaration).
V4_COLUMNS = (("hints", "INTEGER"), ("source", "TEXT"), ("anki_revlog", "INTEGER"))


def _statements(script: str) -> list[str]:
    """The statements of a script, each complete by SQLite's own rule (trigger bodies stay whole);
    ``executescript`` would COMMIT first, and the steps run inside the migration's transaction."""
    out, current = [], ""
    for line in script.strip().splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _to_v1(conn: sqlite3.Connection) -> None:
    """Version 1: the tables and the indexes by time and by skill (IF NOT EXISTS: nothing is replaced)."""
    for statement in _statements(_V1):
        conn.execute(statement)


def _to_v2(conn: sqlite3.Connection) -> None:
    """Version 2: ``reviews.card_before`` (older stores made before undo lack it; others have it)."""
    if "card_before" not in columns(conn, "reviews"):
        conn.execute("ALTER TABLE reviews ADD COLUMN card_before TEXT")


def _to_v3(conn: sqlite3.Connection) -> None:
    """Version 3: the read indexes and the ``tallies`` summary with its triggers, filled from the log."""
    for statement in _statements(_V3):
        conn.execute(statement)


def _to_v4(conn: sqlite3.Connection) -> None:
    """Version 4: ``reviews.hints``, ``reviews.source``, ``reviews.anki_revlog`` (NULL in the rows
    kept: nothing is rewritten) with its index, and the ``fsrs_params`` table."""
    have = columns(conn, "reviews")
    for name, kind in V4_COLUMNS:
        if name not in have:
            conn.execute(f"ALTER TABLE reviews ADD COLUMN {name} {kind}")
    for statement in _statements(_V4):
        conn.execute(statement)


# MIGRATIONS[v] takes a store at version v - 1 to version v.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _to_v1, 2: _to_v2, 3: _to_v3, 4: _to_v4}
SCHEMA_VERSION = max(MIGRATIONS)


def version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def check_database(conn: sqlite3.Connection, path: pathlib.Path) -> None:
    """Reads only: the file must be ours (application_id) at a version this drill knows, or an empty database."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        found = version(conn)
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except (UnicodeError, ValueError) as exc:
        raise bad_file(path, one_line(exc)) from None
    if app_id == APPLICATION_ID:
        if found < 0:
            raise bad_file(path, f"schema version {found}, which no drill writes (0 to {SCHEMA_VERSION})")
        if found > SCHEMA_VERSION:
            raise StoreError(f"{shown(path)} was written by a newer version of drill (schema {found}); "
                             f"upgrade drill")
        return
    if app_id != 0 or tables:
        raise bad_file(path, "an SQLite database, but not a drill store")


def check_schema(conn: sqlite3.Connection, path: pathlib.Path) -> None:
    """Reads only: a store past version 0 has the tables, columns, indexes and triggers its version
    promises (each trigger exactly as drill makes it: the tallies depend on them)."""
    if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
        return  # an empty database: the schema is created on the first write
    found = version(conn)
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    wanted = set(TABLES) | ({"tallies"} if found >= 3 else set()) | ({"fsrs_params"} if found >= 4 else set())
    if found >= 1 and not wanted <= names:
        raise bad_file(path, f"schema {found} without the table{'s' if len(wanted - names) > 1 else ''} "
                             f"{', '.join(sorted(wanted - names))}")
    if found >= 2 and "card_before" not in columns(conn, "reviews"):
        raise bad_file(path, f"schema {found} without the column reviews.card_before")
    lacking = [name for name, _ in V4_COLUMNS if name not in columns(conn, "reviews")] if found >= 4 else []
    if lacking:
        raise bad_file(path, f"schema {found} without the column reviews.{lacking[0]}")
    present = {(kind, name): (table, sql) for kind, name, table, sql in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('index', 'trigger')")}
    for (kind, name), (table, sql, since) in _OBJECTS.items():
        if found < since:
            continue
        have = present.get((kind, name))
        if have is None:
            raise bad_file(path, f"schema {found} without the {kind} {name}")
        if have[0] != table or (kind == "trigger" and _normal(have[1]) != sql):
            raise bad_file(path, f"schema {found} with a {kind} {name} that is not the one drill makes")


def _normal(sql: object) -> str:
    """A CREATE statement as SQLite keeps it (no IF NOT EXISTS), whitespace collapsed."""
    return " ".join(str(sql).replace("IF NOT EXISTS ", "").split())


def _objects() -> dict[tuple[str, str], tuple[str, str, int]]:
    """(type, name) -> (table, normalised SQL, the version that adds it) of every index and trigger."""
    out: dict[tuple[str, str], tuple[str, str, int]] = {}
    for since, script in ((1, _V1), (3, _V3), (4, _V4)):
        for statement in _statements(script):
            words = _normal(statement).split()
            if words[:2] in (["CREATE", "INDEX"], ["CREATE", "TRIGGER"]):
                table = words[words.index("ON") + 1].split("(")[0]
                out[(words[1].lower(), words[2])] = (table, _normal(statement).rstrip(";"), since)
    return out


_OBJECTS = _objects()


def needs_migration(conn: sqlite3.Connection) -> bool:
    return conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID or version(conn) < SCHEMA_VERSION


def migrate(conn: sqlite3.Connection, deadline: float | None = None, target: int = SCHEMA_VERSION) -> int:
    """Run the missing steps up to ``target`` in one ``BEGIN IMMEDIATE`` transaction; the version reached."""
    retry_locked(conn, lambda: conn.execute("BEGIN IMMEDIATE"), deadline)
    try:
        found = version(conn) if conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID else 0
        for step in range(found + 1, target + 1):
            MIGRATIONS[step](conn)
            conn.execute(f"PRAGMA user_version = {step}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return max(found, target)


def has_tallies(conn: sqlite3.Connection) -> bool:
    return version(conn) >= 3


def has_v4(conn: sqlite3.Connection) -> bool:
    """The store has ``reviews.hints``/``source``/``anki_revlog`` and ``fsrs_params`` (an older store
    read without migrating has not)."""
    return version(conn) >= 4
