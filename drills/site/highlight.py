"""Python syntax highlighting with Pygments' Python lexer: escaped spans, no markup injection.

Imported by the site build only (``drill site``): the quiz and deck paths never load Pygments.
Details: docs/internals.md.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, is_token_subtype

if TYPE_CHECKING:  # annotations only: Pygments' token type class is named in its stubs (types-Pygments)
    from pygments.token import _TokenType

_LEXER = PythonLexer()
# Pygments token type -> the page's class, most specific first (a type is in its parent: Name.Builtin in Name).
_KINDS: tuple[tuple[_TokenType, str], ...] = (
    (Comment, "comment"), (String, "string"), (Number, "number"),
    (Operator.Word, "keyword"), (Keyword, "keyword"), (Operator, "op"), (Punctuation, "op"),
    (Name.Builtin.Pseudo, ""), (Name.Builtin, "builtin"), (Name.Exception, "builtin"),
    (Name.Function, "def"), (Name.Class, "def"),
)


def _kind(token_type: _TokenType) -> str:
    for parent, kind in _KINDS:
        if is_token_subtype(token_type, parent):
            return kind
    return ""


def python(source: str) -> str:
    """HTML for ``source`` (escaped, with token spans)."""
    tokens = list(_LEXER.get_tokens_unprocessed(source))
    if "".join(text for _, _, text in tokens) != source:
        return html.escape(source)
    runs: list[tuple[str, str]] = []  # (kind, text): neighbouring tokens of one kind in one span
    for _, token_type, text in tokens:
        kind = _kind(token_type) if text.strip() else ""
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + text)
        else:
            runs.append((kind, text))
    return "".join(f'<span class="tok-{kind}">{html.escape(text)}</span>' if kind else html.escape(text)
                   for kind, text in runs)
