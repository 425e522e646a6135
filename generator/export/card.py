"""The variant card: its fields' HTML, its templates and the small inline script that picks a variant.

``front_html`` and ``back_html`` write every variant complete; ``SCRIPT`` (``card.js`` beside this
module) only chooses a variant, carries the front's answer to the back and checks a typed answer,
following ``generator.export.rotation`` and ``generator.model.answers``.
Details: docs/internals.md.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from generator.io import safeio
from generator.problems import misconceptions
from generator.model import answers
from generator.export import rotation
from generator.export.variants import SkillNote, Variant
from generator.problems.families.base import show
from generator.problems.problem import Problem

if TYPE_CHECKING:  # the renderers' annotation only
    from generator.problems.misconceptions import WrongAnswer

FIELDS = ("Skill", "Front", "Back", "Data")

QFMT = ('{{Front}}'
        # Hidden until the script runs: without script nothing would read what is typed.
        '<div class="rk-type" hidden><input name="answer" aria-label="Your answer" placeholder="Your answer" '
        'autocomplete="off" autocapitalize="off" spellcheck="false"></div>'
        '<script type="application/json" class="rk-data">{{Data}}</script>'
        '<script>{{SCRIPT}}</script>')
AFMT = '{{FrontSide}}<hr id="answer">{{Back}}<div class="rk-meta">{{Skill}}</div>'

# Anki desktop and AnkiDroid put the classes on <body> itself ("card card1 nightMode night_mode");
# older clients put .night_mode on an element around the card: both are covered.
_NIGHT = ".card.nightMode, .card.night_mode, .nightMode .card, .night_mode .card"
CSS = f""".card {{ font-family: sans-serif; font-size: 18px; text-align: left; color: #202124; background: #fff; }}
.rk-how {{ margin-top: .6em; font-size: 14px; color: #5f6368; }}
.rk-fact {{ margin-top: .6em; font-size: 14px; color: #5f6368; font-style: italic; }}
.rk-hint {{ margin-top: .6em; font-size: 14px; }}
.rk-type {{ margin-top: .8em; }}
.rk-type input {{ font-size: 18px; width: 12em; max-width: 100%; color: #202124; background: #fff; }}
.rk-verdict {{ font-size: 16px; margin: .3em 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.rk-why {{ font-size: 13px; color: #5f6368; }}
.rk-verdict:empty, .rk-why:empty {{ display: none; }}
.rk-why small, .rk-mistakes small {{ font-size: 11px; }}
.rk-full summary {{ font-size: 14px; cursor: pointer; }}
.rk-back[data-verdict="right"] .rk-verdict {{ color: #137333; }}
.rk-back[data-verdict="wrong"] .rk-verdict {{ color: #a50e0e; }}
.rk-answer {{ font-size: 20px; margin: .5em 0; }}
.rk-solution ol {{ font-family: monospace; font-size: 13px; padding-left: 1.5em; }}
.rk-solution li {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
.rk-figure img {{ background: #fff; max-width: 100%; }}
.rk-meta {{ margin-top: 1em; font-size: 11px; color: #5f6368; }}
.rk-mistakes {{ font-size: 13px; color: #5f6368; }}
"""
# Night mode, for both deck forms (the fixed deck's CSS in generator.export.anki ends with it too).
NIGHT_CSS = f"""{_NIGHT} {{ color: #e8eaed; background: #202124; }}
{", ".join(f"{n} .rk-{c}" for n in _NIGHT.split(", ") for c in ("how", "fact", "meta", "mistakes", "why"))} {{ color: #bdc1c6; }}
{", ".join(f"{n} .rk-back[data-verdict=right] .rk-verdict" for n in _NIGHT.split(", "))} {{ color: #81c995; }}
{", ".join(f"{n} .rk-back[data-verdict=wrong] .rk-verdict" for n in _NIGHT.split(", "))} {{ color: #f28b82; }}
{", ".join(f"{n} a" for n in _NIGHT.split(", "))} {{ color: #8ab4f8; }}
"""
CSS += NIGHT_CSS

# How long a side waits for desktop Anki's scheduling context before it settles for the day rule (ms).
CONTEXT_WAIT_MS = 1500

# The whole card logic (card.js, shipped as package data); plain ES5 so old AnkiDroid/AnkiMobile webviews run it. No formula and no
# unit typed here: the note's data says what the answer, scales, tolerances and wrong answers are,
# READER (generated from generator.model.answers.card_reader) what the units are, and the rotation is
# generator.export.rotation's, step for step.
SCRIPT = safeio.read_text_bounded(Path(__file__).with_name("card.js")).rstrip("\n")


def _text(s: str) -> str:
    return html.escape(s, quote=False).replace("\n", "<br>")


def how_to_answer(v: Variant) -> str:
    """The line on the front that says what the answer box reads (the card's accepted inputs), as HTML:
    the unit a bare number is read in, or the choices, in a few words (the box takes what `drill check`
    takes: docs/anki.md). The part saying it is checked is shown by the script only (``rk-js``): without
    script nothing is."""
    a = v.problem.answer
    checked = ' <span class="rk-js" hidden>(checked on the back)</span>'
    if a.is_choice:
        return "One of: " + html.escape(", ".join(a.choices), quote=False) + checked
    if v.unit:
        return f"In {html.escape(v.unit, quote=False)} or any unit{checked}"
    return f"A plain count{checked}"


def _hidden(i: int) -> str:
    return "" if i == 0 else " hidden"


def front_html(note: SkillNote) -> str:
    """Every variant's front; only the first one shown unless the script picks another."""
    parts = [f'<div class="rk-front" data-problem-id="{html.escape(note.variants[0].problem.id)}">']
    # A skill with one possible problem says so: its numbers can not change from review to review.
    fact = '<div class="rk-fact">A fact: the same every time.</div>' if len(note.variants) == 1 else ""
    for i, v in enumerate(note.variants):
        p = v.problem
        hint = f'<details class="rk-hint"><summary>Hint</summary>{_text(p.hint)}</details>' if p.hint else ""
        parts.append(f'<div class="rk-v" data-v="{i}"{_hidden(i)}><div class="rk-prompt">{_text(p.prompt)}</div>'
                     f'<div class="rk-how">{how_to_answer(v)}</div>{fact}{hint}</div>')
    parts.append("</div>")
    return "".join(parts)


def back_html(note: SkillNote, answer_html: Callable[[Problem], str],
              solution_html: Callable[[Problem, tuple[WrongAnswer, ...]], str], figures: dict[str, str]) -> str:
    """Every variant's back, laid out for a phone: the answer first, then the verdict line (one line,
    filled in by the script, its word first: "Right: ...", "Wrong: ...") and what it means (``rk-why``),
    then the short working with the full working in a fold (``solution_html``), the figure and the classic mistakes.

    ``answer_html(problem)`` and ``solution_html(problem, wrong)`` are the fixed deck's renderers
    (``generator.export.anki``), so both deck forms show a problem the same way; ``figures`` maps
    a problem id to its figure's ``<img>`` ("" for none). A variant's answer and its working are two
    ``.rk-v`` blocks with the same ``data-v``, around the verdict.
    """
    first = html.escape(note.variants[0].problem.id)
    parts = [f'<div class="rk-back" data-problem-id="{first}" data-verdict="none" data-misconception="" '
             'data-carried="">']
    for i, v in enumerate(note.variants):
        parts.append(f'<div class="rk-v" data-v="{i}"{_hidden(i)}><div class="rk-answer">{answer_html(v.problem)}'
                     '</div></div>')
    parts.append('<div class="rk-verdict"></div><div class="rk-why"></div>')
    for i, v in enumerate(note.variants):
        p = v.problem
        figure = figures.get(p.id, "")
        parts.append(f'<div class="rk-v" data-v="{i}"{_hidden(i)}>'
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
    k = len(note.variants)
    return f"{html.escape(note.skill, quote=False)}{desc} · {k} variant{'s' if k != 1 else ''}"


def script() -> str:
    """``SCRIPT`` with its data filled in: the answer reader's tables and the rotation's constants."""
    reader = json.dumps(answers.card_reader(), ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    reader = reader.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (SCRIPT.replace("{{READER}}", reader).replace("{{MODULUS}}", str(rotation.MODULUS))
            .replace("{{MULTIPLIER}}", str(rotation.MULTIPLIER)).replace("{{STRIDE}}", str(rotation.BLOCK_STRIDE))
            .replace("{{DAY_MS}}", str(rotation.DAY_MS)).replace("{{MAX_CHARS}}", str(answers.MAX_INPUT_CHARS))
            .replace("{{ROLLOVER_MS}}", str(rotation.ROLLOVER_MS)).replace("{{CONTEXT_WAIT_MS}}", str(CONTEXT_WAIT_MS))
            .replace("{{MAX_SAFE_INTEGER}}", str(2**53 - 1)).replace("{{SAME_REL}}", repr(misconceptions.SAME_REL)))


def templates() -> tuple[str, str]:
    """The front and back templates, the script inlined (no external file: works offline everywhere)."""
    return QFMT.replace("{{SCRIPT}}", script()), AFMT
