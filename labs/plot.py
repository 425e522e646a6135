"""The lab's roofline plot: log-log attainable FLOP/s against intensity (FLOPs/byte).

``plot_record`` draws the datasheet's and the calibrated roof and each op's points (``points``): the
model's prediction, the learner's own and the measurement.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from generator.model import costs, roofline
from generator.io import safeio
from generator.errors import DrillError
from labs.records.types import Calibrated, Datasheet, LabRecord, as_record

PLOT_SUFFIXES = (".png", ".svg")


class PlotError(DrillError, ValueError):
    pass


def check_path(path: Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise PlotError(f"--plot must end in {' or '.join(PLOT_SUFFIXES)}, got '{path.name}'")
    return path


def _ceilings(record: LabRecord, kind: str) -> roofline.Ceilings | None:
    constants = record.constants
    c: Datasheet | Calibrated | None = constants.datasheet if kind == "datasheet" else constants.calibrated
    if c is None:
        return None
    return roofline.Ceilings(c.name, c.peak_flops_per_s, c.hbm_bytes_per_s, c.dtype, c.source)


def roof_points(ceilings: roofline.Ceilings, intensities: list[float]) -> list[float]:
    """Attainable FLOP/s at each intensity, from roofline.estimate on a 1-byte op."""
    out = []
    for intensity in intensities:
        # An op with `intensity` FLOPs per byte: scale both up so integer counts keep the ratio.
        scale = 10**6
        probe = costs.OpCost("probe", (1,), ceilings.dtype, max(1, round(intensity * scale)), scale,
                             "", "", "", "", "roof probe")
        out.append(roofline.estimate(ceilings, probe).attainable_flops_per_s)
    return out


class PlotPoint(TypedDict):
    """One op on the plot: FLOPs per byte, and FLOP/s predicted (model, learner) and measured."""

    label: str
    intensity: float
    model: float | None
    learner: float | None  # None without a prediction of the learner's own
    measured: float


def points(record: LabRecord | Mapping[str, Any]) -> list[PlotPoint]:
    """Per op with FLOPs: label, intensity and FLOP/s predicted by the model, by the learner
    (``None`` without a prediction of their own) and measured, as the plot draws them."""
    out: list[PlotPoint] = []
    for row in as_record(record).ops:
        if row.flops <= 0:
            continue
        pred = row.predictions.datasheet or row.predictions.calibrated
        mine_s = row.predictions.learner.seconds if row.predictions.learner else None
        out.append({"label": row.label, "intensity": row.intensity_flops_per_byte,
                    "model": pred.attainable_flops_per_s if pred else None,
                    "learner": row.flops / mine_s if isinstance(mine_s, (int, float)) and mine_s > 0 else None,
                    "measured": row.flops / row.measured.measured_s})
    return out


def plot_record(record: LabRecord | Mapping[str, Any], path: Path) -> Path:
    path = check_path(path)
    import matplotlib  # optional dependency: matplotlib loads only to draw a plot
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional dependency: matplotlib loads only to draw a plot

    typed = as_record(record)
    rows = points(typed)
    skipped = [r.label for r in typed.ops if r.flops <= 0]
    intensities = [r["intensity"] for r in rows]
    lo = min([0.05, *intensities]) / 2
    hi = max([1e4, *intensities]) * 2
    xs = [lo * (hi / lo) ** (i / 199) for i in range(200)]

    fig, ax = plt.subplots(figsize=(8, 5.5))
    styles = {"datasheet": ("tab:blue", "-"), "calibrated": ("tab:orange", "--")}
    for kind, (color, ls) in styles.items():
        ceil = _ceilings(typed, kind)
        if ceil is None:
            continue
        ax.plot(xs, roof_points(ceil, xs), ls, color=color, lw=2,
                label=f"{kind} roof: {ceil.peak_flops_per_s:.3g} FLOP/s, {ceil.hbm_bytes_per_s:.3g} B/s "
                      f"(ridge {ceil.ridge_flops_per_byte:.0f})")
    markers = "osD^vP"
    for i, row in enumerate(rows):
        m = markers[i % len(markers)]
        color = f"C{i + 2}"
        x, measured = row["intensity"], row["measured"]
        if row["model"]:
            ax.scatter([x], [row["model"]], marker=m, facecolors="none", edgecolors=color, s=80)
        yours = ""
        if row["learner"]:
            ax.scatter([x], [row["learner"]], marker="x", color=color, s=70)
            yours = f", yours {row['learner']:.3g}"
        ax.scatter([x], [measured], marker=m, color=color, s=60,
                   label=f"{row['label']}: measured {measured:.3g} FLOP/s{yours}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOPs / byte)")
    ax.set_ylabel("FLOP/s")
    title = f"{typed.lab} roofline: {typed.device_kind} ({typed.platform}), N={typed.size}, {typed.dtype}"
    note = "hollow: the model's attainable; x: your prediction (FLOPs / your seconds); filled: measured"
    if skipped:
        note += f"; not plotted (no FLOPs): {', '.join(skipped)}"
    ax.set_title(f"{title}\n{note}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    try:
        safeio.make_dirs(path.parent)  # no new folder inside a read-only one (root too)
        # The one file policy (generator.io.safeio): atomic, never over a device, FIFO or read-only file.
        safeio.atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lower()[1:]))
    except OSError as exc:
        raise PlotError(f"can not write the plot: {' '.join(str(exc).split())}") from None
    finally:
        plt.close(fig)
    return path
