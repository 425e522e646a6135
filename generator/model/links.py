"""Moving bytes off-chip: the time of one transfer over ICI, PCIe or DCN (the one transfer model).

``drill transfer`` (``generator.model.collectives.Transfer``: the bandwidth of the source's links on a
shortest path) and the interconnect family both call ``transfer_seconds`` and ``hops`` here.

Formulas (scaling book, "All About TPUs"; the per-hop latency is the chapter's
worked-problem figure, ``facts.ici_hop_latency_s`` in chips.yaml):
- T = bytes / link bandwidth (bytes/s) + hops x per-hop latency (seconds)
- hops between chips ``src`` and ``dst`` on an axis of ``n``: |src - dst| without
  wraparound links, min(|src - dst|, n - |src - dst|) with them.
"""

from __future__ import annotations


def hops(n: int, src: int, dst: int, wrap: bool) -> int:
    """ICI hops between two chips on one axis of ``n`` chips."""
    distance = abs(src - dst)
    return min(distance, n - distance) if wrap else distance


def transfer_seconds(nbytes: float, bytes_per_s: float, hop_count: int = 0, hop_latency_s: float = 0.0) -> float:
    """Seconds to send ``nbytes`` over one link: bandwidth term plus latency term."""
    return nbytes / bytes_per_s + hop_count * hop_latency_s
