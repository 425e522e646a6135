"""Units: data sizes, SI prefixes and how numbers are printed.

One place for the byte widths of dtypes and for formatting, so the CLI, the
decks and the lab print the same numbers the same way. Everything internal is
in base SI units: seconds, bytes, FLOPs, FLOP/s, bytes/s.
"""

from __future__ import annotations

import math
from typing import Any

from generator.errors import UsageError


class UnknownDtypeError(UsageError, ValueError):
    """A dtype name the model does not know; the message lists the accepted ones."""

# Bytes per element. "int8" also stands for the scaling book's int8 OP/s.
DTYPE_BYTES: dict[str, int] = {"f32": 4, "bf16": 2, "fp8": 1, "int8": 1, "int32": 4}

DTYPE_ALIASES: dict[str, str] = {
    "f32": "f32", "fp32": "f32", "float32": "f32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp8": "fp8", "f8": "fp8", "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
    "int8": "int8", "i8": "int8", "s8": "int8",
    "int32": "int32", "i32": "int32",
}

# Bytes in a GiB (2^30, IEC) over bytes in a GB (10^9, SI): 1.0737..., a GiB is 7.4% more than a GB.
# The one GB/GiB conversion every GiB slip is computed with.
GIB_PER_GB = 2**30 / 1e9

# The dtypes a roofline can be asked about (int32 only appears as indices/outputs).
COMPUTE_DTYPES = ("bf16", "f32", "fp8", "int8")


def normalize_dtype(name: str) -> str:
    """Canonical dtype name; ValueError naming the accepted ones."""
    known = DTYPE_ALIASES.get(name)
    if known is not None:  # already a name or alias as written here
        return known
    key = name.strip().lower()
    if key not in DTYPE_ALIASES:
        raise UnknownDtypeError(f"unknown dtype '{name}'; accepted: {', '.join(sorted(set(DTYPE_ALIASES.values())))}")
    return DTYPE_ALIASES[key]


_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_SMALL = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]
_SCALE = tuple(_PREFIXES + _SMALL[1:])  # every prefix ``si`` may pick, largest first


def si(value: float, unit: str, digits: int = 3) -> str:
    """``si(8.72e-5, "s") == "87.2 µs"``; ``si(1.97e14, "FLOP/s") == "197 TFLOP/s"``."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    scale = _SCALE
    for factor, prefix in scale:
        if abs(value) >= factor * 0.9995:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    factor, prefix = scale[-1]
    return f"{value / factor:.{digits}g} {prefix}{unit}"


def seconds(value: float, digits: int = 3) -> str:
    return si(value, "s", digits)


def sci(value: float, digits: int = 4) -> str:
    """Scientific notation the way the scaling book writes it: 1.97e14 (``inf``, ``nan`` past the float limits)."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(float(value))
    if float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def intensity_number(value: float) -> str:
    """An intensity's number: 4 significant digits (``682.7``, ``0.1667``), whole above 1000 (``16384``)."""
    if abs(value) >= 1e6:
        return sci(value)
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def fmt(value: float, unit: str) -> str:
    """The one way a quantity is shown on every screen (CLI, quiz, decks, worked lines, exports).

    ``unit`` is the base SI unit of ``Answer.unit``: intensities print as the EX·01
    playground does (``682.7 FLOPs/byte``; ``intensity_number``), plain counts with 4 significant digits
    (``155.6``; ``1.2e+07`` style beyond a million), everything else with an SI
    prefix and 3 significant digits (``87.2 µs``, ``197 TFLOP/s``, ``16.8 MB``).
    """
    if not math.isfinite(value):
        return f"{value} {unit}".strip()
    if unit == "FLOP/byte":
        return f"{intensity_number(value)} FLOPs/byte"
    if unit == "":
        return f"{value:.4g}" if abs(value) < 1e6 else sci(value)
    return si(value, unit)


NON_FINITE_KEY = "non_finite"  # the JSON key listing the fields that were past the float range


def json_ready(value: Any, path: str = "") -> Any:
    """``value`` with every float past the float range (inf, nan) replaced by ``None``, so it
    serialises as standard JSON (``json.dumps(..., allow_nan=False)``). A dict at the top gains
    ``"non_finite": [dotted keys]`` naming what was replaced, when anything was."""
    replaced: list[str] = []

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, float) and not math.isfinite(item):
            replaced.append(where or "value")
            return None
        if isinstance(item, dict):
            return {k: walk(v, f"{where}.{k}" if where else str(k)) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(item)]
        return item

    out = walk(value, path)
    if replaced and isinstance(out, dict):
        out[NON_FINITE_KEY] = replaced
    return out
