"""`drill transformer`, `drill deck` and `drill export`: the step-time calculator and the problem exports.

Thin commands: they parse options and call ``generator.model.transformer``,
``generator.problems.generate`` and ``generator.export``. Nothing here imports jax or numpy.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from drills.cmd_core import resolve_chip
from drills.progress_bar import Bar
from generator.errors import UsageError
from generator.model import catalogue, costs
from generator.model import transformer as tmodel
from generator.model.units import fmt
from generator.export import ExportError, anki, check_writable, course_deck, tabular, write_text

if TYPE_CHECKING:
    from generator.export.anki import DeckReport
    from generator.problems.generate import OnItem, Registry
    from generator.problems.problem import Problem
from generator.problems.generate import FAMILY_NAMES, MAX_PROBLEMS, SpecError, TooManyProblemsError, UnknownFamilyError
from generator.export.variants import CardRules, DEFAULT_VARIANTS
from click.core import ParameterSource
from generator.problems import generate
from drills.quiz import assess

MAX_COUNT = 1_000_000
T = TypeVar("T")


def _selection(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that choose problems, shared by deck and export."""
    options = [
        click.option("--chip", "chips", multiple=True, metavar="C",
                     help="Only this chip (name or alias, see `drill chips`); repeat for several. Default: all. "
                          "Chip-independent skills (lattice, vocabulary) are always included."),
        click.option("--family", "families", multiple=True, metavar="F",
                     help=f"Only this family; repeat for several. Default: all of {', '.join(FAMILY_NAMES)}."),
        click.option("--count", type=click.IntRange(1, MAX_COUNT), default=1, show_default=True,
                     help=f"Problems drawn per skill (distinct; a skill with fewer distinct problems, such as a "
                          f"chip's ridge, gives fewer). At most {MAX_COUNT:,} per skill and {MAX_PROBLEMS:,} in all."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Random seed: the same seed and selection give the same problems."),
        click.option("--specs", "specs_dir", type=click.Path(file_okay=False), default=None,
                     help="Directory of drill spec YAML files (default: each family's own, generator/problems/specs)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _generate(chips: tuple[str, ...], families: tuple[str, ...], count: int, seed: int, specs_dir: str | None,
              on_item: OnItem | None = None) -> tuple[list[Problem], Registry]:
    """Problems for the selection, or a one-line usage error (exit 2); ``on_item(done, total)``
    after each skill is drawn."""
    return _drawn(specs_dir, lambda reg: reg.generate(list(families) or None, list(chips) or None, count, seed,
                                                      on_item))


def _drawn(specs_dir: str | None, draw: Callable[[Registry], T]) -> tuple[T, Registry]:
    """``draw(registry)`` for the spec directory and the registry, or the one-line usage error of a bad
    selection or spec (exit 2)."""

    try:
        reg = generate.registry(specs_dir)
        return draw(reg), reg
    except (UnknownFamilyError, SpecError, catalogue.UnknownChipError, TooManyProblemsError) as exc:
        raise click.UsageError(str(exc)) from None


def _output_error(exc: ExportError, path: str) -> click.ClickException:
    """A file at ``path`` that the file policy will not replace (a device, a FIFO, a read-only file) exits 1;
    a path that can not be written (a folder missing or not writable, /proc/x.apkg) is usage (exit 2)."""
    if exc.refused and os.path.lexists(path):
        return click.ClickException(str(exc))
    return click.UsageError(str(exc))


def _target(path: str) -> None:
    try:
        check_writable(path)
    except ExportError as exc:
        raise _output_error(exc, path) from None


MAX_VARIANTS = 64
# ``variants.DEFAULT_VARIANTS``, copied so `drill deck --help` imports no model (a test holds them equal).
DEFAULT_DECK_VARIANTS = 16


def _skill_count(chips: tuple[str, ...], families: tuple[str, ...], specs_dir: str | None) -> int:
    """Skills in the selection (the bar's length), or the one-line usage error of a bad selection
    (exit 2), before any bar is drawn."""

    try:
        return len(generate.skills(list(families) or None, list(chips) or None, specs_dir=specs_dir))
    except (UnknownFamilyError, SpecError, catalogue.UnknownChipError) as exc:
        raise click.UsageError(str(exc)) from None


def _scaled(bar: Bar, steps: int) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback that fills the next ``steps`` of ``bar`` in proportion to done/total."""
    start = bar.done

    def callback(done: int, total: int) -> None:
        bar.on_item(start)(steps * done // max(1, total), steps)
    return callback


def card_rules() -> CardRules:
    """The drill's own rules for reading and grading an answer, for the variant cards (``CardRules``):
    the cards check a typed answer exactly as `drill check` does."""

    def good_rel(problem: Problem) -> float:
        # drills.quiz.grading.grade_number: the problem's tolerance, else the family's good_rel.
        return problem.tolerance if problem.tolerance > 0 else generate.grading_bands(problem.family).good_rel

    return CardRules(stated_unit=assess.stated_unit, good_rel=good_rel)


@click.command()
@_selection
@click.option("--variants", type=click.IntRange(1, MAX_VARIANTS), default=None, metavar="K",
              help="Problems per note (one note per skill; the card shows a different one each day). "
                   f"Default {DEFAULT_DECK_VARIANTS}; 1 to {MAX_VARIANTS}.")
@click.option("--fixed", is_flag=True,
              help="The old form: one note per problem, its numbers fixed (use --count for problems per skill).")
@click.option("-o", "--output", "output", required=True, metavar="PATH.apkg",
              help="Where to write the Anki package (written whole or not at all).")
@click.pass_context
def deck(ctx: click.Context, chips: tuple[str, ...], families: tuple[str, ...], count: int, seed: int, specs_dir: str | None,
         variants: int | None, fixed: bool, output: str) -> None:
    """Build an Anki deck (.apkg) of drill problems: one note per skill, fresh numbers at each review.

    Deck tree "Rudrite Kernels::Stage 0::<family>". Each note holds K problems of one
    skill, all computed here (answer, tolerance, worked solution with each constant's
    source, classic wrong answers); the card shows another one at each review (the same
    on front and back) and checks an answer typed on the front by `drill check`'s rules.
    A client that runs no script shows the first problem. Notes are keyed by skill id,
    so importing a regenerated deck updates your notes in place (reviews kept).
    With --fixed: one note per problem (keyed by problem id), numbers never change.
    """
    if not output.endswith(".apkg"):
        raise click.UsageError(f"the output must be an .apkg file, got '{output}'")

    count_given = ctx.get_parameter_source("count") != ParameterSource.DEFAULT
    if fixed and variants is not None:
        raise click.UsageError("--variants makes the daily-variant deck; --fixed takes --count instead")
    if not fixed and count_given:
        raise click.UsageError("--count is for --fixed decks; the default deck takes --variants K")
    _target(output)

    k = DEFAULT_VARIANTS if variants is None else variants
    report = _write_deck(chips, families, count if fixed else None, k, seed, specs_dir, output)
    what = "notes" if fixed else f"notes (one per skill, up to {k} variants each)"
    click.echo(f"wrote {report.notes} {what} in {len(report.decks)} decks ({report.bytes / 1024:.0f} KiB) "
               f"to {report.path}")
    if not fixed:
        click.echo(f"notes with fewer distinct answers than variants (3 significant figures): "
                   f"{report.repeated_answers} of {report.numeric_notes} numeric notes")
    click.echo("import it in Anki (File > Import); re-importing a regenerated deck updates notes in place")


def _write_deck(chips: tuple[str, ...], families: tuple[str, ...], count: int | None, k: int, seed: int,
                specs_dir: str | None, output: str) -> DeckReport:
    """`drill deck`'s work under its progress bar: ``count`` problems per skill, one note each
    (--fixed), or with ``count`` None one note per skill of ``k`` variants (built on this machine's
    cores: ``generator.export.course_deck``); the package written to ``output``. A bad selection is a
    usage error (exit 2), a refused target exits 1."""

    skills = _skill_count(chips, families, specs_dir)
    with Bar("drill deck", 2 * skills + 1 if count is not None else skills + 1) as bar:
        try:
            if count is not None:  # the bar's steps: each skill drawn, each note built, the package written
                bar.show("drawing problems")
                problems, reg = _generate(chips, families, count, seed, specs_dir, bar.on_item(0))
                bar.skip(skills - bar.done, "building notes")
                report = anki.write_deck(problems, output, _descriptions(reg), _scaled(bar, skills))
            else:  # each skill drawn, made into a note and rendered; the package written
                bar.show("building notes")
                report = _variant_deck(chips, families, k, seed, specs_dir, output, bar.on_item(0))
            bar.advance(bar.total - bar.done, "written")
        except ExportError as exc:
            raise _output_error(exc, output) from None
    return report


def _variant_deck(chips: tuple[str, ...], families: tuple[str, ...], k: int, seed: int, specs_dir: str | None,
                  output: str, on_built: OnItem) -> DeckReport:
    """The variant deck written to ``output`` (``course_deck.write_course_deck``): ``k`` problems per
    skill of the selection, or the one-line usage error of a bad selection (exit 2)."""

    report, _ = _drawn(specs_dir, lambda reg: course_deck.write_course_deck(
        reg, card_rules(), output, list(families) or None, list(chips) or None, k, seed, _descriptions(reg),
        on_built))
    return report


def _descriptions(reg: Registry) -> dict[str, str]:
    """Each family's deck description: its spec's title and summary."""
    return {name: f"{spec.title}. {spec.summary}".strip() for name, spec in reg.specs.items()}


@click.command()
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), required=True,
              help="json: a list of problem objects; csv: one row per problem with a header.")
@_selection
@click.option("-o", "--output", "output", default=None, metavar="PATH",
              help="Write to this file (whole or not at all) instead of stdout; '-' means stdout.")
def export(fmt: str, chips: tuple[str, ...], families: tuple[str, ...], count: int, seed: int, specs_dir: str | None,
           output: str | None) -> None:
    """Export drill problems as CSV or JSON, for other SRS tools and scripts.

    Each problem has family, skill, id, params (chip, op, shape, dtype for op problems),
    prompt, answer (value in base SI units with its unit, or a choice), tolerance,
    solution, hint and tags.
    """
    if output == "-":
        output = None  # the usual spelling of stdout
    if output is not None and not output.strip():
        raise click.UsageError("-o/--output needs a file name (got an empty one); use '-' or leave it out for stdout")
    if output:
        _target(output)

    skills = _skill_count(chips, families, specs_dir)
    with Bar("drill export", skills + 1) as bar:  # each skill drawn, then the text rendered
        bar.show("drawing problems")
        problems, _ = _generate(chips, families, count, seed, specs_dir, bar.on_item(0))
        bar.skip(skills - bar.done, f"rendering {fmt}")
        text = tabular.render(problems, fmt)
        bar.advance(1, "rendered")
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_text(output, text)
    except ExportError as exc:
        raise _output_error(exc, output) from None
    click.echo(f"wrote {len(problems)} problems to {output}", err=True)


def _model(params: int, layers: int | None, d_model: int | None,
           kv_d_model: int | None) -> tuple[tmodel.Model, dict[str, Any] | None]:
    """The model to price and what was assumed for it: {from, values, sources}, or None."""
    if layers is not None and d_model is not None:
        return tmodel.Model(params, layers, d_model, kv_d_model), None
    known = ", ".join(f"{_count_name(s.params)} ({s.name})" for s in tmodel.known_shapes())
    if layers is not None or d_model is not None:
        raise click.UsageError(f"give both --layers and --d-model, or neither for a known model: {known}")
    shape = tmodel.known_shape(params)
    if shape is None:
        raise click.UsageError(f"--layers and --d-model are needed: no known model has {_count_name(params)} "
                               f"parameters (known: {known})")
    values: dict[str, int] = {"layers": shape.layers, "d_model": shape.d_model}
    if kv_d_model is None:
        values["kv_d_model"] = shape.kv_d_model or shape.d_model
    return shape.model(params, kv_d_model), {"from": shape.name, "values": values, "sources": list(shape.sources)}


def _count_name(count: int) -> str:
    """7000000000 -> '7B' (the way model sizes are named), else the plain number."""
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6)):
        if count % (scale // 100) == 0 and count >= scale:
            return f"{count / scale:g}{suffix}"
    return str(count)


# Bounds on the transformer's options: generous beyond any published model, small enough
# that every product stays a finite float and the printed times stay in seconds-to-years.
MAX_LAYERS = 10_000
MAX_WIDTH = 2**20  # d-model and K/V width: 1,048,576
MAX_TOKENS = 2**24  # batch and sequence length: 16,777,216


def _count(ctx: click.Context, param: click.Parameter, value: str) -> int:
    try:
        return tmodel.parse_count(value)
    except tmodel.TransformerInputError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command()
@click.option("--params", "params", required=True, callback=_count, metavar="P",
              help="Parameter count: 7e9, 7B, 1.3B or 6738415616 (1 to 1e16). A known model's count "
                   "(7B, 13B, 70B: Llama 2, generator/model/models.yaml) fills in --layers and --d-model.")
@click.option("--layers", type=click.IntRange(1, MAX_LAYERS), default=None,
              help=f"Transformer layers (L), 1 to {MAX_LAYERS:,}. Default: the known model's.")
@click.option("--d-model", "d_model", type=click.IntRange(1, MAX_WIDTH), default=None,
              help=f"Model width (D), 1 to 2^20 = {MAX_WIDTH:,}. Default: the known model's.")
@click.option("--kv-d-model", "kv_d_model", type=click.IntRange(1, MAX_WIDTH), default=None,
              help="K/V width per layer = KV heads x head dim (default: d-model, multi-head attention), "
                   "1 to 2^20.")
@click.option("--batch", type=click.IntRange(1, MAX_TOKENS), required=True,
              help=f"Sequences per step (B), 1 to 2^24 = {MAX_TOKENS:,}.")
@click.option("--seq", type=click.IntRange(1, MAX_TOKENS), required=True,
              help="Sequence length (S): tokens per sequence for prefill, context length for decode; 1 to 2^24.")
@click.option("--chip", required=True, help="Chip name or alias (see `drill chips`), e.g. v5e.")
@click.option("--phase", type=click.Choice(tmodel.PHASES), default="prefill", show_default=True,
              help="prefill: one forward pass over B x S tokens; decode: one step of B tokens with S of context.")
@click.option("--dtype", default="bf16", show_default=True, help="Weights, activations and K/V dtype.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def transformer(params: int, layers: int | None, d_model: int | None, kv_d_model: int | None, batch: int, seq: int,
                chip: str, phase: str, dtype: str, as_json: bool) -> None:
    """Step-time floor of a transformer forward pass from chip constants alone.

    FLOPs = 2 x params per token + attention (Q·Kᵀ and A·V); bytes = weights + layer
    activations + K/V cache. Prints T_math, T_comms, the floor max(T_math, T_comms), the
    verdict and whether weights plus K/V cache fit in one chip's HBM.
    JSON keys include flops, bytes, t_math_s, t_comms_s, floor_s, bound.
    """
    target = resolve_chip(chip)
    model, assumed = _model(params, layers, d_model, kv_d_model)
    try:
        step, est = tmodel.estimate(target, model, phase, batch, seq, dtype)
    except (costs.CostError, UsageError) as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(json.dumps({**tmodel.to_dict(step, est, target), "assumed": assumed}, indent=2))
        return
    click.echo(f"{target.display} · {phase} · {step.dtype} · {model.label()} · batch {batch}, seq {seq}")
    if assumed:
        values = ", ".join(f"{k} {v}" for k, v in assumed["values"].items())
        click.echo(f"assumed   : {values} (not given), from {assumed['from']}:")
        for source in assumed["sources"]:
            click.echo(f"            {source}")
    click.echo(f"floor: {fmt(est.floor_s, 's')} ({est.bound}-bound)   T_math {fmt(est.t_math_s, 's')}   "
               f"T_comms {fmt(est.t_comms_s, 's')}")
    click.echo("")
    click.echo("worked arithmetic:")
    for line in tmodel.worked_lines(step, est, target):
        click.echo("  " + line)
