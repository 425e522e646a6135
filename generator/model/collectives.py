"""Beyond one chip: pod and slice totals, collective times and point-to-point transfers over ICI.

Every formula for them lives here, and only here; the CLI, the families and the collectives lab
call these. Figures come from ``chips.yaml``. Units: bytes, bytes/s, seconds, FLOP/s.
Details: docs/internals.md.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from generator.model import roofline
from generator.model.catalogue import Catalogue, Chip, Figure
from generator.model import links
from generator.errors import DrillError
from generator.model.links import hops as axis_hops
from generator.model.units import sci, seconds
from generator.model.roofline import Ceilings

OPS = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
OP_LABELS = {"all_gather": "AllGather", "reduce_scatter": "ReduceScatter", "all_reduce": "AllReduce",
             "all_to_all": "AllToAll"}
# Bandwidth and latency multipliers relative to one AllGather over the same axes.
BANDWIDTH_FACTOR = {"all_gather": 1.0, "reduce_scatter": 1.0, "all_reduce": 2.0, "all_to_all": 0.25}
LATENCY_FACTOR = {"all_gather": 1, "reduce_scatter": 1, "all_reduce": 2, "all_to_all": 1}
HOP_LATENCY_FACT = "ici_hop_latency_s"
MAX_AXIS = 1 << 20  # no real mesh axis is longer; refuse absurd input before doing arithmetic


class TopologyError(DrillError, ValueError):
    """A slice shape, coordinate or chip that the model can not use; the message is one line."""


# --- shapes -----------------------------------------------------------------------

def parse_shape(text: str) -> tuple[int, ...]:
    """``"16x20x28"`` -> (16, 20, 28); TopologyError for anything else (read once per text per process)."""
    return _parse_shape(str(text))


@functools.lru_cache(maxsize=1024)
def _parse_shape(text: str) -> tuple[int, ...]:
    parts = text.strip().lower().split("x")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise TopologyError(f"bad slice shape '{text}': expected dims joined by x, e.g. 4x4 or 4x4x8") from None
    if not dims or any(d < 1 or d > MAX_AXIS for d in dims):
        raise TopologyError(f"bad slice shape '{text}': every dim must be between 1 and {MAX_AXIS}")
    return dims


def parse_coord(text: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``"0,3"`` -> (0, 3), checked against ``shape``; TopologyError otherwise."""
    try:
        coord = tuple(int(p) for p in str(text).strip().split(","))
    except ValueError:
        raise TopologyError(f"bad chip coordinate '{text}': expected integers joined by commas, e.g. 0,3") from None
    if len(coord) != len(shape):
        raise TopologyError(f"chip coordinate '{text}' has {len(coord)} dims; the slice {fmt_shape(shape)} has {len(shape)}")
    for c, n in zip(coord, shape):
        if not 0 <= c < n:
            raise TopologyError(f"chip coordinate '{text}' is outside the slice {fmt_shape(shape)} (0-based)")
    return coord


def fmt_shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


# --- the chip's topology figures ---------------------------------------------------

def _require(chip: Chip, key: str, what: str) -> Figure:
    fig = chip.figure(key)
    if fig is None:
        note = chip.figures[key].note if key in chip.figures else "not in the catalogue"
        raise TopologyError(f"{chip.display}: no {what} in the catalogue ({note})")
    return fig


def pod_shape(chip: Chip) -> tuple[int, ...]:
    """The pod's torus shape (chips per axis) from the catalogue's pod size."""
    return parse_shape(_require(chip, "pod_topology", "pod size").value)


def host_shape(chip: Chip) -> tuple[int, ...]:
    return parse_shape(_require(chip, "host_topology", "host size").value)


def wraps(chip: Chip, axis: int, shape: tuple[int, ...] | None = None) -> bool | None:
    """Whether an ICI axis of ``axis`` chips (of the slice ``shape``, when known) has wraparound links.

    None when the catalogue states no rule for the chip. v5e/v6e (``axis_equals``): only an
    axis of 16. v4p/v5p (``whole_cubes_of``: the book's optical switches exist only for whole
    4x4x4 cubes): every axis of a slice made of whole cubes, no axis of a smaller slice ("a
    2x2x4 won't have any wraparounds"). Without ``shape`` an axis of 8 or 16 can only lie in a
    slice of whole cubes and an axis of 2 only inside one cube, but an axis of 4 could be
    either: TopologyError asks for the slice or --wrap.
    """
    fig = chip.figure("ici_wraparound")
    if fig is None:
        return None
    rule = fig.value
    if "axis_equals" in rule:
        return axis == int(rule["axis_equals"])
    if "whole_cubes_of" in rule:
        cube = int(rule["whole_cubes_of"])
        if shape is not None:
            return all(d % cube == 0 for d in shape)
        if axis % cube:
            return False
        if axis > cube:
            return True
        raise TopologyError(f"{chip.display}: an axis of {axis} wraps only when the slice is made of whole "
                            f"{cube}x{cube}x{cube} cubes (4x4x4 yes, 2x2x4 no); give the slice or --wrap yes|no")
    raise TopologyError(f"{chip.display}: unknown wraparound rule {rule!r} in chips.yaml")


def resolve_wrap(chip: Chip, axes: tuple[int, ...], wrap: str = "auto",
                 shape: tuple[int, ...] | None = None) -> tuple[bool, ...]:
    """Per-axis wraparound: ``auto`` from the chip's rule (for the slice ``shape`` when given), ``yes``/``no`` forced."""
    if wrap in ("yes", "no"):
        return tuple(wrap == "yes" for _ in axes)
    if wrap != "auto":
        raise TopologyError(f"--wrap must be auto, yes or no, got '{wrap}'")
    out = []
    for n in axes:
        w = wraps(chip, n, shape)
        if w is None:
            note = chip.figures["ici_wraparound"].note if "ici_wraparound" in chip.figures else ""
            raise TopologyError(f"{chip.display}: the catalogue has no wraparound rule ({note}); give --wrap yes or no")
        out.append(w)
    return tuple(out)


def ici_figures(chip: Chip) -> tuple[Figure, Figure]:
    """(one-way, bidirectional) ICI bytes/s per link; TopologyError for a chip without them."""
    return (_require(chip, "ici_bytes_per_s_one_way", "ICI one-way bandwidth"),
            _require(chip, "ici_bytes_per_s_bidi", "ICI bidirectional bandwidth"))


def slice_rule(chip: Chip) -> str:
    """The slices the model accepts for ``chip``, in words (the rule ``check_slice`` applies)."""
    if len(pod_shape(chip)) == 3:
        how = ("the book's rule" if chip.figure("ici_wraparound") is not None
               else "assumed: the book states v4p/v5p's cube rule, not this chip's")
        return (f"3-D slices inside one 4x4x4 cube (every side 1, 2 or 4) or made of whole 4x4x4 cubes "
                f"(every side a multiple of 4) ({how})")
    return "2-D slices whose sides are powers of two (1, 2, 4, 8, 16 ...), as TPU topologies are offered"


def check_slice(chip: Chip, shape: tuple[int, ...]) -> None:
    """A slice must exist: the pod's number of axes, fit inside the pod (axes in any order), and
    the shape the chip's slices come in (``slice_rule``)."""
    pod = pod_shape(chip)
    if len(shape) != len(pod):
        raise TopologyError(f"{chip.display} slices have {len(pod)} axes (pod {fmt_shape(pod)}); got {fmt_shape(shape)}")
    if any(s > p for s, p in zip(sorted(shape), sorted(pod))):
        raise TopologyError(f"slice {fmt_shape(shape)} does not fit in a {chip.display} pod ({fmt_shape(pod)})")
    if len(pod) == 3:
        ok = all(d in (1, 2, 4) for d in shape) or all(d % 4 == 0 for d in shape)
    else:
        ok = all(d & (d - 1) == 0 for d in shape)
    if not ok:
        raise TopologyError(f"no {chip.display} slice is {fmt_shape(shape)}: the model accepts {slice_rule(chip)}")


# --- pods and slices -----------------------------------------------------------------

@dataclass(frozen=True)
class PodTotals:
    """Totals of a pod or slice: counts, bf16 FLOP/s, HBM bytes, wraparound per axis."""

    chip: str
    shape: tuple[int, ...]
    chips: int
    chips_per_host: int
    hosts: int
    tensorcores_per_chip: int
    tensorcores: int
    peak_flops_per_s: float  # whole slice, in ``pod_totals``' dtype (bf16 unless asked)
    hbm_bytes: float  # whole slice
    ici_wraparound: tuple[bool | None, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"chip": self.chip, "slice": fmt_shape(self.shape), "chips": self.chips,
                "chips_per_host": self.chips_per_host, "hosts": self.hosts,
                "tensorcores_per_chip": self.tensorcores_per_chip, "tensorcores": self.tensorcores,
                "peak_flops_per_s": self.peak_flops_per_s, "hbm_bytes": self.hbm_bytes,
                "ici_wraparound": list(self.ici_wraparound)}


def pod_totals(chip: Chip, shape: tuple[int, ...] | None = None, dtype: str = "bf16") -> PodTotals:
    """Totals of the full pod (``shape`` None) or of a slice of it; FLOP/s at ``dtype``'s peak.

    hosts = ceil(chips / chips per host): a slice smaller than a host still needs one host.
    """
    shape = pod_shape(chip) if shape is None else tuple(shape)
    check_slice(chip, shape)
    chips = math.prod(shape)
    per_host = math.prod(host_shape(chip))
    cores = int(_require(chip, "tensorcores_per_chip", "TensorCores per chip").value)
    return PodTotals(chip.name, shape, chips, per_host, -(-chips // per_host), cores, chips * cores,
                     chips * chip.peak_flops_per_s(dtype), chips * chip.hbm_bytes,
                     tuple(wraps(chip, n, shape) for n in shape))


# --- collectives -----------------------------------------------------------------------

def collective_seconds(t_bandwidth_s: float, t_latency_s: float, overlap: bool = True) -> float:
    """A collective's time from its two terms: they overlap, so the larger (the roofline's floor rule,
    ``roofline.floor_seconds``); ``overlap=False`` is the sum-not-max slip (``roofline.upper_seconds``)."""
    if overlap:
        return roofline.floor_seconds(t_bandwidth_s, t_latency_s)
    return roofline.upper_seconds(t_bandwidth_s, t_latency_s)


@dataclass(frozen=True)
class CollectiveTime:
    """One collective's time on the model above. Seconds, bytes, bytes/s."""

    op: str
    nbytes: float  # V: bytes of the full (gathered) array
    axes: tuple[int, ...]
    wrap: tuple[bool, ...]
    w_one_way: float
    w_bidi: float
    hop_latency_s: float
    t_bandwidth_s: float
    hops: int
    t_latency_s: float

    @property
    def t_s(self) -> float:
        return collective_seconds(self.t_bandwidth_s, self.t_latency_s)

    @property
    def bound(self) -> str:
        return "bandwidth" if self.t_bandwidth_s >= self.t_latency_s else "latency"

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "bytes": self.nbytes, "axes": list(self.axes), "wrap": list(self.wrap),
                "t_s": self.t_s, "t_bandwidth_s": self.t_bandwidth_s, "t_latency_s": self.t_latency_s,
                "hops": self.hops, "bound": self.bound, "ici_bytes_per_s_one_way": self.w_one_way,
                "ici_bytes_per_s_bidi": self.w_bidi, "hop_latency_s": self.hop_latency_s}


def axis_bandwidth(n: int, wrap: bool, w_one_way: float, w_bidi: float, op: str = "all_gather") -> float:
    """Effective bytes/s of one axis of ``n`` chips, the divisor of ``BANDWIDTH_FACTOR[op] · V``.

    AllGather family: W_bidi (ring) or W_one_way·N/(N−1) (line). AllToAll on a line is
    computed for a line, not as a quarter of the line's AllGather: its middle link carries
    ⌊N/2⌋·⌈N/2⌉/N² · V each way (every chip left of the cut sends V/N² to every chip right of
    it) at W_one_way, so the divisor of V/4 is W_one_way·N²/(4·⌊N/2⌋·⌈N/2⌉).
    """
    if wrap:
        return w_bidi
    if op == "all_to_all":
        return w_one_way * n * n / (4 * (n // 2) * ((n + 1) // 2))
    return w_one_way * n / (n - 1)


def axis_gather_hops(n: int, wrap: bool) -> int:
    """Hops of an AllGather along one axis: ⌊N/2⌋ on a bidirectional ring, N−1 on a line."""
    return n // 2 if wrap else n - 1


def collective_time(op: str, nbytes: float, axes: tuple[int, ...], wrap: tuple[bool, ...],
                    w_one_way: float, w_bidi: float, hop_latency_s: float) -> CollectiveTime:
    """Time of ``op`` over ``axes`` (chips per axis) moving ``nbytes`` (full array, bytes)."""
    if op not in OPS:
        raise TopologyError(f"unknown collective '{op}'; known: {', '.join(OPS)}")
    axes, wrap = tuple(int(n) for n in axes), tuple(bool(w) for w in wrap)
    if not axes or len(axes) != len(wrap):
        raise TopologyError("give one wraparound flag per axis and at least one axis")
    if any(n < 2 or n > MAX_AXIS for n in axes):
        raise TopologyError(f"every axis needs between 2 and {MAX_AXIS} chips, got {list(axes)}")
    if not (nbytes > 0 and math.isfinite(nbytes)):
        raise TopologyError(f"bytes must be a positive number, got {nbytes}")
    bandwidth = sum(axis_bandwidth(n, w, w_one_way, w_bidi, op) for n, w in zip(axes, wrap))
    t_bw = BANDWIDTH_FACTOR[op] * nbytes / bandwidth
    hop_count = LATENCY_FACTOR[op] * sum(axis_gather_hops(n, w) for n, w in zip(axes, wrap))
    return CollectiveTime(op, float(nbytes), axes, wrap, w_one_way, w_bidi, hop_latency_s,
                          t_bw, hop_count, hop_count * hop_latency_s)


def chip_collective(cat: Catalogue, chip: Chip, op: str, nbytes: float, axes: tuple[int, ...],
                    wrap: str | tuple[bool, ...] = "auto", shape: tuple[int, ...] | None = None) -> CollectiveTime:
    """``collective_time`` with the chip's ICI figures and the catalogue's per-hop latency
    (wraparound from the slice ``shape`` when given: on v4p/v5p it depends on the whole slice)."""
    one, bidi = ici_figures(chip)
    flags = resolve_wrap(chip, tuple(axes), wrap, shape) if isinstance(wrap, str) else tuple(wrap)
    return collective_time(op, nbytes, tuple(axes), flags, float(one.value), float(bidi.value),
                           float(cat.fact(HOP_LATENCY_FACT).value))


def collective_lines(t: CollectiveTime) -> list[str]:
    """The worked arithmetic of one collective (numbers via ``generator.model.units``)."""

    label = OP_LABELS[t.op]
    lines = []
    terms = []
    for n, w in zip(t.axes, t.wrap):
        if w:
            terms.append(f"W_bidi {sci(t.w_bidi)}")
            lines.append(f"axis of {n}: wraparound -> bidirectional ring, bandwidth W_bidi = {sci(t.w_bidi)} B/s, "
                         f"hops ⌊{n}/2⌋ = {n // 2}")
        elif t.op == "all_to_all":
            lo, hi = n // 2, (n + 1) // 2
            line_bw = axis_bandwidth(n, False, t.w_one_way, t.w_bidi, t.op)
            terms.append(f"{sci(line_bw)}")
            lines.append(f"axis of {n}: no wraparound -> a line; AllToAll's busiest link is the middle one, carrying "
                         f"{lo}·{hi}/{n}² · V each way at W_one_way, so V/4 moves at an effective "
                         f"W_one_way·N²/(4·{lo}·{hi}) = {sci(line_bw)} B/s, hops N−1 = {n - 1}")
        else:
            terms.append(f"{sci(t.w_one_way)}·{n}/{n - 1}")
            lines.append(f"axis of {n}: no wraparound -> a line, (N−1)/N · V / W_one_way: effective bandwidth "
                         f"W_one_way·N/(N−1) = {sci(t.w_one_way)}·{n}/{n - 1} = {sci(t.w_one_way * n / (n - 1))} B/s, "
                         f"hops N−1 = {n - 1}")
    total_bw = t.nbytes * BANDWIDTH_FACTOR[t.op] / t.t_bandwidth_s
    a2a = ("   (AllToAll = 1/4 AllGather on a bidirectional ring)" if all(t.wrap)
           else "   (AllToAll on a line: V/4 over the middle link's effective bandwidth)" if not any(t.wrap)
           else "   (AllToAll: 1/4 AllGather on the rings, the middle link on the lines)")
    why = {"all_gather": "", "reduce_scatter": "   (ReduceScatter = AllGather)",
           "all_reduce": "   (AllReduce = ReduceScatter + AllGather: 2×)",
           "all_to_all": a2a}[t.op]
    lines.append(f"T_bandwidth = {BANDWIDTH_FACTOR[t.op]:g} × V / ({' + '.join(terms)}) = "
                 f"{BANDWIDTH_FACTOR[t.op]:g} × {sci(t.nbytes)} / {sci(total_bw)} = {seconds(t.t_bandwidth_s)}{why}")
    lines.append(f"T_latency = hops × per-hop latency = {t.hops} × {seconds(t.hop_latency_s)} = {seconds(t.t_latency_s)}"
                 + (" (AllReduce: twice the AllGather hops)" if t.op == "all_reduce" else ""))
    lines.append(f"T = max(T_bandwidth, T_latency) = {seconds(t.t_s)} -> {t.bound}-bound ({label})")
    return lines


# --- point to point --------------------------------------------------------------------

@dataclass(frozen=True)
class Transfer:
    """One ICI point-to-point transfer on a slice. Seconds, bytes, bytes/s."""

    shape: tuple[int, ...]
    src: tuple[int, ...]
    dst: tuple[int, ...]
    wrap: tuple[bool, ...]
    nbytes: float
    hops_per_axis: tuple[int, ...]
    ports: int  # outgoing links at the source that lie on a shortest path
    w_one_way: float
    hop_latency_s: float

    @property
    def hops(self) -> int:
        return sum(self.hops_per_axis)

    @property
    def first_byte_s(self) -> float:
        return self.hops * self.hop_latency_s

    @property
    def bytes_per_s(self) -> float:
        return self.ports * self.w_one_way

    @property
    def t_bandwidth_s(self) -> float:
        return links.transfer_seconds(self.nbytes, self.bytes_per_s) if self.ports else 0.0

    @property
    def t_s(self) -> float:
        """The one transfer formula (``generator.model.links.transfer_seconds``) over the shortest-path ports."""
        if not self.ports:  # no link to cross (the same chip): the latency term alone
            return self.first_byte_s
        return links.transfer_seconds(self.nbytes, self.bytes_per_s, self.hops, self.hop_latency_s)

    def to_dict(self) -> dict[str, Any]:
        return {"slice": fmt_shape(self.shape), "from": list(self.src), "to": list(self.dst),
                "wrap": list(self.wrap), "bytes": self.nbytes, "hops": self.hops,
                "hops_per_axis": list(self.hops_per_axis), "ports": self.ports,
                "bytes_per_s": self.bytes_per_s, "first_byte_s": self.first_byte_s,
                "t_bandwidth_s": self.t_bandwidth_s, "t_s": self.t_s,
                "ici_bytes_per_s_one_way": self.w_one_way, "hop_latency_s": self.hop_latency_s}


def shortest_ports(n: int, src: int, dst: int, wrap: bool) -> int:
    """Outgoing links along one axis that start a shortest path: 0 (same place), 1, or 2 (halfway round a ring)."""
    d = abs(src - dst)
    if d == 0:
        return 0
    return 2 if wrap and n > 2 and 2 * d == n else 1


def transfer(shape: tuple[int, ...], src: tuple[int, ...], dst: tuple[int, ...], wrap: tuple[bool, ...],
             nbytes: float, w_one_way: float, hop_latency_s: float) -> Transfer:
    """Point to point on a slice: hops (shortest way, per axis), ports usable at the source, times.

    Model: the bytes split evenly over the usable ports, each at the one-way per-link
    bandwidth; the first byte arrives after hops × per-hop latency; total = first byte +
    bytes / (ports × W_one_way) (an idealisation: routing and contention are ignored).
    """
    if not (nbytes > 0 and math.isfinite(nbytes)):
        raise TopologyError(f"bytes must be a positive number, got {nbytes}")
    per_axis = tuple(axis_hops(n, a, b, w) for n, a, b, w in zip(shape, src, dst, wrap))
    ports = sum(shortest_ports(n, a, b, w) for n, a, b, w in zip(shape, src, dst, wrap))
    return Transfer(tuple(shape), tuple(src), tuple(dst), tuple(wrap), float(nbytes), per_axis, ports,
                    w_one_way, hop_latency_s)


def chip_transfer(cat: Catalogue, chip: Chip, shape: tuple[int, ...], src: tuple[int, ...],
                  dst: tuple[int, ...], nbytes: float, wrap: str = "auto") -> Transfer:
    """``transfer`` with the chip's one-way ICI figure, wraparound rule and the per-hop latency."""
    check_slice(chip, shape)
    if src == dst:
        raise TopologyError("--from and --to name the same chip: nothing to send")
    one, _ = ici_figures(chip)
    return transfer(shape, src, dst, resolve_wrap(chip, shape, wrap, shape), nbytes, float(one.value),
                    float(cat.fact(HOP_LATENCY_FACT).value))


# --- off-chip rooflines ---------------------------------------------------------------------

# ``--over`` link -> the catalogue figure used as the "memory" side of the roofline.
# ICI: the one-way per-link figure, the book's network roofline (Rooflines, "Network communication
# rooflines": one array copied one way over one link, 4.5e10 B/s on a v5e, so the ridge is 4,377);
# ``ICI_BIDI_FIGURE`` where both directions carry bytes.
LINK_FIGURES = {"hbm": "hbm_bytes_per_s", "pcie": "pcie_bytes_per_s", "dcn": "dcn_bytes_per_s",
                "ici": "ici_bytes_per_s_one_way"}
ICI_BIDI_FIGURE = "ici_bytes_per_s_bidi"
LINK_LABELS = {"hbm": "HBM", "pcie": "PCIe", "dcn": "DCN", "ici": "ICI"}


def link_ceilings(chip: Chip, over: str, dtype: str = "bf16", bytes_per_s: float | None = None,
                  bidirectional: bool = False) -> roofline.Ceilings:
    """Roofline ceilings with ``over``'s bandwidth (bytes/s) as the memory side.

    The book's "PCIe operational intensity" question: an op whose bytes cross a link
    is bound by that link; its ridge is peak FLOP/s / link bytes/s. ``bytes_per_s``
    overrides the catalogue figure (for a link the catalogue lacks, e.g. NVLink). ICI is
    one way per link unless ``bidirectional`` (both directions' bytes counted).
    """

    if over not in LINK_FIGURES:
        raise TopologyError(f"--over must be one of {', '.join(LINK_FIGURES)}, got '{over}'")
    if bidirectional and over != "ici":
        raise TopologyError("--bidirectional applies to --over ici only (the other links have one figure)")
    base = Ceilings.from_chip(chip, dtype)
    if bytes_per_s is not None:
        if not (bytes_per_s > 0 and math.isfinite(bytes_per_s)):
            raise TopologyError(f"--link-bytes-per-s must be a positive number, got {bytes_per_s}")
        return Ceilings(f"{chip.name} over {LINK_LABELS[over]}", base.peak_flops_per_s, float(bytes_per_s),
                        dtype, f"{base.source}; {LINK_LABELS[over]} bandwidth {bytes_per_s:g} B/s given by you")
    if over == "hbm":
        return base
    key = ICI_BIDI_FIGURE if bidirectional else LINK_FIGURES[over]
    fig = _require(chip, key, f"{LINK_LABELS[over]}{' bidirectional' if bidirectional else ''} bandwidth")
    source = "; ".join(sorted({chip.peak_flops[dtype].source.cite(), fig.source.cite()}))
    return Ceilings(f"{chip.name} over {LINK_LABELS[over]}", base.peak_flops_per_s, float(fig.value), dtype,
                    source + (f" ({fig.note})" if fig.note else ""))
