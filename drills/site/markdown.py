"""The chapter text and the notebook's markdown cells as HTML, with markdown-it-py (CommonMark), HTML off.

Only the subset the page styles is parsed; a link target must pass ``safe_url``. Imported by the
site build only (``drill site``): the quiz and deck paths never load markdown-it.
Details: docs/internals.md.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_SAFE_URL = re.compile(r"^(https?://|#|\.{0,2}/|[A-Za-z0-9_.-]+(/|$|#))", re.I)
# CommonMark rules outside the subset (docs/internals.md): what they would match stays text.
_OFF = ["html_block", "html_inline", "image", "blockquote", "hr", "lheading", "code", "reference", "autolink"]
MAX_HEADING = 4  # "#####" and deeper are text, as a paragraph


def safe_url(url: str) -> str | None:
    """The URL if it is http(s), a fragment or relative; None for anything else (javascript:, data: ...)."""
    if ":" in url.split("/", 1)[0] and not url.lower().startswith(("http://", "https://")):
        return None
    return url if _SAFE_URL.match(url) else None


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


class _Compact(RendererHTML):
    """markdown-it's HTML, without the line breaks it puts between block tags (layout only:
    text and code keep theirs), so a list reads ``<ul><li>one</li><li>two</li></ul>``."""

    def renderToken(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return super().renderToken(tokens, idx, options, env).strip("\n")


def _hard_break(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return "\n"  # a hard break ("\\" or two spaces at a line's end) is a plain line break in the text


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}, renderer_cls=_Compact).disable(_OFF)
    md.validateLink = lambda url: safe_url(url) is not None  # type: ignore[method-assign]  # the documented way to set a link policy
    md.add_render_rule("hardbreak", _hard_break)
    return md


_MD = _parser()


def _html_renderer(md: MarkdownIt) -> _Compact:
    """The parser's renderer as the class it is (``renderer_cls=_Compact``), whose ``render`` returns ``str``."""
    renderer = md.renderer
    assert isinstance(renderer, _Compact)
    return renderer


_HTML = _html_renderer(_MD)


def _shape(tokens: list[Token], heading_offset: int, id_prefix: str) -> None:
    """Each heading demoted by ``heading_offset`` (at most h6) with its id; one deeper than
    ``MAX_HEADING`` in the source becomes a paragraph. A fence's language is not written (the
    page highlights no markdown code)."""
    for i, tok in enumerate(tokens):
        if tok.type == "fence":
            tok.info = ""
        if tok.type not in ("heading_open", "heading_close"):
            continue
        level = int(tok.tag[1:])
        if level > MAX_HEADING:
            tok.type, tok.tag = ("paragraph_open", "p") if tok.nesting == 1 else ("paragraph_close", "p")
            continue
        tok.tag = f"h{min(6, level + heading_offset)}"
        if tok.nesting == 1:
            tok.attrSet("id", f"{id_prefix}{slugify(tokens[i + 1].content)}")


def render(text: str, heading_offset: int = 0, id_prefix: str = "") -> str:
    """Markdown subset -> HTML. ``heading_offset`` demotes headings (# -> h(1+offset)); ``id_prefix``
    keeps heading ids unique when two documents share a title (the chapter and the notebook)."""
    env: EnvType = {}
    tokens = _MD.parse(text, env)
    _shape(tokens, heading_offset, id_prefix)
    return _HTML.render(tokens, _MD.options, env).strip("\n")


def inline(text: str) -> str:
    """Escape ``text`` and render the inline subset (a title: no blocks)."""
    env: EnvType = {}
    return _HTML.render(_MD.parseInline(text, env), _MD.options, env)


def split_parts(text: str) -> list[tuple[str, str]]:
    """``# Title`` parts of a document: [(title, body markdown)], in order."""
    parts: list[tuple[str, str]] = []
    title: str | None = None
    body: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        m = re.match(r"^#\s+(.*?)\s*$", line)
        if m:
            if title is not None:
                parts.append((title, "\n".join(body).strip()))
            title, body = m.group(1), []
        elif title is not None:
            body.append(line)
    if title is not None:
        parts.append((title, "\n".join(body).strip()))
    return parts
