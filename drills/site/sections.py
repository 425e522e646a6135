"""HTML fragments of the page built in Python: EX·06, Can you, the gate, the notebook's cells.

Every fragment escapes its text (``html.escape``); every figure carries its
catalogue source as a link to the sources list. Units are in the names.
"""

from __future__ import annotations

import ast
import base64
import binascii
import html
import json
import math
import re
from pathlib import Path
from typing import Any

from generator.model import catalogue, roofline
from generator.io import project_urls, safeio
from generator.model.units import seconds, si
from labs.gate import verdict as lab_gate
from labs.measure import ops as lab_ops

from drills.site import highlight, markdown
from labs.records import folder as lab_records
from labs import calibration_bias
from drills import progress
from generator.problems.generate import registry
from generator.problems import families

esc = html.escape
SHOW_TAG = "site:show"
EST_CHIP, EST_N, EST_DTYPE = "v5e", 4096, "bf16"  # the seed's chip and the notebook's N

# ---------------------------------------------------------------- figures and sources

def cite(fig: catalogue.Figure) -> str:
    title = f' title="{esc(fig.note)}"' if fig.note else ""
    return f'<a class="src" href="#src-{esc(fig.source.key)}"{title}>[{esc(fig.source.key)}]</a>'


def shown(fig: catalogue.Figure | None, text: str | None = None) -> str:
    """A figure's value with its source, or "not published"."""
    if fig is None or fig.value is None:
        return '<span class="np">not published</span>'
    return f'<span class="fig">{esc(text if text is not None else str(fig.value))}</span> {cite(fig)}'


def sources_list(cat: catalogue.Catalogue) -> str:
    """The sources, each linked where its address is on the web; a repository file (the course
    seed) is not part of the built site, so it is named, not linked."""
    def title(s: catalogue.Source) -> str:
        if re.match(r"^https?://", s.url or ""):
            return f'<a href="{esc(s.url)}">{esc(s.title)}</a>'
        return f"{esc(s.title)} (the course's own text, <code>{esc(s.url)}</code>; not part of this page)"

    items = "".join(
        f'<li id="src-{esc(s.key)}"><code>[{esc(s.key)}]</code> {title(s)},'
        f" retrieved {esc(s.retrieved)}{(' · ' + esc(s.note)) if s.note else ''}</li>"
        for s in cat.sources.values())
    return f'<ul class="sources">{items}</ul>'


# ---------------------------------------------------------------- EX·06

CAP_RANGE = (1e3, 1e12)   # bytes: the capacity bars' log axis
BW_RANGE = (1e9, 1e15)    # bytes/s: the bandwidth bars' log axis


def _bar(value: float | None, lo_hi: tuple[float, float], kind: str) -> str:
    if value is None or value <= 0:
        return '<div class="track"></div>'
    lo, hi = lo_hi
    width = max(1.0, min(100.0, 100 * (math.log10(value) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))))
    return f'<div class="track"><div class="bar {kind}" style="width:{width:.1f}%"></div></div>'


def _level(name: str, what: str, cap: catalogue.Figure | None, cap_text: str | None,
           bw: float | None, bw_html: str, extra: str = "") -> str:
    cap_value = float(cap.value) if cap is not None and cap.value is not None else None
    return (f'<div class="level"><div class="lname"><strong>{esc(name)}</strong><br><small>{esc(what)}</small></div>'
            f'<div class="lbars"><div class="row">{_bar(cap_value, CAP_RANGE, "cap")}'
            f'<span class="val">size: {shown(cap, cap_text)}</span></div>'
            f'<div class="row">{_bar(bw, BW_RANGE, "bw")}<span class="val">bandwidth: {bw_html}</span></div>'
            f'{extra}</div></div>')


def _mxu_squares(shape: list[int] | None, count: int | None) -> str:
    if not shape or not count:
        return ""
    side = 24 * shape[0] / 128  # a 256x256 array is drawn twice as wide as a 128x128 one
    squares = "".join(f'<span class="mxu" style="width:{side:.0f}px;height:{side:.0f}px"></span>' for _ in range(count))
    return f'<div class="row mxus" title="{count} MXUs of {shape[0]}x{shape[1]}">{squares}</div>'


def hierarchy_block(chip: catalogue.Chip, cat: catalogue.Catalogue) -> str:
    """One chip's memory hierarchy: HBM, VMEM, vector registers, MXU (GPUs: HBM, L2, SMEM)."""
    hbm_bw = chip.figures["hbm_bytes_per_s"]
    hbm = _level("HBM", "off-chip high-bandwidth memory", chip.figure("hbm_bytes"),
                 si(chip.hbm_bytes, "B"), chip.hbm_bytes_per_s, shown(hbm_bw, si(chip.hbm_bytes_per_s, "B/s")))
    levels = [hbm]
    if chip.kind == "tpu":
        vmem = chip.figure("vmem_bytes")
        vmem_text = f"{si(float(vmem.value), 'B')} ({float(vmem.value) / 2**20:g} MiB)" if vmem else None
        ratio = cat.fact("vmem_to_mxu_over_hbm_bandwidth")
        vmem_bw = float(ratio.value) * chip.hbm_bytes_per_s
        levels.append(_level("VMEM", "on-chip scratchpad, managed by the kernel", vmem, vmem_text, vmem_bw,
                             f'<span class="fig">about {esc(si(vmem_bw, "B/s"))}</span> '
                             f'(VMEM→MXU ≈ {ratio.value:g}× HBM) {cite(ratio)}'))
        grid = cat.fact("vpu_grid")
        levels.append(_level("SMEM", "scalar memory, the TPU's scalar unit", chip.figure("smem_bytes"), None, None,
                             '<span class="np">not published</span>'))
        levels.append(_level("vector registers", "the VPU's working set", None, None, None,
                             '<span class="np">not published</span>',
                             f'<div class="row"><span class="val">VPU grid: {shown(grid, "(%d, %d)" % tuple(grid.value))}'
                             f"</span></div>"))
        shape, per_core, cores = chip.figure("mxu_shape"), chip.figure("mxus_per_core"), chip.figure("tensorcores_per_chip")
        count = int(per_core.value) * int(cores.value) if per_core and cores else None
        shape_text = "x".join(map(str, shape.value)) if shape else None
        mxu_extra = (f'<div class="row"><span class="val">MXUs per core: {shown(per_core)} · TensorCores per chip: '
                     f'{shown(cores)} · per chip: {count if count else "not published"}</span></div>'
                     + _mxu_squares(shape.value if shape else None, count))
        levels.append(
            f'<div class="level"><div class="lname"><strong>MXU</strong><br><small>systolic matmul unit</small></div>'
            f'<div class="lbars"><div class="row"><span class="val">array: {shown(shape, shape_text)}</span></div>'
            f"{mxu_extra}</div></div>")
    else:
        l2, smem, sms = chip.figure("l2_bytes"), chip.figure("smem_bytes_per_sm"), chip.figure("sm_count")
        levels.append(_level("L2 cache", "shared by all SMs", l2, si(float(l2.value), "B") if l2 else None,
                             None, '<span class="np">not published</span>'))
        levels.append(_level("SMEM", "per SM (shared memory)", smem, si(float(smem.value), "B") if smem else None,
                             None, '<span class="np">not published</span>',
                             f'<div class="row"><span class="val">SMs: {shown(sms)}</span></div>'))
        levels.append('<p class="note">VMEM, the VPU and the MXU are TPU units; for a GPU the catalogue carries '
                      "the levels above.</p>")
    return (f'<div class="hierarchy" data-ex06-chip="{esc(chip.name)}"><h4>{esc(chip.display)}</h4>'
            + "".join(levels) + "</div>")


def ex06(cat: catalogue.Catalogue, default: str) -> str:
    options = "".join(f'<option value="{esc(c.name)}"{" selected" if c.name == default else ""}>{esc(c.display)}</option>'
                      for c in cat.chips)
    blocks = "".join(hierarchy_block(c, cat) for c in cat.chips)
    scale = (f"bars on log scales: size {si(CAP_RANGE[0], 'B')} to {si(CAP_RANGE[1], 'B')}, "
             f"bandwidth {si(BW_RANGE[0], 'B/s')} to {si(BW_RANGE[1], 'B/s')}")
    key = ('<p class="key" id="ex06-key"><span><span class="swatch cap"></span>size (capacity)</span> '
           '<span><span class="swatch bw"></span>bandwidth</span> '
           '<span><span class="swatch mxu"></span>one MXU, drawn to its array width</span></p>')
    return (f'<label>chip <select id="ex06-chip">{options}</select></label>'
            f'{key}<p class="note">{esc(scale)}</p>{blocks}')


# ---------------------------------------------------------------- Can you

# An item shown by a lab record (a family's ``MASTERY`` rule with ``lab``, ``generator.problems.families.mastery_rules``) is trained by naming the
# reasons for real misses and then explaining one's own: not by its vocabulary card.
LAB_ITEM_COMMANDS = ("drill quiz --family miss_reason", "drill explain")


def can_you_items() -> list[dict[str, Any]]:
    """The seven items, each with the commands that train it: the `drill quiz` family from the
    vocabulary spec's check, or for an item mastered by a lab record, ``LAB_ITEM_COMMANDS``."""

    rules = families.mastery_rules()

    out = []
    for item in registry().can_you_items():
        n = item["n"]
        check = item["check"]
        command = f"drill quiz --family {check['family']}"
        if check["chip"]:
            command += f" --chip {check['chip']}"
        commands = LAB_ITEM_COMMANDS if any(rule.lab for rule in rules.get(n, ())) else (command,)
        out.append({"n": n, "text": item["text"], "command": commands[0], "commands": list(commands)})
    return out


def can_you(items: list[dict[str, Any]]) -> str:
    rows = "".join(
        f'<li><label><input type="checkbox" id="canyou-{i["n"]}" data-n="{i["n"]}"> {esc(i["text"])}</label> '
        + ", then ".join(f'<code class="cmd">{esc(c)}</code>' for c in i["commands"]) + "</li>" for i in items)
    return f'<ol id="canyou">{rows}</ol>'


# ---------------------------------------------------------------- the gate

STATUS_WORD = {"pass": "PASS", "fail": "FAIL", "practice": "OPEN", "pending": "OPEN"}
GATE_COLUMNS = ("row", "device", "N", "date", "within 2x", "misses explained", "record")


_HYPHENATED = re.compile(r"\w+(?:-\w+)+")


def _keep_hyphenated(html: str) -> str:
    """A hyphenated word of a cell's text ("memory-bound", "2026-11-29") kept on one line: the browser
    would break it at its hyphen. Text only, outside ``<code>`` (file names may break anywhere)."""
    out, in_code = [], 0
    for part in re.split(r"(<[^>]*>)", html):
        if part.startswith("<"):
            in_code += 1 if part.startswith("<code") else -1 if part.startswith("</code") else 0
            out.append(part)
        else:
            out.append(part if in_code else _HYPHENATED.sub(r'<span class="nw">\g<0></span>', part))
    return "".join(out)


def _cells(values: list[str], cls: str) -> str:
    """A table row whose cells carry their column name (shown above each value when the table stacks)."""
    tds = "".join(f'<td data-label="{esc(col)}">{_keep_hyphenated(v)}</td>' for col, v in zip(GATE_COLUMNS, values))
    return f'<tr class="{cls}">{tds}</tr>'


def gate_view(bench_dir: Path) -> dict[str, Any]:
    """The published records' gate: status word, headline, rows as HTML (records, then est. rows),
    and ``why``: for each record, why it does not count (or that it counts)."""
    result = lab_gate.evaluate(bench_dir)
    headline = lab_gate.format_lines(result)[0]
    rows, why = [], []
    order = {"pass": 0, "fail": 1, "incomplete": 2, "practice": 3}
    for r in sorted(result.rows, key=lambda r: (order.get(r.status, 9), r.path)):
        explained = [m for m in r.misses if m not in r.unexplained]
        misses = ", ".join(explained) or "none"
        if r.unexplained:
            misses += f"; UNEXPLAINED: {', '.join(r.unexplained)}"
        name = Path(r.path).name
        rows.append(_cells([esc(r.status), esc(r.device_kind), str(r.size), esc(r.date[:10]), f"{r.within_2x}/{r.ops}",
                            esc(misses), f"<code>{esc(name)}</code>"], f"record {esc(r.status)}"))
        reasons = list(getattr(r, "why_not", []) or [])
        items = "".join(f"<li>{esc(w)}</li>" for w in reasons) if reasons else \
            f"<li>counts: {esc(r.status)}</li>"
        why.append(f'<li><code>{esc(name)}</code> ({esc(r.device_kind)}, N={r.size}): '
                   f'{"does not count" if reasons else "counts"}<ul>{items}</ul></li>')
    for skip in result.skipped:
        name = Path(skip["path"]).name
        rows.append(f'<tr class="skipped"><td data-label="row">skipped</td><td colspan="5" data-label="why">'
                    f'{esc(skip["reason"])}</td><td data-label="record"><code>{esc(name)}</code></td></tr>')
        why.append(f"<li><code>{esc(name)}</code>: does not count<ul><li>{esc(skip['reason'])}</li></ul></li>")
    if result.status not in ("pass", "fail"):  # no counted record yet: the roofline holds the slot
        chip = catalogue.get(EST_CHIP)
        for name in lab_ops.SEED_OPS:
            est = roofline.estimate(chip, lab_ops.OPS[name].cost(EST_N, EST_DTYPE))
            rows.append(_cells(["est.", f"{esc(chip.display)} (roofline)", str(EST_N), "—",
                                f"{esc(lab_ops.OPS[name].label)}: floor {esc(seconds(est.floor_s))}, {esc(est.bound)}-bound",
                                "measured half pending", "—"], "est"))
    table = ('<table class="gate stackable"><thead><tr>' + "".join(f"<th>{esc(c)}</th>" for c in GATE_COLUMNS)
             + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    why_html = (f'<ul id="gate-why">{"".join(why)}</ul>' if why else
                '<ul id="gate-why"><li>no published record yet</li></ul>')
    return {"status": result.status, "word": STATUS_WORD[result.status], "headline": headline,
            "criterion": lab_gate.CRITERION, "table": table, "why": why_html, "records": len(result.rows),
            "accelerator_records": sum(r.platform in ("gpu", "tpu") for r in result.rows)}


# ---------------------------------------------------------------- the learner's own records

def learner_state(records_dir: Path | None) -> dict[str, Any]:
    """The mastery header's lab and gate items from the learner's own records folder (None: not read;
    the course's published records are never the learner's)."""
    if records_dir is None:
        return {"read": False, "lab": False, "gate": False, "text": "", "calibration": None}
    result = lab_gate.evaluate(records_dir)
    accelerator = [r for r in result.rows if r.platform in ("gpu", "tpu")]
    return {"read": True, "lab": bool(accelerator), "gate": result.status == "pass",
            "text": f"{len(accelerator)} accelerator record(s) of yours in {records_dir}",
            "calibration": calibration(records_dir)}


def calibration(records_dir: Path) -> dict[str, Any]:
    """The learner's prediction bias and spread over their records, for the page: the numbers of
    ``labs.calibration_bias.prediction_bias`` (the one computation, shared with ``drill progress``):
    median measured/predicted and the fraction within 2x per op kind, and the trend over records as
    ``drill progress`` shows it (``drills.progress.trend``, the one trend)."""

    bias = calibration_bias.prediction_bias(
        (str(loaded.path), loaded.record) for loaded in lab_records.scan(records_dir)
        if loaded.record is not None)
    ops = [{"op": o.op, "runs": o.predictions, "median_ratio": o.median_ratio, "within_2x": o.within_2x}
           for o in bias.ops]
    shown = progress.trend(bias)
    return {"ops": ops, "records": len(bias.runs), "trend": shown.to_dict() if shown else None,
            "trend_line": shown.line() if shown else ""}


def calibration_html(cal: dict[str, Any] | None) -> str:
    if cal is None:
        return ('<p class="note" id="calibration-none">Your prediction bias shows here when the page is built from '
                "your own records: <code>drill site --records DIR</code> (your records folder; "
                "<code>drill lab</code> prints where it is).</p>")
    if not cal["ops"]:
        return '<p class="note" id="calibration-none">No record of yours with your own predictions yet.</p>'
    rows = "".join(
        f'<tr><td data-label="op">{esc(o["op"])}</td><td data-label="runs">{o["runs"]}</td>'
        f'<td data-label="median measured / predicted">{o["median_ratio"]:.2f}×'
        f' ({"faster than you predict" if o["median_ratio"] < 1 else "slower than you predict" if o["median_ratio"] > 1 else "as predicted"})</td>'
        f'<td data-label="within 2x">{o["within_2x"]:.0%}</td></tr>' for o in cal["ops"])
    return ('<table class="calibration stackable" id="calibration"><thead><tr><th>op</th><th>runs</th>'
            "<th>median measured / predicted</th><th>within 2x</th></tr></thead><tbody>" + rows + "</tbody></table>"
            f'<p class="note" id="calibration-trend">{esc(cal["trend_line"])} ({cal["records"]} records)</p>')


# ---------------------------------------------------------------- the notebook

def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _outputs(cell: dict[str, Any]) -> str:
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(f'<pre class="out">{esc(_source({"source": out.get("text", "")}))}</pre>')
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            png = data.get("image/png")
            if isinstance(png, str):
                try:
                    base64.b64decode(png.replace("\n", ""), validate=True)
                    parts.append(f'<img class="out" alt="cell output" src="data:image/png;base64,{png.replace(chr(10), "")}">')
                    continue
                except (binascii.Error, ValueError):
                    pass
            if "text/plain" in data:
                parts.append(f'<pre class="out">{esc(_source({"source": data["text/plain"]}))}</pre>')
        elif kind == "error":
            parts.append(f'<pre class="out err">{esc(str(out.get("ename", "")))}: {esc(str(out.get("evalue", "")))}</pre>')
    return "".join(parts)


def repo_url(nb: dict[str, Any]) -> str | None:
    """The notebook's ``REPO_URL = "..."`` setting, read with ast (never executed)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "REPO_URL" for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value
    return None


def colab_link(url: str | None, notebook_path: str) -> str | None:
    return project_urls.colab_url(url or "", notebook_path)


def notebook_cells(path: Path) -> tuple[str, dict[str, Any]]:
    """The ``site:show`` cells as HTML, and the parsed notebook."""
    nb = json.loads(safeio.read_text_bounded(path))
    parts = []
    for cell in nb.get("cells", []):
        tags = (cell.get("metadata") or {}).get("tags") or []
        if SHOW_TAG not in tags:
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(f'<div class="md-cell">{markdown.render(_source(cell), heading_offset=2, id_prefix="nb-")}</div>')
        elif cell.get("cell_type") == "code":
            parts.append(f'<div class="code-cell"><pre class="code"><code>{highlight.python(_source(cell))}</code></pre>'
                         f"{_outputs(cell)}</div>")
    return "".join(parts), nb
