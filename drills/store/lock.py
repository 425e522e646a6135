"""Waiting for another process's lock on the store, and naming that process.

A command waits at most ``LOCK_TIMEOUT_S`` seconds in total; ``store_error`` turns any
``sqlite3.Error`` into one line.
Details: docs/internals.md.
"""

from __future__ import annotations

import pathlib
import sqlite3
import time
from typing import Any

from drills.store.files import StoreError, bad_file, disk_full, disk_full_error, one_line, shown
from generator.io.lockinfo import lock_holder as holder

LOCK_TIMEOUT_S = 5.0  # the longest a command waits, in total, for another process's lock on the store


class StoreInUse(StoreError):
    """Another process held the store's lock for longer than ``LOCK_TIMEOUT_S``."""


def is_locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def retry_locked(conn: sqlite3.Connection, action: Any, deadline: float | None = None) -> Any:
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
            if not is_locked(exc) or time.monotonic() >= deadline:
                raise
        attempt += 1
        time.sleep(min(0.05 + 0.01 * attempt, max(0.0, deadline - time.monotonic())))


def store_error(path: pathlib.Path, exc: sqlite3.Error) -> StoreError:
    """A damaged file ("file is not a database", "malformed") gets the move-aside advice; a lock held
    past ``LOCK_TIMEOUT_S`` says the store is in use; a full disk says so (SQLite reports it as
    "database or disk is full", or, when the shared-memory file can not grow, as "disk I/O error");
    other errors (read-only) say what happened."""
    text = str(exc).lower()
    if type(exc) is sqlite3.DatabaseError:
        return bad_file(path, str(exc))
    if is_locked(exc):
        return in_use(path)
    if "disk is full" in text or ("disk i/o error" in text and disk_full(path)):
        return disk_full_error(path)
    return StoreError(f"can not use the store {shown(path)}: {one_line(exc)}")


def in_use(path: pathlib.Path) -> StoreError:
    pid = lock_holder(path)
    who = f" (PID {pid})" if pid else ""
    return StoreInUse(f"the store {shown(path)} is in use by another process{who}: waited {LOCK_TIMEOUT_S:g} s "
                      f"for its lock; nothing was changed. Try again when it has finished")


def lock_holder(path: pathlib.Path) -> int | None:
    """The PID of another process holding a POSIX lock on the store or its ``-shm``, from ``/proc/locks``
    (``generator.io.lockinfo``); None where ``/proc/locks`` is missing or shows no one."""

    return holder((path, pathlib.Path(f"{path}-shm")))
