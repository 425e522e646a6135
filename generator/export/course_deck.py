"""`drill deck`'s variant deck, end to end: each skill drawn, its note made and its fields rendered, one
skill at a time, then one package written."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from generator.export import anki
from generator.export.variants import DEFAULT_VARIANTS, CardRules, repeats_an_answer, skill_notes
from generator.problems import misconceptions

if TYPE_CHECKING:  # annotations only
    from generator.problems.generate import Registry

OnItem = Callable[[int, int], None]


def write_course_deck(registry: Registry, rules: CardRules, path: str, families: list[str] | None = None,
                      chips: list[str] | None = None, max_variants: int = DEFAULT_VARIANTS, seed: int = 0,
                      descriptions: dict[str, str] | None = None, on_built: OnItem | None = None) -> anki.DeckReport:
    """The variant deck of the selection (``max_variants`` problems per skill) written to ``path``;
    ``on_built(done, total)`` after each skill's note is rendered. Also counts the notes with a numeric
    answer and, of those, the notes whose variants repeat an answer (``variants.repeats_an_answer``)."""
    chosen = registry.skills(families, chips)
    draws = registry.start_draws(chosen, max_variants, seed)
    figures = anki.Figures()
    rows = []
    numeric = repeated = 0
    for done, skill in enumerate(chosen, 1):
        measured: dict[str, list[tuple[misconceptions.WrongAnswer, float]]] = {}
        problems = registry.draw_skills(draws, [skill], measured=measured)
        for note in skill_notes(problems, rules, registry.by_id, draws.count, measured=measured):
            rows.append(anki.variant_row(note, figures))
            numeric += not note.variants[0].problem.answer.is_choice
            repeated += repeats_an_answer(note)
        if on_built is not None:
            on_built(done, len(chosen))
    report = anki.write_variant_rows(rows, figures.files, path, descriptions)
    return replace(report, numeric_notes=numeric, repeated_answers=repeated)
