"""`drill miss-reasons`: the concrete reasons a measurement misses its prediction (generator.explain)."""

from __future__ import annotations

import json

import click
from generator.explain.quantities import COUNTS, FLOOR, LABELS
from generator.explain import REASON_QUANTITIES, REASONS


@click.command("miss-reasons")
@click.option("--json", "as_json", is_flag=True,
              help="A JSON list of {id, meaning, evidence, corrected_time, quantities}.")
def miss_reasons(as_json: bool) -> None:
    """The reasons `drill lab` and `drill explain` accept for a miss over 2x, and the numbers that decide each.

    Explain a miss with a derivation: name the reasons first (ids, joined by '+', before a
    ':'), then the working as arithmetic over the record's quantities with their units
    (+, x, /, parentheses, max(a, b)), then '=' and the time it gives, e.g.
    "fixed-cost: 21 µs floor + 38 µs per call = 59 µs". Every number must be one of the
    op's counts (any reason may use them) or a measured rate or cost its reasons may use
    (listed under each reason); the measured time and your own prediction never are. It is
    accepted when the working comes out as a time equal to the one written (within 2%)
    and that time is within 1.5x of measured (widened by a noisy probe's spread).
    """

    free = [label for _, label, _ in (*COUNTS, *FLOOR)]
    if as_json:
        click.echo(json.dumps([{**r.to_dict(), "quantities": [LABELS[k] for k in REASON_QUANTITIES[r.id]]}
                               for r in REASONS], indent=1, ensure_ascii=False))
        return
    click.echo(f"any reason may use: {', '.join(free)}")
    for r in REASONS:
        click.echo(f"{r.id}: {r.meaning}")
        click.echo(f"  evidence: {r.evidence}")
        click.echo(f"  corrected time: {r.corrected_time}")
        click.echo(f"  its quantities: {', '.join(LABELS[k] for k in REASON_QUANTITIES[r.id])}")
