"""Op cost models: shapes and dtypes in, FLOPs and HBM bytes out.

Every formula the tool uses for an op lives here, once. Bytes are the fewest HBM bytes the op
must move (the scaling book's convention).
Details: docs/internals.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from generator.model import formulas
from generator.errors import DrillError
from generator.model.units import DTYPE_BYTES, normalize_dtype

INDEX_DTYPE = "int32"
FLOPS_PER_MAC = 2  # a multiply-accumulate is two FLOPs, a multiply and an add (the scaling book's 2·B·D·F)
# The dtype a matmul accumulates in, where it differs from its inputs' (the MXU's int8 products sum in int32).
ACCUMULATE_DTYPE = {"int8": "int32"}


class CostError(DrillError, ValueError):
    """Bad op, shape or dtype: the message names what is wrong and what is accepted."""


@dataclass(frozen=True)
class OpCost:
    """FLOPs and bytes of one op at one shape.

    ``dtype`` is the compute dtype: the one whose peak FLOP/s applies.
    ``flops_formula`` / ``bytes_formula`` are symbolic; ``flops_working`` /
    ``bytes_working`` the same with the numbers substituted.
    """

    op: str
    shape: tuple[int, ...]
    dtype: str
    flops: int
    bytes: int
    flops_formula: str
    bytes_formula: str
    flops_working: str
    bytes_working: str
    convention: str
    operand_dtypes: dict[str, str] = field(default_factory=dict)
    bytes_written: int = 0  # the part of ``bytes`` that is the output written back to HBM

    @property
    def intensity_flops_per_byte(self) -> float:
        return float(formulas.value("intensity", flops=self.flops, bytes=self.bytes))

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op, "shape": list(self.shape), "dtype": self.dtype,
            "flops": self.flops, "bytes": self.bytes,
            "flops_formula": self.flops_formula, "bytes_formula": self.bytes_formula,
            "convention": self.convention, "operand_dtypes": dict(self.operand_dtypes),
        }


def _b(dtype: str) -> int:
    return DTYPE_BYTES[dtype]


def _wider(a: str, b: str) -> str:
    return a if _b(a) >= _b(b) else b


def matmul(B: int, D: int, F: int, dtype: str = "bf16", *,
           rhs_dtype: str | None = None, out_dtype: str | None = None) -> OpCost:
    """[B,D] @ [D,F] -> [B,F]: 2BDF FLOPs; (BD x lhs + DF x rhs) bytes read, BF x out written.

    ``dtype`` is the activations' (lhs) dtype, ``rhs_dtype`` the weights' (default
    the same). The FLOPs run in the wider of the two (int8 weights with bf16
    activations are bf16 FLOPs, as in the scaling book); the output defaults to that dtype.
    """
    lhs = normalize_dtype(dtype)
    rhs = normalize_dtype(rhs_dtype or lhs)
    compute = _wider(lhs, rhs)
    out = normalize_dtype(out_dtype or compute)
    flops = FLOPS_PER_MAC * B * D * F
    nbytes = B * D * _b(lhs) + D * F * _b(rhs) + B * F * _b(out)
    return OpCost(
        "matmul", (B, D, F), compute, flops, nbytes,
        "2·B·D·F", "B·D·lhs + D·F·rhs + B·F·out (bytes per element)",
        f"2 × {B} × {D} × {F}",
        f"{B}×{D}×{_b(lhs)} + {D}×{F}×{_b(rhs)} + {B}×{F}×{_b(out)}",
        "scaling book (Rooflines): inputs read once, output written once",
        {"lhs": lhs, "rhs": rhs, "out": out}, B * F * _b(out),
    )


def add(M: int, N: int, dtype: str = "bf16") -> OpCost:
    """Elementwise x + y over [M,N]: MN FLOPs; 3MN elements moved (2 read, 1 written)."""
    d = normalize_dtype(dtype)
    return OpCost("add", (M, N), d, M * N, 3 * M * N * _b(d),
                  "M·N", "3·M·N·bytes", f"{M} × {N}", f"3 × {M} × {N} × {_b(d)}",
                  "course seed LAB·0.1 (= scaling book: two inputs read, one output written)",
                  {"x": d, "y": d, "out": d}, M * N * _b(d))


def softmax(M: int, N: int, dtype: str = "bf16") -> OpCost:
    """Softmax over the rows of [M,N]: 5MN FLOPs; 2MN elements moved (read once, written once)."""
    d = normalize_dtype(dtype)
    return OpCost("softmax", (M, N), d, 5 * M * N, 2 * M * N * _b(d),
                  "5·M·N", "2·M·N·bytes", f"5 × {M} × {N}", f"2 × {M} × {N} × {_b(d)}",
                  "course seed LAB·0.1 (5 FLOPs per element; one read, one write)",
                  {"x": d, "out": d}, M * N * _b(d))


def reduce_sum(M: int, N: int, dtype: str = "bf16") -> OpCost:
    """Sum over the last axis of [M,N]: MN FLOPs; MN + M elements moved."""
    d = normalize_dtype(dtype)
    return OpCost("reduce_sum", (M, N), d, M * N, (M * N + M) * _b(d),
                  "M·N", "(M·N + M)·bytes", f"{M} × {N}", f"({M} × {N} + {M}) × {_b(d)}",
                  "course seed LAB·0.1 (input read once, [M] output written)",
                  {"x": d, "out": d}, M * _b(d))


def dot(N: int, dtype: str = "bf16") -> OpCost:
    """Dot product of two [N] vectors: 2N FLOPs; 2N elements read, one written.

    The scaling book's example: intensity tends to 1/2 for bf16.
    """
    d = normalize_dtype(dtype)
    return OpCost("dot", (N,), d, FLOPS_PER_MAC * N, (2 * N + 1) * _b(d),
                  "2·N", "(2·N + 1)·bytes", f"2 × {N}", f"(2 × {N} + 1) × {_b(d)}",
                  "scaling book (Rooflines): dot product example",
                  {"x": d, "y": d, "out": d}, _b(d))


def embedding(T: int, V: int, D: int, dtype: str = "bf16") -> OpCost:
    """Gather T rows of width D from a [V,D] table: ~0 FLOPs.

    Bytes: the T·D elements read from the table, T int32 indices read, T·D
    elements written. V sets only which rows exist, not how many are moved.
    """
    d = normalize_dtype(dtype)
    idx = DTYPE_BYTES[INDEX_DTYPE]
    return OpCost("embedding", (T, V, D), d, 0, 2 * T * D * _b(d) + T * idx,
                  "0·T·D (a gather: no multiply-adds)", "2·T·D·bytes + T·index_bytes",
                  f"0 × {T} × {D}", f"2 × {T} × {D} × {_b(d)} + {T} × {idx}",
                  "gather: rows read + indices read + output written",
                  {"table": d, "indices": INDEX_DTYPE, "out": d}, T * D * _b(d))


def vmem_footprint_bytes(bm: int, bk: int, bn: int, dtype: str = "bf16", buffers: int = 2) -> int:
    """VMEM bytes of one step of a tiled matmul: ``buffers`` copies of each input block
    ([bm,bk] and [bk,bn]; 2 = double-buffered) plus one [bm,bn] output block."""
    b = _b(normalize_dtype(dtype))
    return buffers * (bm * bk + bk * bn) * b + bm * bn * b


@dataclass(frozen=True)
class OpSpec:
    name: str
    dims: tuple[str, ...]
    fn: Callable[..., OpCost]
    summary: str


OPS: dict[str, OpSpec] = {
    "matmul": OpSpec("matmul", ("B", "D", "F"), matmul, "[B,D] @ [D,F]"),
    "add": OpSpec("add", ("M", "N"), add, "elementwise x + y over [M,N]"),
    "softmax": OpSpec("softmax", ("M", "N"), softmax, "softmax over the rows of [M,N]"),
    "reduce_sum": OpSpec("reduce_sum", ("M", "N"), reduce_sum, "sum over the last axis of [M,N]"),
    "dot": OpSpec("dot", ("N",), dot, "dot product of two [N] vectors"),
    "embedding": OpSpec("embedding", ("T", "V", "D"), embedding, "gather T rows of a [V,D] table"),
}

OP_ALIASES = {"reduce-sum": "reduce_sum", "sum": "reduce_sum", "reducesum": "reduce_sum",
              "gather": "embedding", "embed": "embedding", "mm": "matmul", "elementwise": "add"}


def normalize_op(name: str) -> str:
    key = name.strip().lower()
    key = OP_ALIASES.get(key, key)
    if key not in OPS:
        raise CostError(f"unknown op '{name}'; accepted: {', '.join(OPS)}")
    return key


def parse_shape(text: str) -> tuple[int, ...]:
    """"4096,4096,4096" -> (4096, 4096, 4096); CostError on anything else."""
    parts = [p.strip() for p in text.replace("x", ",").split(",")]
    if not text.strip() or any(not p for p in parts):
        raise CostError(f"malformed shape '{text}': expected comma-separated positive integers, e.g. 4096,4096,4096")
    dims = []
    for p in parts:
        if not p.lstrip("+-").isdigit():
            raise CostError(f"malformed shape '{text}': '{p}' is not an integer")
        try:
            value = int(p)
        except ValueError:  # more digits than Python converts (4,300): no size is that long
            raise CostError(f"shape: a dimension of {len(p)} digits is out of range") from None
        if value <= 0:
            raise CostError(f"shape '{text}': every dimension must be positive, got {value}")
        dims.append(value)
    return tuple(dims)


def cost(op: str, shape: tuple[int, ...] | list[int], dtype: str = "bf16", **kwargs: str | None) -> OpCost:
    """Dispatch to the op's cost function after checking the shape's rank and signs."""
    spec = OPS[normalize_op(op)]
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(spec.dims):
        raise CostError(
            f"op '{spec.name}' takes {len(spec.dims)} dims ({','.join(spec.dims)}: {spec.summary}), got {len(shape)}")
    if any(s <= 0 for s in shape):
        raise CostError(f"every dimension must be positive, got {list(shape)}")
    try:
        normalize_dtype(dtype)
    except ValueError as exc:
        raise CostError(str(exc)) from None
    return spec.fn(*shape, dtype, **kwargs)


def array_bytes(shape: tuple[int, ...] | list[int], dtype: str = "bf16") -> int:
    """Bytes of one array: its elements (the product of ``shape``) times the dtype's bytes per element."""
    elements = 1
    for d in shape:
        elements *= int(d)
    return elements * _b(normalize_dtype(dtype))


def in_place_pass_bytes(shape: tuple[int, ...] | list[int], dtype: str = "bf16") -> int:
    """Bytes one elementwise pass over an array moves when it writes the result in place (``-x`` with
    its input donated, the lab's copy probes): the array read once and written once."""
    return 2 * array_bytes(shape, dtype)


# One exp per element for softmax (exp(x - row max)); XLA's cost analysis counts the same (a 256x256 f32
# softmax: 65,536 transcendentals in the lab's records). The other ops compute none.
TRANSCENDENTALS_PER_ELEMENT: dict[str, int] = {"softmax": 1}


def transcendentals(c: OpCost) -> int:
    """The exponentials (XLA's "transcendentals") the op computes: what bounds a softmax on a device
    whose exp is slow next to its adds (a CPU), where the FLOPs and bytes alone do not."""
    per_element = TRANSCENDENTALS_PER_ELEMENT.get(c.op, 0)
    elements = 1
    for d in c.shape:
        elements *= int(d)
    return per_element * elements


# --- tweaked costs: each classic wrong method is the model called on one of these -------------------

def as_elements(c: OpCost) -> OpCost:
    """The same op with every operand counted at 1 byte per element (``bytes`` is then the element
    count, the elements-not-bytes slip); FLOPs are unchanged. Embedding's int32 indices stay 4 bytes."""
    return cost(c.op, c.shape, "int8")


def inputs_only(c: OpCost) -> OpCost:
    """The same op with its output write left out of ``bytes`` (the forgot-output-write slip)."""
    return replace(c, bytes=c.bytes - c.bytes_written, bytes_written=0)


def in_dtype_bytes(c: OpCost, dtype: str) -> OpCost:
    """The same op with every operand counted at ``dtype``'s bytes per element (bf16 counted as f32's 4,
    the wrong-dtype-size slip); FLOPs and the compute dtype (whose peak applies) are unchanged."""
    other = cost(c.op, c.shape, dtype)
    return replace(c, bytes=other.bytes, bytes_written=other.bytes_written)


# The inputs of each op that has two, with the dims of each (indices into the op's shape).
TWO_INPUTS: dict[str, dict[str, tuple[int, ...]]] = {"matmul": {"lhs": (0, 1), "rhs": (1, 2)}, "add": {"x": (0, 1), "y": (0, 1)}, "dot": {"x": (0,), "y": (0,)}}


def one_input_only(c: OpCost, kept: str) -> OpCost:
    """The same op with only input ``kept`` of its two read (the other's bytes left out: the one-operand
    slip); the output write stays. ``TWO_INPUTS`` names the ops and inputs this applies to."""
    inputs = TWO_INPUTS[c.op]
    dropped = sum(array_bytes([c.shape[i] for i in dims], c.operand_dtypes[name])
                  for name, dims in inputs.items() if name != kept)
    return replace(c, bytes=c.bytes - dropped)


def in_macs(c: OpCost) -> OpCost:
    """The same op with FLOPs counted as multiply-adds (FLOPs / ``FLOPS_PER_MAC``; macs-not-flops).
    ``flops`` may then be a float (an op with an odd FLOP count)."""
    return replace(c, flops=c.flops / FLOPS_PER_MAC)  # type: ignore[arg-type]  # a wrong method: FLOPs / 2 may be fractional
