"""The lab's ops built in JAX (lazy: jax loads only when an op is built), and the input sets a run
rotates them through. What each op is, its inputs and its count are ``labs.records.ops``'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator.model import costs
from generator.model.units import normalize_dtype
from labs.measure.timing import Rotation, plan_rotation
from labs.records.ops import (LAB_DTYPES, OPS, SEED_OPS, SKINNY_ROWS, LabOp, OpError, check_dtype, check_size,
                              function_name, normalize_op, parse_ops)

if TYPE_CHECKING:
    from jax import Array
    from labs.measure.device import DeviceInfo

__all__ = ["LAB_DTYPES", "OPS", "SEED_OPS", "SKINNY_ROWS", "LabOp", "OpError", "build", "check_dtype", "check_size",
           "function", "function_name", "jax_dtype", "normalize_op", "parse_ops", "rotation"]


def rotation(op: LabOp, size: int, dtype: str, device: "DeviceInfo") -> Rotation:
    """The input sets the lab rotates ``op``'s inputs through at ``size`` on ``device``
    (``timing.plan_rotation``); MemoryError when not even one set fits."""
    return plan_rotation(op.input_set_bytes(size, dtype), device.cache_bytes, device.budget_bytes)


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
