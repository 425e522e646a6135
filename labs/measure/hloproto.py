"""What a profiler trace says about the XLA modules it ran: their names, program ids and entry
parameter shapes, read from the trace's ``/host:metadata`` plane (pure Python, no jax).

``compiled_modules`` reads them; malformed bytes raise ``XPlaneError`` (one line).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from labs.measure import xplane

METADATA_PLANE = xplane.METADATA_PLANE
HLO_PROTO_STATS = ("Hlo Proto", "hlo_proto")  # tsl StatType kHloProto's name (and its older spelling)
PROGRAM_ID_STAT = "program_id"
# The parse work one HloProto may cost (top-level fields of the module, its program shape):
# a lab module's proto has a few dozen; the module's computations are skipped whole.
MAX_FIELDS = 10_000

# xla_data.proto PrimitiveType numbers -> the lab's dtype names (generator.model.units); others by number.
_ELEMENT_TYPES = {1: "pred", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16",
                  8: "uint32", 9: "uint64", 10: "f16", 11: "f32", 12: "f64", 16: "bf16"}
_PROGRAM_ID_IN_NAME = re.compile(r"^(?P<name>.*)\((?P<id>\d+)\)$")

Shape = tuple[str, tuple[int, ...]]  # (dtype, dimensions)


@dataclass(frozen=True)
class CompiledModule:
    """One compiled XLA module a trace names: its name, program id and entry parameters."""

    name: str
    program_id: int | None
    parameters: tuple[Shape, ...] | None  # None: the trace holds no readable program shape for it


def shape_text(shapes: tuple[Shape, ...] | list[Shape] | None) -> str:
    """``bf16[4096,4096], bf16[4096,4096]`` (how XLA prints shapes)."""
    if shapes is None:
        return "unknown shapes"
    return ", ".join(f"{d}[{','.join(map(str, dims))}]" for d, dims in shapes) or "no parameters"


def split_program_id(raw: str) -> tuple[str, int | None]:
    """"jit_lab_add(42)" -> ("jit_lab_add", 42); a name without one -> (name, None)."""
    m = _PROGRAM_ID_IN_NAME.match(raw)
    return (m["name"], int(m["id"])) if m else (raw, None)


def _packed_ints(buf: bytes, span: tuple[int, int], budget: xplane._Budget) -> list[int]:
    pos, end, out = span[0], span[1], []
    while pos < end:
        budget.spend()
        value, pos = xplane._varint(buf, pos, end)
        out.append(xplane._signed64(value))
    return out


def _shape(buf: bytes, span: tuple[int, int], budget: xplane._Budget) -> Shape:
    element, dims = 0, []
    for number, wire, value in xplane._fields(buf, span[0], span[1], budget):
        if number == 2 and wire == xplane._VARINT:
            element = value
        elif number == 3 and wire == xplane._LEN:  # repeated int64, packed (proto3's default)
            dims += _packed_ints(buf, value, budget)
        elif number == 3 and wire == xplane._VARINT:
            dims.append(xplane._signed64(value))
    return _ELEMENT_TYPES.get(element, f"type{element}"), tuple(dims)


def entry_parameters(hlo_proto: bytes) -> tuple[Shape, ...] | None:
    """The entry parameters (dtype, dims) of a serialized ``HloProto``; None when it holds no
    program shape. XPlaneError when the bytes are malformed or too many fields."""
    buf = bytes(hlo_proto)
    budget = xplane._Budget(MAX_FIELDS)
    for number, wire, module in xplane._fields(buf, 0, len(buf), budget):
        if number != 1 or wire != xplane._LEN:  # HloProto.hlo_module
            continue
        for n2, w2, program in xplane._fields(buf, module[0], module[1], budget):
            if n2 != 4 or w2 != xplane._LEN:  # HloModuleProto.host_program_shape
                continue
            return tuple(_shape(buf, p, budget) for n3, w3, p in xplane._fields(buf, program[0], program[1], budget)
                         if n3 == 1 and w3 == xplane._LEN)  # ProgramShapeProto.parameters
    return None


def compiled_modules(space: Any) -> list[CompiledModule]:
    """Every compiled module the trace's metadata plane names (empty when it has none). ``space``: an
    ``xplane.XSpace`` or jax's ``ProfileData``, whichever read the trace (both have planes of event
    metadata with stats)."""
    found = []
    for plane in space.planes:
        if plane.name != METADATA_PLANE:
            continue
        for meta in plane.event_metadata:
            stats = dict(s for s in meta.stats if s[0] is not None)
            name, program_id = split_program_id(meta.name)
            stated_id = stats.get(PROGRAM_ID_STAT)
            if isinstance(stated_id, int):
                program_id = stated_id
            proto = next((stats[k] for k in HLO_PROTO_STATS if k in stats), None)
            parameters = entry_parameters(proto) if isinstance(proto, bytes) else None
            found.append(CompiledModule(name, program_id, parameters))
    return found
