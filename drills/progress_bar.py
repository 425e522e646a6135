"""A progress bar on stderr for the long commands (`drill deck`, `drill export`, `drill lab`, `drill hierarchy`).

``Bar`` draws one line with an ETA, redrawn in place, only when stderr is a terminal; otherwise
it writes nothing at all.
Details: docs/internals.md.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Callable, TextIO

WIDTH = 24  # characters of the bar itself
REDRAW_S = 0.1  # the least time between two redraws (the last step is always drawn)


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal (False for a closed or missing stream)."""
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError, AttributeError):
        return False


def eta_text(seconds: float | None) -> str:
    """``ETA m:ss`` (``ETA h:mm:ss`` from an hour), ``ETA --:--`` while it is not known yet."""
    if seconds is None:
        return "ETA --:--"
    total = max(0, int(round(seconds)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"ETA {hours}:{minutes:02}:{secs:02}" if hours else f"ETA {minutes}:{secs:02}"


class Bar:
    """A bar of ``total`` steps on ``stream`` (default: sys.stderr), drawn only on a terminal.

    Nothing is drawn before the first ``show``, ``advance`` or ``skip``; use it as a context
    manager, leaving it ends the line (if one was drawn). ``clock`` is the time source
    (``time.monotonic``), given in tests."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.total = max(0, int(total))
        self.stream = sys.stderr if stream is None else stream
        self.shown = is_terminal(self.stream)
        self.clock = clock
        self.done = 0
        self.item = ""
        self._timed = 0  # steps whose time counts toward the ETA
        self._started = clock()
        self._last_draw: float | None = None
        self._drawn = 0  # the length of the last line drawn, to blank what is left of it

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def eta_s(self) -> float | None:
        """Seconds left at the rate of the steps done so far; None before the first timed step."""
        if self._timed <= 0:
            return None
        per_step = (self.clock() - self._started) / self._timed
        return per_step * max(0, self.total - self.done)

    def line(self) -> str:
        """The line as drawn now (without the carriage return)."""
        filled = WIDTH if self.total == 0 else min(WIDTH, WIDTH * self.done // self.total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        text = f"{self.label} [{bar}] {self.done}/{self.total}  {eta_text(self.eta_s())}"
        return f"{text}  {self.item}" if self.item else text

    def advance(self, steps: int = 1, item: str | None = None) -> None:
        """``steps`` more done (timed: they count toward the ETA); ``item`` names what runs now."""
        self.done = min(self.total, self.done + steps)
        self._timed += steps
        self.show(item)

    def skip(self, steps: int = 1, item: str | None = None) -> None:
        """``steps`` more done that took no time here (done before): not counted toward the ETA.
        The ETA's clock starts again, so the rate is the rate of the steps timed after them."""
        self.done = min(self.total, self.done + steps)
        if self._timed == 0:
            self._started = self.clock()
        self.show(item)

    def show(self, item: str | None = None) -> None:
        """Name what runs now (None: keep the name) and redraw."""
        if item is not None:
            self.item = item
        self._draw(force=self.done >= self.total)

    def on_item(self, offset: int = 0) -> Callable[[int, int], None]:
        """A ``(done, total)`` callback that puts the bar at ``offset + done`` (each call a timed step)."""
        def callback(done: int, total: int) -> None:
            target = min(self.total, offset + done)
            if target > self.done:
                self.advance(target - self.done)
        return callback

    def close(self) -> None:
        """Draw the last state and end the line (nothing when the bar is not shown or was never drawn)."""
        if not self.shown or self._last_draw is None:
            self.shown = False
            return
        self._draw(force=True)
        self.stream.write("\n")
        self.stream.flush()
        self.shown = False

    def _draw(self, force: bool = False) -> None:
        if not self.shown:
            return
        now = self.clock()
        if not force and self._last_draw is not None and now - self._last_draw < REDRAW_S:
            return
        self._last_draw = now
        columns = shutil.get_terminal_size((80, 24)).columns
        text = self.line()[:max(1, columns - 1)]  # one line: never wrap onto the next
        pad = " " * max(0, self._drawn - len(text))
        self._drawn = len(text)
        self.stream.write("\r" + text + pad)
        self.stream.flush()


class Steps:
    """The bar driven by named steps, as ``labs`` reports them: ``progress(label)`` says a step
    started. A label that is the next of ``labels`` ends the step before it (one step on the bar);
    any other label names a part of the running step and only changes what the bar shows.
    Steps in ``done_before`` were done before this bar started: they move it without
    counting toward the ETA. With no bar (stderr not a terminal) nothing is written."""

    def __init__(self, bar: Bar, labels: list[str], done_before: tuple[str, ...] = ()) -> None:
        self.bar = bar
        self.labels = list(labels)
        self.done_before = set(done_before)
        self.pos = -1  # index of the running step
        self.finished = False

    def __call__(self, label: str) -> None:
        nxt = self.pos + 1
        if nxt < len(self.labels) and label == self.labels[nxt]:
            self._end_running(label)
            self.pos = nxt
        elif self.pos >= 0:
            self.bar.show(f"{self.labels[self.pos]}: {label}")
        else:
            self.bar.show(label)

    def finish(self, item: str = "done") -> None:
        """End the running step and the bar's line (once; later calls do nothing)."""
        if self.finished:
            return
        self.finished = True
        if self.pos >= 0:  # a bar no step started (nothing measured) is never drawn
            self._end_running(item)
        self.bar.close()

    def _end_running(self, item: str) -> None:
        if self.pos < 0:
            self.bar.show(item)
        elif self.labels[self.pos] in self.done_before:
            self.bar.skip(1, item)
        else:
            self.bar.advance(1, item)
