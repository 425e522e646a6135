"""File I/O at the boundary: the one policy for every file the tool reads or writes.

Bounded reads of regular files only (``read_bytes_bounded``, ``read_text_bounded``,
``read_json_bounded``), atomic writes (``atomic_write``) and folder checks (``writable_dir``,
``make_dirs``). Every refusal is a one-line ``SafeIOError``. Standard library only.
Details (the file policy): docs/internals.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from generator.errors import DrillError

DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # 16 MiB: far above any record, spec or export the tool reads
DEFAULT_MAX_DEPTH = 64  # JSON nesting: a lab record is about 5 levels deep
MAX_INT_DIGITS = 40  # a JSON integer with more digits than this is not a measurement
StrPath = str | os.PathLike[str]  # a path as callers hold it: text or a Path


class SafeIOError(DrillError, OSError):
    """A file the policy refuses to read or write; ``str()`` is one line naming the path."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RefusedTarget(SafeIOError):
    """The target exists and the policy will not replace it (device, FIFO, socket, read-only, another's)."""


def display_path(path: StrPath) -> str:
    """``path`` printable on any stream: bytes that are not UTF-8 become ``\\xNN`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def file_kind(mode: int) -> str:
    """A short name for the file type in ``mode`` ("a FIFO", "a character device", ...)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


# -- reading -------------------------------------------------------------------------


def check_regular(path: StrPath) -> os.stat_result:
    """The ``stat`` of ``path`` (links followed) when it is a regular file; SafeIOError otherwise."""
    shown = display_path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SafeIOError(f"{shown} is {file_kind(st.st_mode)}, not a regular file; refusing to read it")
    return st


def _open_regular(path: StrPath) -> tuple[str, int, os.stat_result]:
    """(shown name, fd, fstat) of the regular file ``path``, opened without blocking.

    A FIFO or device is refused by ``stat`` before opening; the open uses
    ``O_NONBLOCK`` and ``fstat`` checks the file again (it may be swapped in between).
    """
    shown = display_path(path)
    check_regular(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    if not stat.S_ISREG(st.st_mode):  # swapped between the stat and the open
        os.close(fd)
        raise SafeIOError(f"{shown} is {file_kind(st.st_mode)}, not a regular file; refusing to read it")
    return shown, fd, st


@contextlib.contextmanager
def _reading(path: StrPath) -> Iterator[tuple[str, int, os.stat_result]]:
    """``_open_regular`` for a ``with`` block: the fd is closed after it, a read error becomes SafeIOError."""
    shown, fd, st = _open_regular(path)
    try:
        yield shown, fd, st
    except SafeIOError:  # already one line naming the file
        raise
    except OSError as exc:
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    finally:
        os.close(fd)


def read_bytes_bounded(path: StrPath, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` (SafeIOError if larger).

    Never blocks: a FIFO or device is refused by ``stat`` before opening, and the
    open itself uses ``O_NONBLOCK`` with an ``fstat`` check after it.
    """
    with _reading(path) as (shown, fd, st):
        return _read_fd(shown, fd, st, max_bytes)


def _read_fd(shown: str, fd: int, st: os.stat_result, max_bytes: int) -> bytes:
    if st.st_size > max_bytes:
        raise SafeIOError(f"{shown} is {st.st_size:,} bytes; the limit is {max_bytes:,}")
    chunks, total = [], 0
    while total <= max_bytes:  # read one byte past the limit to notice a file that grew
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > max_bytes:
        raise SafeIOError(f"{shown} is over the limit of {max_bytes:,} bytes")
    return b"".join(chunks)


def read_entry_bounded(dir_fd: int, name: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the file ``name`` in the open directory ``dir_fd``, only if it is that folder's own.

    For serving a folder: ``name`` is one entry (no ``/``), opened relative to
    ``dir_fd`` with ``O_NOFOLLOW`` (a symlink fails the open itself), and the
    opened descriptor is ``fstat``-ed: a regular file with exactly one link (a
    hard link to a file elsewhere is refused) on the directory's device. The
    checks are on what was opened, so swapping the entry between a check and
    the open can not slip another file in. SafeIOError otherwise.
    """
    shown = display_path(name)
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise SafeIOError(f"{shown} is not a plain file name")
    flags = (os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:  # ELOOP: a symbolic link
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    try:
        st, folder = os.fstat(fd), os.fstat(dir_fd)
        if not stat.S_ISREG(st.st_mode):
            raise SafeIOError(f"{shown} is {file_kind(st.st_mode)}, not a regular file; refusing to read it")
        if st.st_nlink != 1:
            raise SafeIOError(f"{shown} has {st.st_nlink} links (a hard link); refusing to read it")
        if st.st_dev != folder.st_dev:
            raise SafeIOError(f"{shown} is on another device than its folder; refusing to read it")
        return _read_fd(shown, fd, st, max_bytes)
    except SafeIOError:
        raise
    except OSError as exc:
        raise SafeIOError(f"can not read {shown}: {_why(exc)}") from None
    finally:
        os.close(fd)


def read_text_bounded(path: StrPath, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """``read_bytes_bounded`` decoded as UTF-8 (SafeIOError naming the byte offset if it is not)."""
    data = read_bytes_bounded(path, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SafeIOError(f"{display_path(path)} is not UTF-8 text (bad byte at offset {exc.start})") from None


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets inside strings ignored)."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def deeper_than(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests arrays/objects more than ``limit`` deep (strings ignored).

    Peels the innermost ``[]``/``{}`` pairs once per round, at C speed: at most
    ``limit`` rounds, so a 100,000-level document is refused after ``limit``
    passes instead of being walked bracket by bracket. Unbalanced brackets are
    left for the JSON parser to report.
    """
    if text.count("[") + text.count("{") <= limit:  # the common case, without a scan
        return False
    skeleton = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    for _ in range(limit):
        if not skeleton:
            return False
        shorter = _INNERMOST.sub("", skeleton)
        if shorter == skeleton:
            return False
        skeleton = shorter
    return bool(skeleton) and _INNERMOST.search(skeleton) is not None


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits (the limit is {MAX_INT_DIGITS})")
    return int(text)


class _DuplicateKey(DrillError, ValueError):
    """An object names a key twice (json itself keeps the last silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, refusing a key given twice (``json`` keeps the last one silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"the key {json.dumps(key[:40])} is given twice in one object")
        out[key] = value
    return out


def loads_bounded(text: str, max_depth: int = DEFAULT_MAX_DEPTH, where: str = "the input") -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth``, huge integers and an object with a
    key given twice (SafeIOError)."""
    if deeper_than(text, max_depth):
        raise SafeIOError(f"{where} is nested more than {max_depth} levels deep (the limit)")
    try:
        return json.loads(text, parse_int=_bounded_int, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise SafeIOError(f"{where} is not JSON: {exc.msg} at line {exc.lineno}") from None
    except _DuplicateKey as exc:
        raise SafeIOError(f"{where} is refused: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise SafeIOError(f"{where} is not usable JSON: {exc}") from None


def read_json_bounded(path: StrPath, max_bytes: int = DEFAULT_MAX_BYTES,
                      max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The JSON value in the regular file ``path``, bounded in size, nesting and integer length."""
    return loads_bounded(read_text_bounded(path, max_bytes), max_depth, display_path(path))


# -- writing -------------------------------------------------------------------------


def _read_only_by_mode(mode: int) -> bool:
    """No write bit for anyone: read-only on purpose, even for root (who bypasses the bits)."""
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def writable_dir(directory: StrPath) -> bool:
    """Whether the policy lets the tool write in ``directory``: a directory with a write bit that
    this process may write and enter. No write bit at all is read-only even for root."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and not _read_only_by_mode(st.st_mode)
            and os.access(directory, os.W_OK | os.X_OK))


def check_creatable_dir(directory: StrPath) -> list[Path]:
    """The folders ``make_dirs(directory)`` would create (outermost first), or SafeIOError (one line)
    when the nearest one that exists is not a directory or is not ``writable_dir``: a folder with
    no write bit gets no new sub-folder, for root too. [] when ``directory`` exists already."""
    shown = display_path(directory)
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(directory))))
    missing = []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    if not path.is_dir():
        raise SafeIOError(f"can not create {shown}: {display_path(path)} is not a directory")
    if missing and not writable_dir(path):
        mode = stat.S_IMODE(os.stat(path).st_mode)
        raise RefusedTarget(f"can not create {shown}: directory {display_path(path)} is not writable "
                            f"(mode {mode:04o}); nothing was created")
    return missing[::-1]


def make_dirs(directory: StrPath) -> Path:
    """``mkdir -p`` under the policy of ``check_creatable_dir``: the missing folders of ``directory``
    are created only inside a writable one. Returns ``directory`` as a Path."""
    for folder in check_creatable_dir(directory):
        try:
            os.mkdir(folder)
        except FileExistsError:  # made meanwhile by another process; the next check is on its own
            if not folder.is_dir():
                raise SafeIOError(f"can not create {display_path(directory)}: "
                                  f"{display_path(folder)} is not a directory") from None
        except OSError as exc:
            raise SafeIOError(f"can not create {display_path(directory)}: {_why(exc)}") from None
    return Path(directory)


def check_inside(folder: StrPath, path: StrPath) -> None:
    """SafeIOError (one line) unless ``path`` lies inside ``folder`` with no symbolic link on the way:
    neither ``path`` nor any folder between ``folder`` and it is a link (``folder`` itself may be)."""
    shown = display_path(path)
    base = Path(os.path.abspath(os.path.expanduser(os.fspath(folder))))
    full = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    try:
        parts = full.relative_to(base).parts
    except ValueError:
        parts = ()
    if not parts:
        raise RefusedTarget(f"can not write {shown}: it is not inside {display_path(base)}; left untouched")
    here = base
    for part in parts:
        here = here / part
        if os.path.islink(here):
            if here != full or os.path.isdir(here):  # a folder on the way (traces/): not "a regular file"
                raise RefusedTarget(f"can not write {shown}: {display_path(here)} is a symbolic link in place of a "
                                    f"folder; only real folders inside {display_path(base)} are written into, never "
                                    "a link; left untouched")
            raise RefusedTarget(f"can not write {shown}: {display_path(here)} is a symbolic link; only a regular "
                                f"file inside {display_path(base)} is written; left untouched")


def check_target(path: StrPath, inside: StrPath | None = None) -> tuple[Path, os.stat_result | None]:
    """Where ``atomic_write(path)`` would write (symlinks resolved) and the existing file's stat.

    SafeIOError (one line) when the policy refuses the target: not a regular file,
    read-only by mode or by permission, owned by another user we can not
    restore as owner, or in a directory that does not exist or can not be written; a symbolic
    link to nothing; with ``inside``, a path ``check_inside`` refuses.
    """
    shown = display_path(path)
    if inside is not None:
        check_inside(inside, path)
    given = os.path.expanduser(os.fspath(path))
    target = Path(os.path.realpath(given))
    if os.path.islink(given) and not os.path.lexists(target):
        raise RefusedTarget(f"can not write {shown}: it is a symbolic link to nothing ({display_path(target)}); "
                            f"refusing to create a file where it points")
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise SafeIOError(f"can not write {shown}: {_why(exc)}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise SafeIOError(f"{shown} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise RefusedTarget(f"{shown} is {file_kind(st.st_mode)}, not a regular file; refusing to replace it")
        if _read_only_by_mode(st.st_mode) or not os.access(target, os.W_OK):
            raise RefusedTarget(f"can not write {shown}: the file is read-only "
                                f"(mode {stat.S_IMODE(st.st_mode):04o}); left untouched")
        if st.st_uid != os.geteuid() and os.geteuid() != 0:
            raise RefusedTarget(f"can not write {shown}: it belongs to another user and replacing it "
                              f"would change its owner; left untouched")
    parent = target.parent
    try:
        pst = os.stat(parent)
    except OSError:
        raise SafeIOError(f"can not write {shown}: directory {display_path(parent)} does not exist") from None
    if not stat.S_ISDIR(pst.st_mode):
        raise SafeIOError(f"can not write {shown}: {display_path(parent)} is not a directory")
    if _read_only_by_mode(pst.st_mode) or not os.access(parent, os.W_OK | os.X_OK):
        raise RefusedTarget(f"can not write {shown}: directory {display_path(parent)} is not writable")
    return target, st


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: StrPath, write: Callable[[str], None], inside: StrPath | None = None) -> Path:
    """Call ``write(tmp_path)`` for a temporary file beside the target, then rename it over the target.

    The target is ``path`` with symlinks resolved; the policy of ``check_target``
    applies (with ``inside``: checked again just before the rename). The new file gets the old one's mode (and owner, where allowed),
    or ``0666 & ~umask`` when it is new. Returns the path written.
    """
    shown = display_path(path)
    target, old = check_target(path, inside)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise SafeIOError(f"can not write {shown}: {_why(exc)}") from None
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:  # the content is on disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else _new_file_mode())
        if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(tmp, old.st_uid, old.st_gid)  # root: the file keeps its owner and group
            except PermissionError:  # not root: a group we are not in stays ours
                pass
        if inside is not None:
            check_inside(inside, path)
        _recheck(target, old, shown)
        os.replace(tmp, target)
    except SafeIOError:
        _discard(tmp)
        raise
    except OSError as exc:
        _discard(tmp)
        raise SafeIOError(f"can not write {shown}: {_why(exc)}") from None
    except BaseException:
        _discard(tmp)
        raise
    _fsync_dir(target.parent)
    return target


def write_bytes(path: StrPath, data: bytes, inside: StrPath | None = None) -> Path:
    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return atomic_write(path, write, inside)


def write_text(path: StrPath, text: str, inside: StrPath | None = None) -> Path:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return atomic_write(path, write, inside)


def _recheck(target: Path, old: os.stat_result | None, shown: str) -> None:
    """Just before the rename: the target must still be what was checked (or still absent)."""
    try:
        now = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(now.st_mode):
        raise RefusedTarget(f"{shown} is {file_kind(now.st_mode)}, not a regular file; refusing to replace it")
    if old is not None and _read_only_by_mode(now.st_mode):
        raise RefusedTarget(f"can not write {shown}: the file became read-only; left untouched")


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable; some file systems do not allow it, which is not an error here."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_head(path: StrPath, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (never blocks; SafeIOError otherwise)."""
    with _reading(path) as (_, fd, _):
        return os.read(fd, size)
