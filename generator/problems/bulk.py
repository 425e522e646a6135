"""Python's cyclic garbage collector paused while a bulk build runs (a deck, an export's problems).

A full-course deck makes about a million short-lived objects (records, strings, tuples), all freed by
reference counting as they go out of use: the build makes no reference cycles (a collection after a
build with the collector paused finds nothing; ``tests/generator/test_bulk.py``). The collector's
passes over the growing heap, triggered by the allocations alone, took about 8% of the build and most
of its run-to-run spread (``bench/bench_deck.py``). ``collector_paused`` nests: the collector runs
again when the outermost pause ends, if it ran before.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, back on after it if it was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
