"""The check that a typed record (``labs.record_types.Part`` subclasses) and its JSON Schema declare
the same fields, field for field: shared by both labs' record tests."""

from __future__ import annotations

import typing

from labs import record_types as rt


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
