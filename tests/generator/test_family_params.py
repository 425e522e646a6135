"""Each family's params are the TypedDict its ``params_of`` returns: exactly its keys, each value of its type.

Every skill (so every family on every chip it has) is drawn with several seeds; a problem's params must have
all the required keys of the family's declared shape, no key it does not declare, and values of the declared
types (list element types included), before and after a JSON round trip. A vocabulary "Can you" card carries
``CanYouParams`` plus the params of the problem it asks, checked against that family's own shape.
"""

from __future__ import annotations

import json
import random
import types
import typing
from typing import Any, Union

import pytest

from generator.problems import generate
from generator.problems.families import FAMILIES, vocabulary
from generator.problems.problem import Problem

SEEDS = (0, 1, 2)


def _shapes(family: str) -> tuple[Any, ...]:
    """The TypedDicts a family's ``params_of`` may return (a union's members, or the one)."""
    declared = typing.get_type_hints(FAMILIES[family].params_of)["return"]
    if typing.get_origin(declared) in (Union, types.UnionType):
        return typing.get_args(declared)
    return (declared,)


def _type_ok(value: Any, declared: Any) -> bool:
    origin = typing.get_origin(declared)
    if origin is list:
        (item,) = typing.get_args(declared)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if declared is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if declared is float:
        return isinstance(value, float)
    return isinstance(value, declared)


def _mismatch(params: dict[str, Any], shape: Any) -> str:
    """What is wrong with ``params`` as a ``shape`` ("" when nothing is)."""
    hints = typing.get_type_hints(shape)
    missing = set(shape.__required_keys__) - set(params)
    extra = set(params) - set(hints)
    if missing or extra:
        return f"{shape.__name__}: missing {sorted(missing)}, undeclared {sorted(extra)}"
    wrong = {k: (type(v).__name__, hints[k]) for k, v in params.items() if not _type_ok(v, hints[k])}
    return f"{shape.__name__}: values of the wrong type {wrong}" if wrong else ""


def _check(family: str, params: dict[str, Any]) -> str:
    """"" when ``params`` are one of the family's declared shapes; else why not (for each shape)."""
    if family == vocabulary.NAME and "check_skill" in params:
        asked = {k: params[k] for k in typing.get_type_hints(vocabulary.CanYouParams) if k in params}
        rest = {k: v for k, v in params.items() if k not in asked}
        inner = str(params["check_skill"]).split(":", 1)[0]
        return _mismatch(asked, vocabulary.CanYouParams) or _check(inner, rest)
    why = [_mismatch(params, shape) for shape in _shapes(family)]
    return "" if "" in why else "; ".join(why)


@pytest.fixture(scope="module")
def drawn() -> dict[str, list[Problem]]:
    registry = generate.registry()
    out: dict[str, list[Problem]] = {}
    for skill in registry.skills():
        for seed in SEEDS:
            out.setdefault(skill.family, []).append(registry.draw(skill.id, random.Random(f"{seed}:{skill.id}")))
    return out


def test_every_family_declares_its_params_and_every_one_is_drawn(drawn):
    assert set(drawn) == set(FAMILIES)
    chips = {p.params["chip"] for problems in drawn.values() for p in problems if "chip" in p.params}
    assert len(chips) >= 4, chips  # every chip of every per-chip family: several chips
    for family in FAMILIES:
        for shape in _shapes(family):
            assert typing.is_typeddict(shape), (family, shape)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_drawn_params_are_exactly_the_declared_shape(drawn, family):
    for p in drawn[family]:
        assert _check(family, p.params) == "", (p.id, p.params)
        again = Problem.from_dict(json.loads(json.dumps(p.to_dict())))  # as the quiz log and `drill export` keep it
        assert _check(family, again.params) == "", (p.id, again.params)
        assert FAMILIES[family].params_of(p) is p.params  # the accessor types the params, never copies them


def test_an_undeclared_or_mistyped_key_is_caught():
    ok = {"chip": "v5e", "op": "matmul", "case": "matmul_skinny", "shape": [8, 4096, 4096], "dtype": "bf16"}
    assert _check("bound", ok) == ""
    assert "undeclared ['extra']" in _check("bound", {**ok, "extra": 1})
    assert "missing ['dtype']" in _check("bound", {k: v for k, v in ok.items() if k != "dtype"})
    assert "wrong type" in _check("bound", {**ok, "shape": [8, "4096", 4096]})
    assert "wrong type" in _check("bound", {**ok, "shape": (8, 4096, 4096)})  # JSON keeps lists, so params do
    assert "wrong type" in _check("pod", {"chip": "v5e", "variant": "wrap", "slice": "4x4", "axis": True})
