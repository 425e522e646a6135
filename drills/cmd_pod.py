"""`drill pod`, `drill collective`, `drill transfer`: beyond one chip, as calculators.

Thin commands over ``generator/model/collectives.py`` (every formula lives there); each prints
the worked arithmetic with the catalogue figures and their sources, or one JSON object.
Bad input is one line and exit 2.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from drills.cmd_core import resolve_chip
from generator.model import catalogue
from generator.model import collectives as C
from generator.io.termsafe import visible
from generator.model.units import sci, seconds, si
from generator.model.answers import AnswerError, parse_duration_seconds, parse_number
from labs.records.types import RecordError
from labs.records import folder as records
from labs.collectives import lab, record as rec, run as on_devices

if TYPE_CHECKING:
    from labs.collectives.lab import Plan


def _bytes(text: str) -> float:
    """``--bytes``: a number of bytes, with or without a unit (``1e9``, ``1 GB``, ``2*4096**2``), from
    one byte up to 1e21 B (UsageError otherwise)."""

    try:
        value = parse_number(text, "B", "B")  # a bare number on the command line is bytes
    except AnswerError as exc:
        raise click.UsageError(f"--bytes {_quoted(text)}: {_clipped(str(exc), 200)}") from None
    if not (value >= 1 and value < 1e21):  # below one byte is no message: it once divided by zero
        raise click.UsageError(f"--bytes must be at least one byte and below 1e21 B, got {_quoted(text)}")
    return value


QUOTED_CHARS = 40  # how much of a long value a message quotes


def _clipped(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` made safe to print, and cut to ``limit`` characters with its length said when longer."""
    return visible(text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)")


def _quoted(text: str) -> str:
    """A command-line value in a message: quoted whole when short, else its start and its length."""
    if len(text) <= QUOTED_CHARS:
        return f"'{_clipped(text)}'"
    return f"'{_clipped(text[:QUOTED_CHARS])}...' ({len(text):,} characters)"


class _Refs:
    """Sources cited by number, listed once at the end ("[1]"), not repeated on every line."""

    def __init__(self, chip: catalogue.Chip):
        self.chip = chip
        self.sources: list[str] = []

    def __call__(self, key: str) -> str:
        fig = self.chip.figure(key)
        return "" if fig is None else self.source(fig.source)

    def source(self, source: catalogue.Source) -> str:
        text = source.cite()
        if text not in self.sources:
            self.sources.append(text)
        return f"[{self.sources.index(text) + 1}]"

    def echo(self) -> None:
        if self.sources:
            click.echo("sources:")
            for i, text in enumerate(self.sources, 1):
                click.echo(f"  [{i}] {text}")


def _topology_error(exc: Exception) -> click.UsageError:
    return click.UsageError(str(exc))


@click.command()
@click.option("--chip", required=True, help="A TPU (see `drill chips`), e.g. v5e, v5p, v6e.")
@click.option("--slice", "slice_text", default=None, help="A slice shape such as 4x4 or 4x4x8 [default: the full pod].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def pod(chip: str, slice_text: str | None, as_json: bool) -> None:
    """Totals of a TPU pod or slice: chips, hosts, TensorCores, bf16 FLOP/s, HBM, wraparound.

    chips = product of the axes; hosts = ceil(chips / chips per host); FLOP/s and HBM
    are per-chip figures times chips; wraparound per axis from the chip's rule
    (v5e/v6e: only an axis of 16; v4p/v5p: only slices of whole 4x4x4 cubes). Only slices
    that exist are accepted (3x5 on a v5e is refused).
    """
    target = resolve_chip(chip)
    try:
        shape = C.parse_shape(slice_text) if slice_text is not None else None
        t = C.pod_totals(target, shape)
        host = C.host_shape(target)
    except C.TopologyError as exc:
        raise _topology_error(exc) from None
    if as_json:
        click.echo(json.dumps(t.to_dict(), indent=2))
        return
    dims = " × ".join(str(d) for d in t.shape)
    peak, hbm = target.peak_flops_per_s("bf16"), target.hbm_bytes
    cite = _Refs(target)
    what = "full pod" if shape is None else "slice"
    click.echo(f"{target.display} {what} {C.fmt_shape(t.shape)}")
    click.echo(f"chips            = {dims} = {t.chips}   (pod {target.value('pod_topology')} {cite('pod_topology')})")
    click.echo(f"hosts            = ceil({t.chips} / ({' × '.join(map(str, host))} = {t.chips_per_host} chips per host)) = {t.hosts}   "
               f"{cite('host_topology')}")
    click.echo(f"tensorcores      = {t.chips} × {t.tensorcores_per_chip} per chip = {t.tensorcores}   "
               f"{cite('tensorcores_per_chip')}")
    click.echo(f"peak_flops_per_s = {t.chips} × {sci(peak)} bf16 FLOP/s = {sci(t.peak_flops_per_s)} "
               f"({si(t.peak_flops_per_s, 'FLOP/s')})   {cite.source(target.peak_flops['bf16'].source)}")
    click.echo(f"hbm_bytes        = {t.chips} × {sci(hbm)} B = {sci(t.hbm_bytes)} ({si(t.hbm_bytes, 'B')})   "
               f"{cite('hbm_bytes')}")
    rule = target.figures.get("ici_wraparound")
    flags = ", ".join(f"axis {n}: {'unknown' if w is None else 'yes' if w else 'no'}"
                      for n, w in zip(t.shape, t.ici_wraparound))
    click.echo(f"ici_wraparound   = {flags}")
    if rule is not None:
        click.echo(f"  rule: {rule.note} {cite.source(rule.source)}")
    cite.echo()


@click.command()
@click.option("--chip", required=True, help="A TPU (see `drill chips`).")
@click.option("--op", "op", required=True, type=click.Choice(C.OPS), help="The collective.")
@click.option("--bytes", "nbytes", required=True, help="V: bytes of the full (gathered) array, e.g. 1e9 or '256 MB'.")
@click.option("--axis", "axes", type=int, multiple=True, required=True,
              help="Chips along one mesh axis the collective runs over (repeat for several axes).")
@click.option("--wrap", type=click.Choice(["auto", "yes", "no"]), default="auto", show_default=True,
              help="Wraparound links: auto decides from the chip's topology and the axis size.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def collective(chip: str, op: str, nbytes: str, axes: tuple[int, ...], wrap: str, as_json: bool) -> None:
    """Time of one collective over ICI, bandwidth term against latency term (the scaling book, "Sharding").

    Bandwidth term: V / (W_bidi · n_axes) with wraparound; without it (N−1)/N · V / W_one_way
    per axis. ReduceScatter = AllGather, AllReduce = 2 × AllGather, AllToAll = 1/4 AllGather on a ring (on a line: the middle link's share).
    Latency term: hops × per-hop latency (the book's ~1 µs assumption). T = the larger.
    """
    target = resolve_chip(chip)
    size = _bytes(nbytes)
    cat = catalogue.load()
    try:
        t = C.chip_collective(cat, target, op, size, tuple(axes), wrap)
    except C.TopologyError as exc:
        raise _topology_error(exc) from None
    if as_json:
        click.echo(json.dumps({"chip": target.name, "wrap_option": wrap, **t.to_dict()}, indent=2))
        return
    cite = _Refs(target)
    over = (f"one axis of {t.axes[0]} chips" if len(t.axes) == 1
            else f"{len(t.axes)} axes of {' × '.join(map(str, t.axes))} chips")
    click.echo(f"{target.display}: {C.OP_LABELS[op]} of V = {sci(size)} B ({si(size, 'B')}) over {over}")
    click.echo(f"t_s: {seconds(t.t_s)}   bound: {t.bound}   hops: {t.hops}")
    click.echo("")
    click.echo("worked arithmetic:")
    for line in C.collective_lines(t):
        click.echo("  " + line)
    click.echo(f"  constants: ICI one-way {sci(t.w_one_way)} B/s, bidirectional {sci(t.w_bidi)} B/s per link "
               f"{cite('ici_bytes_per_s_bidi')}; per-hop latency {seconds(t.hop_latency_s)} "
               f"(the book's worked-problem assumption) {cite.source(cat.fact(C.HOP_LATENCY_FACT).source)}")
    if wrap == "auto" and target.figure("ici_wraparound") is not None:
        click.echo(f"  wraparound: {target.figures['ici_wraparound'].note} {cite('ici_wraparound')}")
    cite.echo()


@click.command()
@click.option("--chip", required=True, help="A TPU (see `drill chips`).")
@click.option("--slice", "slice_text", required=True, help="The slice shape, e.g. 4x4 or 4x4x8.")
@click.option("--from", "src_text", required=True, help="Source chip coordinate, 0-based, e.g. 0,0.")
@click.option("--to", "dst_text", required=True, help="Destination chip coordinate, e.g. 3,3.")
@click.option("--bytes", "nbytes", required=True, help="Bytes to send, e.g. 16e6 or '2*8*128*8192'.")
@click.option("--wrap", type=click.Choice(["auto", "yes", "no"]), default="auto", show_default=True,
              help="Wraparound links: auto decides from the chip's topology and the axis sizes.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def transfer(chip: str, slice_text: str, src_text: str, dst_text: str, nbytes: str, wrap: str,
             as_json: bool) -> None:
    """An ICI point-to-point transfer on a slice: hops, ports usable at the source, first byte, total.

    hops: per axis |i−j| (min(|i−j|, N−|i−j|) with wraparound); ports: outgoing links that
    start a shortest path; first byte after hops × per-hop latency; total = first byte +
    bytes / (ports × one-way per-link bandwidth).
    """
    target = resolve_chip(chip)
    size = _bytes(nbytes)
    cat = catalogue.load()
    try:
        shape = C.parse_shape(slice_text)
        src, dst = C.parse_coord(src_text, shape), C.parse_coord(dst_text, shape)
        t = C.chip_transfer(cat, target, shape, src, dst, size, wrap)
    except C.TopologyError as exc:
        raise _topology_error(exc) from None
    if as_json:
        click.echo(json.dumps({"chip": target.name, **t.to_dict()}, indent=2))
        return
    cite = _Refs(target)
    click.echo(f"{target.display} slice {C.fmt_shape(shape)}: chip {src_text} -> chip {dst_text}, {sci(size)} B")
    click.echo(f"t_s: {seconds(t.t_s)}   first byte: {seconds(t.first_byte_s)}   hops: {t.hops}   ports: {t.ports}")
    click.echo("")
    click.echo("worked arithmetic:")
    for n, a, b, w, h in zip(shape, src, dst, t.wrap, t.hops_per_axis):
        how = f"min(|{a}−{b}|, {n}−|{a}−{b}|)" if w else f"|{a}−{b}|"
        click.echo(f"  axis of {n} ({'wraparound' if w else 'no wraparound'}): hops = {how} = {h}, "
                   f"ports toward it = {C.shortest_ports(n, a, b, w)}")
    click.echo(f"  hops = {' + '.join(map(str, t.hops_per_axis))} = {t.hops}; first byte = {t.hops} × "
               f"{seconds(t.hop_latency_s)} = {seconds(t.first_byte_s)} (per-hop latency: the book's assumption)")
    click.echo(f"  bandwidth = {t.ports} ports × {sci(t.w_one_way)} B/s one way per link = {sci(t.bytes_per_s)} B/s "
               f"{cite('ici_bytes_per_s_one_way')}")
    click.echo(f"  T = first byte + bytes / bandwidth = {seconds(t.first_byte_s)} + {sci(size)} / {sci(t.bytes_per_s)} "
               f"= {seconds(t.first_byte_s)} + {seconds(t.t_bandwidth_s)} = {seconds(t.t_s)}")
    click.echo("  model: the bytes split evenly over the usable ports; routing and contention ignored")
    cite.echo()


def collectives_lab(chip: str, mesh: str, sizes: str | None, reps: int, dtype: str, predictions: Path | None,
                    out_dir: Path | None, trace_dir: Path | None, as_json: bool) -> None:
    """`drill lab --collectives`: the collectives lab on all local devices (labs/collectives/lab.py plans and
    scores, labs/collectives/run.py measures, labs/collectives/record.py is the record).

    Called from `drill lab` when --collectives is given; jax is imported only here.
    """

    parsed = None if sizes is None else tuple(_bytes(s.strip()) for s in sizes.split(",") if s.strip())
    options = lab.Options(mesh=mesh, sizes=parsed, reps=reps, dtype=dtype, chip=chip, trace_dir=trace_dir,
                          out_dir=out_dir if out_dir is not None else records.default_dir())  # the learner's folder
    try:
        plan, learner = on_devices.prepare(options, predictions)
    except lab.CollectivesLabError as exc:
        raise click.UsageError(str(exc)) from None
    say = (lambda text: click.echo(text, err=True)) if as_json else click.echo
    say(f"devices: {plan.devices} x {plan.device.device_kind} ({plan.device.platform}); mesh "
        f"{C.fmt_shape(plan.mesh_shape)} {plan.axis_names}; {plan.datasheet_note}")
    if not learner and sys.stdin.isatty() and not as_json:
        learner = _ask(plan)
    steps = len(plan.rows) + 2
    count = iter(range(1, steps + 1))
    try:
        record, typed, path = on_devices.run_and_save(
            plan, learner, lambda label: click.echo(f"[{next(count)}/{steps}] {label}", err=True))
    except (lab.CollectivesLabError, RecordError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps({"path": str(path) if path else None, "record": record}, indent=2))
        return
    for line in rec.report_lines(typed):
        click.echo(line)
    click.echo(f"record: {path}" if path else f"record: written by process 0 (this is process {os.environ.get('DRILL_PROCESS_ID')})")


def _ask(plan: Plan) -> dict[str, float]:
    """Predict before you measure: one time per row at a terminal (blank skips)."""

    click.echo("Predict before you measure: your time for each row (e.g. 120us; blank skips).")
    out: dict[str, float] = {}
    for row in plan.rows:
        while True:
            text = click.prompt(f"  {row.id} [{si(row.bytes, 'B')}]", default="", show_default=False).strip()
            if not text:
                break
            try:
                out[row.id] = parse_duration_seconds(text)
                break
            except AnswerError as exc:
                click.echo(f"  could not read that: {exc}", err=True)
    return out
