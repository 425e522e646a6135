"""The lab's roofline plot: log-log attainable FLOP/s against intensity (FLOPs/byte).

Roofs: the datasheet's and the calibrated one, each min(peak, intensity x bandwidth)
evaluated by ``generator.roofline.estimate`` on a synthetic op of each
intensity (so the roof's formula is the roofline module's, not restated here).
Points: each op at its hand-counted intensity, its predicted attainable FLOP/s
(hollow) and measured FLOP/s = FLOPs / measured seconds (filled). Ops with
no FLOPs (embedding) have no place on a log axis and are listed in the legend.
"""

from __future__ import annotations

from pathlib import Path

from generator import costs, roofline, safeio

PLOT_SUFFIXES = (".png", ".svg")


class PlotError(ValueError):
    pass


def check_path(path: Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise PlotError(f"--plot must end in {' or '.join(PLOT_SUFFIXES)}, got '{path.name}'")
    return path


def _ceilings(record: dict, kind: str) -> roofline.Ceilings | None:
    c = record["constants"][kind]
    if not c:
        return None
    return roofline.Ceilings(c["name"], c["peak_flops_per_s"], c["hbm_bytes_per_s"], c["dtype"], c["source"])


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


def plot_record(record: dict, path: Path) -> Path:
    path = check_path(path)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in record["ops"] if r["flops"] > 0]
    skipped = [r["label"] for r in record["ops"] if r["flops"] <= 0]
    intensities = [r["intensity_flops_per_byte"] for r in rows]
    lo = min([0.05, *intensities]) / 2
    hi = max([1e4, *intensities]) * 2
    xs = [lo * (hi / lo) ** (i / 199) for i in range(200)]

    fig, ax = plt.subplots(figsize=(8, 5.5))
    styles = {"datasheet": ("tab:blue", "-"), "calibrated": ("tab:orange", "--")}
    for kind, (color, ls) in styles.items():
        ceil = _ceilings(record, kind)
        if ceil is None:
            continue
        ax.plot(xs, roof_points(ceil, xs), ls, color=color, lw=2,
                label=f"{kind} roof: {ceil.peak_flops_per_s:.3g} FLOP/s, {ceil.hbm_bytes_per_s:.3g} B/s "
                      f"(ridge {ceil.ridge_flops_per_byte:.0f})")
    markers = "osD^vP"
    for i, row in enumerate(rows):
        m = markers[i % len(markers)]
        color = f"C{i + 2}"
        measured = row["flops"] / row["measured"]["measured_s"]
        pred = row["predictions"]["datasheet"] or row["predictions"]["calibrated"]
        if pred:
            ax.scatter([row["intensity_flops_per_byte"]], [pred["attainable_flops_per_s"]], marker=m,
                       facecolors="none", edgecolors=color, s=80)
        ax.scatter([row["intensity_flops_per_byte"]], [measured], marker=m, color=color, s=60,
                   label=f"{row['label']}: measured {measured:.3g} FLOP/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOPs / byte)")
    ax.set_ylabel("FLOP/s")
    title = f"{record['lab']} roofline: {record['device_kind']} ({record['platform']}), N={record['size']}, {record['dtype']}"
    note = "hollow: predicted attainable; filled: measured (FLOPs / measured time)"
    if skipped:
        note += f"; not plotted (no FLOPs): {', '.join(skipped)}"
    ax.set_title(f"{title}\n{note}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The one file policy (generator.safeio): atomic, never over a device, FIFO or read-only file.
        safeio.atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lower()[1:]))
    except OSError as exc:
        raise PlotError(f"can not write the plot: {' '.join(str(exc).split())}") from None
    finally:
        plt.close(fig)
    return path
