"""Python syntax highlighting with the standard library's ``tokenize``: escaped spans, no markup injection.

Each token becomes ``<span class="tok-KIND">`` (keyword, builtin, string, number,
comment, op, def); the text between tokens is copied as is, so the highlighted
code reads back as exactly the source. Code that does not tokenize (a notebook's
``!pip`` line, say, or text 3.12's tokenizer cannot decode) is shown escaped and plain.
"""

from __future__ import annotations

import builtins
import html
import io
import keyword
import tokenize

_BUILTINS = frozenset(dir(builtins))


def _kind(tok: tokenize.TokenInfo, previous: str) -> str | None:
    if tok.type == tokenize.COMMENT:
        return "comment"
    if tok.type == tokenize.STRING or tok.type in _FSTRING_TYPES:
        return "string"
    if tok.type == tokenize.NUMBER:
        return "number"
    if tok.type == tokenize.OP:
        return "op"
    if tok.type == tokenize.NAME:
        if keyword.iskeyword(tok.string) or keyword.issoftkeyword(tok.string):
            return "keyword"
        if previous in ("def", "class"):
            return "def"
        if tok.string in _BUILTINS:
            return "builtin"
    return None


_FSTRING_TYPES = tuple(getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                       if hasattr(tokenize, n))


def python(source: str) -> str:
    """HTML for ``source`` (escaped, with token spans)."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        # IndentationError is a SyntaxError; Python 3.12's tokenizer raises UnicodeDecodeError
        # (a ValueError) on some control characters, e.g. '\r\x80'
        return html.escape(source)
    out, pos, previous = [], 0, ""
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT, tokenize.NEWLINE, tokenize.NL):
            continue
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        if start < pos:  # never copy a character twice
            continue
        out.append(html.escape(source[pos:start]))
        text = html.escape(source[start:end])
        kind = _kind(tok, previous)
        out.append(f'<span class="tok-{kind}">{text}</span>' if kind else text)
        pos = end
        if tok.type == tokenize.NAME:
            previous = tok.string
    out.append(html.escape(source[pos:]))
    return "".join(out)
