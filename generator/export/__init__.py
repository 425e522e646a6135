"""Exports of generated problems: Anki packages (``anki``) and plain CSV / JSON (``tabular``).

Writing is all-or-nothing: ``atomic_write`` writes a temporary file in the
target's directory and renames it over the target only once it is complete,
so a failure never leaves a half-written file at the output path.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


class ExportError(ValueError):
    """The output can not be written: the message is one line saying why."""


def check_writable(path: str | os.PathLike) -> Path:
    """The resolved target path, or ExportError if it can not be written (before any work is done)."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ExportError(f"'{path}' is a directory; give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ExportError(f"can not write '{path}': directory '{parent}' does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ExportError(f"can not write '{path}': directory '{parent}' is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise ExportError(f"can not write '{path}': the file is read-only")
    return target


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp_path)`` for a temp file beside ``path``, then rename it over ``path``."""
    target = check_writable(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file normal permissions
        os.replace(tmp, target)
    except OSError as exc:
        _discard(tmp)
        raise ExportError(f"can not write '{path}': {exc.strerror or exc}") from None
    except BaseException:
        _discard(tmp)
        raise
    return target


def write_text(path: str | os.PathLike, text: str) -> Path:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return atomic_write(path, write)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
