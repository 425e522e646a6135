"""A small, safe Markdown subset for the chapter text and the notebook's markdown cells.

Supported: ``#``..``####`` headings, paragraphs, ``-``/``*`` and ``1.`` lists,
fenced code blocks, inline ``code``, ``**bold**``, ``*em*``/``_em_`` and
``[text](url)`` links. Everything else is text. All text is HTML-escaped; link
targets must be http(s), a fragment or a relative path (no ``javascript:``),
so a chapter cannot inject markup or script into the page.
"""

from __future__ import annotations

import html
import re

_HEADING = re.compile(r"^(#{1,4})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s*```")
_INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)")
_SAFE_URL = re.compile(r"^(https?://|#|\.{0,2}/|[A-Za-z0-9_.-]+(/|$|#))", re.I)


def safe_url(url: str) -> str | None:
    """The URL if it is http(s), a fragment or relative; None for anything else (javascript:, data: ...)."""
    if ":" in url.split("/", 1)[0] and not url.lower().startswith(("http://", "https://")):
        return None
    return url if _SAFE_URL.match(url) else None


def inline(text: str) -> str:
    """Escape ``text`` and render the inline subset."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        code, strong, label, url, em1, em2 = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif strong is not None:
            out.append(f"<strong>{inline(strong)}</strong>")
        elif label is not None:
            target = safe_url(url)
            out.append(f'<a href="{html.escape(target)}">{inline(label)}</a>' if target
                       else html.escape(m.group(0)))
        else:
            out.append(f"<em>{inline(em1 if em1 is not None else em2)}</em>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def render(text: str, heading_offset: int = 0, id_prefix: str = "") -> str:
    """Markdown subset -> HTML. ``heading_offset`` demotes headings (# -> h(1+offset)); ``id_prefix``
    keeps heading ids unique when two documents share a title (the chapter and the notebook)."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    list_tag = ""

    def flush() -> None:
        nonlocal list_tag
        if para:
            out.append(f"<p>{inline(' '.join(s.strip() for s in para))}</p>")
            para.clear()
        if items:
            out.append(f"<{list_tag}>" + "".join(f"<li>{inline(i)}</li>" for i in items) + f"</{list_tag}>")
            items.clear()
            list_tag = ""

    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            flush()
            body = []
            i += 1
            while i < len(lines) and not _FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            out.append(f"<pre><code>{html.escape(chr(10).join(body))}</code></pre>")
            i += 1
            continue
        heading = _HEADING.match(line)
        bullet, numbered = _BULLET.match(line), _NUMBERED.match(line)
        if heading:
            flush()
            level = min(6, len(heading.group(1)) + heading_offset)
            title = heading.group(2)
            out.append(f'<h{level} id="{id_prefix}{slugify(title)}">{inline(title)}</h{level}>')
        elif not line.strip():
            flush()
        elif bullet or numbered:
            tag = "ul" if bullet else "ol"
            if para or (items and list_tag != tag):
                flush()
            list_tag = tag
            items.append((bullet or numbered).group(1))
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + line.strip()  # a list item's continuation line
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def split_parts(text: str) -> list[tuple[str, str]]:
    """``# Title`` parts of a document: [(title, body markdown)], in order."""
    parts: list[tuple[str, str]] = []
    title, body = None, []
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
