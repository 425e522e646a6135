"""Where `drill xprof` lays a record's traces out: a logdir of one record's traces only, never a user's files.

``lay_out`` uses ``--logdir DIR`` only when it is new, empty or this tool's layout of the same record
(its mark file, ``.drill-xprof.json``); without one, a folder of the tool's own in the system's
temporary folder.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.io import safeio
from generator.errors import DrillError
from labs.measure import profile

MARK = ".drill-xprof.json"
XPROF_KEEP = 3  # records whose temporary layouts are kept (each is tens of MB: 25 MB for a CPU run at N=1024)


class XprofFolderError(DrillError, ValueError):
    """A logdir the tool may not write into (a user's folder, another record's layout, not private)."""


@dataclass(frozen=True)
class Layout:
    """A record's traces laid out for XProf: where, the files, and whether they were there already."""

    logdir: Path
    files: tuple[Path, ...]
    reused: bool
    temporary: bool

    def lines(self, record_name: str) -> list[str]:
        """What `drill xprof` says about the layout (the command that serves it follows)."""
        shown = safeio.display_path(self.logdir)
        head = (f"{len(self.files)} trace(s) of {record_name} already laid out in {shown} (reused)" if self.reused
                else f"{len(self.files)} trace(s) of {record_name} laid out in {shown}")
        if not self.temporary:
            return [head]
        return [head, f"(drill xprof's own folder, kept for this record's next drill xprof; the {XPROF_KEEP} newest "
                      f"records' are kept there, older ones removed; rm -r {shown} when done)"]


def lay_out(trace_root: Path, record_name: str, logdir: Path | None) -> Layout:
    """Lay the traces under ``trace_root`` out for XProf in ``logdir`` (None: the tool's temporary folder)."""
    root = Path(trace_root).resolve()
    if logdir is None:
        return _in_temporary_folder(root, record_name)
    folder = Path(logdir)
    mark = _claim(folder, root)
    if mark is not None:
        for name in mark["files"]:  # the same record laid out before: only the files this tool wrote go
            _remove_own(folder / name)
        (folder / MARK).unlink()
    return _write(root, record_name, folder, temporary=False)


def _claim(folder: Path, root: Path) -> dict[str, Any] | None:
    """The folder's mark when it holds this record's earlier layout; None when it is new or empty (made
    now); XprofFolderError for anything else."""
    shown = safeio.display_path(folder)
    try:
        st = folder.lstat()
    except FileNotFoundError:
        folder.mkdir(parents=True)
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise XprofFolderError(f"--logdir {shown} is {safeio.file_kind(st.st_mode)}, not a folder; name a new folder")
    mark = _read_mark(folder)
    if mark is None:
        if any(folder.iterdir()):
            raise XprofFolderError(f"--logdir {shown} is not empty and drill xprof did not make it; name a new or "
                                   f"empty folder (XProf shows everything under it as one run, and no file of "
                                   f"yours is written over)")
        return None
    if mark["trace_root"] != str(root):
        raise XprofFolderError(f"--logdir {shown} holds the traces of {mark['record']}, laid out by drill xprof; "
                               f"name another folder (XProf would show both records as one run)")
    return mark


def _read_mark(folder: Path) -> dict[str, Any] | None:
    """The folder's mark, or None when it has none (or one this tool could not have written)."""
    path = folder / MARK
    if not path.exists() and not path.is_symlink():
        return None
    try:
        mark = safeio.read_json_bounded(path, 1 << 20)
    except OSError:
        return None
    ok = (isinstance(mark, dict) and set(mark) == {"record", "trace_root", "files"}
          and isinstance(mark["trace_root"], str) and isinstance(mark["files"], list)
          and all(isinstance(f, str) and _plain_relative(f) for f in mark["files"]))
    return mark if ok else None


def _plain_relative(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def _remove_own(path: Path) -> None:
    """Remove one file this tool wrote (a regular file only), and its folder if that is left empty."""
    try:
        if stat.S_ISREG(path.lstat().st_mode):
            path.unlink()
            path.parent.rmdir()
    except OSError:
        pass


def _write(root: Path, record_name: str, folder: Path, temporary: bool) -> Layout:
    files = profile.xprof_layout(root, folder)
    if files:
        names = [str(f.relative_to(folder)) for f in files]
        text = json.dumps({"record": record_name, "trace_root": str(root), "files": names}, ensure_ascii=False)
        safeio.write_text(folder / MARK, text + "\n", inside=folder)
    return Layout(folder, tuple(files), reused=False, temporary=temporary)


def _private_parent() -> Path:
    """``<tmp>/drill-xprof-<uid>``: made 0700, and used only while it is this user's alone."""
    parent = Path(tempfile.gettempdir()) / f"drill-xprof-{os.geteuid()}"
    try:
        parent.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = parent.lstat()
    if (stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid()
            or st.st_mode & 0o077):
        raise XprofFolderError(f"{safeio.display_path(parent)} is not a private folder of this user's "
                               f"(mode {stat.S_IMODE(st.st_mode):04o}); name a folder with --logdir")
    return parent


def _in_temporary_folder(root: Path, record_name: str) -> Layout:
    parent = _private_parent()
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(record_name).stem)[:80]
    folder = parent / f"{stem}-{zlib.crc32(str(root).encode()):08x}"
    mark = _read_mark(folder) if folder.is_dir() and not folder.is_symlink() else None
    if mark is not None and mark["trace_root"] == str(root) and all((folder / f).is_file() for f in mark["files"]):
        os.utime(folder / MARK)  # the newest use: kept longest
        _prune(parent, keep=folder)
        return Layout(folder, tuple(folder / f for f in mark["files"]), reused=True, temporary=True)
    if folder.exists() or folder.is_symlink():  # a layout of ours cut short, in our private folder: done again
        _remove_tree(folder)
    folder.mkdir(mode=0o700)
    layout = _write(root, record_name, folder, temporary=True)
    _prune(parent, keep=folder)
    return layout


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _prune(parent: Path, keep: Path) -> None:
    """Keep the ``XPROF_KEEP`` most recently used layouts in the private folder (``keep`` among them)."""
    marked = []
    for child in parent.iterdir():
        if child != keep and not child.is_symlink() and child.is_dir():
            try:
                marked.append(((child / MARK).lstat().st_mtime, child))
            except OSError:
                marked.append((0.0, child))  # no mark: a layout cut short
    for _, old in sorted(marked, reverse=True)[XPROF_KEEP - 1:]:
        try:
            _remove_tree(old)
        except OSError:
            pass
