"""Text from a record, a trace, a ledger or a store, made safe to print on a terminal.

``visible(text)`` writes every character a terminal would act on as its Python escape;
``visible_lines``, ``visible_text`` and ``json_visible`` apply it to reports, messages and JSON.
Pure standard library.
Details: docs/internals.md.
"""

from __future__ import annotations

from typing import Iterable

_BIDI = {0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_TABLE = {c: ascii(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0), *_BIDI, 0x2028, 0x2029)}


def visible(text: object) -> str:
    """``text`` (made a string with ``str``) with every terminal control shown as its escape."""
    return str(text).translate(_TABLE)


def visible_lines(lines: Iterable[object]) -> list[str]:
    """``visible`` of each line: a report's lines, each still one line on the terminal."""
    return [visible(line) for line in lines]


def visible_text(text: object) -> str:
    """``visible`` of each line of ``text``, its newlines kept: a message of several lines, each safe."""
    return "\n".join(visible(line) for line in str(text).split("\n"))


# What ``json.dumps(..., ensure_ascii=False)`` leaves raw that a terminal acts on (it escapes only U+0000..U+001F):
# DEL, the C1 controls, the bidirectional controls and the line and paragraph separators, as JSON's own \uXXXX.
_JSON_TABLE = {c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *_BIDI, 0x2028, 0x2029)}


def json_visible(json_text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every terminal control that is still raw
    written as its ``\\uXXXX`` escape: the same JSON value, safe to print."""
    return json_text.translate(_JSON_TABLE)
