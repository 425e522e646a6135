"""The problem families, one module each, registered by the name specs and ``--family`` use.

Order is the course's: the registry's order is the order of ``FAMILY_NAMES``,
of ``skills()`` and of the decks.
"""

from __future__ import annotations

from types import ModuleType

from generator.families import (bound, critical_batch, floor, intensity, interconnect, lattice, ridge,
                                transformer_step, vmem_fit, vocabulary)
from generator.families import collective, host_link, pod, sharded_matmul, transfer
from generator.families import miss_reason

FAMILIES: dict[str, ModuleType] = {
    m.NAME: m for m in (ridge, intensity, bound, floor, critical_batch, lattice, vmem_fit, transformer_step,
                        interconnect, vocabulary, pod, collective, transfer, host_link, sharded_matmul,
                        miss_reason)
}
