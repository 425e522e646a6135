"""Moving bytes off-chip: the time of one transfer over ICI, PCIe or DCN (the one transfer model).

``transfer_seconds`` (bytes over the link bandwidth, plus hops times the per-hop latency) and
``hops``, called by `drill transfer` and the interconnect family.
Details: docs/internals.md.
"""

from __future__ import annotations


def hops(n: int, src: int, dst: int, wrap: bool) -> int:
    """ICI hops between two chips on one axis of ``n`` chips."""
    distance = abs(src - dst)
    return min(distance, n - distance) if wrap else distance


def transfer_seconds(nbytes: float, bytes_per_s: float, hop_count: int = 0, hop_latency_s: float = 0.0) -> float:
    """Seconds to send ``nbytes`` over one link: bandwidth term plus latency term."""
    return nbytes / bytes_per_s + hop_count * hop_latency_s
