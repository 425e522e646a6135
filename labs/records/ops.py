"""The lab's ops, as a record names them: what each one is, what it reads, how the model counts it.

The seed's five ops at size N, plus an optional embedding lookup. Each op names the
``generator.model.costs`` op and shape that count its FLOPs and bytes; the lab never counts them
itself. ``inputs`` lists the arrays one call reads, so the runner can size its rotating buffers and
check device memory before anything runs. Pure Python: building an op in JAX is ``labs.measure.ops``'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from generator.model import costs
from generator.errors import DrillError
from generator.model.units import DTYPE_BYTES, normalize_dtype

# The seed's skinny matmul is [8, N] @ [N, N]; 8 rows is the lab's choice, not a chip figure.
SKINNY_ROWS = 8

# Dtypes the lab can time (fp8/int8 need scaled kernels that are not a stage-0 topic).
LAB_DTYPES = ("bf16", "f32")


class OpError(DrillError, ValueError):
    """An op name, size or dtype the lab cannot run: the message says what is accepted."""


@dataclass(frozen=True)
class LabOp:
    """One timed op. ``label`` is the seed's row name; ``cost_op`` the generator.model.costs op."""

    name: str
    label: str
    cost_op: str
    description: str

    def cost_shape(self, size: int) -> tuple[int, ...]:
        return _COST_SHAPES[self.name](size)

    def cost(self, size: int, dtype: str) -> costs.OpCost:
        """FLOPs and bytes from generator.model.costs (the one place they are counted)."""
        return costs.cost(self.cost_op, self.cost_shape(size), dtype)

    def inputs(self, size: int, dtype: str) -> list[tuple[tuple[int, ...], str]]:
        """(shape, dtype) of each array one call reads."""
        return _INPUTS[self.name](size, normalize_dtype(dtype))

    def input_set_bytes(self, size: int, dtype: str) -> int:
        """Bytes of one set of inputs (what one rotating buffer holds)."""
        return sum(prod(shape) * DTYPE_BYTES[d] for shape, d in self.inputs(size, dtype))

    def module_name(self) -> str:
        """The XLA module name jit gives the op's function (what a trace groups by)."""
        return f"jit_{function_name(self.name)}"



def function_name(op_name: str) -> str:
    return f"lab_{op_name}"


_COST_SHAPES: dict[str, Callable[[int], tuple[int, ...]]] = {
    "matmul": lambda n: (n, n, n),
    "skinny_matmul": lambda n: (SKINNY_ROWS, n, n),
    "add": lambda n: (n, n),
    "softmax": lambda n: (n, n),
    "reduce_sum": lambda n: (n, n),
    "embedding": lambda n: (n, n, n),  # gather N rows of an [N, N] table
}

_INPUTS: dict[str, Callable[[int, str], list[tuple[tuple[int, ...], str]]]] = {
    "matmul": lambda n, d: [((n, n), d), ((n, n), d)],
    "skinny_matmul": lambda n, d: [((SKINNY_ROWS, n), d), ((n, n), d)],
    "add": lambda n, d: [((n, n), d), ((n, n), d)],
    "softmax": lambda n, d: [((n, n), d)],
    "reduce_sum": lambda n, d: [((n, n), d)],
    "embedding": lambda n, d: [((n, n), d), ((n,), costs.INDEX_DTYPE)],
}

OPS: dict[str, LabOp] = {
    op.name: op for op in (
        LabOp("matmul", "matmul NxNxN", "matmul", "[N,N] @ [N,N]"),
        LabOp("skinny_matmul", "matmul skinny 8xNxN", "matmul", f"[{SKINNY_ROWS},N] @ [N,N]"),
        LabOp("add", "elementwise add", "add", "x + y over [N,N]"),
        LabOp("softmax", "softmax rows", "softmax", "softmax over the rows of [N,N]"),
        LabOp("reduce_sum", "reduce_sum", "reduce_sum", "sum over the last axis of [N,N]"),
        LabOp("embedding", "embedding lookup", "embedding", "gather N rows of an [N,N] table"),
    )
}

# The seed's LAB·0.1 five, in its order; GATE 00 judges these.
SEED_OPS = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")

_ALIASES = {
    "skinny": "skinny_matmul", "skinny-matmul": "skinny_matmul", "matmul_skinny": "skinny_matmul",
    "reduce-sum": "reduce_sum", "sum": "reduce_sum", "elementwise": "add",
    "gather": "embedding", "embed": "embedding", "embedding_lookup": "embedding",
}


def normalize_op(name: str) -> str:
    key = name.strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in OPS:
        raise OpError(f"unknown op '{name}'; the lab runs: {', '.join(OPS)}")
    return key


def parse_ops(text: str | None) -> tuple[str, ...]:
    """"seed" or None -> the seed's five; "seed,embedding" or "matmul,add" -> those ops, in order."""
    if text is None or not text.strip():
        return SEED_OPS
    chosen: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise OpError(f"malformed --ops '{text}': empty name between commas")
        names = SEED_OPS if part.lower() in ("seed", "all-seed") else (normalize_op(part),)
        chosen.extend(n for n in names if n not in chosen)
    return tuple(chosen)


def check_size(size: int, ops: tuple[str, ...]) -> None:
    """N must make every chosen op meaningful: the skinny matmul needs N > its 8 rows."""
    floor = SKINNY_ROWS + 1 if "skinny_matmul" in ops else 1
    if size < floor:
        raise OpError(f"--size {size} is too small: the skinny matmul {SKINNY_ROWS}xNxN needs N > {SKINNY_ROWS}"
                      if floor > 1 else f"--size must be positive, got {size}")


def check_dtype(dtype: str) -> str:
    try:
        d = normalize_dtype(dtype)
    except ValueError:  # name only what the lab accepts, not every dtype the model knows
        raise OpError(f"unknown dtype '{dtype}'; the lab times {' or '.join(LAB_DTYPES)}") from None
    if d not in LAB_DTYPES:
        raise OpError(f"the lab times {' or '.join(LAB_DTYPES)}, not {d}")
    return d


