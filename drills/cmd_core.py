"""`drill chips` and `drill roofline`: the catalogue and the roofline calculator."""

from __future__ import annotations

import json

import click

from generator.errors import UsageError
from generator.model import catalogue, collectives, costs
from generator.model import roofline as model
from generator.model.units import json_ready, si


def resolve_chip(name: str) -> catalogue.Chip:
    """A chip by name or alias, or a usage error naming the known chips."""
    try:
        return catalogue.get(name)
    except catalogue.UnknownChipError as exc:
        raise click.UsageError(str(exc)) from None


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def chips(as_json: bool) -> None:
    """List every chip in the catalogue with its ridge point(s).

    The ridge is peak FLOP/s / HBM bytes/s, in FLOPs per byte, per dtype with a
    published peak. Figures come from chips.yaml, each with its source.
    """
    cat = catalogue.load()
    if as_json:
        click.echo(json.dumps([c.to_dict() for c in cat.chips], indent=2))
        return
    header = f"{'chip':<8} {'kind':<4} {'bf16 peak':>13} {'HBM BW':>11} {'HBM':>8} {'ridge bf16':>11} {'ridge int8':>11} {'ridge fp8':>10}  aliases"
    click.echo(header)
    click.echo("-" * len(header))
    for c in cat.chips:
        ridges = [f"{c.ridge_flops_per_byte(d):.0f}" if d in c.peak_flops else "-" for d in ("bf16", "int8", "fp8")]
        click.echo(
            f"{c.name:<8} {c.kind:<4} {si(c.peak_flops_per_s('bf16'), 'FLOP/s'):>13} "
            f"{si(c.hbm_bytes_per_s, 'B/s'):>11} {si(c.hbm_bytes, 'B'):>8} "
            f"{ridges[0]:>11} {ridges[1]:>11} {ridges[2]:>10}  {', '.join(c.aliases[:3])}")
    click.echo("")
    click.echo("ridge = peak FLOP/s / HBM bytes/s (FLOPs per byte). Sources:")
    for s in cat.sources.values():
        click.echo(f"  [{s.key}] {s.cite()} <{s.url}>")


MAX_DIM = 2**32  # one dimension: far beyond any tensor axis that fits one chip's HBM
MAX_DIM_PRODUCT = 2**60  # all dimensions multiplied (a matmul's multiply-adds): ~1e18


def _bounded_shape(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The --shape text, once every dimension is a positive integer within physical bounds (exit 2 otherwise)."""
    try:
        dims = costs.parse_shape(value)
    except costs.CostError as exc:
        raise click.BadParameter(" ".join(str(exc).split())[:300]) from None
    product = 1
    for dim in dims:
        if dim > MAX_DIM:
            shown = str(dim) if len(str(dim)) <= 20 else f"a {len(str(dim))}-digit number"
            raise click.BadParameter(f"dimension {shown} is over the limit of 2^32 = {MAX_DIM:,}")
        product *= dim
    if product > MAX_DIM_PRODUCT:
        raise click.BadParameter(f"the dimensions multiply to {product:.3g}, over the limit of 2^60 "
                                 f"(~{MAX_DIM_PRODUCT:.2g}): no single op on one chip")
    return value


@click.command(name="roofline")
@click.option("--chip", required=True, help="Chip name or alias (see `drill chips`), e.g. v5e, trillium, h200.")
@click.option("--op", "op_name", required=True,
              help=f"Op: {', '.join(costs.OPS)}.")
@click.option("--shape", required=True, callback=_bounded_shape,
              help="Comma-separated dims: B,D,F for matmul; M,N for add/softmax/reduce_sum; N for dot; T,V,D for "
                   "embedding. Each dimension 1 to 2^32, their product at most 2^60.")
@click.option("--dtype", default="bf16", show_default=True, help="Element dtype: bf16, f32, fp8, int8.")
@click.option("--rhs-dtype", default=None, help="matmul only: the weights' dtype (e.g. int8 with bf16 activations).")
@click.option("--over", type=click.Choice(["hbm", "pcie", "dcn", "ici"]), default="hbm", show_default=True,
              help="The link the bytes cross: HBM (on chip) or off-chip PCIe, DCN, ICI (one way per link, the "
                   "book's network roofline).")
@click.option("--bidirectional", is_flag=True,
              help="--over ici only: the bidirectional per-link figure (bytes both ways), twice the one-way one.")
@click.option("--link-bytes-per-s", "link_bw", type=float, default=None,
              help="Override the --over link's bandwidth in bytes/s (e.g. a figure the catalogue lacks).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object. A number past the float range (e.g. a ridge over a 1e-300 B/s link) "
                   "is null, and the key non_finite lists which.")
def roofline(chip: str, op_name: str, shape: str, dtype: str, rhs_dtype: str | None, as_json: bool,
             over: str = "hbm", link_bw: float | None = None, bidirectional: bool = False) -> None:
    """Roofline estimate of one op on one chip, with the arithmetic shown.

    Prints intensity (FLOPs/byte), the verdict (compute- or memory-bound),
    attainable FLOP/s and the floor latency max(T_math, T_comms), then each
    term worked out with the constants and their source. Over ICI the figure is one way per link
    (``--bidirectional``: both ways), and the output says which.
    """
    if bidirectional and over != "ici":
        raise click.UsageError("--bidirectional applies to --over ici only")
    target = resolve_chip(chip)
    try:
        extra = {}
        if rhs_dtype is not None:
            if costs.normalize_op(op_name) != "matmul":
                raise costs.CostError("--rhs-dtype applies to matmul only")
            extra["rhs_dtype"] = rhs_dtype
        cost = costs.cost(op_name, costs.parse_shape(shape), dtype, **extra)
        est = model.estimate(_over(target, over, cost.dtype, link_bw, bidirectional), cost)
    except (costs.CostError, UsageError) as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        data = est.to_dict()
        if not (over == "hbm" and link_bw is None):
            # the memory side is the link: report it under the link's own key, never as hbm_bytes_per_s
            link = data.pop("hbm_bytes_per_s")
            data.update({"over": over, f"{over}_bytes_per_s": link, "link_bytes_per_s": link})
            if over == "ici":
                data["ici_direction"] = _ici_direction(bidirectional, link_bw)
        click.echo(json.dumps(json_ready(data), indent=2, allow_nan=False))
        return
    # Off-chip: the link stands where HBM stood, so the printed words follow it.
    label = {"hbm": "HBM", "pcie": "PCIe", "dcn": "DCN", "ici": "ICI"}[over]
    dims = ",".join(str(d) for d in cost.shape)
    click.echo(f"chip: {target.display}   op: {cost.op} [{dims}]   dtype: {cost.dtype}"
               + ("" if over == "hbm" else f"   bytes over: {label}"))
    for line in model.summary_lines(est):
        click.echo(line)
    if over == "ici":
        click.echo(f"ICI convention: {ICI_CONVENTION[_ici_direction(bidirectional, link_bw)]}")
    click.echo("")
    click.echo("worked arithmetic:")
    for line in model.worked_lines(est):
        click.echo("  " + (line if over == "hbm" else line.replace("HBM", label)))


ICI_CONVENTION = {
    "one-way": "one way per link (the scaling book's network roofline: one array sent one way over one link); "
               "--bidirectional for the two-way figure",
    "bidirectional": "bidirectional per link (bytes moving both ways at once); the book's network roofline is one way",
    "given": "the bandwidth given with --link-bytes-per-s"}


def _ici_direction(bidirectional: bool, link_bw: float | None) -> str:
    """Which ICI figure the roofline used: ``one-way`` (the default), ``bidirectional`` or ``given``."""
    return "given" if link_bw is not None else "bidirectional" if bidirectional else "one-way"


def _over(target: catalogue.Chip, over: str, dtype: str, link_bw: float | None,
          bidirectional: bool = False) -> catalogue.Chip | model.Ceilings:
    """The chip's ceilings, or with --over a link's bandwidth as the memory side (generator/model/collectives.py)."""
    if over == "hbm" and link_bw is None:
        return target

    try:
        return collectives.link_ceilings(target, over, dtype, link_bw, bidirectional)
    except collectives.TopologyError as exc:
        raise click.UsageError(str(exc)) from None

