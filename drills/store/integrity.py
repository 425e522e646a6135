"""What a readable store row is, and the whole-store check behind ``drill store check``.

Opening a store checks only what every command reads: the schema and the
``cards`` rows (one per skill seen, so bounded by the catalogue, not by the
history). Rows read later are checked as they are read. ``check_store`` is the
full check, run only when asked: SQLite's ``integrity_check``, every card, every
review row (times, types and ranges, text that decodes), and the ``tallies``
summary against the log. Each problem names its table and row.
"""

from __future__ import annotations

import math
import json
import pathlib
import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from fsrs import Card

if TYPE_CHECKING:
    from fsrs.card import CardDict

from drills.store.files import bad_file

MAX_STEP = 1000  # a learning step index; the scheduler's lists have a few entries


def _finite(value: Any, name: str, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"card {name} {str(value)[:40]!r} is not a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"card {name} {value!r} is outside {low:g}..{high:g}")


def card(text: Any) -> Card:
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
        loaded = Card.from_dict(cast("CardDict", data))  # its fields are checked one by one above
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"card does not load ({' '.join(str(exc).split())[:200]})") from None
    if loaded.due.tzinfo is None or (loaded.last_review is not None and loaded.last_review.tzinfo is None):
        raise ValueError("card has a time without a time zone")
    return loaded


def count(value: Any) -> int:
    """A stored review count (``cards.reviews``), or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"reviews {str(value)[:40]!r} is not a whole number >= 0")
    return value


def aware(text: Any) -> datetime:
    """A stored time (ISO 8601 with a zone), or ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"time {text!r} is not text")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"time {text[:40]!r} is not ISO 8601") from None
    if moment.tzinfo is None:
        raise ValueError(f"time {text[:40]!r} has no time zone")
    return moment


def read_cards(conn: sqlite3.Connection) -> tuple[dict[str, tuple[Card, int, datetime]], list[str]]:
    """Every ``cards`` row parsed (skill -> (card, reviews, introduced_at)), and each row that does
    not parse, named by its skill (reads only)."""
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "cards" not in names:
        return {}, []
    parsed: dict[str, tuple[Card, int, datetime]] = {}
    damaged: list[str] = []
    for skill, text, due, introduced, reviews in conn.execute(
            "SELECT skill, card, due, introduced_at, reviews FROM cards ORDER BY skill"):
        try:
            loaded = card(text)
            aware(due)
            parsed[skill] = (loaded, count(reviews), aware(introduced))
        except ValueError as exc:
            damaged.append(f"cards row of skill {str(skill)[:60]!r}: {exc}")
    return parsed, damaged


def card_problems(conn: sqlite3.Connection) -> list[str]:
    """Every ``cards`` row that does not parse, named by its skill (reads only)."""
    return read_cards(conn)[1]


_NUMBER = "(({0}) IS NOT NULL AND (typeof({0}) NOT IN ('real', 'integer') OR abs({0}) > 1e300))"
_BAD_TYPES = (
    "SELECT id FROM reviews WHERE typeof(skill) != 'text' OR typeof(family) != 'text' "
    "OR (chip IS NOT NULL AND typeof(chip) != 'text') OR typeof(session) != 'text' "
    "OR typeof(problem_id) != 'text' OR typeof(given) != 'text' "
    "OR typeof(correct) != 'integer' OR correct NOT IN (0, 1) "
    "OR typeof(cram) != 'integer' OR cram NOT IN (0, 1) "
    "OR typeof(rating) != 'integer' OR rating NOT BETWEEN 1 AND 4 "
    "OR (state_before IS NOT NULL AND (typeof(state_before) != 'integer' OR state_before NOT BETWEEN 1 AND 3)) "
    f"OR {_NUMBER.format('given_value')} OR {_NUMBER.format('relative_error')} "
    f"OR {_NUMBER.format('seconds_taken')} OR seconds_taken < 0 "
    "ORDER BY id")


def review_problems(conn: sqlite3.Connection) -> list[str]:
    """Every ``reviews`` row the tool could not read, named by its id (reads every row: on demand only)."""
    damaged: list[str] = []
    present = [row[1] for row in conn.execute("PRAGMA table_info(reviews)")]
    texts = [c for c in _TEXT_COLUMNS if c in present]
    # As bytes, so text that is not UTF-8 is named by its row instead of ending the whole read.
    cursor = conn.execute("SELECT id, " + ", ".join(f"CAST({c} AS BLOB)" for c in texts) + " FROM reviews ORDER BY id")
    for rid, *values in cursor:
        try:
            decoded = {}
            for name, value in zip(texts, values):
                try:
                    decoded[name] = value.decode("utf-8") if isinstance(value, bytes) else value
                except UnicodeDecodeError:
                    raise ValueError(f"{name} is text that does not decode as UTF-8") from None
            aware(decoded["reviewed_at"])
            if decoded.get("due_after") is not None:
                aware(decoded["due_after"])
        except ValueError as exc:
            damaged.append(f"reviews row {rid}: {exc}")
    damaged.extend(f"reviews row {rid}: a column of the wrong type or out of range"
                   for (rid,) in conn.execute(_BAD_TYPES))
    if "hints" in present:  # schema 4
        damaged.extend(f"reviews row {rid}: hints, source or anki_revlog of the wrong type or out of range"
                       for (rid,) in conn.execute(_BAD_V4))
    return damaged


_BAD_V4 = ("SELECT id FROM reviews WHERE (hints IS NOT NULL AND (typeof(hints) != 'integer' OR hints NOT BETWEEN 0 AND 9)) "
           "OR (source IS NOT NULL AND source != 'anki') "
           "OR (anki_revlog IS NOT NULL AND typeof(anki_revlog) != 'integer') "
           "OR (source = 'anki') != (anki_revlog IS NOT NULL) ORDER BY id")


def fsrs_params_problems(conn: sqlite3.Connection) -> list[str]:
    """The ``fsrs_params`` row (schema 4), where there is one, must hold 21 finite parameters and a time."""
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "fsrs_params" not in names:
        return []
    out = []
    for text, kept_at in conn.execute("SELECT parameters, kept_at FROM fsrs_params"):
        try:
            values = json.loads(text)
            if not isinstance(values, list) or len(values) != 21:
                raise ValueError("not a list of 21 parameters")
            if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in values):
                raise ValueError("a parameter that is not a finite number")
            aware(kept_at)
        except (ValueError, TypeError) as exc:
            out.append(f"fsrs_params row: {exc}")
    return out


_TEXT_COLUMNS = ("session", "reviewed_at", "skill", "family", "chip", "problem_id", "params", "prompt",
                 "expected", "given", "due_after", "card_before")


def tally_problems(conn: sqlite3.Connection) -> list[str]:
    """The ``tallies`` summary (schema 3) must equal the counts of the log it summarises."""
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "tallies" not in names:
        return []
    # Names as bytes: text that is not UTF-8 is the review rows' problem (named there), not a crash here.
    kept = {(f, c): (n, ok, cram) for f, c, n, ok, cram in conn.execute(
        "SELECT CAST(family AS BLOB), CAST(chip AS BLOB), reviews, correct, cram FROM tallies WHERE reviews > 0")}
    counted = {(f, c): (n, ok, cram) for f, c, n, ok, cram in conn.execute(
        "SELECT CAST(family AS BLOB), CAST(COALESCE(chip, '') AS BLOB), COUNT(*), SUM(correct), SUM(cram) "
        "FROM reviews GROUP BY family, COALESCE(chip, '')")}

    def name(raw: Any) -> str:
        return raw.decode("utf-8", "backslashreplace") if isinstance(raw, bytes) else str(raw)

    return [f"tallies row of family {name(f)!r}, chip {name(c) or 'any'!r}: {kept.get((f, c))} but the reviews "
            f"give {counted.get((f, c))} (reviews, right, cram)" for f, c in sorted(set(kept) | set(counted))
            if kept.get((f, c)) != counted.get((f, c))]


def check_store(conn: sqlite3.Connection) -> list[str]:
    """Every problem in the store, one line each naming its table and row; [] for a healthy store."""
    problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(10)")]
    if problems != ["ok"]:
        return ["damaged file: " + "; ".join(problems)]
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names:
        return []
    out = card_problems(conn)
    if "reviews" in names:
        out += review_problems(conn)
    return out + tally_problems(conn) + fsrs_params_problems(conn)


def refuse_cards(conn: sqlite3.Connection, path: pathlib.Path) -> dict[str, tuple[Card, int, datetime]]:
    """The open-time check of the rows every command reads: StoreError naming the first bad card;
    else the parsed cards (the read-only store keeps them, so they are parsed once)."""
    parsed, damaged = read_cards(conn)
    if damaged:
        more = f" (and {len(damaged) - 1} more damaged row{'s' if len(damaged) > 2 else ''})" if len(damaged) > 1 else ""
        raise bad_file(path, f"{damaged[0]}{more}")
    return parsed
