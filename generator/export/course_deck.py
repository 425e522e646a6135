"""`drill deck`'s variant deck, end to end: each skill drawn, its note made and its fields rendered, in
shares worked at once on this machine's cores (``generator.export.shares``), then one package written.

Every skill is independent (its own seeded draws: ``generator.problems.generate``), so a share's notes are the
ones a single process makes, and the rows are put back in course order before the package is written:
the file holds the same notes, fields and media whatever the number of workers
(``tests/generator/test_course_deck.py``). The start-up cache is read before the shares start and
written once after they end, with the plans every share searched.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from generator.problems import bulk, misconceptions
from generator.export import anki, shares
from generator.export.variants import DEFAULT_VARIANTS, CardRules, repeats_an_answer, skill_notes
from generator.problems.families.base import Skill
from generator.model.records import evolve

if TYPE_CHECKING:  # annotations only
    from generator.problems import drawplans
    from generator.problems.generate import Draws, Registry

OnItem = Callable[[int, int], None]


@dataclass(frozen=True)
class Share:
    """What one share of skills gives back: its rows, the media they reference, the plans it searched, and
    its numeric notes and how many of them repeat an answer.
    ``to_dict``/``from_dict``: the JSON a worker process sends it as (media in base64)."""

    rows: list[anki.NoteRow]
    media: dict[str, bytes]
    searched: dict[str, drawplans.Plan]
    numeric: int = 0  # its notes with a numeric answer
    repeated: int = 0  # of those, the notes whose variants repeat an answer (``variants.repeats_an_answer``)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [[r.skill, r.family, list(r.fields), r.guid, list(r.tags)] for r in self.rows],
                "media": {name: base64.b64encode(data).decode("ascii") for name, data in self.media.items()},
                "searched": self.searched, "numeric": self.numeric, "repeated": self.repeated}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Share":
        rows = [anki.NoteRow(skill, family, tuple(fields), guid, tuple(tags))
                for skill, family, fields, guid, tags in data["rows"]]
        return cls(rows, {name: base64.b64decode(text) for name, text in data["media"].items()}, data["searched"],
                   int(data["numeric"]), int(data["repeated"]))


def write_course_deck(registry: Registry, rules: CardRules, path: str, families: list[str] | None = None,
                      chips: list[str] | None = None, max_variants: int = DEFAULT_VARIANTS, seed: int = 0,
                      descriptions: dict[str, str] | None = None, workers: int = 1,
                      on_built: OnItem | None = None) -> anki.DeckReport:
    """The variant deck of the selection (``max_variants`` problems per skill) written to ``path``,
    its skills built in ``workers`` shares (``shares.workers_here()`` is what this machine allows);
    ``on_built(done, total)`` after each skill's note is rendered, in any share."""
    chosen = registry.skills(families, chips)
    with bulk.collector_paused():
        draws = registry.start_draws(chosen, max_variants, seed)

        def work(skills: list[Skill], on_done: Callable[[], None]) -> dict[str, Any]:
            return _share(registry, rules, draws, skills, on_done).to_dict()
        parts = [Share.from_dict(data) for data in shares.in_shares(chosen, work, workers, on_built)]
        place = {skill.id: i for i, skill in enumerate(chosen)}
        rows = sorted((row for part in parts for row in part.rows), key=lambda row: place[row.skill])
        media: dict[str, bytes] = {}
        for part in parts:
            media.update(part.media)
            draws.searched.update(part.searched)
        registry.save_draws(draws)
        report = anki.write_variant_rows(rows, media, path, descriptions)
        return evolve(report, numeric_notes=sum(part.numeric for part in parts),
                      repeated_answers=sum(part.repeated for part in parts))


def _share(registry: Registry, rules: CardRules, draws: Draws, skills: list[Skill],
           on_done: Callable[[], None]) -> Share:
    """One share's skills: drawn, made into notes and rendered into rows, one skill at a time."""
    figures = anki.Figures()
    rows = []
    numeric = repeated = 0
    for skill in skills:
        measured: dict[str, list[tuple[misconceptions.WrongAnswer, float]]] = {}
        problems = registry.draw_skills(draws, [skill], measured=measured)
        for note in skill_notes(problems, rules, registry.by_id, draws.count, measured=measured):
            rows.append(anki.variant_row(note, figures))
            numeric += not note.variants[0].problem.answer.is_choice
            repeated += repeats_an_answer(note)
        on_done()
    return Share(rows, figures.files, {skill.id: draws.searched[skill.id] for skill in skills
                                       if skill.id in draws.searched}, numeric, repeated)
