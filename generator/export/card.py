"""The variant card: its fields' HTML, its templates and the small inline script that picks a variant.

Python writes every variant complete, as HTML, into the note (``front_html`` and
``back_html``: prompt, hint, answer, worked solution with sources, figure, classic
mistakes); all but the first carry ``hidden``, so a client that runs no script
shows the first variant, complete. The data the script needs (``SkillNote.to_dict``:
ids, keys, scales, tolerances, wrong answers) sits in a ``<script type="application/json">``.

The script (``SCRIPT``, inline in the front template; Anki puts the front into the
back through ``{{FrontSide}}``) only chooses and compares, it computes no formula:

- **Choosing:** variant = (local calendar day + the note's offset) mod K, where the
  day is ``floor((Date.now() - timezone offset) / 1 day)``: it changes every day and
  two consecutive days never show the same variant. The front keeps its choice and
  the typed answer in ``sessionStorage`` (where the client allows it); the back uses a
  choice kept in the last 6 hours, so a review crossing midnight still agrees.
- **Checking** a typed answer, on the back: a plain decimal number (``87.2``,
  ``-3``, ``8.72e1``; no unit, no thousands separators, at most 200 characters) is read
  in the variant's unit as ``generator.answers.parse_number`` reads a bare number the
  prompt states the unit of (typed x unit scale / base scale); right when its relative
  error is within ``drill check``'s tolerance; when wrong, the first classic wrong
  answer within the misconception tolerance names the mistake. A choice is read as
  ``answers.parse_choice`` does (case, a trailing "bound", c/m/y/n, a unique prefix).
  Anything else is not checked (``data-verdict="none"``).

Markup for tools and tests: ``.rk-front`` and ``.rk-back`` carry ``data-problem-id``
(the shown variant's export id); ``.rk-back`` carries ``data-verdict``
(right/wrong/none) and ``data-misconception`` (an id or "").
"""

from __future__ import annotations

import html
import json

from generator.export.variants import SkillNote, Variant
from generator.families.base import show

FIELDS = ("Skill", "Front", "Back", "Data")

QFMT = ('{{Front}}'
        '<div class="rk-type"><label>Your answer: <input name="answer" autocomplete="off" autocapitalize="off" '
        'spellcheck="false"></label></div>'
        '<script type="application/json" class="rk-data">{{Data}}</script>'
        '<script>{{SCRIPT}}</script>')
AFMT = '{{FrontSide}}<hr id="answer">{{Back}}<div class="rk-meta">{{Skill}}</div>'

CSS = """.card { font-family: sans-serif; font-size: 18px; text-align: left; color: #202124; background: #fff; }
.rk-how { margin-top: .6em; font-size: 14px; color: #5f6368; }
.rk-hint { margin-top: .6em; font-size: 14px; }
.rk-type { margin-top: .8em; }
.rk-type input { font-size: 18px; width: 12em; }
.rk-verdict { font-size: 18px; margin: .4em 0; }
.rk-back[data-verdict="right"] .rk-verdict { color: #137333; }
.rk-back[data-verdict="wrong"] .rk-verdict { color: #a50e0e; }
.rk-answer { font-size: 20px; margin: .5em 0; }
.rk-solution ol { font-family: monospace; font-size: 13px; padding-left: 1.5em; }
.rk-meta { margin-top: 1em; font-size: 11px; color: #5f6368; }
.rk-mistakes { font-size: 13px; color: #5f6368; }
.nightMode .card, .night_mode .card { color: #e8eaed; background: #202124; }
"""

# The whole card logic; plain ES5 so old AnkiDroid/AnkiMobile webviews run it. No formula: the data
# says what the answer, the scales, the tolerances and the wrong answers are.
SCRIPT = r"""(function () {
  var KEEP_MS = 6 * 3600 * 1000, NUM = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  var ALIAS = {c: "compute", m: "memory", y: "yes", n: "no"};
  function q(s) { return document.querySelector(s); }
  function qa(s) { return Array.prototype.slice.call(document.querySelectorAll(s)); }
  function store() { try { return window.sessionStorage; } catch (e) { return null; } }
  function rel(g, k) { return k === 0 ? (g === 0 ? 0 : Infinity) : Math.abs(g - k) / Math.abs(k); }
  function norm(s) {
    s = s.trim().toLowerCase().split(/\s+/).join(" ");
    ["-bound", " bound"].forEach(function (x) {
      if (s.length > x.length && s.slice(-x.length) === x) s = s.slice(0, -x.length);
    });
    return s;
  }
  function choice(t, cs) {
    var g = norm(t), a = ALIAS[g], hits = [];
    if (!g) return null;
    for (var i = 0; i < cs.length; i++) if (norm(cs[i]) === g) return cs[i];
    for (i = 0; i < cs.length; i++) if (a && norm(cs[i]) === a) return cs[i];
    for (i = 0; i < cs.length; i++) if (norm(cs[i]).indexOf(g) === 0 && hits.indexOf(cs[i]) < 0) hits.push(cs[i]);
    return hits.length === 1 ? hits[0] : null;
  }
  function verdict(v, t) {
    var g, i;
    t = String(t || "").replace(/\u2212/g, "-");
    if (t.length > 200 || !t.trim()) return ["none", ""];
    t = t.trim();
    if (v.c) {
      g = choice(t, v.c);
      if (g === null) return ["none", ""];
      if (g === v.k) return ["right", ""];
      for (i = 0; i < v.w.length; i++) if (v.w[i][0] === g) return ["wrong", v.w[i][1]];
      return ["wrong", ""];
    }
    if (!NUM.test(t) || !isFinite(Number(t)) || !isFinite(Number(t) * v.s)) return ["none", ""];
    g = Number(t) * v.s / v.b;
    if (rel(g, v.k) <= v.t) return ["right", ""];
    var near = Infinity;  // an answer closer to a named mistake than to another edition's is that mistake
    for (i = 0; i < v.w.length; i++) near = Math.min(near, Math.abs(g - v.w[i][0]));
    for (i = 0; i < (v.a || []).length; i++) if (rel(g, v.a[i]) <= v.t && Math.abs(g - v.a[i]) <= near) return ["right", ""];
    var best = -1;
    if (rel(g, v.k) > v.dt) {  // the closest classic mistake is named (ties: the first listed)
      for (i = 0; i < v.w.length; i++) {
        if (rel(g, v.w[i][0]) <= v.dt && (best < 0 || rel(g, v.w[i][0]) < rel(g, v.w[best][0]))) best = i;
      }
    }
    return best < 0 ? ["wrong", ""] : ["wrong", v.w[best][1]];
  }
  function show(d, i, typed) {
    var v = d.v[i], back = q(".rk-back");
    qa(".rk-v").forEach(function (el) { el.hidden = el.getAttribute("data-v") !== String(i); });
    qa(".rk-front, .rk-back").forEach(function (el) { el.setAttribute("data-problem-id", v.id); });
    if (!back) return;
    var r = verdict(v, typed), m = d.m[r[1]], box = q(".rk-verdict"), input = q("input[name=answer]"), t;
    back.setAttribute("data-verdict", r[0]);
    back.setAttribute("data-misconception", r[1]);
    if (input) { input.value = typed || ""; input.readOnly = true; }
    if (box) {
      t = String(typed || "").trim();
      box.textContent = r[0] !== "none" ? "Your answer " + t + (v.u ? " " + v.u : "") + " is " + r[0] + "." :
        t ? "Your answer \u201c" + t + "\u201d was not checked: the card reads a plain number or a listed choice." : "";
      if (m) box.textContent += " That is the classic mistake '" + r[1] + "' (" + m[0] + "): " + m[1];
    }
  }
  function run() {
    var el = q(".rk-data"), d, now = Date.now(), s = store(), key, kept = null, i, input;
    if (!el) return;
    d = JSON.parse(el.textContent);
    key = "rudrite:" + d.skill;
    i = (Math.floor((now - new Date(now).getTimezoneOffset() * 60000) / 86400000) + d.offset) % d.v.length;
    try { kept = JSON.parse(s.getItem(key)); } catch (e) { kept = null; }
    if (!q(".rk-back")) {
      kept = {i: i, at: now, typed: ""};
      input = q("input[name=answer]");
      if (input) input.addEventListener("input", function () {
        kept.typed = input.value;
        try { s.setItem(key, JSON.stringify(kept)); } catch (e) {}
      });
      if (input) input.addEventListener("keydown", function (e) {
        if (e.key === "Enter" && typeof window.pycmd === "function") window.pycmd("ans");
      });
      try { s.setItem(key, JSON.stringify(kept)); } catch (e) {}
    } else if (!(kept && now - kept.at < KEEP_MS && kept.i < d.v.length)) {
      kept = {i: i, typed: ""};
    }
    window.rudriteCard = {data: d, show: function (j, t) { show(d, j, t); }, verdict: verdict};
    show(d, kept.i, kept.typed);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run); else run();
})();"""


def _text(s: str) -> str:
    return html.escape(s, quote=False).replace("\n", "<br>")


def how_to_answer(v: Variant) -> str:
    """The line on the front that says what the answer box reads (the card's accepted inputs)."""
    a = v.problem.answer
    if a.is_choice:
        return "Type one of: " + ", ".join(a.choices) + " (optional; checked on the back)."
    where = f"in {v.unit}" if v.unit else "(a plain count)"
    return (f"Type a number {where}, like 12.5 or 1.25e3, with no unit and no thousands separators "
            f"(optional; checked on the back).")


def _hidden(i: int) -> str:
    return "" if i == 0 else " hidden"


def front_html(note: SkillNote) -> str:
    """Every variant's front; only the first one shown unless the script picks another."""
    parts = [f'<div class="rk-front" data-problem-id="{html.escape(note.variants[0].problem.id)}">']
    for i, v in enumerate(note.variants):
        p = v.problem
        hint = f'<details class="rk-hint"><summary>Hint</summary>{_text(p.hint)}</details>' if p.hint else ""
        parts.append(f'<div class="rk-v" data-v="{i}"{_hidden(i)}><div class="rk-prompt">{_text(p.prompt)}</div>'
                     f'<div class="rk-how">{html.escape(how_to_answer(v), quote=False)}</div>{hint}</div>')
    parts.append("</div>")
    return "".join(parts)


def back_html(note: SkillNote, answer_html, solution_html, figures: dict[str, str]) -> str:
    """Every variant's back (answer, worked solution with sources, figure, classic mistakes), the verdict box.

    ``answer_html(problem)`` and ``solution_html(problem, wrong)`` are the fixed deck's renderers
    (``generator.export.anki``), so both deck forms show a problem the same way; ``figures`` maps
    a problem id to its figure's ``<img>`` ("" for none).
    """
    first = html.escape(note.variants[0].problem.id)
    parts = [f'<div class="rk-back" data-problem-id="{first}" data-verdict="none" data-misconception="">'
             '<div class="rk-verdict"></div>']
    for i, v in enumerate(note.variants):
        p = v.problem
        figure = figures.get(p.id, "")
        parts.append(f'<div class="rk-v" data-v="{i}"{_hidden(i)}><div class="rk-answer">{answer_html(p)}</div>'
                     f'<div class="rk-solution">{solution_html(p, v.wrong)}</div>'
                     f'{f"<div class=rk-figure>{figure}</div>" if figure else ""}</div>')
    parts.append("</div>")
    return "".join(parts)


def data_json(note: SkillNote) -> str:
    """The note's data for the script, safe inside ``<script>`` and Anki's HTML: no <, >, &."""
    text = json.dumps(note.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def skill_html(note: SkillNote) -> str:
    desc = f" · {html.escape(note.description, quote=False)}" if note.description else ""
    return f"{html.escape(note.skill, quote=False)}{desc} · {len(note.variants)} variants"


def templates() -> tuple[str, str]:
    """The front and back templates, the script inlined (no external file: works offline everywhere)."""
    return QFMT.replace("{{SCRIPT}}", SCRIPT), AFMT
