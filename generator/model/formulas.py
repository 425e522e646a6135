"""The roofline's formulas as data: each a small expression over named quantities.

The model evaluates them here (``value``); the page's playground evaluates the same data, exported
as JSON (``to_json``), so no formula is written twice.
Details: docs/internals.md.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Union

Expr = Union[str, list[Any]]

# (name, expression): the scaling book's roofline ("Rooflines": T_math, T_comms, the ridge, the floor
# as the larger of the two when they overlap, their sum when they do not)
FORMULAS: tuple[tuple[str, Expr], ...] = (
    ("intensity", ["/", "flops", "bytes"]),
    ("ridge", ["/", "peak", "bw"]),
    ("t_math", ["/", "flops", "peak"]),
    ("t_comms", ["/", "bytes", "bw"]),
    ("floor", ["max", "t_math", "t_comms"]),
    ("upper", ["+", "t_math", "t_comms"]),
    ("memory_roof", ["*", "intensity", "bw"]),
    ("attainable", ["min", "peak", "memory_roof"]),
    ("verdict", ["if", [">=", "intensity", "ridge"], ["str", "compute"], ["str", "memory"]]),
)

_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "/": operator.truediv, "*": operator.mul, "+": operator.add, "max": max, "min": min, ">=": operator.ge,
}

Values = dict[str, Any]


def _compiled(expr: Expr) -> Callable[[Values], Any]:
    """``expr`` as a function of the named values (built once: the model evaluates these per problem)."""
    if isinstance(expr, str):
        return operator.itemgetter(expr)
    head, *args = expr
    if head == "str":
        text = args[0]
        return lambda values: text
    parts = [_compiled(a) for a in args]
    if head == "if":
        test, then, other = parts
        return lambda values: then(values) if test(values) else other(values)
    apply = _OPERATORS[head]
    left, right = parts
    return lambda values: apply(left(values), right(values))


_BY_NAME: dict[str, Callable[[Values], Any]] = {name: _compiled(expr) for name, expr in FORMULAS}


def value(name: str, **values: Any) -> Any:
    """The formula ``name`` on the quantities it reads, given by name (``value("floor", t_math=..., t_comms=...)``)."""
    return _BY_NAME[name](values)


def to_json() -> list[list[Any]]:
    """The formulas as the page reads them: ``[[name, expression], ...]`` in order."""
    return [[name, expr] for name, expr in FORMULAS]
