"""Who holds a lock on a file: the process ID from ``/proc/locks``, for a one-line "locked by PID n".

``lock_holder(paths)`` reads ``/proc/locks`` (read-only, through ``generator.io.safeio``) and
returns the PID of another process holding a lock (``flock`` or POSIX) on any of ``paths``,
a writer's before a reader's; None where ``/proc/locks`` is missing or names no one. No file
is opened and closed to ask, which would drop this process's own POSIX locks on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from generator.io import safeio

PROC_LOCKS = "/proc/locks"


def lock_holder(paths: Iterable[Path | str], locks_file: str = PROC_LOCKS) -> int | None:
    """The PID of another process holding a lock on one of ``paths`` (a writer first), or None."""
    keys = set()
    for candidate in paths:
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        keys.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        text = safeio.read_bytes_bounded(locks_file, 1 << 20).decode("ascii", "replace")
    except OSError:
        return None
    writers: list[int] = []
    others: list[int] = []
    for line in text.splitlines():
        fields = line.replace("->", "").split()
        try:
            kind, pid, dev = fields[3], int(fields[4]), fields[5].split(":")
            key = (int(dev[0], 16), int(dev[1], 16), int(dev[2]))
        except (IndexError, ValueError):
            continue
        if key in keys and pid not in (os.getpid(), 0, -1):
            (writers if kind == "WRITE" else others).append(pid)
    found = writers or others
    return found[0] if found else None
