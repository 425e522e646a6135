"""The built page in headless Chromium: EX·01 against the Python model, Can you, the gate, every screen."""

import json
import random
import re

import pytest

from drills.site import build, data
from generator.model import catalogue
from labs.gate import verdict as gate
from labs.records import folder as records
from tests.conftest import REPO
from tests.labs import synthetic
from tests.site.conftest import ARTIFACTS

pytestmark = pytest.mark.slow

OUTPUT_IDS = {"intensity": "ex01-intensity", "verdict": "ex01-verdict", "attainable": "ex01-attainable",
              "floor": "ex01-floor"}
NUMERIC = ("intensity", "attainable", "floor", "t_math", "t_comms", "flops", "bytes")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    build.build(out, REPO / "bench")
    return out


def url(folder):
    return (folder / "index.html").as_uri()


def outputs(page):
    return {key: page.text_content(f"#{ident}") for key, ident in OUTPUT_IDS.items()}


def random_cases(rng, count):
    chips = catalogue.load().chips
    cases = []
    for i in range(count):
        chip = rng.choice(chips)
        published = [d for d in ("bf16", "fp8", "int8") if d in chip.peak_flops]
        dtype = rng.choice(["bf16", "f32", "fp8", "int8"]) if i % 7 == 0 else rng.choice(published)
        n = rng.choice([1, 2, 3, 8, 9, 2048, 4096, data.MAX_N]) if i % 11 == 0 else \
            int(round(2 ** rng.uniform(0, 17))) if i % 2 else rng.randint(1, data.MAX_N)
        cases.append((chip.name, rng.choice(data.PAGE_OPS), max(1, min(n, data.MAX_N)), dtype))
    return cases


def rel(a, b):
    return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))


def test_defaults_show_the_seeds_ex01_numbers(page, site):
    page.goto(url(site))
    assert page.input_value("#ex01-chip") == "v5e" and page.input_value("#ex01-op") == "matmul"
    assert page.input_value("#ex01-n") == "2048" and page.input_value("#ex01-dtype") == "bf16"
    assert outputs(page) == {"intensity": "682.7 FLOPs/byte", "verdict": "compute-bound",
                             "attainable": "197 TFLOP/s", "floor": "87.2 µs"}
    assert page.locator("#ex01-point").count() == 1
    assert "T_math     = FLOPs / peak = 1.718e10 / 1.97e14 = 87.2 µs" in page.text_content("#ex01-worked")


def test_changing_chip_op_n_and_dtype_updates_the_outputs(page, site):
    page.goto(url(site))
    before = outputs(page)
    steps = [("select", "#ex01-chip", "h100"), ("select", "#ex01-op", "softmax"), ("fill", "#ex01-n", "4096"),
             ("select", "#ex01-dtype", "fp8"), ("select", "#ex01-op", "embedding"), ("fill", "#ex01-n", "100000"),
             ("select", "#ex01-chip", "v6e"), ("select", "#ex01-op", "skinny_matmul")]
    state = {"chip": "v5e", "op": "matmul", "n": 2048, "dtype": "bf16"}
    seen = [before]
    for how, selector, value in steps:
        (page.select_option if how == "select" else page.fill)(selector, value)
        key = {"#ex01-chip": "chip", "#ex01-op": "op", "#ex01-n": "n", "#ex01-dtype": "dtype"}[selector]
        state[key] = int(value) if key == "n" else value
        ref = data.python_case(state["chip"], state["op"], state["n"], state["dtype"])
        if "error" in ref:  # v6e has no fp8 peak: the CLI's message, outputs blank
            assert page.text_content("#ex01-error") == ref["error"]
            assert outputs(page)["intensity"] == "—"
            page.select_option("#ex01-dtype", "bf16")
            state["dtype"] = "bf16"
            ref = data.python_case(state["chip"], state["op"], state["n"], state["dtype"])
        assert outputs(page) == ref["text"], (state, outputs(page))
        assert page.text_content("#ex01-header") == ref["header"]
        seen.append(outputs(page))
    assert len({json.dumps(s, sort_keys=True) for s in seen}) >= 6  # the numbers really moved
    for bad in ("0", "-3", "2.5", "", str(data.MAX_N + 1)):
        page.fill("#ex01-n", bad)
        assert "N must be a whole number" in page.text_content("#ex01-error")
        assert outputs(page)["floor"] == "—"


def test_parity_of_the_pages_javascript_with_the_python_model(page, site):
    page.goto(url(site))
    rng = random.Random(20261130)
    cases = random_cases(rng, 1400)
    got = page.evaluate("cases => cases.map(c => window.drillSite.compute(c[0], c[1], c[2], c[3]))", cases)
    worst, compared, errors = 0.0, 0, 0
    for case, js in zip(cases, got):
        ref = data.python_case(*case)
        if "error" in ref:
            assert js == {"error": ref["error"]}, case
            errors += 1
            continue
        for key in NUMERIC:
            worst = max(worst, rel(ref[key], js[key]))
            assert rel(ref[key], js[key]) <= 1e-9, (case, key, ref[key], js[key])
        assert js["bound"] == ref["bound"], case
        assert js["text"] == ref["text"], case
        assert js["header"] == ref["header"], case
        assert js["worked"] == ref["worked"], case
        compared += 1
    assert compared >= 1000 and errors >= 50
    # and the page's own controls show the same strings (a sample through the UI)
    for case in random_cases(random.Random(7), 40):
        page.select_option("#ex01-chip", case[0])
        page.select_option("#ex01-op", case[1])
        page.fill("#ex01-n", str(case[2]))
        page.select_option("#ex01-dtype", case[3])
        ref = data.python_case(*case)
        if "error" in ref:
            assert page.text_content("#ex01-error") == ref["error"]
        else:
            assert outputs(page) == ref["text"], case
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "parity.json").write_text(json.dumps(
        {"cases": len(cases), "compared": compared, "error_cases": errors, "worst_relative_difference": worst}))
    print(f"parity: {compared} cases compared (+{errors} unpublished-dtype errors), worst relative difference {worst:g}")


def test_number_formatting_matches_python_on_ties_and_random_values(page, site):
    page.goto(url(site))
    rng = random.Random(3)
    values = [k / 8 for k in range(0, 400)] + [k / 4 + 1000 for k in range(200)] + \
        [rng.uniform(0, 1) * 10 ** rng.randint(-14, 17) for _ in range(1500)] + [9.9995, 0.00099995, 999.5, 1e16, 2.5e-13]
    got = page.evaluate("""vs => vs.map(v => { const f = window.drillSite.format;
        return [f.fixed(v, 1), f.gfmt(v, 3), f.efmt(v, 3), f.si(v, "B/s"), f.sci(v), f.seconds(v)]; })""", values)
    from generator.model.units import sci, seconds, si
    for v, js in zip(values, got):
        assert js == [f"{v:.1f}", f"{v:.3g}", f"{v:.3e}", si(v, "B/s"), sci(v), seconds(v)], v


def test_can_you_ticks_survive_a_reload(page, site):
    page.goto(url(site))
    assert page.locator("#canyou input[type=checkbox]").count() == 7
    assert page.text_content("#canyou-count") == "0/7"
    page.check("#canyou-3")
    page.check("#canyou-5")
    assert page.text_content("#canyou-count") == "2/7"
    page.reload()
    assert page.is_checked("#canyou-3") and page.is_checked("#canyou-5") and not page.is_checked("#canyou-1")
    assert page.text_content("#canyou-count") == "2/7"
    page.uncheck("#canyou-3")
    for n in (1, 2, 4, 6, 7):
        page.check(f"#canyou-{n}")
    page.reload()
    assert page.text_content("#canyou-count") == "6/7" and not page.is_checked("#canyou-3")
    assert "done" not in (page.get_attribute("#mastery-canyou", "class") or "")
    page.check("#canyou-3")
    assert page.text_content("#canyou-count") == "7/7"
    assert "done" in page.get_attribute("#mastery-canyou", "class")
    # the course's published records in bench/ are never the learner's: only the ticks count here
    assert page.text_content("#mastery-count") == "1/3"


def _bench(tmp_path, kind):
    bench = tmp_path / kind / "bench"
    bench.mkdir(parents=True)
    if kind == "pass":  # GATE 00 as the seed words it: all five within 2x
        records.save(synthetic.record(tmp_path / kind, {"softmax": 1.5}), bench, "lab-0.1-gpu")
    elif kind == "fail":
        records.save(synthetic.record(tmp_path / kind, {"softmax": 3.0}), bench, "lab-0.1-gpu")
    return bench


@pytest.mark.parametrize("kind,word", [("pass", "PASS"), ("fail", "FAIL"), ("none", "OPEN")])
def test_the_gate_reflects_the_bench_folder(page, tmp_path, kind, word):
    bench = _bench(tmp_path, kind)
    assert gate.evaluate(bench).status == {"pass": "pass", "fail": "fail", "none": "pending"}[kind]
    out = tmp_path / "site"
    build.build(out, bench)
    page.goto(url(out))
    assert page.text_content("#gate-status") == word
    records_rows = page.locator("table.gate tr.record")
    est_rows = page.locator("table.gate tr.est")
    assert page.text_content("#mastery-count") == "0/3"  # published records never tick the learner's header
    if kind == "none":
        assert records_rows.count() == 0 and est_rows.count() == 5
        assert "floor" in est_rows.first.text_content() and "est." in est_rows.first.text_content()
    else:
        assert records_rows.count() == 1 and est_rows.count() == 0
        row = records_rows.first.text_content()
        assert "NVIDIA H200" in row and "4096" in row and ("5/5" if kind == "pass" else "4/5") in row
        assert ("UNEXPLAINED: softmax" in row) == (kind == "fail")
        assert page.locator("#gate-why > li").count() == 1
        # built from the learner's own records folder, the same record ticks the header
        mine = tmp_path / "mine-site"
        build.build(mine, REPO / "bench", records_dir=bench)
        page.goto(url(mine))
        assert page.text_content("#mastery-count") == ("2/3" if kind == "pass" else "1/3")


def test_screenshot_and_no_console_errors(page, site):
    page.goto(url(site))
    page.select_option("#ex06-chip", "v6e")
    assert page.locator('[data-ex06-chip="v6e"]').is_visible()
    assert not page.locator('[data-ex06-chip="v5e"]').is_visible()
    page.select_option("#ex06-chip", "v5e")
    page.click("details summary")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "index.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    assert page.problems == []


# ---------------------------------------------------------------- every screen

WIDTHS = (320, 390, 1280)
# How many pairs of the plot's text labels overlap on screen.
OVERLAPS_JS = """() => { const r = Array.from(document.querySelectorAll('#ex01-plot text')).map(t => t.getBoundingClientRect());
  let n = 0;
  for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++)
    if (r[i].left < r[j].right - 1 && r[j].left < r[i].right - 1 && r[i].top < r[j].bottom - 1 && r[j].top < r[i].bottom - 1) n++;
  return n; }"""

# The WCAG contrast of every element's own text against the nearest opaque background behind it.
CONTRAST_JS = """() => {
  const rgb = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return p.length === 3 ? [...p, 1] : p; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bg = (el) => { for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor); if (c && c[3] > 0.99) return c;
      if (e.tagName.toLowerCase() === "svg") { const r = e.querySelector(".frame"); } }
    return [255, 255, 255, 1]; };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest("[hidden]") || el.tagName === "SCRIPT" || el.tagName === "OPTION") continue;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const inSvg = el instanceof SVGElement;
    const fg = rgb(inSvg ? style.fill : style.color);
    const back = inSvg ? [251, 252, 253, 1] : bg(el);  // svg text sits on the plot's frame (#fbfcfd) or white
    const [a, b] = [lum(fg), lum(back)];
    out.push({ text: el.textContent.trim().slice(0, 40), tag: el.tagName, cls: String(el.className.baseVal ?? el.className),
               ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) });
  }
  return out;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_every_screen_fits_without_sideways_scroll(browser, site, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(url(site))
        for chip in ("v5e", "v6e", "h100"):  # every EX·06 block and a GPU's roofline
            page.select_option("#ex06-chip", chip)
            page.select_option("#ex01-chip", chip)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (chip, width)
            assert page.evaluate(OVERLAPS_JS) == 0, (chip, width)
        page.click("details summary")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # the plot's text renders at 11 px or more, at every width
        sizes = page.evaluate("""() => Array.from(document.querySelectorAll('#ex01-plot text')).map(t => {
            const m = t.getScreenCTM(); return Math.hypot(m.a, m.b) * parseFloat(getComputedStyle(t).fontSize); })""")
        assert sizes and min(sizes) >= 11, sizes
        # tables that do not fit stack into labelled rows; none is wider than its card
        for table in page.locator("table").all():
            fits = table.evaluate("t => t.getBoundingClientRect().right <= t.closest('.card').getBoundingClientRect().right + 0.5")
            assert fits
        stacked = page.locator("table.gate td").first.evaluate("td => getComputedStyle(td).display")
        assert (stacked == "block") == (width < 640)
        if width < 640:
            label = page.locator("table.gate td").first.evaluate("td => getComputedStyle(td, '::before').content")
            assert label == '"row: "'
        page.select_option("#ex06-chip", "v5e")
        page.select_option("#ex01-chip", "v5e")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"page-{width}px.png"), full_page=True)
    finally:
        context.close()


def test_all_text_has_contrast_of_at_least_4_5(page, site):
    page.goto(url(site))
    page.click("details summary")
    checked = page.evaluate(CONTRAST_JS)
    assert len(checked) > 100
    low = [c for c in checked if c["ratio"] < 4.5]
    assert low == [], low[:10]
    assert any(c["cls"] == "tok-comment" for c in checked)


def test_the_plot_has_a_tick_every_decade_labelled_peak_and_ridge_and_a_legend(page, site):
    page.goto(url(site))
    for chip, op, n in (("v5e", "matmul", "2048"), ("h100", "add", "4096"), ("v6e", "softmax", "100")):
        page.select_option("#ex01-chip", chip)
        page.select_option("#ex01-op", op)
        page.fill("#ex01-n", n)
        labels = page.locator("#ex01-plot text.xtick").all_text_contents() + \
            page.locator("#ex01-plot text.ytick").all_text_contents()
        assert labels and all(re.fullmatch(r"1e-?\d+", t) for t in labels), labels
        xs = [int(t[2:]) for t in page.locator("#ex01-plot text.xtick").all_text_contents()]
        ys = [int(t[2:]) for t in page.locator("#ex01-plot text.ytick").all_text_contents()]
        ticks = page.locator("#ex01-plot line.tickmark").count()
        assert ticks == (xs[-1] - xs[0] + 1) + (ys[-1] - ys[0] + 1)  # a tick at every decade on both axes
        assert xs == list(range(xs[0], xs[-1] + 1)) and ys == list(range(ys[0], ys[-1] + 1))  # 1280 px: all labelled
        worked = page.text_content("#ex01-worked")
        ridge = re.search(r"= ([0-9.e+]+) FLOPs/byte \(", worked).group(1)
        peak = re.search(r"peak ([0-9.e+]+) FLOP/s", worked).group(1)
        assert page.text_content("#ex01-ridge-label") == f"ridge {ridge}"
        assert page.text_content("#ex01-peak-label") == f"peak {peak} FLOP/s"
        assert page.evaluate(OVERLAPS_JS) == 0, (chip, op, n)
    legend = page.text_content("#ex01-legend")
    assert "roof" in legend and "ridge" in legend and "compute-bound" in legend and "memory-bound" in legend
    key = page.text_content("#ex06-key")
    assert "size" in key and "bandwidth" in key
    page.select_option("#ex06-chip", "v5e")
    assert "SMEM" in page.text_content('[data-ex06-chip="v5e"]')
    page.select_option("#ex06-chip", "h100")
    assert "SMEM" in page.text_content('[data-ex06-chip="h100"]') and "256 kB" in page.text_content('[data-ex06-chip="h100"]')


def test_ids_are_unique_and_every_link_resolves(page, site):
    page.goto(url(site))
    ids = page.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids))
    hrefs = page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    for href in hrefs:
        if href.startswith("#"):
            assert page.locator(f"[id='{href[1:]}']").count() == 1, href
        else:
            assert href.startswith("https://") or (site / href).is_file(), href


# Each word of the gate table's cells (file names in <code> aside) and the line boxes it takes.
BROKEN_WORDS_JS = """() => {
  const broken = [];
  for (const td of document.querySelectorAll('table.gate td')) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('code')) continue;
      const re = /\\S+/g; let m;
      while ((m = re.exec(node.textContent))) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("width", (1280, 1024))
def test_the_gate_table_breaks_no_word_at_desktop_widths(browser, tmp_path, width):
    """At 1280 px the gate table broke "pract/ice" and "2026-/11-29"."""
    out = tmp_path / "s"
    build.build(out, REPO / "bench")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(url(out))
        assert page.locator("table.gate td").count() > 10
        assert "practice" in page.text_content("table.gate") and "2026-11-29" in page.text_content("table.gate")
        assert page.evaluate(BROKEN_WORDS_JS) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        fits = page.locator("table.gate").evaluate(
            "t => t.getBoundingClientRect().right <= t.closest('.card').getBoundingClientRect().right + 0.5")
        assert fits
    finally:
        context.close()
