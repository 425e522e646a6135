"""A start-up cache: what ``drill quiz`` would otherwise parse before its first prompt, kept as JSON.

Nothing is checked in. ``cached(name, inputs, build)`` returns ``build()``'s value, reading it
from ``<cache dir>/<name>-<key>.json`` when that file holds it, where ``key`` is a checksum over
the names and bytes of ``inputs`` (the files the value is built from): edit any of them, even a
comment, and the key changes, so a stale entry is never read. The value is built on first use
and written atomically (``generator.safeio``); an entry that can not be read, is not JSON or is
not the expected shape is ignored and rebuilt: a damaged cache costs time, never correctness.
A value JSON can not keep exactly (a date, a non-text key) is used but not cached.

The cache directory is ``platformdirs.user_cache_dir("rudrite-kernels")``, or ``$DRILL_CACHE_DIR``
when set (tests point it at a temporary folder). This module imports only ``safeio``, so any
module may use it without an import cycle.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable

from generator import safeio

FORMAT = 1
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
        import platformdirs
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


def cached(name: str, inputs: list[Path], build: Callable[[], Any]) -> Any:
    """``build()``'s value, from the cache entry for ``inputs``' content when there is a good one."""
    try:
        entry_key = key(inputs)
    except (OSError, UnicodeError):  # an input we can not read: build from the inputs, which will say why
        return build()
    folder = cache_dir()
    if folder is None:
        return build()
    path = folder / f"{name}-{entry_key}.json"
    try:
        data = json.loads(safeio.read_bytes_bounded(path, MAX_ENTRY_BYTES))
        if isinstance(data, dict) and data.get("format") == FORMAT and data.get("key") == entry_key and "value" in data:
            return data["value"]
    except (OSError, ValueError, RecursionError):  # missing, unreadable, not JSON, too deep: rebuild
        pass
    value = build()
    try:
        text = json.dumps({"format": FORMAT, "key": entry_key, "value": value}, ensure_ascii=False,
                          separators=(",", ":"))
    except (TypeError, ValueError):  # a date, a set, a NaN key...: JSON can not keep it
        return value
    if same(json.loads(text)["value"], value):
        _store(path, name, text)
    return value


def _store(path: Path, name: str, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        safeio.write_text(path, text)
    except OSError:  # a read-only or full cache directory: the next start builds again
        return
    now = time.time()
    for old in path.parent.glob(f"{name}-*.json"):
        try:
            if old != path and now - old.lstat().st_mtime > STALE_AFTER_S:
                old.unlink()
        except OSError:
            pass


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, True is not 1, "1" is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)
