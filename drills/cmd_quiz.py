"""`drill quiz`, `drill stats` and `drill store check`: spaced repetition over skills, what it has
recorded, and the store's full integrity check (run on demand: opening a store reads no history).

Kept light on purpose: no jax, no numpy, so the first question appears fast.
"""

from __future__ import annotations

import json

import click

from drills.store.repository import Store
from drills.store.files import StoreError, bad_file
from generator.model.units import json_ready
from drills.store.clock import behind_warning, parse_iso
from drills.stats import compute_stats, summary_lines
from generator.problems import generate
from generator.model.catalogue import UnknownChipError
from drills.quiz.terminal import QuizIO
from drills.quiz.session import QuizOptions, select_skills, Session

STORE_HELP = "Review store (SQLite). Default: $DRILL_STORE, else drill.sqlite3 in your user data directory."


def open_store(path: str | None, readonly: bool = False) -> Store:
    """The store, or a one-line error (exit 1) that names the file; a bad file is left untouched."""
    try:
        return Store.open(path, readonly=readonly)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


@click.command()
@click.option("--chip", "chips", multiple=True, metavar="CHIP",
              help="Only skills on this chip (name or alias, see `drill chips`). Repeatable.")
@click.option("--family", "families", multiple=True, metavar="FAMILY",
              help="Only skills of this problem family. Repeatable.")
@click.option("--count", default=10, show_default=True, type=click.IntRange(1, 500),
              help="At most this many problems in the session.")
@click.option("--new", "new_per_day", default=5, show_default=True, type=click.IntRange(0, 500),
              help="New skills introduced per day, after the due ones.")
@click.option("--cram", is_flag=True,
              help="Practise without touching the schedule (answers are still logged).")
@click.option("--seed", type=int, default=None, help="Seed the drawn numbers (repeatable sessions).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per answered problem on stdout (messages go to stderr); a number past "
                   "the float range is null and the key non_finite names it.")
def quiz(chips: tuple[str, ...], families: tuple[str, ...], count: int, new_per_day: int, cram: bool,
         seed: int | None, store_path: str | None, as_json: bool) -> None:
    """Review due skills, each with freshly drawn numbers, graded and scheduled (FSRS).

    On a terminal it asks interactively; with stdin piped it reads one answer
    per line. Answers: numbers with units (87.2us, 1.6 TB/s, 16 GiB), arithmetic
    (2*2048**3/1.97e14) or a choice (c/compute, m/memory). During a question:
    ? hint (up to three, each lowering the best rating), s skip (shows the answer,
    records nothing), u undo (removes this session's last grade, restores its
    skill's schedule and asks that skill again with new numbers; refused if the
    skill has been reviewed since, e.g. by a quiz in another terminal), w the
    worked solution of the last answered question, q quit. Every answer is
    saved before the next question; Ctrl-C exits 130, end of input exits 0, both
    keep what was answered. An input line is at most 4096 characters.

    A store that another process keeps locked is waited for at most 5 s in all,
    then refused ("in use by another process"); a store or folder with no write
    bit is refused before the first question.
    """

    options = QuizOptions(families=families or None, chips=chips or None, count=count,
                          new_per_day=new_per_day, cram=cram, seed=seed)
    try:
        selected = select_skills(options)
    except (generate.UnknownFamilyError, UnknownChipError) as exc:
        raise click.UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
    except generate.SpecError as exc:
        raise click.ClickException(f"bad drill spec: {exc}") from None
    if not selected:
        raise click.UsageError("no skills match the chosen --family/--chip")
    store = open_store(store_path)
    try:
        status = Session(store, options, QuizIO.for_terminal(as_json)).run()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if status:
        raise click.exceptions.Exit(status)


@click.command()
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (key `reviews` is the total).")
@click.option("--check", "full_check", is_flag=True,
              help="First check every row of the store (as `drill store check`); exit 1 naming a damaged row.")
def stats(store_path: str | None, as_json: bool, full_check: bool) -> None:
    """Totals from the review store: reviews, due now and today, skills learned,
    retention over 30 days, current streak, accuracy per family and per chip.

    A clock behind the newest review is the clock's fault: the numbers are read at
    the newest review's time, and a one-line warning on stderr says so."""

    store = open_store(store_path, readonly=True)  # a read never writes, not even the header
    try:
        if full_check:
            _refuse_damage(store)
        numbers = compute_stats(store)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    warning = behind_warning(numbers["future_reviews"], numbers["future_latest"], parse_iso(numbers["clock"]))
    if warning:
        click.echo(warning, err=True)
    if as_json:
        click.echo(json.dumps(json_ready(numbers), indent=2, allow_nan=False))
        return
    for line in summary_lines(numbers):
        click.echo(line)


def _refuse_damage(store: Store) -> int:
    """The full check: StoreError naming the first damaged row (and how many more); else the rows checked."""

    problems = store.check()
    if problems:
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        raise bad_file(store.path, f"{problems[0]}{more}; drill store check lists them all")
    return store.count_reviews()


@click.group()
def store() -> None:
    """The review store itself: `drill store check` checks every row of it."""


@store.command("check")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
def store_check(store_path: str | None) -> None:
    """Check the whole store, read-only: SQLite's integrity check, every card, every review row and
    the per-family tallies against the log. Lists each problem naming its row and exits 1 on damage;
    opening a store for a quiz or stats checks only the schema and the cards, so its cost does not
    grow with the history."""
    handle = open_store(store_path, readonly=True)
    try:
        problems = handle.check()
        reviews = handle.count_reviews() if not problems else 0
        skills = len(handle.cards()) if not problems else 0
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        handle.close()
    if problems:
        for line in problems[:50]:
            click.echo(line)
        if len(problems) > 50:
            click.echo(f"... and {len(problems) - 50} more")

        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise click.ClickException(str(bad_file(handle.path, f"{problems[0]}{more}")))
    click.echo(f"{handle.path}: ok ({reviews} review{'s' if reviews != 1 else ''}, "
               f"{skills} skill{'s' if skills != 1 else ''} checked)")
