"""The "Can you" items of the vocabulary spec, typed: each item's number, its text and the check that asks it.

``vocabulary.check_params`` builds them from the spec; the vocabulary family, the registry (``resolve``) and
``drill site`` read them through ``can_you_items``. No family of its own: there is no ``can_you`` spec.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from generator.problems.specs import FamilySpec, KeyPath


class CanYouCheck(TypedDict):
    """The problem an item asks: a family's skill (family, chip or None, variant) and params fixed over its draw."""

    family: str
    chip: str | None
    variant: str
    params: dict[str, Any]


class CanYouItem(TypedDict):
    """One item: its number (1, 2, ...), its text, its check, and where in the spec it is (for errors)."""

    n: int
    text: str
    check: CanYouCheck
    at: KeyPath


def can_you_items(vocabulary_spec: FamilySpec) -> list[CanYouItem]:
    """The items of the vocabulary spec (its checked params), in order."""
    return cast("list[CanYouItem]", vocabulary_spec.params["can_you"])
