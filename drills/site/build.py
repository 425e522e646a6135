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

import labs
from generator import catalogue, costs, safeio

from drills.site import data, markdown, sections

ASSETS = Path(__file__).with_name("assets")
STAGE_DIR = Path(labs.__file__).with_name("stage-0")
CHAPTER_PATH = STAGE_DIR / "chapter.md"
NOTEBOOK_PATH = STAGE_DIR / "lab-0.1-rooflines.ipynb"
NOTEBOOK_REPO_PATH = "labs/stage-0/lab-0.1-rooflines.ipynb"
GENERATOR_MARK = '<meta name="generator" content="drill site">'
OUTPUT_FILES = ("index.html", "site.js", "site.css")

esc = html.escape


class SiteError(ValueError):
    """The site cannot be built where asked (the message says why)."""


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    files: tuple[Path, ...]
    gate_status: str

    def to_dict(self) -> dict:
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


def _script_json(value: dict) -> str:
    # Inside <script type="application/json"> only "</" could end the element early.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render(bench_dir: Path) -> tuple[str, str]:
    """The page's HTML and the gate's status for records in ``bench_dir``."""
    cat = catalogue.load()
    play = data.playground_data()
    d = play["defaults"]
    first = data.python_case(d["chip"], d["op"], d["n"], d["dtype"])
    chapter, cards = _parts_html(safeio.read_text_bounded(CHAPTER_PATH))
    cells, nb = sections.notebook_cells(NOTEBOOK_PATH)
    colab = sections.colab_link(sections.repo_url(nb), NOTEBOOK_REPO_PATH)
    colab_html = (f'<a id="colab-link" href="{esc(colab)}">open in Colab →</a> runs from the repository; save a copy to keep it'
                  if colab else f"set <code>REPO_URL</code> in {esc(NOTEBOOK_REPO_PATH)} to get an Open-in-Colab link")
    gate = sections.gate_view(bench_dir)
    items = sections.can_you_items()
    lab_done = gate["accelerator_records"] > 0

    def options(pairs, selected):
        return "".join(f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(t)}</option>' for v, t in pairs)

    shape_notes = "; ".join(  # e.g. embedding: gather N rows of an [N,N] table (--op embedding --shape T,V,D = N,N,N)
        f"{esc(o['name'])}: {esc(o['description'])} (<code>--op {esc(o['cost_op'])} --shape "
        f"{esc(','.join(costs.OPS[o['cost_op']].dims))} = {esc(','.join(str(s) for s in o['shape']))}</code>)"
        for o in play["ops"])
    page = Template(safeio.read_text_bounded(ASSETS / "index.html")).substitute(
        lab_done=" done" if lab_done else "",
        lab_text=esc(f"{gate['accelerator_records']} accelerator record(s) in {bench_dir.name or bench_dir}"),
        gate_done=" done" if gate["status"] == "pass" else "",
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
        colab=colab_html,
        cells=cells,
        notebook_path=esc(NOTEBOOK_REPO_PATH),
        canyou=sections.can_you(items), canyou_total=len(items),
        gate_class=esc(gate["status"]), gate_word=esc(gate["word"]), gate_headline=esc(gate["headline"]),
        gate_criterion=esc(gate["criterion"]), gate_table=gate["table"], bench_name=esc(str(bench_dir)),
        sources=sections.sources_list(cat),
        data_json=_script_json(play),
    )
    return page, gate["status"]


def _write(path: Path, text: str) -> None:
    """Atomic write through the file policy (``generator.safeio``): a reader never sees half a file,
    and a FIFO, a device or a read-only file is refused, never replaced; a link is written through."""
    safeio.write_text(path, text)


def check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise SiteError(f"output '{safeio.display_path(out_dir)}' exists and is not a directory")
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


def build(out_dir: Path, bench_dir: Path) -> BuildResult:
    """Write the site into ``out_dir`` (created if missing) from the records in ``bench_dir``."""
    out_dir, bench_dir = Path(out_dir), Path(bench_dir)
    check_out_dir(out_dir)
    page, status = render(bench_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        _write(out_dir / "index.html", page)
        for name in ("site.js", "site.css"):
            _write(out_dir / name, safeio.read_text_bounded(ASSETS / name))
    except OSError as exc:  # a generator.safeio refusal is already one line naming the file
        raise SiteError(str(exc) if isinstance(exc, safeio.SafeIOError)
                        else f"cannot write to '{safeio.display_path(out_dir)}': {exc.strerror or exc}") from None
    return BuildResult(out_dir, tuple(out_dir / n for n in OUTPUT_FILES), status)


__all__ = ["build", "render", "BuildResult", "SiteError"]
