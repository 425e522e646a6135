"""Op cases shared by the op-based families (intensity, bound, floor).

A case is one of the seed's ops at realistic shapes, declared in a spec; FLOPs, bytes and the
estimate come from ``costs`` and ``roofline``.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, TypedDict, cast

from generator.model import costs, roofline
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families import slips
from generator.problems.families.base import Skill, per_chip
from generator.problems.families.slips import sci, si, wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Problem
from generator.model.units import DTYPE_BYTES
from generator.problems.specs import Checker, FamilySpec, KeyPath

CASE_KEYS = {"op", "label", "dims", "dtypes"}


class OpParams(TypedDict):
    """A drawn op case (intensity and bound): the chip, the op, its case, one value per op dim, the dtype."""

    chip: str
    op: str
    case: str
    shape: list[int]
    dtype: str


class FloorParams(OpParams):
    """A drawn op case of the floor family, with the quantity it asks: ``floor``, ``t_math`` or ``t_comms``."""

    quantity: str


def op_params_of(problem: Problem) -> OpParams:
    """The params of an intensity or bound problem."""
    return cast(OpParams, problem.params)


def floor_params_of(problem: Problem) -> FloorParams:
    """The params of a floor problem."""
    return cast(FloorParams, problem.params)


@dataclass(frozen=True)
class OpCase:
    name: str
    op: str
    label: str
    dims: tuple[tuple[int, ...], ...]  # one tuple of choices per op dim, in costs.OPS order
    dtypes: tuple[str, ...]

    def dtypes_for(self, chip: Chip) -> tuple[str, ...]:
        """The case's dtypes that ``chip`` publishes a peak for."""
        return tuple(d for d in self.dtypes if d in chip.peak_flops)


def check_cases(raw: Any, check: Checker, where: KeyPath) -> dict[str, OpCase]:
    cases = {}
    for name, body in check.mapping(raw, where).items():
        at = (*where, name)
        body = check.mapping(body, at, required=CASE_KEYS, allowed=CASE_KEYS)
        try:
            op = costs.normalize_op(str(body["op"]))
        except costs.CostError as exc:
            check.fail((*at, "op"), str(exc))
        wanted = costs.OPS[op].dims
        dims = check.mapping(body["dims"], (*at, "dims"), required=set(wanted), allowed=set(wanted))
        dtypes = check.dtype_list(body["dtypes"], (*at, "dtypes"))
        cases[name] = OpCase(name, op, check.text(body["label"], (*at, "label")),
                             tuple(check.int_list(dims[d], (*at, "dims", d)) for d in wanted), tuple(dtypes))
    if not cases:
        check.fail(where, "declare at least one case")
    return cases


def draw(case: OpCase, chip: Chip, rng: random.Random) -> OpParams:
    """Drawn parameters: chip, op, case, shape (list of ints), dtype."""
    return {"chip": chip.name, "op": case.op, "case": case.name,
            "shape": [rng.choice(choices) for choices in case.dims],
            "dtype": rng.choice(case.dtypes_for(chip))}


# A verdict drawn this close to the ridge turns on rounding (and flips under another edition's
# constants), so the bound family redraws it: intensity / ridge must lie outside [1/1.1, 1.1].
RIDGE_MARGIN = 1.1
_REDRAWS = 1000  # a case that cannot be drawn clear of the ridge in this many tries is a spec error


def ridge_ratio(chip: Chip, cost: costs.OpCost) -> float:
    """intensity / ridge (for the op's compute dtype): above 1 compute-bound, below 1 memory-bound."""
    ceil = roofline.Ceilings.from_chip(chip, cost.dtype)
    return cost.intensity_flops_per_byte / ceil.ridge_flops_per_byte


def clear_of_ridge(chip: Chip, cost: costs.OpCost, margin: float = RIDGE_MARGIN) -> bool:
    """True when the verdict is at least ``margin`` (a factor) away from the ridge, either side."""
    r = ridge_ratio(chip, cost)
    return r >= margin or r <= 1 / margin


def draw_clear_of_ridge(case: OpCase, chip: Chip, rng: random.Random) -> OpParams:
    """``draw`` redrawn (from the same ``rng``, so deterministic) until clear of the chip's ridge."""
    for _ in range(_REDRAWS):
        params = draw(case, chip, rng)
        # The bare cost, not the estimate: a rejected draw should not pay for worked lines. The
        # verdict is memoised in _CACHE under a tagged key, so clearing _CACHE clears it too.
        key = ("clear", chip.name, params["op"], tuple(params["shape"]), params["dtype"])
        clear = _CACHE.get(key)
        if clear is None:
            if len(_CACHE) >= _CACHE_LIMIT:
                _CACHE.clear()
            clear = _CACHE[key] = clear_of_ridge(chip, costs.cost(params["op"], params["shape"], params["dtype"]))
        if clear:
            return params
    raise ValueError(f"case '{case.name}' on {chip.name}: no draw lies {RIDGE_MARGIN}x away from the ridge; "
                     f"widen its dims")


def estimate(cat: Catalogue, params: OpParams) -> tuple[Chip, roofline.Estimate]:
    """The chip and the roofline estimate (with its worked lines) of drawn op params."""
    chip = cat.get(params["chip"])
    return chip, _worked(chip, params["op"], tuple(params["shape"]), params["dtype"])[0]


# (chip, op, shape, dtype) -> (estimate, labelled worked lines). Both are pure in the key and the
# op families share shapes, so repeated draws reuse the work. Bounded: cleared when full.
_CACHE: dict[tuple[Any, ...], Any] = {}  # two kinds of entry under tagged keys: Any
_CACHE_LIMIT = 20000


def _worked(chip: Chip, op: str, shape: tuple[int, ...], dtype: str
            ) -> tuple[roofline.Estimate, tuple[tuple[str, str], ...]]:
    key = (chip.name, op, shape, dtype)
    hit: tuple[roofline.Estimate, tuple[tuple[str, str], ...]] | None = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        est = roofline.estimate(chip, costs.cost(op, shape, dtype))
        lines = tuple((line.split("=")[0].split(":")[0].strip(), line) for line in roofline.worked_lines(est))
        hit = _CACHE[key] = (est, lines)
    return hit


def key(params: OpParams) -> str:
    """The drawn part of a problem id: ``4096x4096x4096-bf16``."""
    return "x".join(str(d) for d in params["shape"]) + "-" + str(params["dtype"])


def describe(cost: costs.OpCost) -> str:
    """An op's operands with shapes and dtypes, to follow its label: ``bf16[8,4096] @ bf16[4096,4096] -> ...``."""
    s, t = cost.shape, cost.operand_dtypes
    if cost.op == "matmul":
        text = f"{t['lhs']}[{s[0]},{s[1]}] @ {t['rhs']}[{s[1]},{s[2]}] -> {t['out']}[{s[0]},{s[2]}]"
        acc = costs.ACCUMULATE_DTYPE.get(cost.dtype)
        if acc and acc != t["out"]:  # the MXU sums int8 products in int32; the model writes the output back as out
            text += (f" (accumulated in {acc}, written back as {t['out']}: "
                     f"{DTYPE_BYTES[t['out']]} byte{'s' if DTYPE_BYTES[t['out']] != 1 else ''} an element)")
        return text
    if cost.op == "add":
        return f"{t['x']}[{s[0]},{s[1]}] + {t['y']}[{s[0]},{s[1]}]"
    if cost.op == "softmax":
        return f"of {t['x']}[{s[0]},{s[1]}] over its last axis"
    if cost.op == "reduce_sum":
        return f"of {t['x']}[{s[0]},{s[1]}] over its last axis -> {t['out']}[{s[0]}]"
    if cost.op == "dot":
        return f"{t['x']}[{s[0]}] · {t['y']}[{s[0]}]"
    if cost.op == "embedding":
        return f"of {s[0]} rows from a {t['table']}[{s[1]},{s[2]}] table ({t['indices']} indices)"
    return f"{list(s)} {cost.dtype}"


OP_LABELS = {"matmul": "matmul", "add": "elementwise add", "softmax": "softmax", "reduce_sum": "reduce_sum",
             "dot": "dot product", "embedding": "embedding lookup"}


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article, as a skill's description reads: "an elementwise add", "a large matmul"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def case_skills(spec: FamilySpec, cat: Catalogue, describe: Callable[[Chip, OpCase, str], str],
                variants: Iterable[str] | None = None,
                case_of: Callable[[str], str] = lambda variant: variant) -> list[Skill]:
    """``base.per_chip`` over op cases: a skill per chip and variant (default: one per case) whose
    case (``case_of(variant)``) the chip publishes a peak for, tagged with the case's op;
    ``describe(chip, case, variant)``."""
    cases = spec.params["cases"]
    return per_chip(spec, cat, cases if variants is None else variants,
                    lambda chip, v: describe(chip, cases[case_of(v)], v),
                    keep=lambda chip, v: bool(cases[case_of(v)].dtypes_for(chip)),
                    tags=lambda v: (f"op::{cases[case_of(v)].op}",))


def steps(chip: Chip, est: roofline.Estimate, *labels: str) -> list[str]:
    """The worked lines of ``roofline.worked_lines`` whose label is in ``labels``, in order."""
    wanted = set(labels)
    c = est.cost
    return [line for label, line in _worked(chip, c.op, c.shape, c.dtype)[1] if label in wanted]


def fields(chip: Chip, est: roofline.Estimate, case: OpCase) -> dict[str, str]:
    """Template fields every op prompt may use: {chip}, {op}, {label}."""
    op = describe(est.cost)
    if est.cost.op == "softmax":  # a count convention, not a law: the prompt must say which one the key uses
        per_element = est.cost.flops / (est.cost.shape[0] * est.cost.shape[1])
        op += f", counting {per_element:g} FLOPs per element (the seed's count)"
    return {"chip": chip.display, "op": op, "label": case.label}


# The two hooks shared by the families whose params are just op cases (intensity, bound).
def check_case_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required={"cases"}, allowed={"cases"})
    return {"cases": check_cases(p["cases"], check, ("params", "cases"))}


def draw_case_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> OpParams:
    return draw(spec.params["cases"][skill.variant], cat.get(skill.chip_name), rng)


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """The op families' named wrong answers (intensity, bound, floor): each is ``roofline.estimate`` on a
    tweaked cost (``costs.as_elements`` ...) or tweaked ceilings, read as the problem's quantity."""
    p = op_params_of(problem)
    chip = cat.get(p["chip"])
    cost = costs.cost(p["op"], tuple(p["shape"]), p["dtype"])
    if problem.family in ("intensity", "bound"):
        quantity = problem.family
    else:
        quantity = floor_params_of(problem).get("quantity", "floor")
    ceil = roofline.Ceilings.from_chip(chip, cost.dtype)
    right = roofline.estimate(ceil, cost)
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s

    def ev(c: costs.OpCost = cost, k: roofline.Ceilings = ceil) -> float | str:
        return roofline.estimate(k, c).quantity(quantity)

    if quantity == "bound":  # a verdict has no numeric slip to name: say what it follows from
        sign = ">=" if right.bound == "compute" else "<"
        other = "memory" if right.bound == "compute" else "compute"
        yield wrong("wrong-verdict", other, f"the verdict follows from the intensity against the ridge: "
                                            f"{right.intensity_flops_per_byte:.1f} {sign} {ceil.ridge_flops_per_byte:.1f} "
                                            f"FLOPs/byte, so {right.bound}-bound")
        return
    if quantity == "intensity":  # the chip's line taken for the op's own ratio
        yield wrong("ridge-as-intensity", ceil.ridge_flops_per_byte,
                    f"ridge = peak / bandwidth = {ceil.ridge_flops_per_byte:.1f} FLOPs/byte (the {chip.display}'s) "
                    f"instead of the op's FLOPs / bytes")
    cores = chip.figure("tensorcores_per_chip")
    if quantity in ("floor", "t_comms") and cores is not None and int(cores.value) > 1:
        # first: on a two-core chip this is the likelier of the slips that double T_comms
        per_core = bw / int(cores.value)
        yield wrong("hbm-per-core", ev(k=ceil.with_bandwidth(per_core)),
                    f"HBM bandwidth = {sci(per_core)} B/s (one of {int(cores.value)} TensorCores' share) instead of "
                    f"the chip's {sci(bw)}")
    if quantity == "floor":
        # first: a halved peak whose T_math falls below T_comms gives this same number, the term itself
        hidden, name = ((right.t_comms_s, "T_comms") if right.bound == "compute" else (right.t_math_s, "T_math"))
        yield wrong("one-term-floor", hidden, f"floor = {name} = {si(hidden, 's')} alone: the smaller term, hidden "
                                              f"under the {right.bound}-bound one")
    elements = costs.as_elements(cost)
    if elements.bytes != cost.bytes:
        yield wrong("elements-not-bytes", ev(c=elements),
                    f"bytes = {sci(elements.bytes)} (elements) instead of {sci(cost.bytes)} B ({cost.dtype}: "
                    f"{DTYPE_BYTES[cost.dtype]} bytes per element)")
    if DTYPE_BYTES[cost.dtype] == 2:  # bf16 (or f16) counted at f32's 4 bytes an element
        wide = costs.in_dtype_bytes(cost, "f32")
        yield wrong("wrong-dtype-size", ev(c=wide), f"bytes = {sci(wide.bytes)} ({cost.dtype} counted as 4 bytes "
                                                    f"an element) instead of {sci(cost.bytes)}")
    for kept in costs.TWO_INPUTS.get(cost.op, ()):
        one = costs.one_input_only(cost, kept)
        yield wrong("one-operand-bytes", ev(c=one), f"bytes = {sci(one.bytes)} (only {kept} read, with the "
                                                    f"output) instead of {sci(cost.bytes)}")
    if cost.bytes_written:
        inputs = costs.inputs_only(cost)
        yield wrong("forgot-output-write", ev(c=inputs),
                    f"bytes = {sci(inputs.bytes)} (inputs only) instead of {sci(cost.bytes)} "
                    f"(+ {sci(cost.bytes_written)} B of output written)")
    if cost.flops:
        yield wrong("sparse-peak", ev(k=ceil.with_peak(slips.SPARSE_FACTOR * peak)), slips.sparse_step(chip, peak))
        for other, other_peak in slips.other_peaks(chip, cost.dtype):
            yield wrong("wrong-dtype-peak", ev(k=ceil.with_peak(other_peak, other)),
                        f"peak = {sci(other_peak)} ({other}) instead of {sci(peak)} ({cost.dtype})")
        macs = costs.in_macs(cost)
        yield wrong("macs-not-flops", ev(c=macs),
                    f"FLOPs = {sci(macs.flops)} (multiply-adds) instead of {sci(cost.flops)} "
                    f"({costs.FLOPS_PER_MAC} per multiply-add)")
    if quantity == "floor":
        yield wrong("sum-not-max", right.upper_s,
                    f"floor = T_math + T_comms = {si(right.upper_s, 's')} instead of "
                    f"max({si(right.t_math_s, 's')}, {si(right.t_comms_s, 's')})")
    if quantity in ("floor", "t_comms"):
        yield from slips.gib_slips(lambda w: ev(k=ceil.with_bandwidth(w)), bw)
        yield from slips.bits_slips(lambda w: ev(k=ceil.with_bandwidth(w)), bw, "HBM")
    if quantity in ("floor", "t_comms", "t_math"):
        yield from slips.unit_slips(problem)
