"""Small SVG figures for cards: a chip's roofline (attainable FLOP/s against intensity, log-log).

Pure string building, no plotting library. The three corner points are the
chip's ceilings from ``roofline.Ceilings.from_chip``: the memory slope
(intensity x HBM bytes/s) meets the compute roof (peak FLOP/s) at the ridge.
"""

from __future__ import annotations

import hashlib
import math
from html import escape  # names from chips.yaml are text: "AT&T" must not break the XML

from generator.model.catalogue import Chip
from generator.model.roofline import Ceilings
from generator.model.units import si

WIDTH, HEIGHT, PAD = 320, 200, 36
X_RANGE = (0.1, 1e4)  # FLOPs/byte shown on the x axis


def media_name(content: bytes, prefix: str, ext: str) -> str:
    """A media file name from its content hash: a changed figure gets a new name, so Anki imports it."""
    return f"{prefix}-{hashlib.sha256(content).hexdigest()[:16]}.{ext}"


def roofline_svg(chip: Chip, dtype: str = "bf16") -> bytes:
    c = Ceilings.from_chip(chip, dtype)
    lo_x, hi_x = X_RANGE
    lo_y = lo_x * c.hbm_bytes_per_s / 2
    hi_y = c.peak_flops_per_s * 2

    def xy(intensity: float, flops: float) -> str:
        fx = (math.log10(intensity) - math.log10(lo_x)) / (math.log10(hi_x) - math.log10(lo_x))
        fy = (math.log10(flops) - math.log10(lo_y)) / (math.log10(hi_y) - math.log10(lo_y))
        return f"{PAD + fx * (WIDTH - 2 * PAD):.1f},{HEIGHT - PAD - fy * (HEIGHT - 2 * PAD):.1f}"

    ridge = c.ridge_flops_per_byte
    line = " ".join((xy(lo_x, lo_x * c.hbm_bytes_per_s), xy(ridge, c.peak_flops_per_s),
                     xy(hi_x, c.peak_flops_per_s)))
    rx, ry = (float(v) for v in xy(ridge, c.peak_flops_per_s).split(","))
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="10">'
        f'<rect x="{PAD}" y="{PAD}" width="{WIDTH - 2 * PAD}" height="{HEIGHT - 2 * PAD}" fill="none" stroke="#999"/>'
        f'<polyline points="{line}" fill="none" stroke="#1a73e8" stroke-width="2"/>'
        f'<line x1="{rx:.1f}" y1="{ry:.1f}" x2="{rx:.1f}" y2="{HEIGHT - PAD}" stroke="#d93025" stroke-dasharray="3,3"/>'
        f'<text x="{rx + 3:.1f}" y="{HEIGHT - PAD - 4}" fill="#d93025">ridge {ridge:.0f}</text>'
        f'<text x="{PAD}" y="{PAD - 6}">{escape(chip.display)} {escape(dtype)}: '
        f'peak {escape(si(c.peak_flops_per_s, "FLOP/s"))}, HBM {escape(si(c.hbm_bytes_per_s, "B/s"))}</text>'
        f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">intensity (FLOPs/byte, log)</text>'
        f'<text x="10" y="{HEIGHT / 2:.0f}" transform="rotate(-90 10 {HEIGHT / 2:.0f})" text-anchor="middle">'
        f'attainable FLOP/s (log)</text></svg>'
    )
    return svg.encode("utf-8")
