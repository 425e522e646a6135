"""File safety for the review store: which paths may become a store, and the side files beside it.

Every check reads only and never blocks; a refusal is a one-line ``StoreError`` naming the file.
Details: docs/internals.md.
"""

from __future__ import annotations

import errno
import os
import pathlib
import stat
from typing import Any

from generator.io import safeio
from generator.errors import DrillError

SIDE_SUFFIXES = ("-wal", "-journal", "-shm")  # the files SQLite keeps beside the store
SQLITE_MAGIC = b"SQLite format 3\x00"
APP_NAME = "rudrite-kernels"
STORE_FILENAME = "drill.sqlite3"


class StoreError(DrillError):
    """The store can not be used; the message is one line naming the file."""


class StoreMissing(StoreError):
    """A read (``drill stats``) of a path where there is no store; nothing is created."""


def shown(path: str | os.PathLike[str]) -> str:
    """A path printable on any stream (bytes that are not UTF-8 as ``\\xNN``)."""
    return safeio.display_path(path)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def default_store_path() -> pathlib.Path:
    """``$DRILL_STORE`` if set, else ``drill.sqlite3`` in the platformdirs user data directory."""
    env = os.environ.get("DRILL_STORE", "").strip()
    if env:
        return pathlib.Path(env).expanduser()
    import platformdirs  # only when no store was named

    return platformdirs.user_data_path(APP_NAME, appauthor=False) / STORE_FILENAME


def bad_file(path: pathlib.Path, reason: str) -> StoreError:
    name = shown(path)
    return StoreError(
        f"{name} is not a usable drill store ({reason}); it was left untouched. "
        f"Move it aside (mv '{name}' '{name}.bad') to start a fresh store, or pick another with --store PATH")


def disk_full(path: pathlib.Path) -> bool:
    """True when the file system holding ``path`` (or its nearest existing folder) has no space left."""
    probe = pathlib.Path(path)
    for candidate in (probe, *probe.parents):
        try:
            st = os.statvfs(candidate)
        except OSError:
            continue
        return st.f_bavail == 0 or st.f_favail == 0
    return False


def disk_full_error(path: pathlib.Path) -> StoreError:
    return StoreError(f"can not use the store {shown(path)}: the disk is full (no space left on the device "
                      f"that holds it); nothing more was written. Free some space and try again")


def os_error(path: pathlib.Path, exc: OSError, doing: str = "open") -> StoreError:
    """An OSError while opening or creating the store, in one line (a full disk says so)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return disk_full_error(path)
    return StoreError(f"can not {doing} the store {shown(path)}: {exc.strerror or one_line(exc)}")


def check_side_files(path: pathlib.Path) -> None:
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
            raise StoreError(f"can not check {shown(side)}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(
                f"{shown(side)} is {safeio.file_kind(st.st_mode)}, not a regular file: SQLite keeps its "
                f"{suffix.lstrip('-')} file there, so the store {shown(path)} is not used and both were left "
                f"untouched; remove or rename it, or pick another store with --store PATH")


def _read_only(what: str, target: pathlib.Path, st: os.stat_result) -> StoreError:
    return StoreError(
        f"{what} {shown(target)} is read-only (mode {stat.S_IMODE(st.st_mode):04o}) and drill "
        f"records answers and ticks there, so nothing was asked or written. Make it writable or "
        f"pick another store with --store PATH")


def check_writable(path: pathlib.Path) -> None:
    """A store, its folder (where SQLite puts ``-wal``/``-shm``), or, for a store still to create,
    the nearest existing folder above it, with no write bit is read-only, for root too: refused
    before anything is asked, written or created (no sub-folder is made under a read-only folder)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None  # a new store
    if st is not None and stat.S_ISREG(st.st_mode):
        if safeio._read_only_by_mode(st.st_mode) or not os.access(path, os.W_OK):
            raise _read_only("the store", path, st)
    for folder in path.parents:  # the store's folder, or the first existing one above a folder to create
        try:
            fst = os.stat(folder)
        except FileNotFoundError:
            continue
        except OSError:
            return  # a parent that is a file or unreadable: the open reports the real problem
        if stat.S_ISDIR(fst.st_mode):
            if safeio._read_only_by_mode(fst.st_mode) or not os.access(folder, os.W_OK | os.X_OK):
                what = "the store's folder" if folder == path.parent else "the folder"
                raise _read_only(what, folder, fst)
        return


def check_file(path: pathlib.Path) -> bool:
    """Refuse a path that is not a regular file (a dangling symbolic link included), or a non-empty
    file without the SQLite header, reading only and never blocking (``generator.io.safeio``). True
    when there is a store to check."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # a new store (mkdir reports a bad parent)
        if os.path.islink(path):  # a dangling link: neither an empty file nor a place to create one
            try:
                target = safeio.display_path(os.readlink(path))
            except OSError:
                target = "a missing file"
            raise StoreError(f"{shown(path)} is a symbolic link to {target}, which does not exist; "
                             f"nothing was created: point the link at a store, or pass --store PATH") from None
        return False
    except OSError as exc:
        raise StoreError(f"can not read the store {shown(path)}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{shown(path)} is a directory; pass a file path with --store PATH")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{shown(path)} is {safeio.file_kind(st.st_mode)}, not a regular file; "
                         f"a store must be a file: pass one with --store PATH")
    try:
        head = safeio.read_head(path, 100)
    except safeio.SafeIOError as exc:
        raise StoreError(f"can not read the store: {exc}") from None
    if head and not head.startswith(SQLITE_MAGIC):
        raise bad_file(path, "not an SQLite database")
    if head and len(head) < 100:
        raise bad_file(path, "truncated SQLite header")
    return bool(head)


def fingerprint(path: pathlib.Path) -> tuple[Any, ...]:
    """What changes when another connection writes the file or starts a journal beside it."""
    st = os.stat(path)
    sides = tuple(os.path.exists(f"{path}{suffix}") for suffix in ("-wal", "-journal"))
    return st.st_ino, st.st_size, st.st_mtime_ns, sides


def journal_present(path: pathlib.Path) -> bool:
    """A ``-wal`` or ``-journal`` beside the store: another connection may be writing it."""
    return any(os.path.exists(f"{path}{suffix}") for suffix in ("-wal", "-journal"))
