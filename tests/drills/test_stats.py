"""drill stats: totals, due, streak, retention and accuracy from a store built with known times."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Card, Rating, Scheduler, State

from drills.stats import compute_stats, streak_days, summary_lines
from drills.store.repository import ReviewRecord, Store, iso
from tests.conftest import bound

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=timezone.utc)


def rec(skill: str, chip: str | None, rating: Rating, cram: bool = False) -> ReviewRecord:
    return ReviewRecord(skill=skill, family=skill.split("/")[0], chip=chip, problem_id=f"{skill}#1",
                        params={}, prompt="?", expected={"choice": "compute", "choices": ["compute", "memory"]},
                        given="c", given_value=None, correct=rating != Rating.Again, rating=int(rating),
                        relative_error=None, seconds_taken=4.0, cram=cram)


def test_streak_days() -> None:
    today = date(2026, 3, 10)
    days = {today - timedelta(days=k) for k in (0, 1, 2, 4)}
    assert streak_days(days, today) == 3
    assert streak_days(days - {today}, today) == 2        # none yet today: still counts to yesterday
    assert streak_days({today - timedelta(days=2)}, today) == 0
    assert streak_days(set(), today) == 0


def test_empty_store(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        stats = compute_stats(store, NOW)
    assert stats["reviews"] == 0 and stats["streak_days"] == 0 and stats["due_now"] == 0
    assert stats["retention_30d"] is None and stats["accuracy_by_family"] == {}
    assert any("no reviews of learned skills" in line for line in summary_lines(stats))


def test_stats_from_known_history(tmp_path: Path) -> None:
    scheduler = Scheduler(enable_fuzzing=False)
    with Store.open(tmp_path / "s.db") as store:
        # three days in a row (8, 9, 10 March) plus one stray day (5 March)
        store.record_review(rec("floor/v5e", "v5e", Rating.Good), scheduler, NOW - timedelta(days=5))
        store.record_review(rec("floor/v5e", "v5e", Rating.Again), scheduler, NOW - timedelta(days=2))
        store.record_review(rec("bound/v6e", "v6e", Rating.Good), scheduler, NOW - timedelta(days=1))
        store.record_review(rec("ridge/any", None, Rating.Easy, cram=True), scheduler, NOW - timedelta(hours=1))
        store.record_review(rec("bound/v6e", "v6e", Rating.Good), scheduler, NOW - timedelta(minutes=30))
        stats = compute_stats(store, NOW)
        cards = store.cards()

    assert stats["reviews"] == 5 and stats["cram_reviews"] == 1 and stats["reviews_today"] == 2
    assert stats["streak_days"] == 3
    assert stats["skills_seen"] == 2  # cram introduced nothing
    assert stats["due_now"] == sum(1 for row in cards.values() if row.due <= NOW)
    assert stats["due_today"] >= stats["due_now"]
    assert stats["accuracy_by_family"]["floor"] == {"reviews": 2, "correct": 1, "accuracy": 0.5}
    assert stats["accuracy_by_chip"]["v6e"] == {"reviews": 2, "correct": 2, "accuracy": 1.0}
    assert stats["accuracy_by_chip"]["any"]["reviews"] == 1
    assert stats["last_review"].startswith("2026-03-10T14:30")
    json.dumps(stats)  # the --json view must serialise


def test_retention_counts_recalls_of_learned_skills_only(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        learned = Card(card_id=1, state=State.Review, stability=10.0, difficulty=5.0,
                       due=NOW - timedelta(days=1), last_review=NOW - timedelta(days=11), step=None)
        # a skill already in Review state: seed its card directly, as if learned long ago
        store._conn.execute(
            "INSERT INTO cards VALUES ('ridge/v5e', ?, ?, ?, 3, ?, ?)",
            (json.dumps(learned.to_dict()), iso(learned.due), int(State.Review),
             "2026-01-01T00:00:00.000000+00:00", "2026-01-01T00:00:00.000000+00:00"))
        store.record_review(rec("ridge/v5e", "v5e", Rating.Good), now=NOW - timedelta(days=40))  # outside window
        store.record_review(rec("new/v5e", "v5e", Rating.Again), now=NOW - timedelta(days=3))   # not learned
        # the 40-day-old review moved the card on; put it back in Review for two recalls
        store._conn.execute("UPDATE cards SET card = ?, state = ? WHERE skill = 'ridge/v5e'",
                            (json.dumps(learned.to_dict()), int(State.Review)))
        store.record_review(rec("ridge/v5e", "v5e", Rating.Good), now=NOW - timedelta(days=1))
        store._conn.execute("UPDATE cards SET card = ?, state = ? WHERE skill = 'ridge/v5e'",
                            (json.dumps(learned.to_dict()), int(State.Review)))
        store.record_review(rec("ridge/v5e", "v5e", Rating.Again), now=NOW - timedelta(hours=2))
        stats = compute_stats(store, NOW)
    assert stats["retention_30d_reviews"] == 2
    assert stats["retention_30d"] == pytest.approx(0.5)


def test_today_is_the_calendar_day_of_now(tmp_path: Path) -> None:
    tz = timezone(timedelta(hours=-8))
    local_now = datetime(2026, 3, 10, 1, 0, tzinfo=tz)  # 09:00 UTC
    with Store.open(tmp_path / "s.db") as store:
        store.record_review(rec("floor/v5e", "v5e", Rating.Good), now=datetime(2026, 3, 10, 7, 30, tzinfo=timezone.utc))
        stats = compute_stats(store, local_now)
    # 07:30 UTC is 23:30 on 9 March at UTC-8: yesterday locally, so none today but a 1-day streak
    assert stats["reviews_today"] == 0 and stats["streak_days"] == 1


# -- a full disk: a real one, a small tmpfs, where this machine lets root mount one ------

@pytest.fixture
def full_disk(tmp_path: Path):
    import os
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                                           capture_output=True, timeout=bound()).returncode != 0:
        pytest.skip("needs root and a tmpfs mount (the message itself is tested in test_store.py)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=bound())


def test_a_full_disk_says_the_disk_is_full_in_quiz_and_stats(full_disk: Path) -> None:
    from click.testing import CliRunner

    from drills.cli import cli

    store = full_disk / "s.db"
    quiz = ["quiz", "--store", str(store), "--family", "floor", "--chip", "v5e", "--seed", "1"]
    assert CliRunner().invoke(cli, [*quiz, "--count", "1"], input="1us\n").exit_code == 0
    import os

    fd = os.open(full_disk / "fill", os.O_WRONLY | os.O_CREAT)  # fill the rest of the disk
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    result = CliRunner().invoke(cli, [*quiz, "--count", "2"], input="1us\n1us\n")
    assert result.exit_code == 1 and "the disk is full" in result.output, result.output
    # The failed write leaves SQLite's -wal/-shm beside the store: stats then needs shared memory it can
    # not grow, which SQLite reports as "disk I/O error"
    assert (full_disk / "s.db-wal").exists()
    result = CliRunner().invoke(cli, ["stats", "--store", str(store)])
    assert result.exit_code == 1 and "the disk is full" in result.output, result.output
    assert "disk I/O error" not in result.output and "Traceback" not in result.output
    (full_disk / "fill").unlink()
    with Store.open(store, readonly=True) as s:
        assert s.count_reviews() == 1  # what was saved is still there


@pytest.mark.parametrize("zone", ["Europe/Berlin", "UTC-24", "Asia/Kathmandu"])
def test_a_long_streak_across_batches_and_clock_changes_counts_every_day(tmp_path: Path, zone: str,
                                                                          monkeypatch) -> None:
    """The streak walks back 64 days a query; across a daylight-saving change it probes each midnight.
    The count must equal the day-by-day definition: 130 days in a row, then a gap."""
    import time as time_module

    from drills.store.clock import day_start, local_date

    monkeypatch.setenv("TZ", zone)
    time_module.tzset()
    try:
        now = datetime(2026, 4, 20, 12, 0, tzinfo=timezone.utc)  # Berlin changed clocks on 29 March
        today = local_date(now)
        with Store.open(tmp_path / "s.db") as store:
            for back in [*range(1, 131), *range(132, 140)]:  # none today; a gap 131 days back
                midnight = day_start(today - timedelta(days=back))
                # noon local; 40 days back (before the clock change, in the first batch) only at 23:30 local: a
                # plain 24-hour step from after the change would count it on the next day
                at = midnight + (timedelta(hours=23, minutes=30) if back == 40 else timedelta(hours=12))
                store.record_review(rec("floor/v5e", "v5e", Rating.Good, cram=True), now=at)
            stats = compute_stats(store)  # the local zone: now is the real clock, so walk from a fixed day
            from drills import stats as stats_module

            assert stats_module._streak(store, today, None) == 130
            assert stats["reviews"] == 138
    finally:
        monkeypatch.delenv("TZ")
        time_module.tzset()


@pytest.mark.parametrize("edit", [
    "UPDATE tallies SET reviews = 1000 WHERE family = 'floor'",       # the "reviews: 1010"
    "UPDATE tallies SET correct = 40 WHERE family = 'bound'",         # more right answers than reviews
    "UPDATE tallies SET cram = -1 WHERE family = 'ridge'",
    "DELETE FROM tallies WHERE family = 'bound'",                     # a row gone: the total falls short
])
def test_hand_edited_tallies_are_recounted_from_the_log_and_said(tmp_path: Path, edit: str) -> None:
    """``drill stats`` reads the ``tallies`` summary, not the log; one index-only count shows when the summary
    no longer holds together with the log, and the numbers are then counted from the reviews themselves."""
    import sqlite3

    from click.testing import CliRunner

    from drills.cli import cli

    scheduler = Scheduler(enable_fuzzing=False)
    path = tmp_path / "s.db"
    with Store.open(path) as store:
        for k, rating in enumerate((Rating.Good, Rating.Again, Rating.Good)):
            store.record_review(rec("floor/v5e", "v5e", rating), scheduler, NOW - timedelta(hours=3 - k))
        store.record_review(rec("bound/v6e", "v6e", Rating.Good), scheduler, NOW - timedelta(minutes=50))
        store.record_review(rec("ridge/any", None, Rating.Good, cram=True), scheduler, NOW - timedelta(minutes=40))
        honest = compute_stats(store, NOW)
    assert honest["reviews"] == 5 and honest["tallies_recounted"] is False
    assert not any(line.startswith("tallies:") for line in summary_lines(honest))
    with sqlite3.connect(path) as conn:
        conn.execute(edit)
    conn.close()
    with Store.open(path, readonly=True) as store:
        stats = compute_stats(store, NOW)
    assert stats["tallies_recounted"] is True
    for key in ("reviews", "cram_reviews", "accuracy_by_family", "accuracy_by_chip"):
        assert stats[key] == honest[key], key
    assert any(line.startswith("tallies: the store's summary disagrees with its reviews")
               for line in summary_lines(stats))
    result = CliRunner().invoke(cli, ["stats", "--store", str(path)])
    assert result.exit_code == 0, result.output
    assert "reviews: 5 " in result.output and "disagrees with its reviews" in result.output
    assert "1000" not in result.output and "1010" not in result.output
