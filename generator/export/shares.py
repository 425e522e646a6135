"""A list of independent items worked on in shares, the shares after the first in forked processes.

``in_shares(items, work, workers, on_item)`` splits ``items`` into ``workers`` shares (share ``i`` is
``items[i::workers]``: neighbours in course order, which cost alike, go to different shares), runs
``work(share, on_done)`` on share 0 here and on each other share in a child made by ``os.fork``, and
returns the results in share order. ``work`` returns JSON data (dicts, lists, text, numbers): a child
sends its result back as JSON through a pipe, parsed here, never evaluated or unpickled; and one byte
on a second pipe for each item done (``on_done()``), so ``on_item(done, total)`` counts every share's
items as they finish.

A share whose child fails (it raises, dies, or sends what does not parse) is worked here instead, so
its result, or its error, is the one a single process gives. The children inherit what this process
has computed (a registry, its caches); they read and write no file.

``workers_here()`` is how many to use: 1 (no fork) unless ``os.fork`` is there on Linux, this process
runs a single thread, native threads included (a fork copies no other thread, and their locks could
stay held in the child), jax is not imported (its runtime keeps threads of its own), and the process
may run on two CPUs or more; at most ``MAX_WORKERS``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 4  # a deck's work splits well this far; more children cost more than they save
_READ = 1 << 16


def workers_here() -> int:
    """How many shares to work at once in this process (see the module docstring)."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return 1
    if threading.active_count() != 1 or _os_threads() != 1 or "jax" in sys.modules:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except OSError:
        return 1
    return max(1, min(MAX_WORKERS, cpus))


def _os_threads() -> int:
    """The threads this process runs, as Linux counts them (``/proc/self/task``): a library's native
    threads too (a BLAS pool), which ``threading`` does not see and Python 3.12 warns about at a fork."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: not 1, so no fork


def in_shares(items: Sequence[T], work: Callable[[list[T], Callable[[], None]], R], workers: int,
              on_item: Callable[[int, int], None] | None = None) -> list[R]:
    """``work(share, on_done)`` for each share of ``items``, the results in share order (see the module
    docstring). ``workers`` 1, or fewer than two items, works everything here in one share."""
    listed = list(items)
    workers = max(1, min(int(workers), len(listed)))
    shares = [listed[i::workers] for i in range(workers)]
    done = [0]

    def report() -> None:
        if on_item is not None:
            on_item(done[0], len(listed))

    started: list[tuple[list[T], _Child | None]] = []
    try:
        for share in shares[1:]:
            try:
                started.append((share, _Child.start(share, work)))
            except OSError:  # no fork here (out of processes or memory): the share is worked here
                started.append((share, None))
        children = [child for _, child in started if child is not None]

        counted = [0]  # items of a share being redone here that its child had already reported

        def on_done() -> None:  # one item worked here: count it and whatever the children finished
            if counted[0]:
                counted[0] -= 1  # counted once already: the count never goes back
                return
            done[0] += 1 + sum(child.poll_progress() for child in children)
            report()

        results = [work(shares[0], on_done)]
        pending = list(children)
        while pending:
            ready = select.select([fd for child in pending for fd in child.open_fds()], [], [])[0]
            for child in list(pending):
                progress = child.read_ready(ready)
                if progress:
                    done[0] += progress
                    report()
                if child.finished():
                    pending.remove(child)
        for share, maybe in started:
            result = maybe.result() if maybe is not None else None
            if result is None:  # the child failed, or none was made: work the share here
                counted[0] = maybe.progress if maybe is not None else 0
                results.append(work(share, on_done))
                counted[0] = 0
            else:
                results.append(result[0])
        return results
    finally:
        for _, maybe in started:
            if maybe is not None:
                maybe.stop()


class _Child:
    """One forked worker: its pid, the read ends of its result and progress pipes, what it sent."""

    def __init__(self, pid: int, result_fd: int, progress_fd: int):
        self.pid, self.result_fd, self.progress_fd = pid, result_fd, progress_fd
        self.data = bytearray()
        self.progress = 0
        self.unread_progress = 0
        self.result_open = self.progress_open = True
        self.status: int | None = None

    @classmethod
    def start(cls, share: list[Any], work: Callable[[list[Any], Callable[[], None]], Any]) -> "_Child":
        result_r, result_w = os.pipe()
        progress_r, progress_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        pid = os.fork()
        if pid == 0:  # the child: work the share, send it, and leave without running the parent's exit code
            code = 1
            try:
                os.close(result_r)
                os.close(progress_r)
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends a child at once, no traceback
                result = work(share, lambda: _write_all(progress_w, b"."))
                _write_all(result_w, json.dumps({"result": result}, ensure_ascii=False, allow_nan=False).encode())
                code = 0
            except BaseException:  # noqa: B902  # a failed share is worked again by the parent, which reports it
                code = 1
            finally:
                os._exit(code)
        os.close(result_w)
        os.close(progress_w)
        os.set_blocking(progress_r, False)
        return cls(pid, result_r, progress_r)

    def open_fds(self) -> list[int]:
        return [fd for fd, is_open in ((self.result_fd, self.result_open), (self.progress_fd, self.progress_open))
                if is_open]

    def poll_progress(self) -> int:
        """Items the child finished since the last call (read without waiting)."""
        if self.progress_open:
            self._read_progress()
        count, self.unread_progress = self.unread_progress, 0
        return count

    def read_ready(self, ready: list[int]) -> int:
        """Read what ``select`` found ready; the items finished since the last report."""
        if self.result_open and self.result_fd in ready:
            chunk = os.read(self.result_fd, _READ)
            if chunk:
                self.data += chunk
            else:
                self.result_open = False
                os.close(self.result_fd)
        if self.progress_open and self.progress_fd in ready:
            self._read_progress()
        return self.poll_progress()

    def _read_progress(self) -> None:
        try:
            chunk = os.read(self.progress_fd, _READ)
        except BlockingIOError:
            return
        if chunk:
            self.progress += len(chunk)
            self.unread_progress += len(chunk)
        else:
            self.progress_open = False
            os.close(self.progress_fd)

    def finished(self) -> bool:
        return not self.result_open and not self.progress_open

    def result(self) -> tuple[Any] | None:
        """(the child's result,), or None when it failed (exit status not 0, or a result that does not parse).
        Called once both pipes are closed: the child is exiting, so waiting for it ends at once."""
        self.stop(kill=False)
        if self.status != 0:
            return None
        try:
            loaded = json.loads(self.data.decode())
        except ValueError:  # truncated, or not UTF-8: the share is redone
            return None
        return (loaded["result"],) if isinstance(loaded, dict) and set(loaded) == {"result"} else None

    def stop(self, kill: bool = True) -> None:
        """The child reaped (with ``kill``, killed first if it still runs: a share given up); its pipes closed."""
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG if kill else 0)
                if pid == 0:
                    os.kill(self.pid, signal.SIGKILL)
                    pid, status = os.waitpid(self.pid, 0)
                self.status = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                self.status = -1
        for fd, is_open in ((self.result_fd, self.result_open), (self.progress_fd, self.progress_open)):
            if is_open:
                os.close(fd)
        self.result_open = self.progress_open = False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
