"""`drill miss-reasons`: the concrete reasons a measurement misses its prediction (generator.miss_reasons)."""

from __future__ import annotations

import json

import click


@click.command("miss-reasons")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of {id, meaning, evidence}.")
def miss_reasons(as_json: bool) -> None:
    """The reasons `drill lab` and `drill explain` accept for a miss over 2x, and the numbers that decide each.

    Name one (its id, or words such as "launch" or "upcast") when the lab asks why;
    it is accepted only when the record's own evidence supports it. Shrugs such as
    "overhead" or "noise" are refused.
    """
    from generator.miss_reasons import REASONS

    if as_json:
        click.echo(json.dumps([r.to_dict() for r in REASONS], indent=1, ensure_ascii=False))
        return
    for r in REASONS:
        click.echo(f"{r.id}: {r.meaning}")
        click.echo(f"  evidence: {r.evidence}")
