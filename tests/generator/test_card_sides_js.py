"""The variant card's two sides under Node: front and back agree in every storage state and across
midnight and Anki's 4 am rollover; the review count served by desktop Anki decides where it is served.

The script (``generator.export.card.script()``, filled in as the deck ships it) runs in Node ``vm``
contexts over a small simulated DOM (the card's elements: ``.rk-front``/``.rk-back`` with their
``.rk-v`` variants, the answer box, the data) and a simulated clock (``Date`` replaced). A review is a
front then a back, each side's script run as Anki runs it:

- **client:** "desktop" keeps one page for both sides (the same ``window``), with Anki's
  ``onUpdateHook`` (the reviewer awaits the promises its callbacks return before showing a side);
  "mobile" loads a page per side (a new ``window``; ``window.name`` and the origin's storage survive);
- **storage:** "working"; "absent" (every access to ``sessionStorage``/``localStorage`` throws);
  "cleared" (both emptied between the sides); "nothing" (absent, and ``window.name`` wiped between
  the sides of a mobile client: nothing at all carries);
- **review count:** desktop Anki's scheduling context served at ``/_anki/getSchedulingStatesWithContext``
  (a ``SchedulingStatesWithContext`` message, encoded here by a minimal protobuf writer with the field
  numbers of Anki's ``frontend.proto``/``scheduler.proto``), or no such endpoint (404).

Expected picks come from ``generator.export.rotation`` at test time (``anki_day``, ``pick``,
``count_pick``).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import struct

import pytest

from drills.cmd_generate import card_rules
from generator.problems import families
from generator.problems import generate as gen
from generator.export import card, rotation
from generator.export.variants import skill_notes
from tests.js import run_node

HARNESS = r"""
const vm = require("vm");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));

class El {
  constructor(cls, attrs) { this.cls = cls; this.attrs = Object.assign({}, attrs || {}); this.hidden = false;
                            this.textContent = ""; this.value = ""; this.readOnly = false; this.listeners = {}; }
  getAttribute(n) { return Object.prototype.hasOwnProperty.call(this.attrs, n) ? this.attrs[n] : null; }
  setAttribute(n, v) { this.attrs[n] = String(v); }
  addEventListener(t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); }
  appendChild(c) { this.textContent += c.textContent; }
  matches(sel) {
    return sel.split(",").some((s) => {
      s = s.trim();
      if (s === "input[name=answer]") return this.cls === "input";
      return s.startsWith(".") && this.cls === s.slice(1);
    });
  }
}
// A side's elements, in document order: the front's (the back repeats them through {{FrontSide}}).
function side(data, back) {
  const k = data.v.length, els = [new El("rk-front", {"data-problem-id": data.v[0].id})];
  for (let i = 0; i < k; i++) { const v = new El("rk-v", {"data-v": String(i)}); v.hidden = i > 0; els.push(v); }
  const type = new El("rk-type"); type.hidden = true; els.push(type, new El("input"));
  const js = new El("rk-js"); js.hidden = true; els.push(js);
  const d = new El("rk-data"); d.textContent = JSON.stringify(data); els.push(d);
  if (back) {
    els.push(new El("rk-back", {"data-problem-id": data.v[0].id, "data-verdict": "none",
                                "data-misconception": "", "data-carried": ""}), new El("rk-verdict"));
    for (let i = 0; i < k; i++) { const v = new El("rk-v", {"data-v": String(i)}); v.hidden = i > 0; els.push(v); }
  }
  return els;
}
function documentOf(els) {
  return { readyState: "complete",
           querySelector: (s) => els.find((e) => e.matches(s)) || null,
           querySelectorAll: (s) => els.filter((e) => e.matches(s)),
           createElement: () => new El("small") };
}
function storage(map) {
  return { getItem: (k) => (Object.prototype.hasOwnProperty.call(map, k) ? map[k] : null),
           setItem: (k, v) => { map[k] = String(v); }, removeItem: (k) => { delete map[k]; },
           clear: () => { for (const k of Object.keys(map)) delete map[k]; } };
}
function newWindow(tab, c) {
  const w = { name: tab.name, location: { protocol: "http:" }, setTimeout, clearTimeout };
  if (c.hook) w.onUpdateHook = [];
  for (const [name, map] of [["sessionStorage", tab.session], ["localStorage", tab.local]]) {
    Object.defineProperty(w, name, { configurable: true, get() {
      if (c.storage === "absent" || c.storage === "nothing") throw new Error("SecurityError: denied");
      return storage(map);
    } });
  }
  w.fetch = (url, opts) => {
    tab.fetches.push([url, opts.method, opts.headers["Content-Type"]]);
    if (url !== "/_anki/getSchedulingStatesWithContext" || c.context === null)
      return Promise.resolve({ ok: false, status: 404 });
    const bytes = Uint8Array.from(c.context);
    return Promise.resolve({ ok: true, arrayBuffer: () => Promise.resolve(bytes.buffer) });
  };
  return w;
}
function clockDate(at) {
  const FakeDate = function (t) { this.t = t; };
  FakeDate.now = () => at[0];
  FakeDate.prototype.getTimezoneOffset = function () { return at[1]; };
  return FakeDate;
}
const tick = () => new Promise((r) => setImmediate(r));  // a turn of the event loop (setTimeout(0) waits >= 1 ms)
const CARD = new vm.Script(input.script, { filename: "card.js" });  // compiled once, run in each side's context
// One side: its script run in the window's context on the side's DOM; then, as Anki does, every
// onUpdateHook callback awaited (or, without hooks, the page left to settle).
async function runSide(ctx, w, els, at) {
  ctx.document = documentOf(els);
  ctx.Date = clockDate(at);
  if (w.onUpdateHook) w.onUpdateHook.length = 0;
  CARD.runInContext(ctx);
  if (w.onUpdateHook) await Promise.all(w.onUpdateHook.map((f) => f()));
  for (let i = 0; i < 5; i++) await tick();
  if (!w.rudriteCard) throw new Error("the card script did not run (safely() caught an error)");
}
function shown(els, cls) { return els.filter((e) => e.cls === cls).map((e) => e.getAttribute("data-problem-id")); }
function visible(els) { return els.filter((e) => e.cls === "rk-v" && !e.hidden).map((e) => e.getAttribute("data-v")); }

async function review(c, tab) {
  const data = input.notes[c.note];
  let w = newWindow(tab, c), ctx = vm.createContext({ window: w });
  const front = side(data, false);
  await runSide(ctx, w, front, c.front);
  const out = { front: shown(front, "rk-front")[0], frontVisible: visible(front) };
  const box = front.find((e) => e.cls === "input");
  box.value = c.typed;
  (box.listeners.input || []).forEach((f) => f());
  tab.name = w.name;
  if (c.storage === "cleared") { for (const k of Object.keys(tab.session)) delete tab.session[k];
                                 for (const k of Object.keys(tab.local)) delete tab.local[k]; }
  if (c.storage === "nothing") tab.name = "";
  if (c.client === "mobile") { w = newWindow(tab, c); ctx = vm.createContext({ window: w }); }
  else if (c.storage === "nothing") w.name = "";
  const back = side(data, true);
  await runSide(ctx, w, back, c.back);
  tab.name = w.name;
  out.back = shown(back, "rk-back")[0];
  out.backFront = shown(back, "rk-front")[0];
  out.backVisible = visible(back);
  out.carried = back.find((e) => e.cls === "rk-back").getAttribute("data-carried");
  out.fetches = tab.fetches.splice(0);
  return out;
}
(async () => {
  const out = [];
  for (const c of input.cases) {
    const tab = { name: "", session: {}, local: {}, fetches: [] };
    if (c.last !== null) tab.local["rudrite:last:" + input.notes[c.note].skill] = c.last;
    out.push(await review(c, tab));
  }
  // The script's protobuf reader on each encoded message, and its count rule.
  const probe = vm.createContext({ window: {} });
  probe.document = documentOf(side(input.notes[0], false));
  CARD.runInContext(probe);
  const seeds = input.messages.map((m) => probe.window.rudriteCard.contextSeed(Uint8Array.from(m)));
  const picks = input.counts.map((c) => probe.window.rudriteCard.countPick(c[0], c[1], c[2]));
  process.stdout.write(JSON.stringify({ reviews: out, seeds, picks }));
})().catch((e) => { process.stderr.write(String(e.stack || e)); process.exit(1); });
"""

CLIENTS = ("desktop", "mobile")
STORAGES = ("working", "absent", "cleared", "nothing")
UTC = dt.timezone.utc
# Front and back times (UTC) with a time zone offset (JavaScript's getTimezoneOffset: UTC minus local).
CLOCKS = {
    "midnight": (dt.datetime(2026, 3, 10, 23, 59, 50, tzinfo=UTC), dt.timedelta(seconds=20), 0),
    "midnight in Tokyo": (dt.datetime(2026, 3, 10, 14, 59, 50, tzinfo=UTC), dt.timedelta(seconds=20), -540),
    "noon": (dt.datetime(2026, 3, 10, 12, 0, tzinfo=UTC), dt.timedelta(minutes=1), 0),
    "4 am": (dt.datetime(2026, 3, 11, 3, 59, 50, tzinfo=UTC), dt.timedelta(seconds=20), 0),
    "1969": (dt.datetime(1969, 7, 20, 23, 59, 55, tzinfo=UTC), dt.timedelta(seconds=30), 0),
}


# --- a minimal protobuf writer: Anki's SchedulingStatesWithContext (frontend.proto) ---
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _message(number: int, body: bytes) -> bytes:
    return _key(number, 2) + _varint(len(body)) + body


def scheduling_context_message(seed: int, rng: random.Random) -> bytes:
    """``SchedulingStatesWithContext``: states (1: current and the four next states, nested, with
    varints, floats and strings), context (2: deck_name 1, seed 2, decay 3 and desired_retention 4,
    floats)."""
    normal = _message(1, _key(1, 0) + _varint(rng.randint(1, 400)) + _key(2, 0) + _varint(rng.randint(0, 400))
                      + _key(3, 5) + struct.pack("<f", 2.5) + _key(4, 0) + _varint(rng.randint(0, 9)))
    states = b"".join(_message(n, _message(1, normal) + _message(2, b'{"x":"\xc2\xb5"}')) for n in range(1, 6))
    context = (_message(1, "Rudrite Kernels::Stage 0::floor".encode()) + _key(2, 0) + _varint(seed)
               + _key(3, 5) + struct.pack("<f", 0.5) + _key(4, 5) + struct.pack("<f", 0.9))
    return _message(1, states) + _message(2, context)


def anki_seed(card_id: int, reps: int) -> int:
    """Anki's scheduling seed as the installed Anki computes it (card id times 256 plus the review count;
    test_anki_repeats takes the real one from Anki's queue)."""
    return card_id * 256 + reps


@pytest.fixture(scope="module")
def results():
    rng = random.Random(31)
    problems = gen.generate(families=list(families.FAMILIES), chips=["v5e"], count=3, seed=5)
    notes = [n.to_dict() for n in skill_notes(problems, card_rules(), gen.registry().by_id, 6)]
    multi = [i for i, n in enumerate(notes) if len(n["v"]) >= 3][:6]
    assert len(multi) >= 3
    cases = []
    for clock, (front, wait, offset) in CLOCKS.items():
        for client in CLIENTS:
            for storage in STORAGES:
                for counted in (False, True):
                    for i in multi[:3]:
                        ids = [v["id"] for v in notes[i]["v"]]
                        seed = anki_seed(rng.randint(1_600_000_000_000, 1_900_000_000_000), rng.randint(0, 300))
                        last = rng.choice([None, rng.choice(ids)])
                        ms = front.timestamp() * 1000
                        cases.append({
                            "clock": clock, "client": client, "storage": storage, "note": i, "last": last,
                            "hook": client == "desktop", "typed": "12.5", "seed": seed if counted else None,
                            "context": list(scheduling_context_message(seed, rng)) if counted else None,
                            "front": [ms, offset], "back": [ms + wait.total_seconds() * 1000, offset]})
    messages = [list(scheduling_context_message(s, rng)) for s in
                (1, 127, 128, 2**35 + 7, anki_seed(1_796_233_648_168, 0), anki_seed(1_796_233_648_168, 1), 2**53 - 1)]
    broken = [m[:-1] for m in messages[:3]] + [[0x12, 0x05, 0x10], [0x0A, 0x80], []]
    counts = [[rng.randint(1, rotation.MODULUS - 1), rng.randint(0, 2**53 - 1), rng.randint(1, 64)]
              for _ in range(2000)] + [[s, c, k] for s in (1, 7) for c in range(0, 40) for k in (1, 2, 3, 16)]
    out = run_node(HARNESS, {"script": card.script(), "notes": notes, "cases": cases,
                             "messages": messages + broken, "counts": counts})
    return {"notes": notes, "cases": cases, "reviews": out["reviews"], "seeds": out["seeds"],
            "n_messages": len(messages), "picks": out["picks"], "counts": counts}


def expected_front(notes, case) -> str:
    data = notes[case["note"]]
    ids = [v["id"] for v in data["v"]]
    if case["seed"] is not None:
        return ids[rotation.count_pick(data["seed"], case["seed"], len(ids))]
    day = rotation.anki_day(*case["front"])
    last = ids.index(case["last"]) if case["last"] is not None else None
    return ids[rotation.pick(data["seed"], day, len(ids), last)]


def test_a_back_agrees_with_its_front_in_every_storage_state(results):
    """Across midnight (local, and in Tokyo), at noon, in 1969: on both clients, in every storage state,
    with and without the review count, the back shows the front's variant, on both of its halves."""
    bad = []
    for c, r in zip(results["cases"], results["reviews"]):
        if c["clock"] == "4 am" and c["seed"] is None and c["storage"] == "nothing":
            continue  # the day changes between the sides and nothing tells the back the front's day
        if not (r["front"] == r["back"] == r["backFront"] and len(r["frontVisible"]) == 1
                and r["frontVisible"] * 2 == r["backVisible"]):
            bad.append((c["clock"], c["client"], c["storage"], c["seed"], r))
    assert not bad, bad[:3]
    assert {(c["client"], c["storage"]) for c in results["cases"]} == {(a, b) for a in CLIENTS for b in STORAGES}


def test_the_front_shows_the_rules_pick(results):
    """The review count where Anki serves it, else the day rule on Anki's day (4 am) with the remembered
    last variant (only where storage works)."""
    bad = []
    for c, r in zip(results["cases"], results["reviews"]):
        want = expected_front(results["notes"], dict(c, last=c["last"] if c["storage"] in ("working", "cleared")
                                                     else None))
        if r["front"] != want:
            bad.append((c["clock"], c["client"], c["storage"], c["seed"], want, r["front"]))
    assert not bad, bad[:3]


def test_midnight_is_not_the_cards_day_boundary_but_4_am_is():
    at = dt.datetime(2026, 3, 10, 23, 59, 50, tzinfo=UTC).timestamp() * 1000
    assert rotation.anki_day(at, 0) == rotation.anki_day(at + 20_000, 0)
    four = dt.datetime(2026, 3, 11, 3, 59, 50, tzinfo=UTC).timestamp() * 1000
    assert rotation.anki_day(four, 0) + 1 == rotation.anki_day(four + 20_000, 0)
    assert rotation.anki_day(four, -540) == rotation.anki_day(four + 20_000, -540)  # 12:59 in Tokyo


def test_with_the_review_count_the_4_am_rollover_changes_nothing(results):
    """Nothing carried, the day changing between the sides: the review count still gives both sides one
    variant (without it the back can only apply the new day's rule; the docs say so)."""
    rows = [(c, r) for c, r in zip(results["cases"], results["reviews"])
            if c["clock"] == "4 am" and c["storage"] == "nothing"]
    assert rows and all(r["front"] == r["back"] for c, r in rows if c["seed"] is not None)
    assert all(r["carried"] == "no" for c, r in rows if c["client"] == "mobile")


def test_the_card_asks_anki_for_its_scheduling_context_as_the_reviewer_does(results):
    """POST with Content-Type application/binary (Anki refuses, with a warning, anything else)."""
    fetches = {tuple(f) for r in results["reviews"] for f in r["fetches"]}
    assert fetches == {("/_anki/getSchedulingStatesWithContext", "POST", "application/binary")}


def test_the_protobuf_reader_finds_the_seed_and_refuses_a_broken_message(results):
    n = results["n_messages"]
    want = [1, 127, 128, 2**35 + 7, anki_seed(1_796_233_648_168, 0), anki_seed(1_796_233_648_168, 1), 2**53 - 1]
    assert results["seeds"][:n] == want
    assert results["seeds"][n:] == [None] * (len(results["seeds"]) - n)


def test_the_count_rule_is_pythons_and_never_repeats_consecutive_reviews(results):
    want = [rotation.count_pick(*c) for c in results["counts"]]
    assert results["picks"] == want
    for k in (2, 3, 16):
        seq = [rotation.count_pick(12345, anki_seed(1_796_233_648_168, reps), k) for reps in range(100)]
        assert all(a != b for a, b in zip(seq, seq[1:])) and len(set(seq)) == k


def test_the_template_holds_no_mathjax_delimiter():
    """Anki's desktop reviewer loads and runs MathJax on a card whose text holds ``\\(`` or ``\\[``."""
    for text in card.templates():
        assert not re.search(r"\\[(\[]", text), re.search(r".{30}\\[(\[].{30}", text)
