"""The problem families, one module each, registered by the name specs and ``--family`` use.

Order is the course's: the registry's order is the order of ``FAMILY_NAMES``,
of ``skills()`` and of the decks.

``FAMILIES`` maps a family's name to its module and imports a module the first
time it is looked up, so a quiz that draws one family's problem imports one
family module (the skill index of the others comes from ``generator.snapshot``).
Each module ``generator.families.<name>`` has ``NAME == <name>``. To add a
family: its module, its spec in ``drills/specs/``, one line in ``MODULES`` below
(and in ``generator.generate.FAMILY_NAMES``), then ``python -m generator.snapshot``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType

MODULES: tuple[str, ...] = (
    "ridge",
    "intensity",
    "bound",
    "floor",
    "critical_batch",
    "lattice",
    "vmem_fit",
    "transformer_step",
    "interconnect",
    "vocabulary",
    "pod",
    "collective",
    "transfer",
    "host_link",
    "sharded_matmul",
    "miss_reason",
)


class LazyFamilies(Mapping):
    """name -> family module, imported on first lookup; iterating gives the names without importing."""

    def __init__(self, names: tuple[str, ...]):
        self._names = names
        self._known = frozenset(names)

    def __getitem__(self, name: str) -> ModuleType:
        if name not in self._known:
            raise KeyError(name)
        module = importlib.import_module(f"{__name__}.{name}")
        if module.NAME != name:
            raise ImportError(f"{module.__name__} declares NAME = {module.NAME!r}; it must be {name!r}")
        return module

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._known
        except TypeError:  # unhashable: not a family name
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


FAMILIES: Mapping[str, ModuleType] = LazyFamilies(MODULES)
