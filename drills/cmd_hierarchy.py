"""`drill hierarchy`: EX·06, the memory hierarchy, measured on this device or read from the catalogue."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from drills.cmd_lab import _require_jax
from drills.progress_bar import Bar, Steps
from generator.model import catalogue, hierarchy as model
from labs.measure.device import detect
from labs.measure import hierarchy as lab_hierarchy, ops as lab_ops

if TYPE_CHECKING:  # annotations only: `drill` loads a command's dependencies only when it runs
    from generator.model.hierarchy import Hierarchy

CPU_SIZE = 1024  # N of the lab's matmul shapes on a CPU (the lab's CPU default)
ACCELERATOR_SIZE = 4096


@click.command("hierarchy")
@click.option("--chip", default=None, help="A catalogued chip (v5e, h100, ...): EX·06 from the catalogue, "
                                           "nothing measured. Default: measure the device jax runs on.")
@click.option("--size", "-n", type=click.IntRange(min=16, max=16384), default=None,
              help="N of the lab's matmul shapes (NxNxN and 8xNxN) [default: 1024 on a CPU, 4096 elsewhere].")
@click.option("--dtype", "dtypes", default="bf16,f32", show_default=True,
              help="The dtypes whose matmul rates are measured, comma-separated.")
@click.option("--json", "as_json", is_flag=True, help="Print the hierarchy as one JSON object.")
def hierarchy(chip: str | None, size: int | None, dtypes: str, as_json: bool) -> None:
    """EX·06 for this device: each memory level's size, measured copy bandwidth and spread (CPU:
    every cache level sysfs lists, then DRAM; GPU: L2 and HBM; TPU: HBM), and the matmul FLOP/s
    of the lab's shapes in each dtype. With --chip, the catalogue's figures for that chip, as the
    course page shows them. Takes well under a minute on a 2-core CPU."""

    if chip is not None:
        try:
            found = catalogue.get(chip)
        except catalogue.UnknownChipError as exc:
            raise click.UsageError(str(exc)) from None
        _show(model.from_chip(found, catalogue.load()), as_json)
        return

    try:
        chosen = tuple(dict.fromkeys(lab_ops.check_dtype(d.strip()) for d in dtypes.split(",") if d.strip()))
    except lab_ops.OpError as exc:
        raise click.UsageError(f"--dtype: {exc}") from None
    if not chosen:
        raise click.UsageError("--dtype: name at least one dtype (bf16, f32)")
    _require_jax()

    device = detect()
    n = size or (CPU_SIZE if device.platform == "cpu" else ACCELERATOR_SIZE)

    labels = lab_hierarchy.step_labels(device, chosen)
    with tempfile.TemporaryDirectory(prefix="drill-hierarchy-") as traces, Bar("drill hierarchy", len(labels)) as bar:
        steps = Steps(bar, labels)  # a bar with an ETA at a terminal; nothing written to a pipe or a log
        measured = lab_hierarchy.measure_hierarchy(device, n, chosen, progress=steps, trace_dir=Path(traces))
        steps.finish()
    _show(measured, as_json)


def _show(found: Hierarchy, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(found.to_dict(), indent=1, ensure_ascii=False))
        return
    for line in model.lines(found):
        click.echo(line)
