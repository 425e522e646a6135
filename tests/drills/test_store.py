"""The SQLite store: schema, scheduling state, ticks, refusal of bad files, concurrent writers."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Rating, Scheduler, State

from drills.store.repository import SCHEMA_VERSION, ReviewRecord, Store, StoreError, default_store_path

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def review(skill: str = "floor/v5e/matmul", rating: int = 3, cram: bool = False, **extra) -> ReviewRecord:
    fields = dict(skill=skill, family=skill.split("/")[0], chip="v5e", problem_id=f"{skill}#n=1",
                  params={"n": 1}, prompt="How long?", expected={"value": 8.72e-5, "unit": "s"},
                  given="87us", given_value=8.7e-5, correct=rating != 1, rating=rating,
                  relative_error=0.002, seconds_taken=12.5, cram=cram, session="s1")
    fields.update(extra)
    return ReviewRecord(**fields)


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "drill.sqlite3") as s:
        yield s


def test_new_store_is_wal_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "drill.sqlite3"  # parents are created
    with Store.open(path) as s:
        s.record_review(review(), now=T0)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    with Store.open(path) as s:
        assert s.count_reviews() == 1


def test_review_is_logged_with_everything(store: Store) -> None:
    store.record_review(review(), now=T0)
    (row,) = store.reviews()
    assert row["skill"] == "floor/v5e/matmul" and row["problem_id"] == "floor/v5e/matmul#n=1"
    assert json.loads(row["params"]) == {"n": 1}
    assert json.loads(row["expected"]) == {"value": 8.72e-5, "unit": "s"}
    assert row["given"] == "87us" and row["given_value"] == 8.7e-5
    assert row["correct"] == 1 and row["rating"] == 3 and row["seconds_taken"] == 12.5
    assert row["reviewed_at"].startswith("2026-03-02T09:00:00")
    assert row["state_before"] is None and row["due_after"] is not None


def test_review_schedules_the_skill_with_fsrs(store: Store) -> None:
    scheduler = Scheduler(enable_fuzzing=False)
    card = store.record_review(review(rating=int(Rating.Good)), scheduler, now=T0)
    assert card is not None and card.due > T0
    expected, _ = scheduler.review_card(
        __import__("fsrs").Card(card_id=card.card_id, due=T0), Rating.Good, review_datetime=T0)
    assert card.due == expected.due and card.stability == pytest.approx(expected.stability)
    row = store.cards()["floor/v5e/matmul"]
    assert row.reviews == 1 and row.card.due == card.due and row.introduced_at == T0
    # a second review starts from the stored state
    later = T0 + timedelta(minutes=15)
    card2 = store.record_review(review(rating=int(Rating.Good)), scheduler, now=later)
    assert store.cards()["floor/v5e/matmul"].reviews == 2
    assert store.reviews()[-1]["state_before"] == int(card.state)
    assert card2.last_review == later


# The FSRS settings the store schedules with (``Scheduler()``'s defaults in fsrs 6): pinned, so that a new fsrs
# release that changes them fails here rather than reschedules every learner's cards unseen.
FSRS_PARAMETERS = (0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796, 1.4835,
                   0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542)


def test_the_stores_fsrs_settings_are_pinned(store: Store) -> None:
    from fsrs import Card

    settings = Scheduler().to_dict()
    assert tuple(settings.pop("parameters")) == FSRS_PARAMETERS
    assert settings == {"desired_retention": 0.9, "learning_steps": [60, 600], "relearning_steps": [600],
                        "maximum_interval": 36500, "enable_fuzzing": True}
    # record_review without a scheduler uses those settings: Easy on a new card gives days, fuzzed by fsrs's
    # draw from the random module, which is seeded alike for both
    import random

    random.seed(2026)
    card = store.record_review(review(rating=int(Rating.Easy)), now=T0)
    random.seed(2026)
    expected, _ = Scheduler().review_card(Card(card_id=card.card_id, due=T0), Rating.Easy, T0)
    assert (card.due, card.stability, card.difficulty) == (expected.due, expected.stability, expected.difficulty)
    assert card.due - T0 >= timedelta(days=3)


def test_golden_intervals_through_record_review(store: Store) -> None:
    """py-fsrs's own golden schedule (its test_review_card: 13 fixed ratings, each review on the day the
    previous one fell due), reproduced through the store: what is saved and read back schedules exactly so."""
    good, again = int(Rating.Good), int(Rating.Again)
    ratings = (good,) * 6 + (again, again) + (good,) * 5
    scheduler = Scheduler(enable_fuzzing=False)  # the pinned settings, without the random fuzz
    when = datetime(2022, 11, 29, 12, 30, tzinfo=timezone.utc)
    intervals = []
    for rating in ratings:
        card = store.record_review(review(rating=rating), scheduler, now=when)
        stored = store.cards()["floor/v5e/matmul"].card
        assert stored.to_dict() == card.to_dict()
        intervals.append((stored.due - stored.last_review).days)
        when = stored.due
    assert intervals == [0, 2, 11, 46, 163, 498, 0, 0, 2, 4, 7, 12, 21]
    assert store.cards()["floor/v5e/matmul"].reviews == len(ratings)


def test_the_review_duration_reaches_fsrs_in_milliseconds(store: Store) -> None:
    seen = []

    class Recording(Scheduler):
        def review_card(self, card, rating, review_datetime=None, review_duration=None):
            seen.append(review_duration)
            return super().review_card(card, rating, review_datetime, review_duration)

    store.record_review(review(seconds_taken=12.5), Recording(enable_fuzzing=False), now=T0)
    store.record_review(review(seconds_taken=None), Recording(enable_fuzzing=False), now=T0 + timedelta(days=3))
    assert seen == [12_500, None]


def test_a_card_due_exactly_now_is_due(store: Store) -> None:
    card = store.record_review(review(), Scheduler(enable_fuzzing=False), now=T0)
    assert [skill for skill, _ in store.due_skills(card.due)] == ["floor/v5e/matmul"]
    assert store.due_skills(card.due - timedelta(microseconds=1)) == []


def test_cram_logs_but_leaves_the_schedule_alone(store: Store) -> None:
    store.record_review(review(), now=T0)
    before = store.cards()["floor/v5e/matmul"]
    assert store.record_review(review(cram=True, rating=1), now=T0 + timedelta(hours=1)) is None
    after = store.cards()["floor/v5e/matmul"]
    assert after.card.to_dict() == before.card.to_dict() and after.reviews == 1
    assert store.count_reviews() == 2 and store.reviews()[-1]["cram"] == 1
    store.record_review(review(skill="ridge/v6e", cram=True), now=T0)
    assert "ridge/v6e" not in store.cards()


def test_due_most_overdue_first_and_introductions(store: Store) -> None:
    scheduler = Scheduler(enable_fuzzing=False)
    for minutes, skill in ((0, "a/x"), (5, "b/x"), (2, "c/x")):
        store.record_review(review(skill=skill, rating=1), scheduler, now=T0 + timedelta(minutes=minutes))
    due = store.due_skills(T0 + timedelta(days=1))
    assert [s for s, _ in due] == ["a/x", "c/x", "b/x"]
    assert store.due_skills(T0) == []
    assert store.introduced_since(T0 + timedelta(minutes=1)) == 2
    assert store.next_due() == due[0][1]


def test_skill_summary(store: Store) -> None:
    store.record_review(review(skill="a/x", rating=3), now=T0)
    store.record_review(review(skill="a/x", rating=1), now=T0 + timedelta(minutes=1))
    store.record_review(review(skill="b/x", rating=4, cram=True), now=T0)
    assert store.skill_summary() == {
        "a/x": {"reviews": 2, "correct": 1, "last_correct": False},
        "b/x": {"reviews": 1, "correct": 1, "last_correct": True},
    }


def test_ticks(store: Store) -> None:
    assert store.ticks() == set()
    store.set_tick(3, True)
    store.set_tick(3, True)
    store.set_tick(7, True)
    store.set_tick(7, False)
    store.set_tick(5, False)
    assert store.ticks() == {3}


def test_default_path_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DRILL_STORE", str(tmp_path / "mine.db"))
    assert default_store_path() == tmp_path / "mine.db"
    monkeypatch.delenv("DRILL_STORE")
    path = default_store_path()
    assert path.name == "drill.sqlite3" and "rudrite-kernels" in str(path)


def test_record_round_trips() -> None:
    r = review()
    assert ReviewRecord.from_dict(r.to_dict()) == r


# -- files that are not a store are refused and never written -----------------------------------

def _refused_untouched(path: Path, fragment: str) -> None:
    before = path.read_bytes()
    neighbours = set(path.parent.iterdir())
    with pytest.raises(StoreError) as info:
        Store.open(path).close()
    message = str(info.value)
    assert str(path) in message and fragment.lower() in message.lower() and "\n" not in message
    assert path.read_bytes() == before
    assert set(path.parent.iterdir()) == neighbours  # no -wal / -journal left behind


def test_text_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my precious notes\n" * 100)
    _refused_untouched(path, "move it aside")


def test_random_bytes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    path.write_bytes(bytes(range(256)) * 64)
    _refused_untouched(path, "not an SQLite database")


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE accounts (id INTEGER, balance REAL)")
    conn.execute("INSERT INTO accounts VALUES (1, 100.0)")
    conn.commit()
    conn.close()
    _refused_untouched(path, "not a drill store")


def test_damaged_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        for i in range(50):
            s.record_review(review(skill=f"a/{i}"), now=T0)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # smash the schema page, keep the header
    path.write_bytes(bytes(data))
    for leftover in tmp_path.glob("drill.sqlite3-*"):
        leftover.unlink()
    _refused_untouched(path, "move it aside")


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer version"):
        Store.open(path)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


def test_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    path.touch()  # nothing to lose; SQLite treats it as an empty database
    with Store.open(path) as s:
        assert s.count_reviews() == 0


# -- concurrent writers (threads here; real processes in test_robustness.py) ----------------------

def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    Store.open(path).close()
    per_writer, errors = 40, []

    def writer(name: str) -> None:
        try:
            with Store.open(path) as s:
                for i in range(per_writer):
                    s.record_review(review(skill="shared/x", session=name, rating=1 + i % 4))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store.open(path) as s:
        assert s.count_reviews() == 3 * per_writer
        assert s.cards()["shared/x"].reviews == 3 * per_writer  # every read-modify-write applied
        last = s.reviews()[-1]
        assert s.cards()["shared/x"].card.last_review.isoformat().startswith(last["reviewed_at"][:19])
        assert State(s.cards()["shared/x"].card.state) in State


def test_errors_other_than_damage_say_what_happened(tmp_path: Path) -> None:
    from drills.store.repository import _store_error

    damaged = _store_error(tmp_path / "a.db", sqlite3.DatabaseError("file is not a database"))
    assert "Move it aside" in str(damaged)
    locked = _store_error(tmp_path / "a.db", sqlite3.OperationalError("database is locked"))
    assert str(locked).startswith(f"the store {tmp_path / 'a.db'} is in use by another process")
    assert "Move it aside" not in str(locked)
    full = _store_error(tmp_path / "a.db", sqlite3.OperationalError("database or disk is full"))
    assert str(full).startswith(f"can not use the store {tmp_path / 'a.db'}: the disk is full")
    (tmp_path / "plain-file").write_text("x")
    with pytest.raises(StoreError, match="can not open the store"):
        Store.open(tmp_path / "plain-file" / "drill.sqlite3")  # its parent is a file


@pytest.mark.parametrize("damage", [
    "UPDATE cards SET reviews = 'x'",
    "UPDATE cards SET card = json_set(card, '$.step', 'x')",
    "UPDATE cards SET card = json_set(card, '$.stability', -5)",
    "UPDATE cards SET card = json_set(card, '$.stability', 0)",
    "UPDATE cards SET card = json_set(card, '$.difficulty', 11)",
    "UPDATE cards SET card = json_set(card, '$.state', 3, '$.step', NULL)",
    "UPDATE cards SET card = json_set(card, '$.state', 7)",
])
def test_a_row_damaged_after_open_is_one_line_when_its_card_comes_due(tmp_path: Path, damage: str) -> None:
    """Damage made while a quiz runs (after the open-time check) is reported like damage at open."""
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(), now=T0)
        s.record_review(review(), now=T0 + timedelta(days=1))
        other = sqlite3.connect(path)
        other.execute(damage)
        other.commit()
        other.close()
        with pytest.raises(StoreError, match="not a usable drill store .*the cards row of skill") as caught:
            s.record_review(review(), now=T0 + timedelta(days=30))
        assert "\n" not in str(caught.value)
        assert s.count_reviews() == 2  # rolled back: nothing written
    with pytest.raises(StoreError, match="cards row of skill"):  # and the open-time check agrees
        Store.open(path)


def test_undo_refuses_when_the_skill_was_reviewed_since_and_changes_nothing(tmp_path: Path) -> None:
    from drills.store.repository import UndoRefused

    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as a, Store.open(path) as b:
        a.record_review(review(session="A"), now=T0)
        b.record_review(review(session="B"), now=T0 + timedelta(minutes=20))
        before_cards, before_log = b.cards(), b.reviews()
        with pytest.raises(UndoRefused, match="reviewed since"):
            a.undo_review(a.last_review_id("A"))
        assert a.cards()["floor/v5e/matmul"].card.to_dict() == before_cards["floor/v5e/matmul"].card.to_dict()
        assert a.reviews() == before_log
        assert b.undo_review(b.last_review_id("B"))  # the latest review may be undone
        assert a.cards()["floor/v5e/matmul"].reviews == 1
        assert a.undo_review(a.last_review_id("A"))  # and then A's, which is the latest again
        assert a.cards() == {}


def test_lock_timeout_is_bounded_and_names_the_holder(tmp_path: Path) -> None:
    import os

    from drills.store import repository as store_module
    from drills.store import lock as store_lock

    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(), now=T0)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # this process: /proc/locks shows our own PID, which is skipped
        original = store_lock.LOCK_TIMEOUT_S
        store_lock.LOCK_TIMEOUT_S = 0.5
        try:
            with pytest.raises(store_module.StoreInUse, match="in use by another process") as caught:
                s.record_review(review(), now=T0 + timedelta(days=1))
        finally:
            store_lock.LOCK_TIMEOUT_S = original
            holder.execute("ROLLBACK")
            holder.close()
        assert "waited 0.5 s" in str(caught.value)
        assert "Move it aside" not in str(caught.value) and f"PID {os.getpid()}" not in str(caught.value)
        assert s.count_reviews() == 1


# -- a full disk says so ----------------------------------------------------------------

class _Vfs:
    def __init__(self, free: int):
        self.f_bavail = self.f_favail = free


def test_a_disk_io_error_on_a_full_disk_says_the_disk_is_full(tmp_path: Path, monkeypatch) -> None:
    """SQLite reports a -shm that can not grow as "disk I/O error": on a full disk, say the disk is full."""
    import os

    from drills.store.repository import _store_error

    monkeypatch.setattr(os, "statvfs", lambda path: _Vfs(0))
    full = str(_store_error(tmp_path / "a.db", sqlite3.OperationalError("disk I/O error")))
    assert "the disk is full" in full and "I/O" not in full and "\n" not in full
    monkeypatch.setattr(os, "statvfs", lambda path: _Vfs(1000))
    other = str(_store_error(tmp_path / "a.db", sqlite3.OperationalError("disk I/O error")))
    assert other.endswith("disk I/O error")  # with space left it is some other failure: say what it was


def test_no_space_to_create_the_store_folder_says_the_disk_is_full(tmp_path: Path, monkeypatch) -> None:
    import errno

    def no_space(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "mkdir", no_space)
    with pytest.raises(StoreError, match="the disk is full") as caught:
        Store.open(tmp_path / "new" / "drill.sqlite3")
    assert "\n" not in str(caught.value)


# -- read-only folders, root included --------------------------------------------------

def test_a_store_under_a_read_only_folder_is_refused_and_no_folder_is_made(tmp_path: Path) -> None:
    """As root the permission bits are bypassed, so the write bit is read by hand: RO/sub is never made."""
    ro = tmp_path / "RO"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(StoreError, match="read-only") as caught:
            Store.open(ro / "sub" / "new.sqlite3")
        assert str(ro) in str(caught.value) and "\n" not in str(caught.value)
        assert list(ro.iterdir()) == []  # no sub-folder, no file
        with pytest.raises(StoreError, match="read-only"):
            Store.open(ro / "new.sqlite3")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


def test_quiz_under_a_read_only_folder_is_refused_before_any_question(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from drills.cli import cli

    ro = tmp_path / "RO"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        result = CliRunner().invoke(cli, ["quiz", "--store", str(ro / "sub" / "new.sqlite3"), "--count", "1"],
                                    input="1us\n")
        assert result.exit_code == 1 and "read-only" in result.output and "[1/" not in result.output
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


# -- migrations: user_version, one step each, from every old version --------------------------------

V1_WITHOUT_UNDO = """
CREATE TABLE cards (skill TEXT PRIMARY KEY, card TEXT NOT NULL, due TEXT NOT NULL, state INTEGER NOT NULL,
    reviews INTEGER NOT NULL, introduced_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE reviews (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, reviewed_at TEXT NOT NULL,
    skill TEXT NOT NULL, family TEXT NOT NULL, chip TEXT, problem_id TEXT NOT NULL, params TEXT NOT NULL,
    prompt TEXT NOT NULL, expected TEXT NOT NULL, given TEXT NOT NULL, given_value REAL, correct INTEGER NOT NULL,
    rating INTEGER NOT NULL, relative_error REAL, seconds_taken REAL, cram INTEGER NOT NULL,
    state_before INTEGER, due_after TEXT);
CREATE INDEX reviews_by_time ON reviews(reviewed_at);
CREATE INDEX reviews_by_skill ON reviews(skill);
CREATE TABLE ticks (item INTEGER PRIMARY KEY, ticked_at TEXT NOT NULL);
"""


def _old_store(path: Path, version: int, undo_column: bool) -> list[tuple]:
    """A store as an older drill left it, holding two skills' cards, three reviews and a tick."""
    from drills.store import schema as store_schema

    conn = sqlite3.connect(path, isolation_level=None)
    if version == 0:  # an empty database: nothing to keep
        conn.close()
        return []
    conn.executescript(V1_WITHOUT_UNDO)
    if undo_column:
        conn.execute("ALTER TABLE reviews ADD COLUMN card_before TEXT")
    scheduler = Scheduler(enable_fuzzing=False)
    from fsrs import Card

    card, _ = scheduler.review_card(Card(card_id=1, due=T0), Rating.Good, review_datetime=T0)
    conn.execute("INSERT INTO cards VALUES ('a/x', ?, ?, ?, 2, ?, ?)",
                 (json.dumps(card.to_dict()), card.due.isoformat(), int(card.state), T0.isoformat(), T0.isoformat()))
    for i, (skill, family, chip, correct, cram) in enumerate(
            [("a/x", "floor", "v5e", 1, 0), ("a/x", "floor", "v5e", 0, 0), ("b/y", "ridge", None, 1, 1)]):
        conn.execute("INSERT INTO reviews (session, reviewed_at, skill, family, chip, problem_id, params, prompt, "
                     "expected, given, given_value, correct, rating, relative_error, seconds_taken, cram, "
                     "state_before, due_after) VALUES ('old', ?, ?, ?, ?, 'p', '{}', 'q', '{}', '1us', 1e-6, ?, "
                     "3, 0.0, 2.0, ?, NULL, NULL)",
                     ((T0 + timedelta(minutes=i)).isoformat(), skill, family, chip, correct, cram))
    conn.execute("INSERT INTO ticks VALUES (3, ?)", (T0.isoformat(),))
    conn.execute(f"PRAGMA application_id = {store_schema.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    if version >= 2:
        for step in range(2, version + 1):
            store_schema.MIGRATIONS[step](conn)
    rows = conn.execute("SELECT id, session, reviewed_at, skill, family, chip, correct, cram FROM reviews").fetchall()
    conn.close()
    return rows


@pytest.mark.parametrize("version,undo_column", [(0, False), (1, False), (1, True), (2, True), (3, True)])
def test_every_old_version_migrates_to_the_current_one_without_loss(tmp_path: Path, version: int,
                                                                      undo_column: bool) -> None:
    from drills.store import integrity as store_integrity, schema as store_schema

    path = tmp_path / "drill.sqlite3"
    old_rows = _old_store(path, version, undo_column)
    with Store.open(path, readonly=True) if version else Store.open(path) as s:  # a read never migrates
        assert s.schema_version == (version if version else SCHEMA_VERSION)
        assert s.count_reviews() == len(old_rows)
        assert {(t.family, t.chip) for t in s.tallies()} == {(r[4], r[5]) for r in old_rows}
    with Store.open(path) as s:
        assert s.schema_version == SCHEMA_VERSION == max(store_schema.MIGRATIONS)
        kept = s._conn.execute(
            "SELECT id, session, reviewed_at, skill, family, chip, correct, cram FROM reviews").fetchall()
        assert kept == old_rows
        assert store_integrity.check_store(s._conn) == []  # the tallies were filled from the log
        tallies = {(t.family, t.chip): (t.reviews, t.correct, t.cram) for t in s.tallies()}
        if version:
            assert tallies == {("floor", "v5e"): (2, 1, 0), ("ridge", None): (1, 1, 1)}
            assert s.ticks() == {3} and s.cards()["a/x"].reviews == 2
        # undo works on a migrated store (the step that added card_before ran)
        s.record_review(review(skill="a/x"), now=T0 + timedelta(days=2))
        assert s.undo_review(s.last_review_id("s1"))
        assert s.count_reviews() == len(old_rows)
        assert s.cards().get("a/x") is None or s.cards()["a/x"].reviews == 2


def test_undoing_a_familys_only_review_removes_its_tallies_row(store: Store) -> None:
    store.record_review(review(), now=T0)
    store.record_review(review(skill="ridge/v5e"), now=T0)
    assert store.undo_review(store.last_review_id("s1"))  # ridge's only review
    rows = store._conn.execute("SELECT family, chip, reviews FROM tallies ORDER BY family").fetchall()
    assert rows == [("floor", "v5e", 1)]


def test_moving_a_familys_only_review_to_another_family_removes_its_tallies_row(store: Store) -> None:
    """The tallies follow an edit of a review's family (the tallies_update trigger): the family left
    with no review has no row, not a row of 0."""
    store.record_review(review(), now=T0)
    store.record_review(review(skill="ridge/v5e"), now=T0)
    store._conn.execute("UPDATE reviews SET family = 'floor' WHERE family = 'ridge'")
    rows = store._conn.execute("SELECT family, chip, reviews FROM tallies ORDER BY family").fetchall()
    assert rows == [("floor", "v5e", 2)]


def test_a_schema_2_store_without_the_undo_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    _old_store(path, 2, True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("ALTER TABLE reviews DROP COLUMN card_before")
    conn.close()
    for readonly in (True, False):
        with pytest.raises(StoreError, match="schema 2 without the column reviews.card_before"):
            Store.open(path, readonly=readonly)


def test_each_step_is_one_function_taking_its_version_to_the_next(tmp_path: Path) -> None:
    from drills.store import schema as store_schema

    path = tmp_path / "drill.sqlite3"
    _old_store(path, 1, False)
    conn = sqlite3.connect(path, isolation_level=None)
    assert store_schema.migrate(conn, target=2) == 2 and store_schema.version(conn) == 2
    assert "card_before" in store_schema.columns(conn, "reviews")
    assert "tallies" not in {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert store_schema.migrate(conn, target=3) == 3
    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert {"tallies", "tallies_insert", "tallies_delete", "cards_by_due", "reviews_by_session"} <= names
    assert "hints" not in store_schema.columns(conn, "reviews") and "fsrs_params" not in names
    assert store_schema.migrate(conn) == 4
    assert {"hints", "source", "anki_revlog"} <= store_schema.columns(conn, "reviews")
    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert {"fsrs_params", "reviews_by_anki"} <= names
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE hints IS NULL AND source IS NULL").fetchone()[0] == 3
    conn.close()


# -- open does not read the history; the full check is asked for -------------------------------------

def test_open_does_not_read_the_review_log_and_store_check_names_the_damaged_row(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from drills.cli import cli

    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        for minutes in range(3):
            s.record_review(review(skill=f"a/{minutes}"), now=T0 + timedelta(minutes=minutes))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE reviews SET seconds_taken = 'x' WHERE id = 2")
    conn.commit()
    conn.close()
    opened: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        connection.set_trace_callback(opened.append)
        return connection

    import drills.store.repository as store_module

    original = store_module.sqlite3.connect
    store_module.sqlite3.connect = traced
    try:
        Store.open(path).close()
        Store.open(path, readonly=True).close()
    finally:
        store_module.sqlite3.connect = original
    assert opened and not [sql for sql in opened if "FROM reviews" in sql]  # nothing read the log at open
    result = CliRunner().invoke(cli, ["store", "check", "--store", str(path)])
    assert result.exit_code == 1 and "reviews row 2" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["stats", "--check", "--store", str(path)])
    assert result.exit_code == 1 and "reviews row 2" in result.output
    conn = sqlite3.connect(path)
    conn.execute("UPDATE reviews SET seconds_taken = 1.0 WHERE id = 2")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["store", "check", "--store", str(path)])
    assert result.exit_code == 0 and "ok" in result.output and "3 reviews" in result.output


def test_store_check_finds_tallies_that_disagree_with_the_log(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(skill="a/x", rating=1), now=T0)
        s.record_review(review(skill="b/x", chip=None), now=T0)
        assert {(t.family, t.chip, t.reviews, t.correct) for t in s.tallies()} == {("a", "v5e", 1, 0),
                                                                                      ("b", None, 1, 1)}
        assert s.check() == []
        s._conn.execute("UPDATE tallies SET correct = 5 WHERE family = 'a'")
        (problem,) = s.check()
        assert "tallies row of family 'a'" in problem


# -- a version no drill writes; a schema missing its triggers or indexes ----------------------------

def _tamper(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _refused_by_check_and_quiz(path: Path, words: str) -> None:
    from click.testing import CliRunner

    from drills.cli import cli

    before = path.read_bytes()
    for args in (["store", "check"], ["quiz", "--count", "1"], ["stats"]):
        result = CliRunner().invoke(cli, [*args, "--store", str(path)], input="q\n")
        assert result.exit_code != 0 and "Traceback" not in result.output and result.exception is not None
        assert isinstance(result.exception, SystemExit), result.exception
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, result.output)
    assert path.read_bytes() == before


@pytest.mark.parametrize("version", [-1, -(2 ** 31)])
def test_a_negative_schema_version_is_refused_in_one_line(tmp_path: Path, version: int) -> None:
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(), now=T0)
    _tamper(path, f"PRAGMA user_version = {version}")
    _refused_by_check_and_quiz(path, f"schema version {version}, which no drill writes (0 to {SCHEMA_VERSION})")


@pytest.mark.parametrize("kind, name", [("trigger", "tallies_insert"), ("trigger", "tallies_delete"),
                                        ("trigger", "tallies_update"), ("index", "reviews_by_time"),
                                        ("index", "reviews_recalls")])
def test_a_store_without_one_of_its_triggers_or_indexes_is_refused_at_open(tmp_path: Path, kind, name) -> None:
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(), now=T0)
    _tamper(path, f"DROP {kind.upper()} {name}")
    _refused_by_check_and_quiz(path, f"without the {kind} {name}")


def test_a_trigger_that_is_not_drills_own_is_refused_at_open(tmp_path: Path) -> None:
    """The tallies_insert trigger replaced by one that counts nothing: stats would say 3 when 7 are stored."""
    path = tmp_path / "drill.sqlite3"
    Store.open(path).close()
    _tamper(path, "DROP TRIGGER tallies_insert",
            "CREATE TRIGGER tallies_insert AFTER INSERT ON reviews BEGIN SELECT 1; END")
    _refused_by_check_and_quiz(path, "a trigger tallies_insert that is not the one drill makes")


def test_a_store_path_that_is_a_dangling_symlink_says_so_and_creates_nothing(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from drills.cli import cli

    link = tmp_path / "drill.sqlite3"
    link.symlink_to(tmp_path / "elsewhere" / "gone.sqlite3")
    for args in (["stats"], ["store", "check"], ["quiz", "--count", "1"]):
        result = CliRunner().invoke(cli, [*args, "--store", str(link)], input="q\n")
        lines = result.stderr.strip().splitlines()
        assert result.exit_code != 0 and len(lines) == 1, (args, result.output)
        assert "is a symbolic link to" in lines[0] and "which does not exist" in lines[0]
        assert "the file is empty" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drill.sqlite3"] and link.is_symlink()


def test_store_check_names_a_damaged_schema_4_column_and_fitted_parameters(tmp_path: Path) -> None:
    path = tmp_path / "drill.sqlite3"
    with Store.open(path) as s:
        s.record_review(review(skill="a/x"), now=T0)
        s.keep_fsrs_parameters([0.5] * 21, 1, 0.3, 0.4, now=T0)
        assert s.check() == [] and s.fsrs_parameters()["parameters"] == [0.5] * 21
        s._conn.execute("UPDATE reviews SET hints = 'two', source = 'elsewhere'")
        s._conn.execute("UPDATE fsrs_params SET parameters = '[1, 2]'")
        problems = s.check()
    assert any("reviews row 1: hints, source or anki_revlog" in p for p in problems), problems
    assert "fsrs_params row: not a list of 21 parameters" in problems
