"""Safe YAML reading, shared by the catalogue and the drill specs.

Data only (plain dicts, lists and scalars); a document whose aliases would expand it past
``MAX_ALIAS_NODES`` nodes is refused with a one-line ``YAMLBoundError``.
Details: docs/internals.md.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

from generator.errors import DrillError

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_ALIAS_NODES = 100_000  # nodes that aliases may add, beyond the file's own; a spec uses a few dozen


class YAMLBoundError(DrillError, yaml.YAMLError):
    """A YAML document refused for what its aliases would build (one line, no part of the input)."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_aliases(root: yaml.Node, max_alias_nodes: int = MAX_ALIAS_NODES) -> None:
    """Refuse a node graph whose expanded size exceeds its own by more than ``max_alias_nodes``,
    or that contains itself through an alias (``YAMLBoundError``). Iterative, memoised by node."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] - len(size) > max_alias_nodes:
                raise YAMLBoundError(f"its aliases expand it by more than {max_alias_nodes:,} nodes "
                                     f"(the limit); refusing it")
            continue
        if key in size:
            continue
        if key in on_path:
            raise YAMLBoundError("an alias refers to the node that contains it; refusing it")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)
    total = size.get(id(root), 0)
    if total - len(size) > max_alias_nodes:  # pragma: no cover - caught above as soon as it happens
        raise YAMLBoundError(f"its aliases expand it by more than {max_alias_nodes:,} nodes (the limit)")


def safe_load(stream: str | IO[str], max_alias_nodes: int = MAX_ALIAS_NODES) -> Any:
    """Parse one YAML document with the (C, when available) safe loader, aliases bounded."""
    loader = _SafeLoader(stream)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_aliases(node, max_alias_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()
