"""A small reader of a profiler trace's ``.xplane.pb`` (an XSpace protobuf), for jax without ProfileData.

``parse`` and ``read_file`` give an ``XSpace`` whose planes, lines and events mirror ``ProfileData``'s
view, so ``labs.measure.profile`` reads either one the same way. Malformed input raises ``XPlaneError``.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from generator.errors import DrillError

if TYPE_CHECKING:
    # The serialized XSpace: parse() reads it through a memoryview (slices without copies).
    Bytes = Union[bytes, memoryview[int]]
# A stat's value: a double, an unsigned or signed integer, text, raw bytes, or None when absent.
StatValue = Union[float, int, str, bytes, None]

# Wire types (protobuf encoding): 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit.
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


METADATA_PLANE = "/host:metadata"  # the plane where the profiler writes each compiled module


class XPlaneError(DrillError, ValueError):
    """The bytes are not a well-formed XSpace."""


def _varint(buf: Bytes, pos: int, end: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if pos >= end:
            raise XPlaneError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise XPlaneError("varint longer than 10 bytes")


def _signed64(value: int) -> int:
    """int64 fields are sent as two's complement in 64 bits."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


class _Budget:
    """The parse work left: every field read costs one (XPlaneError past zero)."""

    def __init__(self, items: int | None):
        self.left = items if items is not None else float("inf")

    def spend(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise XPlaneError("more protobuf fields than a lab trace holds (refused: bounded parse work)")


def _fields(buf: Bytes, start: int, end: int, budget: "_Budget | None" = None) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value): an int for varints, (start, end) for the rest (``Any``: the
    wire type, checked by every caller before it reads the value, says which).
    Each field read costs ``budget`` one (the parse's work is bounded by it)."""
    pos = start
    while pos < end:
        if budget is not None:  # inline: this loop is the parse's hot path
            budget.left -= 1
            if budget.left < 0:
                budget.spend(0)
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise XPlaneError("field number 0")
        value: int | tuple[int, int]
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
        elif wire == _LEN:
            size, pos = _varint(buf, pos, end)
            if size > end - pos:
                raise XPlaneError("length-delimited field runs past its message")
            value, pos = (pos, pos + size), pos + size
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if size > end - pos:
                raise XPlaneError("fixed-width field runs past its message")
            value, pos = (pos, pos + size), pos + size
        else:  # 3 and 4 are the deprecated groups: XPlane never uses them
            raise XPlaneError(f"unsupported wire type {wire}")
        yield number, wire, value


def _text(buf: Bytes, span: tuple[int, int]) -> str:
    return bytes(buf[span[0]:span[1]]).decode("utf-8", errors="replace")


@dataclass
class Event:
    name: str
    start_ns: float
    duration_ns: float
    stats: list[tuple[str | None, StatValue]] = field(default_factory=list)

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass
class Line:
    name: str
    events: list[Event] = field(default_factory=list)


@dataclass
class EventMetadata:
    """An event metadata entry with its own stats (read only on ``/host:metadata``, where each
    compiled module is one: its name and its ``hlo_proto``)."""

    name: str
    stats: list[tuple[str | None, StatValue]] = field(default_factory=list)


@dataclass
class Plane:
    name: str
    lines: list[Line] = field(default_factory=list)
    stats: list[tuple[str | None, StatValue]] = field(default_factory=list)  # the plane's own: (name, value)
    event_metadata: list[EventMetadata] = field(default_factory=list)


@dataclass
class XSpace:
    planes: list[Plane] = field(default_factory=list)


def _int_field(wire: int, value: int, buf: Bytes) -> int:
    if wire != _VARINT:
        raise XPlaneError("expected an integer field")
    return _signed64(value)


def _stat(buf: Bytes, span: tuple[int, int], stat_names: dict[int, str],
          budget: "_Budget") -> tuple[str | None, StatValue]:
    metadata_id = 0
    value: StatValue = None
    for number, wire, v in _fields(buf, *span, budget):
        if number == 1:
            metadata_id = _int_field(wire, v, buf)
        elif number == 2 and wire == _I64:
            value = struct.unpack_from("<d", buf, v[0])[0]
        elif number == 3 and wire == _VARINT:
            value = v & ((1 << 64) - 1)
        elif number == 4 and wire == _VARINT:
            value = _signed64(v)
        elif number == 5 and wire == _LEN:
            value = _text(buf, v)
        elif number == 6 and wire == _LEN:
            value = bytes(buf[v[0]:v[1]])
        elif number == 7 and wire == _VARINT:
            value = stat_names.get(v, "")
    if metadata_id not in stat_names:
        return (None, None)
    return (stat_names[metadata_id], value)


def _event(buf: Bytes, span: tuple[int, int], timestamp_ns: int, event_names: dict[int, str],
           stat_names: dict[int, str], budget: _Budget) -> Event:
    metadata_id, offset_ps, duration_ps = 0, 0, 0
    stats: list[tuple[str | None, StatValue]] = []
    for number, wire, v in _fields(buf, *span, budget):
        if number == 1:
            metadata_id = _int_field(wire, v, buf)
        elif number == 2:
            offset_ps = _int_field(wire, v, buf)
        elif number == 3:
            duration_ps = _int_field(wire, v, buf)
        elif number == 4 and wire == _LEN:
            stats.append(_stat(buf, v, stat_names, budget))
    return Event(event_names.get(metadata_id, ""), float(_div1000(offset_ps) + timestamp_ns),
                 float(_div1000(duration_ps)), stats)


def _div1000(ps: int) -> int:
    """C++ integer division (toward zero), as ProfileData converts picoseconds to nanoseconds."""
    return ps // 1000 if ps >= 0 else -((-ps) // 1000)


def _map_entry(buf: Bytes, span: tuple[int, int], budget: "_Budget") -> tuple[int, tuple[int, int] | None]:
    key = 0
    value: tuple[int, int] | None = None
    for number, wire, v in _fields(buf, *span, budget):
        if number == 1:
            key = _int_field(wire, v, buf)
        elif number == 2 and wire == _LEN:
            value = v
    return key, value


def _metadata_name(buf: Bytes, span: tuple[int, int] | None, budget: "_Budget") -> str:
    """The ``name`` (field 2) of an XEventMetadata or XStatMetadata."""
    if span is None:
        return ""
    for number, wire, v in _fields(buf, *span, budget):
        if number == 2 and wire == _LEN:
            return _text(buf, v)
    return ""


def _metadata_with_stats(buf: Bytes, span: tuple[int, int] | None, stat_names: dict[int, str],
                         budget: "_Budget") -> EventMetadata:
    """An XEventMetadata's ``name`` (field 2) and ``stats`` (field 5)."""
    name = ""
    stats: list[tuple[str | None, StatValue]] = []
    for number, wire, v in _fields(buf, *span, budget) if span is not None else ():
        if number == 2 and wire == _LEN:
            name = _text(buf, v)
        elif number == 5 and wire == _LEN:
            stats.append(_stat(buf, v, stat_names, budget))
    return EventMetadata(name, stats)


def _line(buf: Bytes, span: tuple[int, int], event_names: dict[int, str], stat_names: dict[int, str],
          budget: _Budget) -> Line:
    name, timestamp_ns = "", 0
    event_spans: list[tuple[int, int]] = []
    for number, wire, v in _fields(buf, *span, budget):
        if number == 2 and wire == _LEN:
            name = _text(buf, v)
        elif number == 3:
            timestamp_ns = _int_field(wire, v, buf)
        elif number == 4 and wire == _LEN:
            event_spans.append(v)
    return Line(name, [_event(buf, s, timestamp_ns, event_names, stat_names, budget) for s in event_spans])


def _plane(buf: Bytes, span: tuple[int, int], budget: _Budget) -> Plane:
    # Lines (field 3) and the plane's stats (6) may come before the metadata maps (4, 5): collect
    # first, decode after.
    name = ""
    line_spans: list[tuple[int, int]] = []
    stat_spans: list[tuple[int, int]] = []
    metadata_spans: list[tuple[int, int] | None] = []
    event_names: dict[int, str] = {}
    stat_names: dict[int, str] = {}
    for number, wire, v in _fields(buf, *span, budget):
        if number == 2 and wire == _LEN:
            name = _text(buf, v)
        elif number == 3 and wire == _LEN:
            line_spans.append(v)
        elif number == 4 and wire == _LEN:
            key, value = _map_entry(buf, v, budget)
            event_names[key] = _metadata_name(buf, value, budget)
            metadata_spans.append(value)
        elif number == 5 and wire == _LEN:
            key, value = _map_entry(buf, v, budget)
            stat_names[key] = _metadata_name(buf, value, budget)
        elif number == 6 and wire == _LEN:
            stat_spans.append(v)
    # Event metadata carry stats of their own only on the metadata plane (the compiled modules);
    # elsewhere they are names, and reading their stats would cost parse work for nothing.
    metadata = ([_metadata_with_stats(buf, m, stat_names, budget) for m in metadata_spans]
                if name == METADATA_PLANE else [])
    return Plane(name, [_line(buf, s, event_names, stat_names, budget) for s in line_spans],
                 [_stat(buf, s, stat_names, budget) for s in stat_spans], metadata)


def parse(data: bytes, max_events: int | None = None) -> XSpace:
    """An XSpace from its serialized bytes (XPlaneError when malformed). ``max_events`` bounds the
    work: the protobuf fields read, events, stats and metadata included (None: unbounded)."""
    buf = memoryview(bytes(data))
    budget = _Budget(max_events)
    planes: list[Plane] = []
    for number, wire, v in _fields(buf, 0, len(buf), budget):
        if number == 1 and wire == _LEN:
            planes.append(_plane(buf, v, budget))
    return XSpace(planes)


def read_file(path: Path, max_events: int | None = None) -> XSpace:
    """An XSpace from a ``.xplane.pb`` file."""
    with open(path, "rb") as fh:
        return parse(fh.read(), max_events)
