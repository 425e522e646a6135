"""The variant deck end to end: built by `drill deck`, imported into a real Anki collection, rendered by
Anki's own templates, run in Chromium with the clock set to several days, and held to `drill check`.

Anki renders a card's question and answer (``Card.question()`` / ``Card.answer()``, the back
including the front through ``{{FrontSide}}``); the HTML is served from one origin so the front's
``sessionStorage`` reaches the back, as in Anki's reviewer. Expectations come from `drill export`
and `drill check` at test time, never from numbers written here.
"""

import datetime as dt
import functools
import json
import re
from pathlib import Path

import pytest
from anki.collection import Collection  # noqa: I001  (anki's own import order)
from click.testing import CliRunner

from drills.cli import cli
from generator import generate as gen
from generator.families.base import show
from tests.generator.test_anki_real import OPTIONS, ImportAnkiPackageRequest
from tests.site.conftest import browser  # noqa: F401  (the one module-scoped Chromium fixture, shared with the site tests)

pytestmark = pytest.mark.slow

CHIP = "v5e"
# Every family: every exported id is rebuilt by `drill check` (issue 17's seeded ids).
FAMILIES = tuple(__import__("generator.families", fromlist=["FAMILIES"]).FAMILIES)
ORIGIN = "http://card.test"
DAY_MS = 86_400_000
T0 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.timezone.utc)
MEDIA: dict[str, bytes] = {}


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
        col.import_anki_package(ImportAnkiPackageRequest(package_path=str(path), options=OPTIONS))
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


def page_html(card_html: str) -> str:
    return f'<!doctype html><html><head><meta charset="utf-8"></head><body class="card">{card_html}</body></html>'


class Reviewer:
    """One tab showing a card's front then its back, from one origin, on a clock the test sets."""

    def __init__(self, browser, timezone="UTC", javascript=True):
        self.context = browser.new_context(timezone_id=timezone, java_script_enabled=javascript)
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.sides = {}
        self.context.route(f"{ORIGIN}/**", self._serve)

    def _serve(self, route):
        name = route.request.url.rsplit("/", 1)[-1]
        if name in MEDIA:  # the package's own media, as Anki's media folder serves them
            route.fulfill(status=200, content_type="image/svg+xml", body=MEDIA[name])
        else:
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=page_html(self.sides[name]))

    def show(self, side: str, html: str, at: dt.datetime | None = None):
        self.sides[side] = html
        if at is not None:
            self.page.clock.set_fixed_time(at)
        self.page.goto(f"{ORIGIN}/{side}")
        return self.page

    def attrs(self, selector: str, name: str):
        return self.page.eval_on_selector_all(selector, f"els => els.map(e => e.getAttribute('{name}'))")

    def visible_text(self, selector: str) -> str:
        return self.page.eval_on_selector(selector, "e => e.innerText")

    def close(self):
        self.context.close()
        assert self.errors == [], self.errors


def local_day(at: dt.datetime, utc_offset_hours: float = 0) -> int:
    return int((at.timestamp() * 1000 + utc_offset_hours * 3_600_000) // DAY_MS)


@functools.lru_cache(maxsize=None)
def exported(family: str) -> dict:
    """`drill export` for the deck's selection, by problem id."""
    rows = drill_json("export", "--format", "json", "--family", family, "--chip", CHIP, "--count", "8")
    return {r["id"]: r for r in rows}


def test_numbers_change_by_day_and_agree_front_to_back(deck, browser):
    skill = next(s for s, (_, _, d) in deck.items() if s.startswith(f"floor:{CHIP}:") and len(d["v"]) == 8)
    question, answer, data = deck[skill]
    assert "<script>" in answer  # Anki's {{FrontSide}} carried the front's script to the back
    seen = []
    r = Reviewer(browser)
    try:
        for n in range(4):
            at = T0 + dt.timedelta(days=n)
            r.show("front", question, at)
            front_id = r.attrs(".rk-front", "data-problem-id")
            assert len(front_id) == 1
            prompt = r.visible_text(".rk-front")
            v = next(v for v in data["v"] if v["id"] == front_id[0])
            # Type the answer the way the card asks: the number of the shown answer, in the card's unit.
            row = exported("floor")[v["id"]]
            shown_answer = show(row["answer"]["value"], row["answer"]["unit"])
            number, unit = shown_answer.split(" ", 1)
            how = r.visible_text(".rk-front .rk-v:not([hidden]) .rk-how")
            typed = number if f"in {unit}," in how else repr(row["answer"]["value"] / v["s"] * v["b"])
            r.page.fill("input[name=answer]", typed)
            r.show("back", answer, at + dt.timedelta(minutes=1))
            ids = r.attrs(".rk-front, .rk-back", "data-problem-id")
            assert ids == [front_id[0]] * 2, "front and back disagree within a day"
            assert r.visible_text(".rk-front") == prompt
            assert r.page.input_value("input[name=answer]") == typed
            # The variant of the day is (local day + the note's offset) mod K.
            assert front_id[0] == data["v"][(local_day(at) + data["offset"]) % len(data["v"])]["id"]
            # The shown answer is `drill export`'s for the shown id, and `drill check` grades it right.
            visible = r.visible_text(".rk-back .rk-v:not([hidden]) .rk-answer b")
            assert visible == shown_answer
            check = drill_json("check", "--problem-id", front_id[0], "--answer", visible, "--json")
            assert check["correct"] is True and check["expected_display"] == visible
            assert r.attrs(".rk-back", "data-verdict") == ["right"]
            assert r.visible_text(".rk-verdict") == f"Your answer {typed} {v['u']} is right."
            seen.append((front_id[0], visible))
        assert len({i for i, _ in seen}) == 4, "the numbers must change from one day to the next"
        assert len({a for _, a in seen}) > 1
    finally:
        r.close()
    r = Reviewer(browser)
    try:  # A review that crosses midnight keeps the front's variant on the back.
        late = T0.replace(hour=23, minute=59, second=50)
        r.show("front", question, late)
        before = r.attrs(".rk-front", "data-problem-id")[0]
        r.show("back", answer, late + dt.timedelta(seconds=30))
        assert r.attrs(".rk-back", "data-problem-id") == [before]
        assert before != data["v"][(local_day(late) + 1 + data["offset"]) % len(data["v"])]["id"]
    finally:
        r.close()


def test_the_day_is_the_local_calendar_day(deck, browser):
    question, _, data = next(x for s, x in deck.items() if len(x[2]["v"]) == 8)
    at = T0.replace(hour=20)  # 20:00 UTC is already tomorrow in Tokyo (UTC+9)
    r = Reviewer(browser, timezone="Asia/Tokyo")
    try:
        r.show("front", question, at)
        assert r.attrs(".rk-front", "data-problem-id") == [
            data["v"][(local_day(at, 9) + data["offset"]) % len(data["v"])]["id"]]
        assert local_day(at, 9) == local_day(at) + 1
    finally:
        r.close()


def test_without_script_the_first_variant_shows_complete(deck, browser):
    question, answer, data = next(x for s, x in deck.items() if s.startswith("floor:") and len(x[2]["v"]) > 1)
    r = Reviewer(browser, javascript=False)
    try:
        r.show("back", answer, None)
        blocks = r.page.eval_on_selector_all(".rk-v", "els => els.map(e => [e.dataset.v, e.offsetParent !== null])")
        assert [v for v, visible in blocks if visible] == ["0", "0"]  # front part and back part
        assert r.attrs(".rk-front, .rk-back", "data-problem-id") == [data["v"][0]["id"]] * 2
        row = exported("floor")[data["v"][0]["id"]]
        assert r.visible_text(".rk-back .rk-v[data-v='0'] .rk-answer b") == show(row["answer"]["value"],
                                                                                 row["answer"]["unit"])
        solution = r.visible_text(".rk-back .rk-v[data-v='0'] .rk-solution")
        for step in row["solution"]:  # the worked solution, its sources included
            assert " ".join(step.split()) in " ".join(solution.split())
    finally:
        r.close()


# What the card says it reads (card.how_to_answer): a plain decimal number, optional sign and exponent.
CARD_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def typed_cases(v: dict) -> list[str]:
    """Typed answers for one variant: around the key, around each classic wrong answer, and junk."""
    junk = ["", "   ", "abc", "1e400", "1,200", "12 us", "1e", ".", "--3", "0x10", "½"]
    if "c" in v:
        picks = list(v["c"]) + [c[:1] for c in v["c"]] + [c.upper() + " bound" for c in v["c"]]
        return picks + ["c", "m", "y", "n", "zzz"] + junk[:4]
    scale = v["b"] / v["s"]  # a base-SI value -> the card's unit
    key, t, d = v["k"] * scale, v["t"], v["dt"]
    out = [repr(key), f"{key:.3g}", f"{key:.2g}", repr(key * (1 + t)), repr(key * (1 - t)),
           f"{key * (1 + 0.5 * t):.6g}", f"{key * (1 - 1.5 * t):.6g}", f"{-key:.4g}", "0", f"{key:.4e}",
           f"+{key:.5g}", f"{key:.3g}".replace("-", "\u2212")]
    for value, _ in v["w"][:6]:
        w = value * scale
        out += [repr(w), f"{w:.3g}", f"{w * (1 + 0.8 * d):.5g}"]
    return out + junk


def card_expectation(problem_id: str, unit: str, typed: str) -> tuple[str, str]:
    """`drill check`'s verdict on the typed answer as the card reads it (a number in the card's unit)."""
    text = f"{typed} {unit}" if unit and typed.strip() else typed
    out = drill_json("check", "--problem-id", problem_id, "--answer", text, "--json")
    verdict = "none" if out["status"] != "graded" else ("right" if out["correct"] else "wrong")
    return verdict, out["misconception"] or ""


def test_a_thousand_typed_answers_match_drill_check(deck, browser, monkeypatch):
    # drill check rebuilds a problem from its id by redrawing (slow); the rebuild is cached, the check is not.
    monkeypatch.setattr(gen, "problem", functools.lru_cache(maxsize=None)(gen.problem))
    chosen = []
    for family in FAMILIES:
        chosen += [s for s in deck if s.split(":")[0] == family][:2]
    r = Reviewer(browser)
    total, mismatches, kinds, refused = 0, [], set(), []
    try:
        for skill in chosen:
            question, answer, data = deck[skill]
            r.show("back", answer, T0)
            cases = [(j, t) for j, v in enumerate(data["v"]) for t in typed_cases(v)]
            got = r.page.evaluate("""cases => cases.map(([j, t]) => {
                window.rudriteCard.show(j, t);
                const b = document.querySelector('.rk-back');
                return [b.getAttribute('data-problem-id'), b.getAttribute('data-verdict'),
                        b.getAttribute('data-misconception'), document.querySelector('.rk-verdict').textContent];
            })""", cases)
            for (j, typed), (shown_id, verdict, misconception, said) in zip(cases, got):
                if misconception:  # the back names the mistake and gives its one-line explanation
                    name, explanation = data["m"][misconception]
                    assert f"'{misconception}' ({name}): {explanation}" in said
                v = data["v"][j]
                assert shown_id == v["id"]
                unit = re.search(r"Type a number in (.+?), like", r.page.eval_on_selector(
                    f".rk-front .rk-v[data-v='{j}'] .rk-how", "e => e.textContent"))
                if "c" not in v and typed.strip() and not CARD_NUMBER.match(typed.strip().replace("\u2212", "-")):
                    # Outside what the card says it reads ("1,200", "--3", "0x10"): not checked, whatever
                    # drill check makes of it.
                    refused.append((verdict, misconception))
                    continue
                expected = card_expectation(v["id"], unit.group(1) if unit else "", typed)
                kinds.add(expected)
                total += 1
                if (verdict, misconception) != expected:
                    mismatches.append((v["id"], typed, (verdict, misconception), expected))
    finally:
        r.close()
    assert not mismatches, mismatches[:10]
    assert total >= 1000, total
    assert refused and set(refused) == {("none", "")}
    # The cases reach every outcome, including named mistakes.
    assert {k[0] for k in kinds} == {"right", "wrong", "none"}
    assert len({k[1] for k in kinds if k[1]}) >= 5, kinds
