"""`drill miss-reasons`: the concrete reasons a measurement misses its prediction (generator.miss_reasons)."""

from __future__ import annotations

import json

import click


@click.command("miss-reasons")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of {id, meaning, evidence, corrected_time}.")
def miss_reasons(as_json: bool) -> None:
    """The reasons `drill lab` and `drill explain` accept for a miss over 2x, and the numbers that decide each.

    Explain a miss with a corrected estimate: name the reasons first (ids, joined by '+',
    before a ':'), show the working with the record's own numbers, and give the corrected
    time after a '=', e.g. "fixed-cost: 21 µs floor + 38 µs per call = 59 µs". It is
    accepted when the working's arithmetic gives that time, it is within 1.5x of measured
    (widened by a noisy probe's spread) and within 15% of what the named reasons'
    corrected_time gives from the record's own numbers; reasons compose. Shrugs such as
    "overhead" or "noise" are refused.
    """
    from generator.miss_reasons import REASONS  # start-up: `drill` loads a command's dependencies only when it runs

    if as_json:
        click.echo(json.dumps([r.to_dict() for r in REASONS], indent=1, ensure_ascii=False))
        return
    for r in REASONS:
        click.echo(f"{r.id}: {r.meaning}")
        click.echo(f"  evidence: {r.evidence}")
        click.echo(f"  corrected time: {r.corrected_time}")
