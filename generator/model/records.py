"""A changed copy of a frozen dataclass at a fraction of ``dataclasses.replace``'s cost.

The model builds many near-copies of its records (each classic wrong method is the model run on a
cost or ceilings with one number changed), and ``dataclasses.replace`` re-runs the class's whole
``__init__`` through keyword arguments for each. ``evolve`` copies the instance's fields and sets the
changed ones, which for a dataclass whose ``__init__`` only stores its fields (no ``__post_init__``,
no ``InitVar``, no ``__slots__``) is the same object; any other class gets ``dataclasses.replace``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

_FIELDS: dict[type, frozenset[str] | None] = {}  # class -> its field names, or None: use replace


def _plain_fields(cls: type) -> frozenset[str] | None:
    """The init fields of a dataclass whose ``__init__`` only stores them, else None."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        return None
    every = getattr(cls, "__dataclass_fields__", {})
    if any(f._field_type is not dataclasses._FIELD for f in every.values()):  # type: ignore[attr-defined]  # InitVar/ClassVar pseudo-fields
        return None
    fields = dataclasses.fields(cls)
    if not all(f.init for f in fields):
        return None
    return frozenset(f.name for f in fields)


def evolve(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)``: a new instance with ``changes`` set (a TypeError for a
    name that is not a field, as ``replace`` gives)."""
    cls = type(obj)
    names = _FIELDS.get(cls, frozenset())
    if names == frozenset():
        names = _FIELDS[cls] = _plain_fields(cls)
    if names is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]  # a dataclass instance, as replace needs
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
    new: T = object.__new__(cls)
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new
