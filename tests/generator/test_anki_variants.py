"""The variant deck end to end: built by `drill deck`, imported into a real Anki collection, rendered by
Anki's own templates, run in Chromium, and held to `drill check` and to ``generator.export.rotation``.

Anki renders a card's question and answer (``Card.question()`` / ``Card.answer()``, the back
including the front through ``{{FrontSide}}``). Two ways a client shows them:

- **desktop** (Anki desktop, AnkiDroid's newer reviewer): one document; each side's HTML replaces
  the card area and its scripts are run again, as Anki's reviewer does;
- **mobile** (a client that reloads the page on flip, AnkiDroid #2868): front and back are two
  documents of one origin in one tab.

Storage is working, throwing (every access raises, as in a locked-down webview) or cleared
between front and back; clocks at noon, across midnight, in 1969 and with a front left open 7 hours.
Expectations come from `drill export`, `drill check` and the Python rule at test time, never from
numbers written here.
"""

import datetime as dt
import functools
import json
from pathlib import Path

import pytest
from anki.collection import Collection  # noqa: I001  (anki's own import order)
from click.testing import CliRunner

from drills.cli import cli
from generator.problems import generate as gen
from generator.model import answers
from generator.export import rotation
from generator.problems.families.base import show
from anki.frontend_pb2 import SchedulingStatesWithContext
from anki.scheduler_pb2 import SchedulingContext
from bench.anki_schedule import import_package
from tests.site.conftest import browser  # noqa: F401  (the one module-scoped Chromium fixture, shared with the site tests)

pytestmark = pytest.mark.slow

CHIP = "v5e"
FAMILIES = tuple(__import__("generator.problems.families", fromlist=["FAMILIES"]).FAMILIES)
ORIGIN = "http://card.test"
CONTEXT = "/_anki/getSchedulingStatesWithContext"
T0 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.timezone.utc)
MEDIA: dict[str, bytes] = {}
BODY = "card card1"
NIGHT = "card card1 nightMode night_mode"  # what Anki desktop and AnkiDroid put on <body> in night mode

# Every access to web storage raises, as in a webview that forbids it.
THROWING = """(() => { for (const name of ['sessionStorage', 'localStorage']) {
  Object.defineProperty(window, name, {configurable: true, get() { throw new DOMException('denied', 'SecurityError'); }});
}})();"""
# Anki's reviewer: a side's HTML replaces the card area, then its scripts are run (re-created).
SHOW_SIDE = """html => { const qa = document.getElementById('qa'); qa.innerHTML = html;
  for (const old of Array.from(qa.querySelectorAll('script'))) {
    const s = document.createElement('script');
    for (const a of Array.from(old.attributes)) s.setAttribute(a.name, a.value);
    s.text = old.text; old.replaceWith(s);
  } }"""


def drill_json(*argv):
    result = CliRunner().invoke(cli, list(argv), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    """The deck for one chip, imported: {skill: (question html, answer html, data)}."""
    root = tmp_path_factory.mktemp("variants")
    path = root / "deck.apkg"
    argv = ["deck", "--chip", CHIP, "-o", str(path)]
    for f in FAMILIES:
        argv += ["--family", f]
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    col = Collection(str(root / "collection.anki2"))
    try:
        import_package(col, path)
        cards = {}
        for nid in col.find_notes(""):
            note = col.get_note(nid)
            data = json.loads(note["Data"])
            c = note.cards()[0]
            cards[data["skill"]] = (c.question(), c.answer(), data)
        media = Path(col.media.dir())
        MEDIA.update({f.name: f.read_bytes() for f in media.iterdir() if f.is_file()})
    finally:
        col.close()
    return cards


def page_html(card_html: str, body_class: str = BODY, css: str | None = None) -> str:
    return (f'<!doctype html><html><head><meta charset="utf-8"><style>{css or CSS}</style></head>'
            f'<body class="{body_class}"><div id="qa">{card_html}</div></body></html>')


CSS = __import__("generator.export.card", fromlist=["CSS"]).CSS


class Reviewer:
    """One tab showing a card's front then its back, from one origin, on a clock the test sets.

    ``mode``: "desktop" (one document) or "mobile" (a document per side); ``storage``: "working",
    "throwing" or "cleared" (emptied between front and back: sessionStorage and localStorage)."""

    def __init__(self, browser, mode="mobile", storage="working", timezone="UTC", javascript=True,
                 body_class=BODY, viewport=None, css=None, count=None):
        self.context = browser.new_context(timezone_id=timezone, java_script_enabled=javascript,
                                           viewport=viewport or {"width": 800, "height": 900})
        if storage == "throwing":
            self.context.add_init_script(THROWING)
        self.mode, self.storage, self.body_class, self.css = mode, storage, body_class, css
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" and not
                     m.location.get("url", "").endswith(CONTEXT) else None)  # (a 404 where Anki serves none)
        self.count = count  # the scheduling seed desktop Anki's reviewer serves, or None: no such endpoint
        self.sides = {"shell": ""}
        self.context.route(f"{ORIGIN}/**", self._serve)
        self.clock_set = False

    def _serve(self, route):
        name = route.request.url.rsplit("/", 1)[-1]
        if route.request.url.endswith(CONTEXT):
            if self.count is None:
                route.fulfill(status=404, body="")
            else:  # Anki's own message, as its reviewer serves it
                msg = SchedulingStatesWithContext(context=SchedulingContext(deck_name="d", seed=self.count))
                route.fulfill(status=200, content_type="application/binary", body=msg.SerializeToString())
        elif name in MEDIA:  # the package's own media, as Anki's media folder serves them
            route.fulfill(status=200, content_type="image/svg+xml", body=MEDIA[name])
        else:
            route.fulfill(status=200, content_type="text/html; charset=utf-8",
                          body=page_html(self.sides[name], self.body_class, self.css))

    def _at(self, at):
        if at is not None:
            self.page.clock.set_fixed_time(at)

    def front(self, html: str, at: dt.datetime | None = T0):
        if self.mode == "desktop":  # the reviewer's page is loaded once and kept, card after card
            self._at(at)
            if self.page.url != f"{ORIGIN}/shell":
                self.page.goto(f"{ORIGIN}/shell")
            self.page.evaluate(SHOW_SIDE, html)
        else:
            self.sides["front"] = html
            self._at(at)
            self.page.goto(f"{ORIGIN}/front")
        return self.page

    def back(self, html: str, at: dt.datetime | None = None):
        if self.storage == "cleared":
            self.page.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
        if self.mode == "desktop":
            self._at(at)
            self.page.evaluate(SHOW_SIDE, html)
        else:
            self.sides["back"] = html
            self._at(at)
            self.page.goto(f"{ORIGIN}/back")
        return self.page

    def attrs(self, selector: str, name: str):
        return self.page.eval_on_selector_all(selector, f"els => els.map(e => e.getAttribute('{name}'))")

    def visible_text(self, selector: str) -> str:
        return self.page.eval_on_selector(selector, "e => e.innerText")

    def close(self):
        self.context.close()
        assert self.errors == [], self.errors


@functools.lru_cache(maxsize=None)
def exported(family: str) -> dict:
    """`drill export` for the deck's selection, by problem id."""
    rows = drill_json("export", "--format", "json", "--family", family, "--chip", CHIP, "--count", "16")
    return {r["id"]: r for r in rows}


def floor_note(deck):
    return next(x for s, x in deck.items() if s.startswith(f"floor:{CHIP}:") and len(x[2]["v"]) >= 8)


def expected_pick(data, at: dt.datetime, utc_offset_hours: float = 0, last: str | None = None) -> str:
    ids = [v["id"] for v in data["v"]]
    day = rotation.anki_day(at.timestamp() * 1000, -utc_offset_hours * 60)
    return ids[rotation.pick(data["seed"], day, len(ids), ids.index(last) if last in ids else None)]


def typed_right(data, problem_id) -> str:
    """The shown answer's number in the card's unit, as the card asks for it."""
    v = next(v for v in data["v"] if v["id"] == problem_id)
    return repr(v["k"] * v["b"] / v["s"])


# Clocks: (front time, back time). Midnight: 10 s before / 20 s after; a front left open 7 hours.
CLOCKS = {
    "noon": (T0, T0 + dt.timedelta(minutes=1)),
    "midnight": (T0.replace(hour=23, minute=59, second=50), T0.replace(hour=23, minute=59, second=50)
                 + dt.timedelta(seconds=30)),
    "1969": (dt.datetime(1969, 7, 20, 20, 17, tzinfo=dt.timezone.utc),
             dt.datetime(1969, 7, 20, 20, 18, tzinfo=dt.timezone.utc)),
    "left open": (T0.replace(hour=20), T0.replace(hour=20) + dt.timedelta(hours=7)),
}


@pytest.mark.parametrize("mode", ["desktop", "mobile"])
@pytest.mark.parametrize("storage", ["working", "throwing", "cleared"])
@pytest.mark.parametrize("clock", list(CLOCKS))
def test_front_and_back_agree_and_the_typed_answer_is_graded(deck, browser, mode, storage, clock):
    question, answer, data = floor_note(deck)
    front_at, back_at = CLOCKS[clock]
    r = Reviewer(browser, mode=mode, storage=storage)
    try:
        r.front(question, front_at)
        shown = r.attrs(".rk-front", "data-problem-id")
        assert shown == [expected_pick(data, front_at)]  # the Python rule, on the first review
        assert r.visible_text(".rk-front .rk-v:not([hidden]) .rk-prompt")  # never a blank card
        assert r.page.is_visible("input[name=answer]")
        typed = typed_right(data, shown[0])
        r.page.fill("input[name=answer]", typed)
        r.back(answer, back_at)
        assert r.attrs(".rk-front, .rk-back", "data-problem-id") == shown * 2, "front and back disagree"
        assert r.visible_text(".rk-back .rk-v:not([hidden]) .rk-answer")
        assert r.attrs(".rk-back", "data-carried") == ["yes"]
        assert r.attrs(".rk-back", "data-verdict") == ["right"]
        assert r.page.input_value("input[name=answer]") == typed
        row = exported("floor")[shown[0]]
        assert r.visible_text(".rk-back .rk-v:not([hidden]) .rk-answer b") == show(row["answer"]["value"],
                                                                                  row["answer"]["unit"])
    finally:
        r.close()


@pytest.mark.parametrize("clock", ["noon", "1969"])
def test_when_nothing_carries_the_back_says_so_and_still_agrees(deck, browser, clock):
    """Mobile mode, storage throwing and window.name wiped between the sides: the back recomputes the
    front's pick (same day, same memory) and says the typed answer could not be carried."""
    question, answer, data = floor_note(deck)
    front_at, back_at = CLOCKS[clock]
    r = Reviewer(browser, mode="mobile", storage="throwing")
    try:
        r.front(question, front_at)
        shown = r.attrs(".rk-front", "data-problem-id")
        r.page.fill("input[name=answer]", typed_right(data, shown[0]))
        r.page.evaluate("() => { window.name = ''; }")
        r.back(answer, back_at)
        assert r.attrs(".rk-front, .rk-back", "data-problem-id") == shown * 2
        assert r.attrs(".rk-back", "data-carried") == ["no"] and r.attrs(".rk-back", "data-verdict") == ["none"]
        assert r.visible_text(".rk-verdict") == "Not carried: compare by eye."
        assert r.visible_text(".rk-why") == ("Your typed answer could not be carried to the back on this "
                                             "client: compare by eye.")
    finally:
        r.close()


@pytest.mark.parametrize("mode,storage", [("desktop", "working"), ("desktop", "throwing"),
                                          ("mobile", "working"), ("mobile", "throwing")])
def test_consecutive_reviews_never_repeat_where_the_client_remembers(deck, browser, mode, storage):
    """Reviews on one day (relearning steps) and on the following days: each shows another variant
    than the review before; the picks are the Python rule's, given the last one shown."""
    question, answer, data = floor_note(deck)
    times = [T0, T0 + dt.timedelta(minutes=10), T0 + dt.timedelta(minutes=11), T0 + dt.timedelta(days=1),
             T0 + dt.timedelta(days=1, minutes=10)] + [T0 + dt.timedelta(days=n) for n in (3, 8, 16, 32)]
    r = Reviewer(browser, mode=mode, storage=storage)
    shown = []
    try:
        for at in times:
            r.front(question, at)
            front = r.attrs(".rk-front", "data-problem-id")[0]
            assert front == expected_pick(data, at, last=shown[-1] if shown else None)
            r.back(answer, at + dt.timedelta(seconds=20))
            assert r.attrs(".rk-back", "data-problem-id") == [front]
            shown.append(front)
    finally:
        r.close()
    assert all(a != b for a, b in zip(shown, shown[1:])), shown


@pytest.mark.parametrize("mode,storage", [("desktop", "working"), ("desktop", "throwing"), ("mobile", "throwing")])
def test_where_anki_serves_the_review_count_it_decides(deck, browser, mode, storage):
    """Anki's own SchedulingStatesWithContext message, served at the reviewer's endpoint: each review
    shows ``rotation.count_pick`` of its seed on both sides (across midnight and 4 am too), and the
    consecutive reviews never repeat, with storage or without."""
    question, answer, data = floor_note(deck)
    ids = [v["id"] for v in data["v"]]
    times = [T0, T0.replace(hour=23, minute=59, second=50), T0.replace(hour=3, minute=59, second=50)
             + dt.timedelta(days=1), T0 + dt.timedelta(days=3)]
    shown = []
    for reps, at in enumerate(times):
        seed = 1_796_233_648_168 * 256 + reps
        r = Reviewer(browser, mode=mode, storage=storage, count=seed)
        try:
            r.front(question, at)
            r.page.wait_for_function(f"() => document.querySelector('.rk-front').getAttribute('data-problem-id')"
                                     f" === {json.dumps(ids[rotation.count_pick(data['seed'], seed, len(ids))])}")
            front = r.attrs(".rk-front", "data-problem-id")[0]
            r.back(answer, at + dt.timedelta(seconds=20))
            r.page.wait_for_function("() => document.querySelector('.rk-back').getAttribute('data-carried') !== ''")
            assert r.attrs(".rk-front, .rk-back", "data-problem-id") == [front] * 2
            shown.append(front)
        finally:
            r.close()
    assert all(a != b for a, b in zip(shown, shown[1:])), shown


def test_the_day_is_the_local_calendar_day(deck, browser):
    question, _, data = floor_note(deck)
    at = T0.replace(hour=20)  # 20:00 UTC is already tomorrow in Tokyo (UTC+9)
    r = Reviewer(browser, timezone="Asia/Tokyo")
    try:
        r.front(question, at)
        assert r.attrs(".rk-front", "data-problem-id") == [expected_pick(data, at, 9)]
        assert rotation.anki_day(at.timestamp() * 1000, -540) == rotation.anki_day(at.timestamp() * 1000, 0) + 1
    finally:
        r.close()


def test_the_scripts_rotation_is_pythons(deck, browser):
    """``rudriteCard.pick`` against ``rotation.pick`` over K, days (1969 included) and last shown."""
    question, _, data = floor_note(deck)
    cases = [(seed, day, k, last) for seed in (1, data["seed"], rotation.MODULUS - 1)
             for k in (1, 2, 3, 5, 8, 16, 64) for day in list(range(-400, -380)) + list(range(20_500, 20_560))
             for last in (None, 0, (day * 7) % k)]
    r = Reviewer(browser)
    try:
        r.front(question, T0)
        got = r.page.evaluate("cs => cs.map(([s, d, k, l]) => window.rudriteCard.pick(s, d, k, l))", cases)
    finally:
        r.close()
    expected = [rotation.pick(*c) for c in cases]
    assert len(cases) > 5000 and got == expected


def test_without_script_the_first_variant_shows_complete(deck, browser):
    question, answer, data = next(x for s, x in deck.items() if s.startswith("floor:") and len(x[2]["v"]) > 1)
    r = Reviewer(browser, javascript=False)
    try:
        r.sides["back"] = answer
        r.page.goto(f"{ORIGIN}/back")
        blocks = r.page.eval_on_selector_all(".rk-v", "els => els.map(e => [e.dataset.v, e.offsetParent !== null])")
        assert [v for v, visible in blocks if visible] == ["0", "0", "0"]  # front, back's answer, back's working
        assert r.attrs(".rk-front, .rk-back", "data-problem-id") == [data["v"][0]["id"]] * 2
        # No answer box and no claim that anything is checked: nothing runs to check it.
        assert not r.page.is_visible("input[name=answer]")
        assert "checked" not in r.visible_text(".rk-front")
        row = exported("floor")[data["v"][0]["id"]]
        assert r.visible_text(".rk-back .rk-v[data-v='0'] .rk-answer b") == show(row["answer"]["value"],
                                                                                 row["answer"]["unit"])
        r.page.click(".rk-back .rk-v[data-v='0'] .rk-full summary")  # the full working's fold, opened
        solution = r.visible_text(".rk-back .rk-v[data-v='0'] .rk-solution")
        for step in row["solution"]:  # the worked solution, its sources included, alignment spaces kept
            assert step.replace("\n", " ") in solution.replace("\n", " ")
    finally:
        r.close()


# ---- one answer grammar: the card and `drill check` -------------------------------------------------
# The card's grammar (card.how_to_answer): one number (thousands separators, exponent, sign) with or
# without a unit word, or a listed choice.
OTHER_UNITS = {"1,0,0": ["ms", "us", "µs", "ns", "s", "microseconds", "USEC", "12"],
               "0,1,0": ["B", "bytes", "KiB", "MB", "GiB", "GB", "gigabytes"],
               "0,0,1": ["FLOP", "GFLOP", "TFLOPs", "teraflops"],
               "-1,0,1": ["TFLOP/s", "FLOP/s", "TFLOPS", "TFLOPs", "PFLOP/s", "GFLOPs per s"],
               "-1,1,0": ["GB/s", "TB/s", "B/s", "GBps", "gigabytes per second", "Gb/s"],
               "0,-1,1": ["FLOPs/byte", "FLOP/byte", "flops per byte", "FLOP/B"],
               "0,0,0": ["", "k", "chips", "tokens"]}
WRONG_KIND = {"1,0,0": "3 GiB", "0,1,0": "12 us", "0,0,1": "4 GB", "-1,0,1": "5 us", "-1,1,0": "7 FLOP",
              "0,-1,1": "9 s", "0,0,0": "3 us"}


def card_inputs(v: dict) -> list[str]:
    if "c" in v:
        aliases = [a for a, full in answers.card_reader()["aliases"].items()
                   if any(c.lower() == full for c in v["c"])]
        return (list(v["c"]) + [c[:1] for c in v["c"]] + [c.upper() + " bound" for c in v["c"]]
                + [c.replace("x", " x ") for c in v["c"]] + [f"({c.replace('x', ', ')})" for c in v["c"]]
                + aliases + ["zzz", ""])
    unit_value = v["k"] * v["b"] / v["s"]  # the key in the card's unit
    out = [repr(unit_value), f"{unit_value:.3g}", f"{unit_value:,.4f}", f"{unit_value:.3e}", f"-{unit_value:.3g}",
           f"{unit_value * (1 + 3 * v['t']):.5g}", "1e400", WRONG_KIND[v["x"]], "1,2345"]
    for u in [v["u"]] + OTHER_UNITS[v["x"]]:
        try:  # the value in that unit (a unit drill check refuses: any number will do)
            scale = answers.parse_unit(u.replace(" per ", "/")).scale if u != "12" else 1.0
        except answers.AnswerError:
            scale = 1.0
        value = v["k"] * v["b"] / scale
        out += [f"{value:.4g} {u}".strip(), f"{value:,.2f}{u}"]
    for w, _ in v["w"][:3]:
        w_unit = w * v["b"] / v["s"]
        out += [f"{w_unit:.4g}", f"{w_unit:.4g} {v['u']}".strip()]
    return out


def check_verdict(problem_id: str, typed: str) -> tuple[str, str]:
    out = drill_json("check", "--problem-id", problem_id, "--answer", typed, "--json")
    if out["status"] == "needs-unit":
        return "needs-unit", ""
    verdict = "none" if out["status"] != "graded" else ("right" if out["correct"] else "wrong")
    return verdict, out["misconception"] or ""


def test_the_card_reads_answers_as_drill_check_does(deck, browser, monkeypatch):
    """Inputs of >= 300 variants (numbers with and without units, separators, exponents, workings,
    choices) through the card's reader in Chromium and through `drill check`: 0 differences."""
    monkeypatch.setattr(gen, "problem", functools.lru_cache(maxsize=None)(gen.problem))
    chosen = []
    for family in FAMILIES:  # notes of every family, up to 24 variants a family
        notes = [s for s in deck if s.split(":")[0] == family]
        while notes and sum(len(deck[s][2]["v"]) for s in chosen if s.startswith(family + ":")) < 24:
            chosen.append(notes.pop(0))
    r = Reviewer(browser)
    total, variants, mismatches, kinds = 0, 0, [], set()
    try:
        r.front(deck[chosen[0]][0], T0)
        for skill in chosen:
            data = deck[skill][2]
            cases = [(v, t) for v in data["v"] for t in card_inputs(v) if t is not None]
            cases += [(v, t) for v in data["v"][:1] if "c" not in v
                      for t in ("2*3 " + v["u"], f"({v['k'] * v['b'] / v['s']!r})", f"{v['k'] * v['b'] / v['s']!r}*1",
                                f"{v['k'] * v['b']!r}", f"{v['k'] * v['b'] / v['s']!r}.")]
            got = r.page.evaluate("cs => cs.map(([v, t]) => window.rudriteCard.verdict(v, t))", cases)
            variants += len(data["v"])
            for (v, typed), card_says in zip(cases, got):
                card_says = tuple(card_says)
                expected = check_verdict(v["id"], typed)
                kinds.add(expected)
                total += 1
                if card_says != expected:
                    mismatches.append((v["id"], typed, card_says, expected))
    finally:
        r.close()
    assert variants >= 300 and total >= 3000, (variants, total)
    assert not mismatches, mismatches[:10]
    assert {k[0] for k in kinds} == {"right", "wrong", "needs-unit", "none"}
    assert len({k[1] for k in kinds if k[1]}) >= 5, kinds


def test_the_verdict_names_the_mistake_in_words(deck, browser):
    question, answer, data = next(x for s, x in deck.items() if s.startswith("floor:")
                                  and any(v.get("w") for v in x[2]["v"]))
    r = Reviewer(browser)
    try:
        r.front(question, T0)
        j = next(j for j, v in enumerate(data["v"]) if v["w"])
        v = data["v"][j]
        typed = repr(v["w"][0][0] * v["b"] / v["s"])
        r.back(answer, T0)
        said = r.page.evaluate("([j, t]) => { window.rudriteCard.show(j, t); return [document.querySelector("
                               "'.rk-back').getAttribute('data-misconception'), document.querySelector('.rk-why')"
                               ".innerText, document.querySelector('.rk-why small').textContent]; }", [j, typed])
        mid, text, small = said
        name, explanation = data["m"][mid]
        assert f"The classic mistake: {name}. {explanation}" in text and small == f"({mid})"
        assert f"'{mid}'" not in text
    finally:
        r.close()


# ---- night mode and contrast ------------------------------------------------------------------------
CONTRAST = """() => {
  function rgb(s) { const m = s.match(/[\\d.]+/g).map(Number); return m.length > 3 ? m : m.concat([1]); }
  function lum(c) { const f = x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
                    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); }
  function bg(el) { for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor);
                      if (c[3] > 0) return c; } return [255, 255, 255, 1]; }
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (!el.offsetParent && el.tagName !== 'BODY') continue;
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own && el.tagName !== 'INPUT') continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(bg(el));
    out.push([el.className || el.tagName, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]);
  }
  return [getComputedStyle(document.body).backgroundColor, out];
}"""


@pytest.mark.parametrize("body_class", [BODY, NIGHT, "card card1 nightMode", "card card1 night_mode"])
@pytest.mark.parametrize("verdict", ["right", "wrong"])
def test_both_themes_have_contrast(deck, browser, body_class, verdict):
    question, answer, data = floor_note(deck)
    r = Reviewer(browser, body_class=body_class)
    try:
        r.front(question, T0)
        shown = r.attrs(".rk-front", "data-problem-id")[0]
        v = next(v for v in data["v"] if v["id"] == shown)
        r.page.fill("input[name=answer]", typed_right(data, shown) if verdict == "right" else repr(v["k"] * 7))
        r.back(answer, T0)
        assert r.attrs(".rk-back", "data-verdict") == [verdict]
        background, ratios = r.page.evaluate(CONTRAST)
        night = "nightMode" in body_class or "night_mode" in body_class
        assert (background == "rgb(32, 33, 36)") == night, background
        assert len(ratios) > 5
        low = [(what, round(x, 2)) for what, x in ratios if x < 4.5]
        assert not low, low
    finally:
        r.close()


def test_a_compare_card_shows_both_chips_and_cites_no_test_path(deck):
    compare = [x for s, x in deck.items() if ":compare-" in s]
    assert compare
    for _, answer, data in compare:
        for v in data["v"]:
            # the variant's blocks (its prompt on the front, its answer and its working on the back): two charts in all
            blocks = [part.split('<div class="rk-v"')[0] for part in answer.split(f'data-v="{data["v"].index(v)}"')[1:]]
            assert sum(block.count("<img") for block in blocks) == 2, v["id"]
    for _, answer, _ in deck.values():
        assert "tests/" not in answer and "fixtures/" not in answer


@pytest.mark.parametrize("family", ["miss_reason", "floor", "ridge"])
def test_the_back_fits_a_phone(deck, browser, family):
    """A 390 px wide screen: no back overflows sideways (no long path, long steps wrap)."""
    notes = [x for s, x in deck.items() if s.startswith(family + ":")][:3]
    assert notes
    r = Reviewer(browser, viewport={"width": 390, "height": 800})
    try:
        for question, answer, _ in notes:
            r.front(question, T0)
            r.back(answer, T0)
            assert r.page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        r.close()


@pytest.mark.parametrize("body_class", [BODY, NIGHT])
def test_the_fixed_deck_follows_night_mode_too(browser, tmp_path, body_class):
    from generator.export import anki as export

    path = tmp_path / "fixed.apkg"
    result = CliRunner().invoke(cli, ["deck", "--fixed", "--family", "floor", "--family", "ridge", "--chip", CHIP,
                                      "--count", "1", "-o", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    col = Collection(str(tmp_path / "collection.anki2"))
    try:
        import_package(col, path)
        answers_html = [col.get_note(n).cards()[0].answer() for n in col.find_notes("")][:4]
        MEDIA.update({f.name: f.read_bytes() for f in Path(col.media.dir()).iterdir() if f.is_file()})
    finally:
        col.close()
    r = Reviewer(browser, mode="mobile", body_class=body_class, css=export.CSS)
    try:
        for html_text in answers_html:
            r.sides["back"] = html_text
            r.page.goto(f"{ORIGIN}/back")
            background, ratios = r.page.evaluate(CONTRAST)
            assert (background == "rgb(32, 33, 36)") == (body_class == NIGHT), background
            assert ratios and not [x for x in ratios if x[1] < 4.5], ratios
    finally:
        r.close()
