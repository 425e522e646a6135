"""A start-up cache: what ``drill quiz`` would otherwise parse before its first prompt, kept as JSON.

Nothing is checked in. ``cached(name, inputs, build)`` returns ``build()``'s value, reading it
from ``<cache dir>/<name>-<key>.json`` when that file holds it, where ``key`` is a checksum over
the names and bytes of ``inputs`` (the files the value is built from): edit any of them, even a
comment, and the key changes, so a stale entry is never read. The value is built on first use
and written atomically (``generator.safeio``).

An entry is one header line, ``{"format": 2, "key": ..., "hash": ...}``, then the value's JSON;
``hash`` is a checksum of those value bytes, so an entry whose value was edited or bit-flipped is
not its own and is rebuilt, like one that can not be read, is not JSON or is not the expected
shape: a damaged cache costs time, never correctness (the checksum notices damage and edits; it
is not a defence against someone who can write the user's files). A value JSON can not keep
exactly (a date, a non-text key) is used but not cached.

The cache deletes only what it can prove it wrote: when a new entry is written, an older file of
the same name is removed only if it is a regular file (not a link), named ``<name>-<hex key>.json``,
untouched for ``STALE_AFTER_S``, and its content is an entry whose header names that same key and
whose checksum matches (or an entry of the first format, an object of exactly ``format`` 1, that
key and ``value``). A user's ``skills-matrix.json`` in the folder is never touched. A cache folder
that is a symbolic link, or an entry that is one, is never followed: nothing is read from or
written there, and every start builds.

The cache directory is ``platformdirs.user_cache_dir("rudrite-kernels")``, or ``$DRILL_CACHE_DIR``
when set (tests point it at a temporary folder). This module imports only ``safeio``, so any
module may use it without an import cycle.
"""

from __future__ import annotations

import json
import os
import stat
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable

from generator import safeio

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
    """Drop the per-process checksums (a test that edits an input in place calls this)."""
    _digests.clear()


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


def _own_folder(folder: Path) -> bool:
    """The cache folder is usable: a real folder, or nothing yet (created when first written);
    never a symbolic link, whatever it points at."""
    try:
        return not stat.S_ISLNK(folder.lstat().st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


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
    if os.path.islink(path):  # not ours to read or replace
        return build()
    try:
        parts = _split(safeio.read_bytes_bounded(path, MAX_ENTRY_BYTES))
        if parts is not None:
            header, body = parts
            if (header.get("format") == FORMAT and header.get("key") == entry_key
                    and header.get("hash") == _digest(body)):
                return json.loads(body)
    except (OSError, ValueError, RecursionError):  # missing, unreadable, not JSON, too deep: rebuild
        pass
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
    if not os.path.islink(path):
        _write(path, name, entry_key, value)


def _write(path: Path, name: str, entry_key: str, value: Any) -> None:
    """Store ``value`` under ``path`` when JSON keeps it exactly (see the module docstring)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a date, a set, a NaN key...: JSON can not keep it
        return
    if same(json.loads(text), value):
        body = text.encode("utf-8")
        head = json.dumps({"format": FORMAT, "key": entry_key, "hash": _digest(body)}, separators=(",", ":"))
        _store(path, name, head.encode() + b"\n" + body)


def _store(path: Path, name: str, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _own_folder(path.parent):
            return
        safeio.write_bytes(path, data)
    except OSError:  # a read-only or full cache directory: the next start builds again
        return
    now = time.time()
    for old in path.parent.glob(f"{name}-*.json"):
        try:
            st = old.lstat()
            if (old != path and stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_AFTER_S
                    and _written_here(old, name)):
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
