"""The lab's ops: what each one is (pure Python) and how to build it in JAX (lazy).

The seed's five ops at size N, plus an optional embedding lookup. Each op names
the ``generator.model.costs`` op and shape that count its FLOPs and bytes; the lab
never counts them itself. ``inputs`` lists the arrays one call reads, so the
runner can size its rotating buffers and check device memory before anything
runs. ``build`` is the only function here that imports jax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING, Any

from generator.model import costs
from generator.errors import DrillError
from generator.model.units import DTYPE_BYTES, normalize_dtype
from labs.measure.timing import Rotation, plan_rotation

if TYPE_CHECKING:
    from jax import Array

    from labs.measure.device import DeviceInfo

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

    def rotation(self, size: int, dtype: str, device: "DeviceInfo") -> Rotation:
        """The input sets the lab rotates this op's inputs through at ``size`` on ``device``
        (``timing.plan_rotation``); MemoryError when not even one set fits."""
        return plan_rotation(self.input_set_bytes(size, dtype), device.cache_bytes, device.budget_bytes)


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


def jax_dtype(dtype: str) -> Any:
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device
    return {"bf16": jnp.bfloat16, "f32": jnp.float32, "int32": jnp.int32}[normalize_dtype(dtype)]


def function(op_name: str) -> Callable[..., Any]:
    """One op's function, not yet jitted, named ``lab_<op>`` (its XLA module: ``jit_lab_<op>``)."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device

    return _FUNCTIONS[op_name](jax, jnp)


def build(op_name: str, size: int, dtype: str) -> tuple[Callable[..., Any], Callable[[int], tuple[Array, ...]]]:
    """(jitted function, make_inputs(seed) -> tuple of device arrays) for one op.

    The function is defined with a fixed name so its XLA module is ``jit_lab_<op>``
    in a profiler trace. Inputs are random normal (indices uniform in [0, N)):
    constant data can let hardware take shortcuts a real workload never gets.
    """
    import jax  # optional dependency: jax loads only when a lab runs on a device
    import jax.numpy as jnp  # optional dependency: jax loads only when a lab runs on a device

    dt = jax_dtype(dtype)
    fn = function(op_name)
    op = OPS[op_name]

    def make_inputs(seed: int) -> tuple[Array, ...]:
        keys = jax.random.split(jax.random.key(seed), len(op.inputs(size, dtype)))
        arrays: list[Array] = []
        for key, (shape, d) in zip(keys, op.inputs(size, dtype)):
            if d == costs.INDEX_DTYPE:
                arrays.append(jax.random.randint(key, shape, 0, size, dtype=jnp.int32))
            else:
                arrays.append(jax.random.normal(key, shape, dt))
        return tuple(arrays)

    return jax.jit(fn), make_inputs


def _matmul(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_matmul(x: Array, y: Array) -> Array:
        return x @ y
    return lab_matmul


def _skinny_matmul(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_skinny_matmul(x: Array, y: Array) -> Array:
        return x @ y
    return lab_skinny_matmul


def _add(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_add(x: Array, y: Array) -> Array:
        return x + y
    return lab_add


def _softmax(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_softmax(x: Array) -> Array:
        out: Array = jax.nn.softmax(x, axis=-1)
        return out
    return lab_softmax


def _reduce_sum(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_reduce_sum(x: Array) -> Array:
        out: Array = jnp.sum(x, axis=-1)
        return out
    return lab_reduce_sum


def _embedding(jax: Any, jnp: Any) -> Callable[..., Array]:
    def lab_embedding(table: Array, indices: Array) -> Array:
        out: Array = jnp.take(table, indices, axis=0)
        return out
    return lab_embedding


_FUNCTIONS: dict[str, Callable[[Any, Any], Callable[..., Array]]] = {
    "matmul": _matmul, "skinny_matmul": _skinny_matmul, "add": _add,
    "softmax": _softmax, "reduce_sum": _reduce_sum, "embedding": _embedding,
}
