"""Exports of generated problems: Anki packages (``anki``) and plain CSV / JSON (``tabular``).

Writing is all-or-nothing and goes through the one file policy in
``generator.io.safeio``: a temporary file in the target's directory is renamed
over the target only once it is complete, and only over a regular file or a
new path (a device, FIFO or directory is refused, never replaced; a symlink
is written through, the link stays; the old file's mode is kept).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from generator.io import safeio
from generator.errors import DrillError


class ExportError(DrillError, ValueError):
    """The output can not be written: the message is one line saying why.

    ``refused``: the target exists and is not ours to replace (a device, a FIFO,
    a read-only file): the command exits 1, not 2, as for a bad option value.
    """

    def __init__(self, message: str, refused: bool = False):
        super().__init__(message)
        self.refused = refused


def _export_error(exc: safeio.SafeIOError) -> ExportError:
    return ExportError(str(exc), refused=isinstance(exc, safeio.RefusedTarget))


def check_writable(path: safeio.StrPath) -> Path:
    """The resolved target path, or ExportError if it can not be written (before any work is done)."""
    try:
        return safeio.check_target(path)[0]
    except safeio.SafeIOError as exc:
        raise _export_error(exc) from None


def atomic_write(path: safeio.StrPath, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp_path)`` for a temp file beside ``path``, then rename it over ``path``."""
    try:
        return safeio.atomic_write(path, write)
    except safeio.SafeIOError as exc:
        raise _export_error(exc) from None


def write_text(path: safeio.StrPath, text: str) -> Path:
    try:
        return safeio.write_text(path, text)
    except safeio.SafeIOError as exc:
        raise _export_error(exc) from None
