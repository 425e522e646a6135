"""Build the Stage 0 page: one ``index.html`` plus ``site.js`` and ``site.css``, offline.

Inputs: the catalogue and op costs (``drills.site.data``), the chapter
(``labs/stage-0/chapter.md``), the notebook's ``site:show`` cells and the lab
records in a bench folder. The output folder gets exactly those three files;
an ``index.html`` that ``drill site`` did not write is never overwritten.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

import labs
from generator.model import catalogue, costs
from generator.io import project_urls, safeio
from generator.errors import DrillError

from drills.site import data, markdown, sections

ASSETS = Path(__file__).with_name("assets")
STAGE_DIR = Path(labs.__file__).with_name("stage-0")
CHAPTER_PATH = STAGE_DIR / "chapter.md"
NOTEBOOK_PATH = STAGE_DIR / "lab-0.1-rooflines.ipynb"
NOTEBOOK_REPO_PATH = project_urls.NOTEBOOK_REPO_PATH
GENERATOR_MARK = '<meta name="generator" content="drill site">'
OUTPUT_FILES = ("index.html", "site.js", "site.css")

esc = html.escape


class SiteError(DrillError, ValueError):
    """The site cannot be built where asked (the message says why)."""


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    files: tuple[Path, ...]
    gate_status: str

    def to_dict(self) -> dict[str, Any]:
        return {"out_dir": str(self.out_dir), "files": [str(f) for f in self.files], "gate_status": self.gate_status}


def _parts_html(text: str) -> tuple[str, str]:
    """The chapter (first ``#`` part, its ``##`` sections as they are) and the other parts as cards."""
    parts = markdown.split_parts(text)
    if not parts:
        raise SiteError(f"{CHAPTER_PATH}: no '# ' part found")
    chapter = markdown.render(parts[0][1])
    kickers = {"What gets built": "deliverables", "Readings": "sources", "The work, in order": "the plan"}
    cards = "".join(
        f'<section class="card"><p class="kicker">{esc(kickers.get(title, "the chapter"))}</p>'
        f'<h2 id="{markdown.slugify(title)}">{markdown.inline(title)}</h2>{markdown.render(body)}</section>'
        for title, body in parts[1:])
    return chapter, cards


def _script_json(value: dict[str, Any]) -> str:
    # Inside <script type="application/json"> only "</" could end the element early.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def colab_html(repo_url: str) -> str:
    """The Labs card's Open-in-Colab link, or a plain note that this copy is not published yet."""
    colab = sections.colab_link(repo_url, NOTEBOOK_REPO_PATH)
    if colab:
        return (f'<a id="open-in-colab" href="{esc(colab)}">open in Colab →</a> '
                "runs from this repo, save a copy to keep it")
    return ('<span id="colab-unpublished">Open in Colab: this copy of the course is not published yet, so there is '
            "no link. <small>(For whoever publishes it: set <code>Repository</code> under <code>[project.urls]</code> "
            "in pyproject.toml, or build with <code>drill site --repo-url URL</code>.)</small></span>")


def render(bench_dir: Path, records_dir: Path | None = None, repo_url: str | None = None) -> tuple[str, str]:
    """The page's HTML and the gate's status for the published records in ``bench_dir``.

    ``records_dir``: the learner's own records folder; only it ticks the mastery header's lab and
    gate items and shows the learner's calibration (the course's records are never the learner's).
    ``repo_url``: the repository's address (default: pyproject.toml's ``[project.urls] Repository``).
    """
    cat = catalogue.load()
    play = data.playground_data()
    d = play["defaults"]
    first = data.python_case(d["chip"], d["op"], d["n"], d["dtype"])
    chapter, cards = _parts_html(safeio.read_text_bounded(CHAPTER_PATH))
    cells, nb = sections.notebook_cells(NOTEBOOK_PATH)
    url = project_urls.repository_url() if repo_url is None else repo_url
    if url and not project_urls.github_owner_repo(url):
        raise SiteError(f"repository address '{url}' is not https://github.com/OWNER/REPO (Colab opens GitHub only)")
    gate = sections.gate_view(bench_dir)
    items = sections.can_you_items()
    mine = sections.learner_state(records_dir)
    lab_text = mine["text"] if mine["read"] else "counts from your records: drill site --records DIR"

    def options(pairs: list[tuple[Any, Any]], selected: object) -> str:
        return "".join(f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(t)}</option>' for v, t in pairs)

    shape_notes = "; ".join(  # e.g. embedding: gather N rows of an [N,N] table (--op embedding --shape T,V,D = N,N,N)
        f"{esc(o['name'])}: {esc(o['description'])} (<code>--op {esc(o['cost_op'])} --shape "
        f"{esc(','.join(costs.OPS[o['cost_op']].dims))} = {esc(','.join(str(s) for s in o['shape']))}</code>)"
        for o in play["ops"])
    page = Template(safeio.read_text_bounded(ASSETS / "index.html")).substitute(
        lab_done=" done" if mine["lab"] else "",
        lab_text=esc(lab_text),
        gate_done=" done" if mine["gate"] else "",
        chapter=chapter,
        ex06=sections.ex06(cat, d["chip"]),
        chip_options=options([(c["name"], c["display"]) for c in play["chips"]], d["chip"]),
        op_options=options([(o["name"], f"{o['label']}") for o in play["ops"]], d["op"]),
        dtype_options=options([(t, t) for t in play["dtypes"]], d["dtype"]),
        max_n=play["max_n"], default_n=d["n"],
        out_intensity=esc(first["text"]["intensity"]), out_verdict=esc(first["text"]["verdict"]),
        out_attainable=esc(first["text"]["attainable"]), out_floor=esc(first["text"]["floor"]),
        shape_notes=shape_notes,
        parts=cards,
        colab=colab_html(url),
        calibration=sections.calibration_html(mine["calibration"]),
        cells=cells,
        notebook_path=esc(NOTEBOOK_REPO_PATH),
        canyou=sections.can_you(items), canyou_total=len(items),
        gate_class=esc(gate["status"]), gate_word=esc(gate["word"]), gate_headline=esc(gate["headline"]),
        gate_criterion=esc(gate["criterion"]), gate_table=gate["table"], gate_why=gate["why"], bench_name=esc(str(bench_dir)),
        sources=sections.sources_list(cat),
        data_json=_script_json(play),
    )
    return page, gate["status"]


def _write(path: Path, text: str) -> None:
    """Atomic write through the file policy (``generator.io.safeio``): a reader never sees half a file,
    and a FIFO, a device or a read-only file is refused, never replaced; a link is written through."""
    safeio.write_text(path, text)


def check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise SiteError(f"output '{safeio.display_path(out_dir)}' exists and is not a directory")
    try:  # a missing folder is made only inside a writable one (no write bit: read-only, for root too)
        safeio.check_creatable_dir(out_dir)
    except OSError as exc:
        raise SiteError(str(exc)) from None
    index = out_dir / "index.html"
    if os.path.lexists(index):
        try:  # bounded and non-blocking: a FIFO or an endless device is refused, not read
            head = safeio.read_head(index, 2000).decode("utf-8", errors="replace")
        except OSError as exc:
            raise SiteError(f"cannot read '{safeio.display_path(index)}': {exc}") from None
        if GENERATOR_MARK not in head:
            raise SiteError(f"'{safeio.display_path(index)}' exists and was not written by drill site; "
                            f"choose another -o")
    if out_dir.is_dir():
        for name in OUTPUT_FILES:  # every target is checked before anything is written
            try:
                safeio.check_target(out_dir / name)
            except OSError as exc:
                raise SiteError(str(exc)) from None


def build(out_dir: Path, bench_dir: Path, records_dir: Path | None = None, repo_url: str | None = None) -> BuildResult:
    """Write the site into ``out_dir`` (created if missing, under ``safeio.make_dirs``: never inside a
    folder with no write bit) from the published records in ``bench_dir``
    (and the learner's own in ``records_dir``, if given); see ``render``."""
    out_dir, bench_dir = Path(out_dir), Path(bench_dir)
    check_out_dir(out_dir)
    page, status = render(bench_dir, None if records_dir is None else Path(records_dir), repo_url)
    try:
        safeio.make_dirs(out_dir)
        _write(out_dir / "index.html", page)
        for name in ("site.js", "site.css"):
            _write(out_dir / name, safeio.read_text_bounded(ASSETS / name))
    except OSError as exc:  # a generator.io.safeio refusal is already one line naming the file
        raise SiteError(str(exc) if isinstance(exc, safeio.SafeIOError)
                        else f"cannot write to '{safeio.display_path(out_dir)}': {exc.strerror or exc}") from None
    return BuildResult(out_dir, tuple(out_dir / n for n in OUTPUT_FILES), status)


__all__ = ["build", "render", "BuildResult", "SiteError"]
