"""A start-up cache: what ``drill quiz`` would otherwise parse before its first prompt, kept as JSON.

``cached(name, inputs, build)`` returns ``build()``'s value, read from the user's cache folder
when an entry keyed by the content of ``inputs`` holds it. Nothing is checked in; a damaged or
unsafe cache costs time, never correctness.
Details: docs/internals.md.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable

from generator.io import safeio
from generator.io.termsafe import visible

FORMAT = 2
APP = "rudrite-kernels"
MAX_ENTRY_BYTES = 16 << 20
MAX_INPUT_BYTES = 4 << 20
STALE_AFTER_S = 24 * 3600  # an entry of another key untouched this long is removed when a new one is written

_digests: dict[str, tuple[int, int, int]] = {}  # path -> (crc32, adler32, length) of its bytes, per process


def cache_dir() -> Path | None:
    """Where entries live; None (no cache: every start builds) where platformdirs is not installed,
    e.g. a GPU box that runs the lab from a checkout with only jax and PyYAML."""
    override = os.environ.get("DRILL_CACHE_DIR")
    if override:
        return Path(override)
    try:
        import platformdirs  # start-up: only when no folder was named
    except ImportError:
        return None
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def key(inputs: Iterable[Path]) -> str:
    """CRC-32 and Adler-32 (zlib: hashlib would load OpenSSL, ~8 ms a start) over each input's name,
    length and bytes: a checksum to notice edits, not a security measure."""
    crc, adler, total = 0, 1, 0
    for path in inputs:
        text = str(path)
        part = _digests.get(text)
        if part is None:
            data = safeio.read_bytes_bounded(path, MAX_INPUT_BYTES)
            part = _digests[text] = (zlib.crc32(data), zlib.adler32(data), len(data))
        head = f"{path.parent.name}/{path.name}\0{part[2]}\0".encode()
        crc = zlib.crc32(f"{part[0]:08x}{part[1]:08x}".encode(), zlib.crc32(head, crc))
        adler = zlib.adler32(f"{part[0]:08x}{part[1]:08x}".encode(), zlib.adler32(head, adler))
        total += len(head) + part[2]
    return f"{crc:08x}{adler:08x}{total:x}"


def forget_digests() -> None:
    """Drop the per-process checksums, and the lines said once (a test that edits an input in place calls this)."""
    _digests.clear()
    _said.clear()


def files_under(folder: Path, suffixes: tuple[str, ...] = (".py", ".yaml", ".json")) -> list[Path]:
    """Every file of ``folder`` with one of ``suffixes``, sorted, bytecode caches and dotfiles left out."""
    found: list[Path] = []
    for where, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found.extend(Path(where, f) for f in files if f.endswith(suffixes) and not f.startswith("."))
    return sorted(found)


def _digest(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _split(data: bytes) -> tuple[dict[str, Any], bytes] | None:
    """(header, value bytes) of an entry in this format, or None."""
    head, newline, body = data.partition(b"\n")
    if not newline or len(head) > 200:
        return None
    try:
        header = json.loads(head)
    except ValueError:
        return None
    return (header, body) if isinstance(header, dict) else None


_said: set[str] = set()  # the lines this process has said already (each once, however often the cache is asked)


def _say_once(line: str) -> None:
    if line not in _said:
        _said.add(line)
        sys.stderr.write(visible(line) + "\n")


def _writable_by_others(st: os.stat_result) -> bool:
    return bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _distrust(st: os.stat_result) -> str:
    """Why a cache folder or entry with this ``lstat`` may hold what another user wrote ("" when it can not):
    ssh's rule for its keys, owned by this user and writable by no group or other user."""
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    if _writable_by_others(st):
        return f"writable by its group or by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


def _ancestor_distrust(folder: Path) -> str:
    """Why a folder above the cache folder would let another user swap it ("" when none would): each one
    is owned by this user or root, and writable by no one else unless sticky (``/tmp``: no one may rename
    what is not theirs in it)."""
    for above in Path(os.path.abspath(folder)).parents:
        try:
            st = above.lstat()
        except OSError:
            continue  # not there yet: made by mkdir, with the umask's mode, under one that is checked
        if st.st_uid not in (0, os.geteuid()) or (_writable_by_others(st) and not st.st_mode & stat.S_ISVTX):
            return f"{safeio.display_path(above)} above it is {_distrust(st) or 'writable by other users'}"
    return ""


def _own_folder(folder: Path) -> bool:
    """The cache folder is usable: nothing yet (made when first written, private: 0700), or a real folder
    that this user owns and no group or other user can write, under folders no other user can change.
    Never a symbolic link, whatever it points at. Otherwise the cache is not used, and one line says why."""
    try:
        st = folder.lstat()
    except FileNotFoundError:
        why = ""
    except OSError as exc:
        why = f"can not be read ({exc.strerror or exc})"
    else:
        why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else (
            "not a folder" if not stat.S_ISDIR(st.st_mode) else _distrust(st))
    why = why or _ancestor_distrust(folder)
    if why:
        _say_once(f"drill: the start-up cache folder {safeio.display_path(folder)} is {why}; not used, every "
                  f"start builds its tables (name a private folder with DRILL_CACHE_DIR, or make it yours "
                  f"with chmod go-w)")
    return not why


def _trusted_entry(path: Path, st: os.stat_result) -> bool:
    """An entry is read or replaced only if this user owns it and no one else can write it (else one line)."""
    why = _distrust(st)
    if why:
        _say_once(f"drill: the start-up cache entry {safeio.display_path(path)} is {why}; not used")
    return not why


def _entry_lstat(path: Path) -> os.stat_result | None | bool:
    """The entry's ``lstat`` when it is a regular file this user may trust; None when there is none;
    False when there is something else there (a link, a folder, another user's file): never read or replaced."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or not _trusted_entry(path, st):
        return False
    return st


def _bears_our_header(data: bytes, entry_key: str) -> bool:
    """``data`` is an entry this module wrote for ``entry_key``, whatever became of its value (a damaged
    body is rebuilt over): our header line naming that key, or an entry of the first format."""
    parts = _split(data)
    if parts is not None:
        header = parts[0]
        return set(header) == {"format", "key", "hash"} and header["key"] == entry_key
    try:
        old = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return isinstance(old, dict) and set(old) == {"format", "key", "value"} and old["key"] == entry_key


def cached(name: str, inputs: list[Path], build: Callable[[], Any]) -> Any:
    """``build()``'s value, from the cache entry for ``inputs``' content when there is a good one."""
    try:
        entry_key = key(inputs)
    except (OSError, UnicodeError):  # an input we can not read: build from the inputs, which will say why
        return build()
    folder = cache_dir()
    if folder is None or not _own_folder(folder):
        return build()
    path = folder / f"{name}-{entry_key}.json"
    st = _entry_lstat(path)
    if st is False:  # a link, a folder, a file another user could have written: not ours to read or replace
        return build()
    if st is not None:
        try:
            data = safeio.read_bytes_bounded(path, MAX_ENTRY_BYTES)
        except OSError:  # unreadable: rebuilt, and left as it is
            return build()
        parts = _split(data)
        if parts is not None:
            header, body = parts
            if (header.get("format") == FORMAT and header.get("key") == entry_key
                    and header.get("hash") == _digest(body)):
                try:
                    return json.loads(body)
                except (ValueError, RecursionError):
                    pass
        if not _bears_our_header(data, entry_key):  # a file of the user's at the entry's name: never replaced
            return build()
    value = build()
    _write(path, name, entry_key, value)
    return value


def replace(name: str, inputs: list[Path], value: Any) -> None:
    """Write ``value`` as the entry for ``inputs``' content, in place of the one there (a value that
    grows, such as a table a later call completes); nothing is written where ``cached`` would not write."""
    try:
        entry_key = key(inputs)
    except (OSError, UnicodeError):
        return
    folder = cache_dir()
    if folder is None or not _own_folder(folder):
        return
    path = folder / f"{name}-{entry_key}.json"
    st = _entry_lstat(path)
    if st is False:
        return
    if st is not None:
        try:
            if not _bears_our_header(safeio.read_bytes_bounded(path, MAX_ENTRY_BYTES), entry_key):
                return
        except OSError:
            return
    _write(path, name, entry_key, value)


def _write(path: Path, name: str, entry_key: str, value: Any) -> None:
    """Store ``value`` under ``path`` when JSON keeps it exactly (docs/internals.md)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a date, a set, a NaN key...: JSON can not keep it
        return
    if same(json.loads(text), value):
        body = text.encode("utf-8")
        head = json.dumps({"format": FORMAT, "key": entry_key, "hash": _digest(body)}, separators=(",", ":"))
        _store(path, name, head.encode() + b"\n" + body)


def _store(path: Path, name: str, data: bytes) -> None:
    """Write the entry, private to this user (0600, in a folder made 0700), then remove stale ones of ours."""
    try:
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        if not _own_folder(path.parent):
            return
        safeio.write_bytes(path, data)
        os.chmod(path, 0o600)  # whatever the umask gave it: no one else may write what is read as ours
    except OSError:  # a read-only or full cache directory: the next start builds again
        return
    now = time.time()
    for old in path.parent.glob(f"{name}-*.json"):
        try:
            st = old.lstat()
            if (old != path and stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_AFTER_S
                    and not _distrust(st) and _written_here(old, name)):
                old.unlink()
        except OSError:
            pass


def _written_here(path: Path, name: str) -> bool:
    """``path`` is provably an entry this module wrote: named with a key, and holding an entry of that key."""
    entry_key = path.name[len(name) + 1:-len(".json")]
    if len(entry_key) < 17 or any(c not in "0123456789abcdef" for c in entry_key):
        return False
    try:
        data = safeio.read_bytes_bounded(path, MAX_ENTRY_BYTES)
    except OSError:
        return False
    parts = _split(data)
    if parts is not None:
        header, body = parts
        return (set(header) == {"format", "key", "hash"} and header["key"] == entry_key
                and header["hash"] == _digest(body))
    try:
        old = json.loads(data)  # the first format: one object
    except (ValueError, RecursionError):
        return False
    return isinstance(old, dict) and set(old) == {"format", "key", "value"} and old["format"] == 1 \
        and old["key"] == entry_key


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, True is not 1, "1" is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)
