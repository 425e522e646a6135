"""Anki's review log into the review store (``drill anki-import``): studying the deck in Anki counts.

Reads a private copy of an Anki collection or ``.colpkg``, and imports each review of this
course's notes as a scheduled review of its skill, once.
Details: docs/internals.md.
"""

from __future__ import annotations

import html
import io
import pathlib
import re
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator

from drills.store.repository import ReviewRecord
from generator.problems import generate
from generator.io import safeio
from generator.errors import DrillError
from generator.export.anki import skill_guid

try:
    import zstandard
except ImportError:  # pragma: no cover - a dependency; without it a modern .colpkg is refused in one line
    zstandard = None  # type: ignore[assignment]  # the module or None: each use checks for None first

MAX_COLLECTION_BYTES = 1 << 30  # 1 GiB: far above a learner's collection; a larger file is refused
COPY_TRIES = 5  # reads of a collection that changed while being read, before it is refused
SQLITE_MAGIC = b"SQLite format 3\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ANKI_TABLES = {"col", "notes", "cards", "revlog"}
SOURCE = "anki"
_TAG = re.compile(r"<[^>]*>")


class AnkiImportError(DrillError):
    """The collection can not be read (not Anki's, without this deck, changing, too large): exit 1."""


@dataclass(frozen=True)
class ImportResult:
    """How many revlog entries were read, imported, already in the store, and ignored."""

    read: int
    imported: int
    already: int
    ignored: int

    def to_dict(self) -> dict[str, int]:
        return {"read": self.read, "imported": self.imported, "already": self.already, "ignored": self.ignored}

    def line(self, store: str) -> str:
        return (f"{self.read} Anki review{'s' if self.read != 1 else ''} read: {self.imported} imported, "
                f"{self.already} already in the store, {self.ignored} ignored (not this deck's notes, or not a "
                f"review) -> {store}")


def collection_file(path: pathlib.Path) -> pathlib.Path:
    """A profile folder means its ``collection.anki2``."""
    return path / "collection.anki2" if path.is_dir() else path


def _stable_read(path: pathlib.Path) -> tuple[bytes, bytes | None]:
    """The file's bytes and its ``-wal``'s (None: none), read until two reads agree."""
    wal = path.with_name(path.name + "-wal")
    previous: tuple[bytes, bytes | None] | None = None
    for _ in range(COPY_TRIES):
        main = safeio.read_bytes_bounded(path, MAX_COLLECTION_BYTES)
        log = safeio.read_bytes_bounded(wal, MAX_COLLECTION_BYTES) if wal.exists() else None
        if (main, log) == previous:
            return main, log
        previous = (main, log)
    raise AnkiImportError(f"{safeio.display_path(path)}: the collection kept changing while it was read (Anki is "
                          "syncing or saving); nothing was imported: try again, or close Anki first")


def _member(archive: zipfile.ZipFile, name: str, shown: str) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > MAX_COLLECTION_BYTES:
        raise AnkiImportError(f"{shown}: {name} is larger than {MAX_COLLECTION_BYTES >> 20} MiB; nothing was imported")
    return archive.read(name)


def _unzstd(data: bytes, shown: str) -> bytes:
    """A zstd frame, decompressed (at most ``MAX_COLLECTION_BYTES``)."""
    if zstandard is None:
        raise AnkiImportError(f"{shown}: a modern .colpkg (collection.anki21b, zstd-compressed) needs the zstandard "
                              "package (pip install zstandard); or export from Anki with 'Support older Anki "
                              "versions' ticked, or import the profile's collection.anki2")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
        out = reader.read(MAX_COLLECTION_BYTES + 1)
    except zstandard.ZstdError as exc:
        raise AnkiImportError(f"{shown}: collection.anki21b does not decompress ({exc}); nothing was imported") from None
    if len(out) > MAX_COLLECTION_BYTES:
        raise AnkiImportError(f"{shown}: the collection is larger than {MAX_COLLECTION_BYTES >> 20} MiB; "
                              "nothing was imported")
    return bytes(out)


def _package(data: bytes, shown: str) -> bytes:
    """The collection inside a ``.colpkg``: ``collection.anki21b`` (zstd), else ``.anki21``, else ``.anki2``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        if "collection.anki21b" in names:
            return _unzstd(_member(archive, "collection.anki21b", shown), shown)
        for name in ("collection.anki21", "collection.anki2"):
            if name in names:
                return _member(archive, name, shown)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise AnkiImportError(f"{shown}: not a readable .colpkg ({exc}); nothing was imported") from None
    raise AnkiImportError(f"{shown}: a zip file without an Anki collection in it (no collection.anki21b, "
                          "collection.anki21 or collection.anki2): not an Anki .colpkg")


class Collection:
    """A private, read-only copy of an Anki collection (use ``with``): ``conn`` reads it."""

    def __init__(self, path: pathlib.Path):
        self.path = collection_file(path)
        self.shown = safeio.display_path(self.path)
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> "Collection":
        main, wal = _stable_read(self.path)
        if main[:4] == b"PK\x03\x04":
            main, wal = _package(main, self.shown), None
        if not main.startswith(SQLITE_MAGIC):
            raise AnkiImportError(f"{self.shown}: not an Anki collection (neither SQLite nor a .colpkg); "
                                  "nothing was imported")
        self._folder = tempfile.TemporaryDirectory(prefix="drill-anki-")
        copy = pathlib.Path(self._folder.name) / "collection.anki2"
        safeio.write_bytes(copy, main)
        if wal is not None:
            safeio.write_bytes(copy.with_name(copy.name + "-wal"), wal)
        try:
            self.conn = sqlite3.connect(str(copy), isolation_level=None)
            self.conn.execute("PRAGMA query_only = ON")
            tables = {name for (name,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as exc:
            self.__exit__()
            raise AnkiImportError(f"{self.shown}: not a readable SQLite database ({exc}); nothing was imported") from None
        if not ANKI_TABLES <= tables:
            self.__exit__()
            raise AnkiImportError(f"{self.shown}: an SQLite database, but not an Anki collection (no "
                                  f"{', '.join(sorted(ANKI_TABLES - tables))} table); nothing was imported")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def revlog(self) -> Iterator[tuple[int, int, float | None, str | None, str | None]]:
        """(revlog id, ease, seconds taken, the note's GUID, the note's fields) of every entry, oldest
        first (GUID and fields None: a card deleted since)."""
        assert self.conn is not None
        sql = ("SELECT r.id, r.ease, r.time, n.guid, n.flds FROM revlog r LEFT JOIN cards c ON c.id = r.cid "
               "LEFT JOIN notes n ON n.id = c.nid ORDER BY r.id")
        try:
            for rid, ease, ms, guid, fields in self.conn.execute(sql):
                seconds = float(ms) / 1000 if isinstance(ms, (int, float)) and 0 <= ms < 86_400_000 else None
                yield int(rid), int(ease or 0), seconds, guid, fields
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise AnkiImportError(f"{self.shown}: its review log can not be read ({exc}); nothing was imported") from None


@dataclass(frozen=True)
class Deck:
    """This course's skills, by the GUID of their notes and by id."""

    by_guid: dict[str, Any]
    by_id: dict[str, Any]

    @classmethod
    def load(cls) -> "Deck":
        skills = generate.skills(None, None)
        return cls({skill_guid(s.id): s for s in skills}, {s.id: s for s in skills})

    def skill_of(self, guid: str | None, fields: str | None) -> Any | None:
        """The note's skill: by its GUID, else by a field naming a skill (``id`` or ``id · ...``)."""
        if guid is not None and guid in self.by_guid:
            return self.by_guid[guid]
        for field in (fields or "").split("\x1f"):
            text = html.unescape(_TAG.sub("", field)).strip()
            head = text.split(" · ", 1)[0].strip()
            if head in self.by_id:
                return self.by_id[head]
        return None


def anki_reviews(collection: Collection, deck: Deck) -> tuple[list[tuple[ReviewRecord, datetime]], int, int, bool]:
    """(the reviews of this deck's notes with their times, entries read, entries ignored, whether
    any note of the collection is this deck's)."""
    out: list[tuple[ReviewRecord, datetime]] = []
    read = ignored = 0
    assert collection.conn is not None
    try:
        any_note = any(deck.skill_of(guid, fields) is not None
                       for guid, fields in collection.conn.execute("SELECT guid, flds FROM notes"))
    except sqlite3.Error as exc:
        raise AnkiImportError(f"{collection.shown}: its notes can not be read ({exc}); nothing was imported") from None
    for rid, ease, seconds, guid, fields in collection.revlog():
        read += 1
        skill = deck.skill_of(guid, fields)
        if skill is None or ease not in (1, 2, 3, 4):
            ignored += 1
            continue
        try:
            when = datetime.fromtimestamp(rid / 1000, timezone.utc)
        except (OverflowError, OSError, ValueError):
            ignored += 1
            continue
        out.append((ReviewRecord(
            skill=skill.id, family=skill.family, chip=skill.chip, problem_id=f"anki:{guid}", params={},
            prompt="(reviewed in Anki)", expected={}, given=f"Anki ease {ease}", given_value=None,
            correct=ease >= 2, rating=ease, relative_error=None, seconds_taken=seconds, session=f"anki:{rid}",
            hints=0, source=SOURCE, anki_revlog=rid), when))
    return out, read, ignored, any_note


def import_collection(path: pathlib.Path, store: Any) -> ImportResult:
    """Read the collection at ``path`` (a private copy) and add its reviews of this deck to ``store``."""
    deck = Deck.load()
    with Collection(path) as collection:
        reviews, read, ignored, any_note = anki_reviews(collection, deck)
        shown = collection.shown
    if not any_note:
        raise AnkiImportError(f"{shown}: no note of this course's deck in the collection (import the deck "
                              "into Anki first: drill deck -o rudrite-stage0.apkg); nothing was imported")
    imported, already = store.import_reviews(reviews)
    return ImportResult(read, imported, already, ignored)
