"""`drill anki-import`: Anki's review log of this deck's notes becomes reviews in the store, read from a
private copy (the collection is never written), idempotent by revlog id; bad input is one line, exit 1.

The fast tests build a small collection with sqlite3 following Anki's schema (the tables and columns
the import reads); the slow one makes a real collection with the `anki` package and reviews in it."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills import anki_import
from drills.cli import cli
from drills.progress import can_you
from drills.store.repository import Store
from generator.export.anki import skill_guid

ANKI_SCHEMA = """
CREATE TABLE col (id INTEGER PRIMARY KEY, crt INTEGER NOT NULL, mod INTEGER NOT NULL, scm INTEGER NOT NULL,
    ver INTEGER NOT NULL, dty INTEGER NOT NULL, usn INTEGER NOT NULL, ls INTEGER NOT NULL, conf TEXT NOT NULL,
    models TEXT NOT NULL, decks TEXT NOT NULL, dconf TEXT NOT NULL, tags TEXT NOT NULL);
CREATE TABLE notes (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, mid INTEGER NOT NULL, mod INTEGER NOT NULL,
    usn INTEGER NOT NULL, tags TEXT NOT NULL, flds TEXT NOT NULL, sfld INTEGER NOT NULL, csum INTEGER NOT NULL,
    flags INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE cards (id INTEGER PRIMARY KEY, nid INTEGER NOT NULL, did INTEGER NOT NULL, ord INTEGER NOT NULL,
    mod INTEGER NOT NULL, usn INTEGER NOT NULL, type INTEGER NOT NULL, queue INTEGER NOT NULL, due INTEGER NOT NULL,
    ivl INTEGER NOT NULL, factor INTEGER NOT NULL, reps INTEGER NOT NULL, lapses INTEGER NOT NULL,
    left INTEGER NOT NULL, odue INTEGER NOT NULL, odid INTEGER NOT NULL, flags INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE revlog (id INTEGER PRIMARY KEY, cid INTEGER NOT NULL, usn INTEGER NOT NULL, ease INTEGER NOT NULL,
    ivl INTEGER NOT NULL, lastIvl INTEGER NOT NULL, factor INTEGER NOT NULL, time INTEGER NOT NULL,
    type INTEGER NOT NULL);
"""
T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def make_collection(path: Path, notes: list[tuple[str, str]], reviews: list[tuple[int, datetime, int]]) -> Path:
    """An Anki collection: ``notes`` as (guid, fields joined by \\x1f), one card each (card i+1 of note
    i+1), and ``reviews`` as (card number, time, ease)."""
    conn = sqlite3.connect(path)
    conn.executescript(ANKI_SCHEMA)
    conn.execute("INSERT INTO col VALUES (1, 0, 0, 0, 11, 0, 0, 0, '{}', '{}', '{}', '{}', '{}')")
    for i, (guid, fields) in enumerate(notes, 1):
        conn.execute("INSERT INTO notes VALUES (?, ?, 1, 0, 0, '', ?, 0, 0, 0, '')", (i, guid, fields))
        conn.execute("INSERT INTO cards VALUES (?, ?, 1, 0, 0, 0, 2, 2, 0, 1, 2500, 1, 0, 0, 0, 0, 0, '')", (i, i))
    for card, when, ease in reviews:
        conn.execute("INSERT INTO revlog VALUES (?, ?, 0, ?, 1, 0, 2500, 12000, 1)", (_ms(when), card, ease))
    conn.commit()
    conn.close()
    return path


def _ours(tmp_path: Path) -> Path:
    """Two of this deck's notes (one found by GUID, one by its Skill field), one stranger note; reviews
    of each, a manual reschedule (ease 0) and a review of a card deleted since."""
    notes = [(skill_guid("ridge:v6e:bf16"), "ridge:v6e:bf16 · the ridge · 4 variants\x1ffront\x1fback\x1f{}"),
             ("someoneElse", "<b>vocabulary:term-mxu</b> · what is\x1ffront\x1fback\x1f{}"),
             ("stranger1", "Capital of France\x1fParis")]
    reviews = [(1, T0, 3), (2, T0 + timedelta(minutes=1), 1), (3, T0 + timedelta(minutes=2), 3),
               (1, T0 + timedelta(days=1), 4), (2, T0 + timedelta(days=1, minutes=1), 3),
               (1, T0 + timedelta(days=1, minutes=5), 0), (9, T0 + timedelta(days=1, minutes=6), 3)]
    return make_collection(tmp_path / "collection.anki2", notes, reviews)


def _run(*args: str):
    return CliRunner().invoke(cli, ["anki-import", *args])


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_reviews_of_this_decks_notes_are_imported_once_and_the_collection_is_never_written(tmp_path: Path) -> None:
    anki = tmp_path / "profile"
    anki.mkdir()
    _ours(anki)
    before = _digest(anki)
    store = tmp_path / "s.sqlite3"
    first = _run(str(anki / "collection.anki2"), "--store", str(store), "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.output) == {"read": 7, "imported": 4, "already": 0, "ignored": 3}
    again = _run(str(anki), "--store", str(store), "--json")  # the profile folder names its collection.anki2
    assert json.loads(again.output) == {"read": 7, "imported": 0, "already": 4, "ignored": 3}
    assert _digest(anki) == before  # byte for byte, and no -wal, -shm or journal beside it
    text = _run(str(anki), "--store", str(store)).output
    assert text.startswith("7 Anki reviews read: 0 imported, 4 already in the store, 3 ignored")
    with Store.open(store) as s:
        rows = s.reviews()
        assert [(r["skill"], r["correct"], r["rating"], r["source"], r["hints"]) for r in rows] == [
            ("ridge:v6e:bf16", 1, 3, "anki", 0), ("vocabulary:term-mxu", 0, 1, "anki", 0),
            ("ridge:v6e:bf16", 1, 4, "anki", 0), ("vocabulary:term-mxu", 1, 3, "anki", 0)]
        assert rows[0]["reviewed_at"].startswith("2026-03-02T09:00:00") and rows[0]["seconds_taken"] == 12.0
        assert rows[0]["chip"] == "v6e" and rows[1]["chip"] is None
        cards = s.cards()
        assert cards["ridge:v6e:bf16"].reviews == 2 and cards["ridge:v6e:bf16"].card.last_review == T0 + timedelta(days=1)
        assert s.check() == []
        # Anki study counts for mastery: ridge right on day 1, recalled with no hint on day 2
        found = {i.number: i for i in can_you(s, now=T0 + timedelta(days=1, hours=1))}
    assert found[1].evidence == ["ridge:v6e:bf16"] and not found[1].pending  # mastered; item 1 needs a 2nd chip
    assert not found[1].ticked and "right on 1 more chip (right so far on v6e)" in found[1].missing
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json", "--store", str(store)]).output)
    assert stats["reviews"] == 4


def test_anki_reviews_and_quiz_reviews_make_one_schedule_in_time_order(tmp_path: Path) -> None:
    """A quiz review made between two Anki reviews: the card is replayed from the whole history."""
    from drills.store.repository import ReviewRecord

    store = tmp_path / "s.sqlite3"
    with Store.open(store) as s:
        s.record_review(ReviewRecord(skill="ridge:v6e:bf16", family="ridge", chip="v6e", problem_id="p", params={},
                                     prompt="?", expected={}, given="1", given_value=1.0, correct=False, rating=1,
                                     relative_error=None, seconds_taken=5.0, hints=0), now=T0 + timedelta(hours=12))
    _ours(tmp_path)
    assert _run(str(tmp_path / "collection.anki2"), "--store", str(store)).exit_code == 0
    with Store.open(store) as s:
        rows = [r for r in s.reviews() if r["skill"] == "ridge:v6e:bf16"]
        card = s.cards()["ridge:v6e:bf16"]
        assert card.reviews == 3 and card.card.last_review == T0 + timedelta(days=1)
        by_time = sorted(rows, key=lambda r: r["reviewed_at"])
        assert [r["state_before"] is None for r in by_time] == [True, False, False]  # the Anki review came first
        assert s.check() == []


@pytest.mark.parametrize("kind", ["legacy", "modern"])
def test_a_colpkg_is_read_legacy_or_zstd_compressed(tmp_path: Path, kind: str) -> None:
    import zstandard

    raw = _ours(tmp_path).read_bytes()
    package = tmp_path / "export.colpkg"
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("meta", b"\x08\x03" if kind == "modern" else b"\x08\x02")
        if kind == "modern":
            z.writestr("collection.anki21b", zstandard.ZstdCompressor().compress(raw))
        else:
            z.writestr("collection.anki21", raw)
        z.writestr("collection.anki2", b"")  # the placeholder older Ankis would read; never this one
    result = _run(str(package), "--store", str(tmp_path / "s.sqlite3"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["imported"] == 4


def _one_line_exit_1(result, fragment: str) -> None:
    assert result.exit_code == 1, result.output
    assert fragment in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_bad_input_is_one_line_and_exit_1_and_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    text = tmp_path / "notes.txt"
    text.write_text("not anki\n")
    _one_line_exit_1(_run(str(text), "--store", store), "not an Anki collection")
    other = tmp_path / "other.sqlite3"
    sqlite3.connect(other).executescript("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
    _one_line_exit_1(_run(str(other), "--store", store), "an SQLite database, but not an Anki collection")
    strangers = make_collection(tmp_path / "c.anki2", [("g", "Capital of France\x1fParis")], [(1, T0, 3)])
    _one_line_exit_1(_run(str(strangers), "--store", store), "no note of this course's deck")
    empty_zip = tmp_path / "e.colpkg"
    with zipfile.ZipFile(empty_zip, "w") as z:
        z.writestr("meta", b"")
    _one_line_exit_1(_run(str(empty_zip), "--store", store), "without an Anki collection in it")
    broken = tmp_path / "b.colpkg"
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("collection.anki21b", b"\x28\xb5\x2f\xfd garbage")
    _one_line_exit_1(_run(str(broken), "--store", store), "does not decompress")
    missing = _run(str(tmp_path / "nope.anki2"), "--store", store)
    assert missing.exit_code == 2 and "does not exist" in missing.output
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _run(str(fifo), "--store", store).exit_code == 1
    with Store.open(store) as s:
        assert s.count_reviews() == 0  # nothing half-imported


def test_a_collection_that_keeps_changing_while_read_is_refused(tmp_path: Path, monkeypatch) -> None:
    path = _ours(tmp_path)
    real = anki_import.safeio.read_bytes_bounded
    reads = iter(range(1000))

    def changing(target, max_bytes=anki_import.MAX_COLLECTION_BYTES):
        return real(target, max_bytes) + bytes([next(reads) % 256])

    monkeypatch.setattr(anki_import.safeio, "read_bytes_bounded", changing)
    _one_line_exit_1(_run(str(path), "--store", str(tmp_path / "s.sqlite3")), "kept changing while it was read")


@pytest.mark.slow
def test_a_real_anki_collection_and_its_colpkg_export(tmp_path: Path) -> None:
    """The `anki` package makes the collection: this deck's note by its GUID, reviewed in Anki's own
    scheduler; then imported from the collection.anki2 and from a modern .colpkg (collection.anki21b)."""
    from anki.collection import Collection

    path = tmp_path / "profile" / "collection.anki2"
    path.parent.mkdir()
    col = Collection(str(path))
    note = col.new_note(col.models.by_name("Basic"))
    note["Front"], note["Back"] = "ridge:v6e:bf16 · the ridge", "back"
    note.guid = skill_guid("ridge:v6e:bf16")
    col.add_note(note, col.decks.id("Default"))
    stranger = col.new_note(col.models.by_name("Basic"))
    stranger["Front"], stranger["Back"] = "Capital of France", "Paris"
    col.add_note(stranger, col.decks.id("Default"))
    for nid, ease in ((note.id, 3), (stranger.id, 3), (note.id, 1)):
        card = col.get_note(nid).cards()[0]
        card.start_timer()
        col.sched.answerCard(card, ease)
    package = tmp_path / "export.colpkg"
    col.export_collection_package(str(package), include_media=False, legacy=False)  # closes the collection
    assert "collection.anki21b" in zipfile.ZipFile(package).namelist()
    first = _run(str(path), "--store", str(tmp_path / "a.sqlite3"), "--json")
    assert json.loads(first.output) == {"read": 3, "imported": 2, "already": 0, "ignored": 1}, first.output
    second = _run(str(package), "--store", str(tmp_path / "a.sqlite3"), "--json")
    assert json.loads(second.output) == {"read": 3, "imported": 0, "already": 2, "ignored": 1}, second.output
    with Store.open(tmp_path / "a.sqlite3") as s:
        assert [(r["correct"], r["rating"]) for r in s.reviews()] == [(1, 3), (0, 1)]

