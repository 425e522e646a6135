"""The playground's data: the catalogue, the op cost formulas and the roofline's formulas, exported as JSON.

The page computes EX·01 in JavaScript but restates no formula: every count, template and
formula comes from the Python model.
Details: docs/internals.md.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from generator.model import catalogue, costs, formulas, units
from generator.model import roofline as model
from generator.errors import DrillError
from labs.measure import ops as lab_ops

# The page accepts N from 1 to MAX_N: every FLOP and byte count then stays an exact
# integer below 2**53, so JavaScript's doubles hold them exactly, as Python's ints do.
MAX_N = 131072
DEFAULTS = {"chip": "v5e", "op": "matmul", "n": 2048, "dtype": "bf16"}  # the seed's EX·01
PAGE_OPS = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum", "embedding")
# A size no formula produces by itself: cut out of the Python strings to make templates.
_SENTINEL = 1000003
_CHECK_SIZES = (5, 7, 13, 64, 1000, 4097, 65536, MAX_N)


class PlaygroundDataError(DrillError, RuntimeError):
    """A cost formula the page cannot carry exactly (not a polynomial of degree <= 3 in N)."""


def _fit(values: list[int]) -> list[int]:
    """Coefficients c0..c3 of the cubic through (1, v1) .. (4, v4), exactly (Lagrange)."""
    xs = [1, 2, 3, 4]
    coeffs = [Fraction(0)] * 4
    for i, (xi, yi) in enumerate(zip(xs, values)):
        basis = [Fraction(1)]  # polynomial prod_{j != i} (x - xj) / (xi - xj), low order first
        for j, xj in enumerate(xs):
            if j == i:
                continue
            denom = Fraction(xi - xj)
            basis = [(a - xj * b) / denom for a, b in zip([Fraction(0)] + basis, basis + [Fraction(0)])]
        for k, b in enumerate(basis):
            coeffs[k] += yi * b
    if any(c.denominator != 1 for c in coeffs):
        raise PlaygroundDataError(f"non-integer coefficients {coeffs}")
    return [int(c) for c in coeffs]


def _poly(coeffs: list[int], n: int) -> int:
    return sum(c * n ** k for k, c in enumerate(coeffs))


def _template(text: str, n: int) -> str:
    return re.sub(rf"\b{n}\b", "{N}", text)


def op_entry(name: str) -> dict[str, Any]:
    """One op's metadata and, per dtype, its cost polynomials and templates."""
    op = lab_ops.OPS[name]
    shape = [("N" if d == _SENTINEL else d) for d in op.cost_shape(_SENTINEL)]
    by_dtype = {}
    for dtype in units.COMPUTE_DTYPES:
        samples = [op.cost(n, dtype) for n in (1, 2, 3, 4)]
        flops = _fit([c.flops for c in samples])
        nbytes = _fit([c.bytes for c in samples])
        for n in _CHECK_SIZES:
            c = op.cost(n, dtype)
            if (_poly(flops, n), _poly(nbytes, n)) != (c.flops, c.bytes):
                raise PlaygroundDataError(f"{name} {dtype}: FLOPs/bytes at N={n} are not the fitted cubic")
        big = op.cost(MAX_N, dtype)
        if max(big.flops, big.bytes) >= 2 ** 53:
            raise PlaygroundDataError(f"{name} {dtype}: counts at N={MAX_N} exceed 2**53; lower MAX_N")
        probe = op.cost(_SENTINEL, dtype)
        tmpl = {"flops_working": _template(probe.flops_working, _SENTINEL),
                "bytes_working": _template(probe.bytes_working, _SENTINEL)}
        for n in (9, 4096):  # the templates must give back the Python strings
            c = op.cost(n, dtype)
            for key, want in (("flops_working", c.flops_working), ("bytes_working", c.bytes_working)):
                if tmpl[key].replace("{N}", str(n)) != want:
                    raise PlaygroundDataError(f"{name} {dtype}: {key} is not a template in N")
        by_dtype[dtype] = {
            "compute_dtype": probe.dtype, "op": probe.op, "flops": flops, "bytes": nbytes,
            "flops_formula": probe.flops_formula, "bytes_formula": probe.bytes_formula,
            "convention": probe.convention, **tmpl,
        }
    return {"name": name, "label": op.label, "description": op.description, "cost_op": op.cost_op,
            "shape": shape, "by_dtype": by_dtype}


def ceilings_entry(chip: catalogue.Chip) -> dict[str, Any]:
    """Per dtype: the two speeds and their source, or the CLI's error when no peak is published."""
    out: dict[str, dict[str, Any]] = {}
    for dtype in units.COMPUTE_DTYPES:
        try:
            c = model.Ceilings.from_chip(chip, dtype)
        except model.UnpublishedFigureError as exc:
            out[dtype] = {"error": str(exc)}
            continue
        out[dtype] = {"name": c.name, "dtype": c.dtype, "peak_flops_per_s": c.peak_flops_per_s,
                      "hbm_bytes_per_s": c.hbm_bytes_per_s, "source": c.source}
    return out


def playground_data() -> dict[str, Any]:
    """Everything EX·01's JavaScript needs, JSON-ready."""
    cat = catalogue.load()
    return {
        "defaults": dict(DEFAULTS),
        "max_n": MAX_N,
        "dtypes": list(units.COMPUTE_DTYPES),
        "chips": [{"name": c.name, "display": c.display, "kind": c.kind, "ceilings": ceilings_entry(c)}
                  for c in cat.chips],
        "ops": [op_entry(name) for name in PAGE_OPS],
        # the roofline's formulas, which the page evaluates (generator.model.formulas): it writes none itself
        "formulas": formulas.to_json(),
        # generator.model.units.si's prefix table, so the page prints numbers as the CLI does
        "si_scale": [[f, p] for f, p in units._PREFIXES + units._SMALL[1:]],
    }


def python_case(chip: str, op: str, n: int, dtype: str) -> dict[str, Any]:
    """What `drill roofline` prints for one playground case (the parity test's reference)."""
    target = catalogue.get(chip)
    cost = lab_ops.OPS[op].cost(n, dtype)
    try:
        est = model.estimate(target, cost)
    except model.UnpublishedFigureError as exc:
        return {"error": str(exc)}
    summary = dict(line.split(": ", 1) for line in model.summary_lines(est))
    dims = ",".join(str(d) for d in cost.shape)
    return {
        "intensity": est.intensity_flops_per_byte, "attainable": est.attainable_flops_per_s,
        "floor": est.floor_s, "t_math": est.t_math_s, "t_comms": est.t_comms_s,
        "bound": est.bound, "flops": cost.flops, "bytes": cost.bytes,
        "text": {"intensity": summary["intensity"], "verdict": summary["verdict"],
                 "attainable": summary["attainable"], "floor": summary["floor latency"]},
        "header": f"chip: {target.display}   op: {cost.op} [{dims}]   dtype: {cost.dtype}",
        "worked": model.worked_lines(est),
    }
