"""Anki packages (.apkg) with genanki, built so that re-importing updates instead of duplicating.

Two forms: the variant deck (``write_variant_deck``: one note per skill, the default) and the
fixed deck (``write_deck``: one note per problem, `drill deck --fixed`). Note type and deck ids
are fixed here.
Details: docs/internals.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import re
import sqlite3
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import genanki

from generator.problems import families, misconceptions
from generator.model import catalogue
from generator.export import atomic_write, card
from generator.export.figures import media_name, roofline_svg
from generator.export.variants import SkillNote
from generator.problems.families import mistakes, ridge
from generator.problems.families.base import show
from generator.problems.problem import Problem
from generator.problems.generate import unseeded_id

ROOT_DECK = "Rudrite Kernels::Stage 0"
MODEL_ID = 1_739_240_001
MODEL_NAME = "Rudrite Kernels problem (v1)"
FIELDS = ("Prompt", "Hint", "Answer", "Solution", "Figure", "Skill", "Id")
QFMT = ('<div class="rk-prompt">{{Prompt}}</div>'
        '{{#Hint}}<div class="rk-hint">{{hint:Hint}}</div>{{/Hint}}')
AFMT = ('{{FrontSide}}<hr id="answer"><div class="rk-answer">{{Answer}}</div>'
        '<div class="rk-solution">{{Solution}}</div>'
        '{{#Figure}}<div class="rk-figure">{{Figure}}</div>{{/Figure}}'
        '<div class="rk-meta">{{Skill}}</div>')
CSS = """.card { font-family: sans-serif; font-size: 18px; text-align: left; color: #202124; background: #fff; }
.rk-hint { margin-top: 1em; font-size: 14px; }
.rk-answer { font-size: 20px; margin: .5em 0; }
.rk-solution ol { font-family: monospace; font-size: 13px; padding-left: 1.5em; }
.rk-full summary { font-size: 14px; cursor: pointer; }
.rk-meta { margin-top: 1em; font-size: 11px; color: #5f6368; }
.rk-mistakes { font-size: 13px; color: #5f6368; }
.rk-solution li { white-space: pre-wrap; overflow-wrap: anywhere; }
.rk-figure img { background: #fff; max-width: 100%; }
""" + card.NIGHT_CSS
# sha256 of the fields and templates MODEL_ID stands for (docs/internals.md, generator/export/anki.py).
MODEL_FINGERPRINT = "95bb2c695ec41e04"

# One subdeck per family, its id the family module's DECK_ID (generator.problems.families.deck_id), fixed forever.
OnItem = Callable[[int, int], None]  # a caller's report of notes built: (done, in all)


def model_fingerprint() -> str:
    blob = json.dumps([FIELDS, QFMT, AFMT], separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def deck_name(family: str) -> str:
    return f"{ROOT_DECK}::{family}"


def note_guid(problem: Problem) -> str:
    """The fixed note's GUID, from the problem id without its draw seed: the seed suffix
    (``@xxxxxxxx``, added so ``drill check`` rebuilds an id in one draw) must not turn the same
    problem of an older deck into a new note on re-import."""
    return str(genanki.guid_for(unseeded_id(problem.id)))


MODEL = genanki.Model(
    MODEL_ID, MODEL_NAME, fields=[{"name": f} for f in FIELDS],
    templates=[{"name": "Problem", "qfmt": QFMT, "afmt": AFMT}], css=CSS)


def _text(s: str) -> str:
    return html.escape(s, quote=False).replace("\n", "<br>")


def answer_html(problem: Problem) -> str:
    a = problem.answer
    if a.is_choice:
        others = " / ".join(html.escape(c) for c in a.choices)
        return f"<b>{html.escape(a.picked)}</b> <small>(one of: {others})</small>"
    band = f" <small>(right within ±{problem.tolerance:.0%})</small>" if problem.tolerance else ""
    return f"<b>{html.escape(show(a.number, a.unit))}</b>{band}"


# A source cited by its path in this repository (a test fixture's lab record): the card names the
# file alone, which says where the number comes from without a path a learner can not open.
_SOURCE_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+([\w.-]+\.json)\b")


# The short working a card's back shows before its "full working" fold: at most this many lines.
SHORT_LINES = 6
_CITATION = re.compile(r"\s*\[[^\]]*\]")  # a bracketed source; the full working keeps it
_ASIDE = ("note:", "constants", "convention", "also right", "[")  # lines the short working leaves to the fold


def short_working(problem: Problem) -> list[str]:
    """The worked solution in at most ``SHORT_LINES`` lines: its computed steps (lines with " = "; the
    sources, conventions and notes are left to the full working), each as ``name = formula = result``
    without the numbers put in between and without its bracketed sources; past ``SHORT_LINES`` steps,
    the first ones and the last that states the answer. A solution with no computed step: its first lines."""
    steps = [line for line in problem.solution if " = " in line and not line.lstrip().startswith(_ASIDE)]
    if not steps:
        steps = [line for line in problem.solution if not line.lstrip().startswith(_ASIDE)] or list(problem.solution)
    a = problem.answer
    shown = show(a.number, a.unit) if not a.is_choice else str(a.choice)
    results = [i for i, line in enumerate(steps) if shown in line]
    last = results[-1] if results else len(steps) - 1  # the step that gives the answer closes the working
    if len(steps) > SHORT_LINES:
        steps = steps[:min(SHORT_LINES - 1, last)] + steps[last:last + 1]
    out = []
    for line in steps[:SHORT_LINES]:
        line = _CITATION.sub("", line) if "[" in line else line
        parts = line.split(" = ")
        out.append(" = ".join(parts if len(parts) <= 3 else (parts[0], parts[1], parts[-1])))
    return out


def solution_html(problem: Problem, wrong: Iterable[misconceptions.WrongAnswer] | None = None) -> str:
    """The short working (``short_working``), then a "full working" fold: the worked steps with their
    sources, then the classic wrong answers to this problem and the mistake behind each
    (``generator.problems.misconceptions``; ``wrong`` when already computed), so the back of the card names a
    slip the learner may have made."""
    short = html.escape("\x1e".join(short_working(problem)), quote=False)
    # One escape over the joined steps (cheaper than one per step); \x1e marks the step breaks.
    text = "\x1e".join(problem.solution)
    if ".json" in text:  # the path pattern is slow to search; few solutions cite a file
        text = _SOURCE_PATH.sub(r"\1", text)
    body = html.escape(text, quote=False)
    steps = "<ol><li>" + body.replace("\x1e", "</li><li>").replace("\n", "<br>") + "</li></ol>"
    return ('<ol class="rk-short"><li>' + short.replace("\x1e", "</li><li>").replace("\n", "<br>") + "</li></ol>"
            '<details class="rk-full"><summary>full working</summary>' + steps + mistakes_html(problem, wrong)
            + "</details>")


def mistakes_html(problem: Problem, wrong_answers: Iterable[misconceptions.WrongAnswer] | None = None) -> str:
    """"If you got X: <the mistake>" for each distinct classic wrong answer ("" when none applies), the
    mistake named once: its step is added only where it says more than the name."""
    shown: dict[str, str] = {}
    if wrong_answers is None:
        wrong_answers = mistakes.wrong_answers(problem)
    for wrong in wrong_answers:
        a = problem.answer
        value = str(wrong.value) if a.is_choice else show(float(wrong.value), a.unit)
        m = wrong.misconception
        said = m.name if _repeats(m.name, wrong.step, value) else f"{m.name} ({wrong.step})"
        shown.setdefault(value, f"{html.escape(said, quote=False)} <small>{html.escape(m.id, quote=False)}</small>")
    if not shown:
        return ""
    items = "".join(f"<li>{html.escape(v, quote=False)}: {why}</li>" for v, why in list(shown.items())[:6])
    return f'<div class="rk-mistakes">If you got one of these, the classic mistake is:<ul>{items}</ul></div>'


def _repeats(name: str, step: str, value: str) -> bool:
    """Whether a mistake's step only says its name again (or nothing): "X gives 186 µs" after "186 µs: X"."""
    said = step.strip().lower()
    return not said or name.strip().lower() in said or said in (value.lower(), f"gives {value.lower()}")


def note_fields(problem: Problem, figure: str = "") -> list[str]:
    """The note's fields in ``FIELDS`` order, as HTML."""
    return [_text(problem.prompt), _text(problem.hint), answer_html(problem), solution_html(problem),
            figure, html.escape(problem.skill), html.escape(problem.id)]


@dataclass(frozen=True)
class DeckReport:
    """What a written package holds. ``numeric_notes``/``repeated_answers`` (the variant deck only): its
    notes with a numeric answer, and how many of them give fewer distinct answers than they hold
    variants (``variants.repeats_an_answer``)."""

    path: str
    notes: int
    decks: tuple[str, ...]
    media: tuple[str, ...]
    bytes: int
    numeric_notes: int = 0
    repeated_answers: int = 0


class Figures:
    """Media for the cards, one file per (chip, dtype), named by content hash."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self._by_key: dict[tuple[str, str], str] = {}

    def for_problem(self, problem: Problem) -> str:
        """A ridge card's figures: the chip's roofline, and the other chip's too on a compare card (none on
        another family's card)."""
        if problem.family != ridge.NAME:
            return ""
        params = ridge.params_of(problem)
        chips = [params["chip"]] + ([params["other"]] if params.get("other") else [])
        return "".join(f'<img src="{self._name(c, params["dtype"])}">' for c in chips)

    def _name(self, chip: str, dtype: str) -> str:
        key = (chip, dtype)
        name = self._by_key.get(key)
        if name is None:
            svg = roofline_svg(catalogue.get(chip), dtype)
            name = self._by_key[key] = media_name(svg, "rk-roofline", "svg")
            self.files[name] = svg
        return name


class _GeneratedNote(genanki.Note):  # type: ignore[misc]  # genanki ships no type hints
    """A genanki note whose fields this module built: escaped at their source (``html.escape`` of every
    text, the card's JSON escaped for HTML), so genanki's scan of each field for invalid HTML tags, a
    warning for hand-written fields and a third of a full deck's writing time, is not run again at every
    write. ``tests/generator/test_deck_variants.py`` runs that same scan over every field of a deck of
    every family and finds nothing."""

    def _check_invalid_html_tags_in_fields(self) -> None:
        pass


def _family_deck(decks: dict[str, genanki.Deck], family: str, descriptions: dict[str, str] | None) -> genanki.Deck:
    """The family's deck in ``decks``, made on first use (ids are stable: its module's ``DECK_ID``)."""
    deck = decks.get(family)
    if deck is None:
        try:
            deck_id = families.deck_id(family)
        except (KeyError, AttributeError):
            raise ValueError(f"no deck id for family '{family}'; give its module a DECK_ID") from None
        # Anki shows a deck description as HTML: escaped, so a spec's text stays text.
        deck = decks[family] = genanki.Deck(deck_id, deck_name(family),
                                            _text((descriptions or {}).get(family, "")))
    return deck


def build_decks(problems: Iterable[Problem], descriptions: dict[str, str] | None = None,
                on_item: OnItem | None = None) -> tuple[list[genanki.Deck], dict[str, bytes]]:
    """genanki decks (one per family, in first-seen order) and the media they reference;
    ``on_item(done, total)`` after each note (default: nothing)."""
    decks: dict[str, genanki.Deck] = {}
    figures = Figures()
    items = list(problems)
    for done, p in enumerate(items, 1):
        deck = _family_deck(decks, p.family, descriptions)
        deck.add_note(_GeneratedNote(model=MODEL, fields=note_fields(p, figures.for_problem(p)),
                                   guid=note_guid(p), tags=[t.replace(" ", "_") for t in p.tags]))
        if on_item is not None:
            on_item(done, len(items))
    return list(decks.values()), figures.files


def write_apkg(decks: list[genanki.Deck], media: dict[str, bytes], path: str, timestamp: float | None = None) -> None:
    """genanki's package layout, written from an in-memory database (no stray temp files).

    ``timestamp`` defaults to now: Anki updates notes only from a newer package.
    """
    timestamp = time.time() if timestamp is None else timestamp
    data = _collection_bytes(decks, timestamp)
    names = sorted(media)
    # Level 1: a card database compresses ~10x even so, at a fraction of the default level's time.
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("collection.anki2", data)
        z.writestr("media", json.dumps({str(i): n for i, n in enumerate(names)}))
        for i, name in enumerate(names):
            z.writestr(str(i), media[name])


# sqlite3's Connection.serialize() exists from Python 3.11; on 3.10 the database goes through a temp file.
_CAN_SERIALIZE = hasattr(sqlite3.Connection, "serialize")


def _collection_bytes(decks: list[genanki.Deck], timestamp: float) -> bytes:
    """The collection.anki2 database genanki writes for ``decks``, as bytes."""
    if _CAN_SERIALIZE:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            _write_collection(conn, decks, timestamp)
            # Looked up, not called as a method: typeshed declares serialize() only from 3.11, and mypy checks
            # against the 3.10 floor; _CAN_SERIALIZE says it is there.
            serialize: Callable[[], bytes] = getattr(conn, "serialize")
            return serialize()
    with tempfile.TemporaryDirectory(prefix="rk-deck-") as scratch:
        target = os.path.join(scratch, "collection.anki2")
        with contextlib.closing(sqlite3.connect(target)) as conn:
            _write_collection(conn, decks, timestamp)
        with open(target, "rb") as fh:
            return fh.read()


def _write_collection(conn: sqlite3.Connection, decks: list[genanki.Deck], timestamp: float) -> None:
    genanki.Package(decks).write_to_db(conn.cursor(), timestamp, _ids(timestamp))
    conn.commit()


def _ids(timestamp: float) -> Iterator[int]:
    n = int(timestamp * 1000)
    while True:
        yield n
        n += 1


def write_deck(problems: list[Problem], path: str, descriptions: dict[str, str] | None = None,
               on_item: OnItem | None = None) -> DeckReport:
    """Write ``problems`` as one .apkg at ``path`` (atomically): deck tree Rudrite Kernels::Stage 0::<family>.
    ``on_item(done, total)`` after each note is built (default: nothing)."""
    decks, media = build_decks(problems, descriptions, on_item)
    return _write_decks(decks, media, path)


# --- The variant deck (the default): one note per skill, K variants, another one at each review --------
# A second note type, so the fixed deck's notes and reviews are left as they are (a learner moving
# from the fixed deck). Same rule as MODEL_ID: a change to its fields or templates needs a new id.
VARIANT_MODEL_ID = 1_739_240_002
VARIANT_MODEL_NAME = "Rudrite Kernels skill, fresh numbers daily (v1)"
# A change to the templates and CSS, not the fields, keeps the id: Anki's importer replaces the note
# type's templates and CSS in place from a newer package (test_anki_real checks it).
VARIANT_MODEL_FINGERPRINT = "f9250c3f035fa442"


def variant_model_fingerprint() -> str:
    blob = json.dumps([card.FIELDS, *card.templates(), card.CSS], separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def skill_guid(skill_id: str) -> str:
    """A variant note's GUID: from its skill id alone, so a regenerated deck updates the same notes."""
    return str(genanki.guid_for("rudrite-skill", skill_id))


_QFMT, _AFMT = card.templates()
VARIANT_MODEL = genanki.Model(
    VARIANT_MODEL_ID, VARIANT_MODEL_NAME, fields=[{"name": f} for f in card.FIELDS],
    templates=[{"name": "Skill", "qfmt": _QFMT, "afmt": _AFMT}], css=card.CSS, sort_field_index=0)


def variant_fields(note: SkillNote, figures: "Figures") -> list[str]:
    """The note's fields in ``card.FIELDS`` order, as HTML (and the script's JSON)."""
    shown = {v.problem.id: figures.for_problem(v.problem) for v in note.variants}
    return [card.skill_html(note), card.front_html(note),
            card.back_html(note, answer_html, solution_html, shown), card.data_json(note)]


@dataclass(frozen=True)
class NoteRow:
    """One variant note as the package holds it: its skill, its family (which deck), its fields in
    ``card.FIELDS`` order, its GUID and its tags; plain data, so a worker process can send it back."""

    skill: str
    family: str
    fields: tuple[str, ...]
    guid: str
    tags: tuple[str, ...]


def variant_row(note: SkillNote, figures: "Figures") -> NoteRow:
    """The note's row: its fields rendered (``variant_fields``; its figures go into ``figures``)."""
    return NoteRow(note.skill, note.family, tuple(variant_fields(note, figures)), skill_guid(note.skill),
                   tuple(t.replace(" ", "_") for t in note.tags))


def decks_of_rows(rows: Iterable[NoteRow], descriptions: dict[str, str] | None = None) -> list[genanki.Deck]:
    """genanki decks, one per family in first-seen order, holding ``rows``' notes in order."""
    decks: dict[str, genanki.Deck] = {}
    for row in rows:
        _family_deck(decks, row.family, descriptions).add_note(
            _GeneratedNote(model=VARIANT_MODEL, fields=list(row.fields), guid=row.guid, tags=list(row.tags)))
    return list(decks.values())


def build_variant_decks(notes: Iterable[SkillNote], descriptions: dict[str, str] | None = None,
                        on_item: OnItem | None = None) -> tuple[list[genanki.Deck], dict[str, bytes]]:
    """genanki decks (one per family, first-seen order) of skill notes, and the media they reference;
    ``on_item(done, total)`` after each note (default: nothing)."""
    figures = Figures()
    listed = list(notes)
    rows = []
    for done, n in enumerate(listed, 1):
        rows.append(variant_row(n, figures))
        if on_item is not None:
            on_item(done, len(listed))
    return decks_of_rows(rows, descriptions), figures.files


def write_variant_deck(notes: list[SkillNote], path: str, descriptions: dict[str, str] | None = None,
                       on_item: OnItem | None = None) -> DeckReport:
    """Write skill notes as one .apkg at ``path`` (atomically), deck tree Rudrite Kernels::Stage 0::<family>.
    ``on_item(done, total)`` after each note is built (default: nothing)."""
    decks, media = build_variant_decks(notes, descriptions, on_item)
    return _write_decks(decks, media, path)


def write_variant_rows(rows: Iterable[NoteRow], media: dict[str, bytes], path: str,
                       descriptions: dict[str, str] | None = None) -> DeckReport:
    """Write rendered rows (``variant_row``) and their media as one .apkg at ``path`` (atomically)."""
    return _write_decks(decks_of_rows(rows, descriptions), media, path)


def _write_decks(decks: list[genanki.Deck], media: dict[str, bytes], path: str) -> DeckReport:
    target = atomic_write(path, lambda tmp: write_apkg(decks, media, tmp))
    return DeckReport(str(target), sum(len(d.notes) for d in decks), tuple(d.name for d in decks),
                      tuple(sorted(media)), Path(target).stat().st_size)
