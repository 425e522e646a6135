"""The check that a typed record (``labs.records.types.Part`` subclasses) and its JSON Schema declare
the same fields, field for field: shared by both labs' record tests."""

from __future__ import annotations

import typing

from hypothesis import strategies as st

from labs.records import types as rt


def walk(cls: type, node: dict, where: str, found: list[tuple[str, str, int | None]]) -> None:
    """Assert ``cls`` and the schema ``node`` agree (properties, required, types, enums), recursing
    into the parts; ``found`` gets each (path, key, version) a later version requires."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in rt._fields(cls)}
    assert set(fields) == set(node.get("properties", {})), (where, set(fields) ^ set(node.get("properties", {})))
    always = {n for n, f in fields.items() if rt.required_since(f) == 1}
    assert always == set(node.get("required", ())), (where, always ^ set(node.get("required", ())))
    for name, f in fields.items():
        sub = node["properties"][name]
        hint = hints[name]
        types = set(rt.json_types(hint))
        declared = set(sub["type"] if isinstance(sub["type"], list) else [sub["type"]])
        # A key no version requires reads as None when absent, so its hint may add "null".
        assert types == declared or (rt.required_since(f) != 1 and types - {"null"} == declared), \
            (f"{where}.{name}", types, declared)
        arms = typing.get_args(hint) if rt._is_union(hint) else (hint,)
        for arm in arms:
            if typing.get_origin(arm) is typing.Literal:
                assert list(typing.get_args(arm)) == sub["enum"], f"{where}.{name}"
            if typing.get_origin(arm) is tuple:
                (item,) = [a for a in typing.get_args(arm) if a is not Ellipsis]
                items = sub["items"]
                if isinstance(item, type) and issubclass(item, rt.Part):
                    walk(item, items, f"{where}.{name}[]", found)
                else:
                    assert set(rt.json_types(item)) == set(items["type"] if isinstance(items["type"], list)
                                                           else [items["type"]]), f"{where}.{name}[]"
            elif isinstance(arm, type) and issubclass(arm, rt.Part):
                walk(arm, sub, f"{where}.{name}", found)
            elif typing.get_origin(arm) is not None and typing.get_origin(arm).__name__ == "Mapping":
                assert "properties" not in sub, f"{where}.{name}: the schema declares keys the type does not"
        if rt.required_since(f) not in (None, 1):
            found.append((where, name, rt.required_since(f)))


# Keys no record type declares, and JSON values, for the round-trip property tests of both labs' records.
UNKNOWN_KEY = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).map(lambda k: "x_" + k)
JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53)
                          | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(UNKNOWN_KEY, inner, max_size=3),
                          max_leaves=8)


def add_unknown_keys_and_shuffle(data, objects: list[dict]) -> None:
    """Add 1-6 undeclared keys to objects drawn from ``objects`` (in place), each object's keys put
    in a drawn order: what a newer writer might store, which a reader must keep as it is."""
    for _ in range(data.draw(st.integers(1, 6))):
        obj = objects[data.draw(st.integers(0, len(objects) - 1))]
        obj[data.draw(UNKNOWN_KEY)] = data.draw(JSON_VALUE)
        items = [(k, obj[k]) for k in data.draw(st.permutations(list(obj)))]
        obj.clear()
        obj.update(items)


def json_objects(value) -> list[dict]:
    """Every JSON object inside ``value``, ``value`` itself first."""
    if isinstance(value, dict):
        return [value] + [o for v in value.values() for o in json_objects(v)]
    if isinstance(value, list):
        return [o for v in value for o in json_objects(v)]
    return []
