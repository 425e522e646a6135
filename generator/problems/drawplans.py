"""Which draws a skill's problem set keeps, remembered between processes (``generator.io.startcache``).

``Registry.generate`` searches each skill for ``count`` distinct fair problems: it draws seeds from
``Random(f"{seed}:{skill}")``, redraws a seed's params while a taught mistake lands too near the key,
and skips a seed whose problem it already has. The search's outcome, a *plan*, is the list of what it
kept, in order: each kept draw's seed token (8 hex digits) and the fair-draw try its params came from.
A plan is a function of the generator's files, the seed, the count and the skill alone, like the probe
verdicts, so it is kept under the same key (``generate.index_inputs``): any edit of the generator makes
a new entry, and a stale plan is never read.

From a plan a problem set is rebuilt with no search: each kept draw's params are drawn again from its
seed (the try's number of draws), solved once and priced once, exactly as the search solved and priced
what it kept. The notes are the same, field for field (``tests/generator/test_deck_shortcuts.py``).

One entry holds the plans of a few selections (``<seed>:<count>``, ``MAX_SELECTIONS``, the newest
last), each a table of skill id -> plan; a selection drawn again with more skills completes its table.
A value that is not this shape is ignored whole, and every skill is searched, as without a cache.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from generator.io import startcache

NAME = "draws"
MAX_SELECTIONS = 4  # (seed, count) pairs one entry keeps plans for; older ones are dropped
MAX_TRY = 10_000  # a try number above this is not one ``Registry._fair_draw`` makes: the table is not ours
_TOKEN = re.compile(r"^[0-9a-f]{8}$")

# One kept draw: [its seed token, the fair-draw try its params came from, 0 for the first]
Plan = list[list[Any]]


def selection(seed: int, count: int) -> str:
    """The name of one request's plans within an entry."""
    return f"{seed}:{count}"


def load(inputs: list[Path], seed: int, count: int) -> dict[str, Plan]:
    """The plans kept for this seed and count (skill id -> plan); empty when there are none."""
    table = _selections(startcache.cached(NAME, inputs, dict))
    plans: dict[str, Plan] = table.get(selection(seed, count), {})  # each kept draw a [token, try] pair
    return plans


def store(inputs: list[Path], seed: int, count: int, plans: dict[str, Plan]) -> None:
    """Add ``plans`` to this selection's table (skills searched just now) and write the entry."""
    if not plans:
        return
    table = _selections(startcache.cached(NAME, inputs, dict))
    name = selection(seed, count)
    merged = {**table.pop(name, {}), **plans}
    table[name] = merged
    while len(table) > MAX_SELECTIONS:
        del table[next(iter(table))]
    startcache.replace(NAME, inputs, table)


def _selections(value: Any) -> dict[str, dict[str, Plan]]:
    """``value`` as a table of selections when it is exactly the shape ``store`` writes, else empty."""
    if not isinstance(value, dict):
        return {}
    for name, plans in value.items():
        if not (isinstance(name, str) and isinstance(plans, dict)):
            return {}
        for sid, plan in plans.items():
            if not (isinstance(sid, str) and isinstance(plan, list) and all(_kept(k) for k in plan)):
                return {}
    return value


def _kept(item: Any) -> bool:
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and bool(_TOKEN.match(item[0]))
            and type(item[1]) is int and 0 <= item[1] <= MAX_TRY)
