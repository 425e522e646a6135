"""`drill check` and `drill misconceptions`: grade one answer without the store; list the named mistakes.

`drill check` is what other tools call (an Anki add-on, a web page, a tutor):
the problem is rebuilt from its id, the answer assessed exactly as the quiz
would (``drills.quiz.assess``), and nothing is recorded.
"""

from __future__ import annotations

import json
import math
from typing import Any

import click

from generator.io.termsafe import json_visible, visible_text
from generator.problems.misconceptions import CATALOGUE
from generator.export.variants import card_unit
from generator.problems import generate
from drills.quiz import assess


class Seconds(click.FloatRange):
    """0..86400 seconds, and a number: click's range test lets NaN through (every comparison with it is false)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a number of seconds (0..86400)", param, ctx)
        return rv + 0.0  # -0 is 0 seconds


@click.command()
@click.option("--problem-id", required=True, metavar="ID", help="A problem id, as `drill export` prints it.")
@click.option("--answer", "answer_text", required=True, metavar="TEXT",
              help="The answer as a learner would type it: 87.2us, 197 TFLOP/s, compute ...")
@click.option("--seconds", type=Seconds(0, 86_400), default=None,
              help="Seconds the learner took (for Easy/Hard; 0..86400). Default: unknown.")
@click.option("--hints", type=click.IntRange(0, 3), default=0, show_default=True,
              help="Hints the learner took (each lowers the best rating).")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: problem_id, expected, given, status, correct, rating, relative_error, "
                   "misconception, feedback.")
def check(problem_id: str, answer_text: str, seconds: float | None, hints: int, as_json: bool) -> None:
    """Grade one answer to one problem, as the quiz would, without touching the store.

    A bare number is read in the unit the problem's Anki card names (the prompt's, else the
    answer's own, as `drill export` shows it). Exit 0 when the answer was graded or the output
    says why not (status wrong-kind or unreadable); exit 2 for an unknown problem id.
    """

    try:
        problem = generate.problem(problem_id)
    except generate.UnknownProblemError as exc:
        raise click.UsageError(str(exc)) from None
    except generate.SpecError as exc:
        raise click.ClickException(f"bad drill spec: {exc}") from None

    # A bare number is read in the unit the problem's Anki card names: the card and `drill check` agree.
    unit = card_unit(problem, assess.stated_unit(problem)) or None
    outcome = assess.assess(problem, answer_text, generate.grading_bands(problem.family), seconds, hints,
                            bare_unit=unit)
    # the learner's own text (the answer, and parse errors that quote it) is shown, never acted on by the terminal
    if as_json:
        click.echo(json_visible(json.dumps(outcome.to_dict(), ensure_ascii=False)))
        return
    click.echo(visible_text(problem.prompt))
    click.echo(visible_text(outcome.feedback))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="A JSON list of {id, name, families, explanation}.")
def misconceptions(as_json: bool) -> None:
    """The named wrong methods the drill recognises in a wrong answer, and the families they apply to."""

    if as_json:
        click.echo(json.dumps([m.to_dict() for m in CATALOGUE], indent=1, ensure_ascii=False))
        return
    for m in CATALOGUE:
        click.echo(f"{m.id}: {m.name}")
        click.echo(f"  families: {', '.join(m.families)}")
        click.echo(f"  {m.explanation}")
