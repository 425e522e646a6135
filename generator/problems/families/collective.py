"""Family 12 [collective]: time and bound of AllGather, ReduceScatter, AllReduce and AllToAll over ICI.

Priced by ``generator.model.collectives.collective_time``. The prompt names the slice shape,
never whether an axis wraps: deciding that from the chip is the skill.
Details: docs/internals.md.
"""

from __future__ import annotations

import itertools
import random
from typing import Any, TypedDict, cast

from generator.model import collectives as C
from generator.model import costs
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Mastery, Skill, cite, derived, per_chip, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, sci, seconds

NAME = "collective"
ORDER = 120  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_112  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 7: what shows it (drill progress)
MASTERY = {7: Mastery("a collective inside a slice right")}
# Fair draws: assuming or ignoring wraparound misses by more than 5% (an axis of 2, where ring and line coincide, is redrawn where it can be). Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"wrong-hops": 0.05}
BOUNDS = ("bandwidth", "latency")
VARIANTS = (*C.OPS, "bound")
MAX_TRIES = 20
FIELDS = {"chip", "slice", "op", "axes", "array", "size", "hop_latency"}
PROMPTS = {v: FIELDS for v in VARIANTS}


class CollectiveParams(TypedDict):
    """A drawn collective: the chip, the skill's variant (an op or ``bound``), the op, the slice (``4x4``),
    the indices of the axes it runs over, and the array's dtype and (rows, cols)."""

    chip: str
    variant: str
    op: str
    slice: str
    over: list[int]
    dtype: str
    shape: list[int]


def params_of(problem: Problem) -> CollectiveParams:
    """The params of a collective problem."""
    return cast(CollectiveParams, problem.params)


HOW = {"all_gather": "an AllGather that assembles", "reduce_scatter": "a ReduceScatter of",
       "all_reduce": "an AllReduce of", "all_to_all": "an AllToAll of"}


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"axis_sizes", "max_axes", "arrays", "variants"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    a = check.mapping(p["arrays"], ("params", "arrays"), required={"rows", "cols", "dtypes"},
                      allowed={"rows", "cols", "dtypes"})
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"axis_sizes": check.int_list(p["axis_sizes"], ("params", "axis_sizes"), low=2),
            "max_axes": check.integer(p["max_axes"], ("params", "max_axes"), low=1),
            "rows": check.int_list(a["rows"], ("params", "arrays", "rows")),
            "cols": check.int_list(a["cols"], ("params", "arrays", "cols")),
            "dtypes": tuple(check.dtype_list(a["dtypes"], ("params", "arrays", "dtypes"))),
            "variants": variants}


def _rank(chip: Chip) -> int | None:
    if chip.figure("pod_topology") is None or chip.figure("ici_wraparound") is None:
        return None
    if chip.figure("ici_bytes_per_s_bidi") is None:
        return None
    return len(C.pod_shape(chip))


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    def what(v: str) -> str:
        return "whether a collective is bandwidth- or latency-bound" if v == "bound" else f"time of {C.OP_LABELS[v]} over ICI"

    return per_chip(spec, cat, spec.params["variants"], lambda chip, v: f"{what(v)} ({chip.display})",
                    keep=lambda chip, v: _rank(chip) is not None and bool(existing_slices(spec, chip)),
                    tags=lambda v: (f"collective::{v}",))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> CollectiveParams:
    for _ in range(MAX_TRIES):  # redraw when the answer is a figure the prompt gives (one hop: 1 µs)
        params = _draw(spec, cat, skill, rng)
        p = solve(spec, cat, skill, params)
        if p.answer.is_choice or seconds(p.answer.number) not in p.prompt:
            break
    return params


def _draw(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> CollectiveParams:
    p = spec.params
    chip = cat.get(skill.chip_name)
    rank = len(C.pod_shape(chip))
    shape = rng.choice(derived(spec, cat, "collective:slices", chip.name,
                               lambda: tuple(existing_slices(spec, chip))))
    count = rng.randint(1, min(p["max_axes"], rank))
    over = sorted(rng.sample(range(rank), count))
    op = rng.choice(C.OPS) if skill.variant == "bound" else skill.variant
    return {"chip": chip.name, "variant": skill.variant, "op": op, "slice": C.fmt_shape(shape), "over": over,
            "dtype": rng.choice(p["dtypes"]), "shape": [rng.choice(p["rows"]), rng.choice(p["cols"])]}


def existing_slices(spec: FamilySpec, chip: Chip) -> list[tuple[int, ...]]:
    """Every slice with sides from ``axis_sizes`` that exists on ``chip`` (``collectives.check_slice``:
    on v4p/v5p inside one 4x4x4 cube or made of whole cubes, so 2x16x16 is never drawn)."""

    out = []
    for shape in itertools.product(spec.params["axis_sizes"], repeat=len(C.pod_shape(chip))):
        try:
            C.check_slice(chip, shape)
        except C.TopologyError:
            continue
        out.append(shape)
    return out


def compute(cat: Catalogue, params: CollectiveParams) -> C.CollectiveTime:
    """The modelled collective for drawn ``params`` (also what misconception checks start from)."""
    chip = cat.get(params["chip"])
    shape = C.parse_shape(params["slice"])
    rows, cols = params["shape"]
    axes = tuple(shape[i] for i in params["over"])
    return C.chip_collective(cat, chip, params["op"], costs.array_bytes((rows, cols), params["dtype"]), axes,
                             shape=shape)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: CollectiveParams) -> Problem:
    chip = cat.get(params["chip"])
    shape = C.parse_shape(params["slice"])
    rows, cols = params["shape"]
    dtype = params["dtype"]
    t = compute(cat, params)
    one, bidi = C.ici_figures(chip)
    lat = cat.fact(C.HOP_LATENCY_FACT)
    rule = chip.figures["ici_wraparound"]
    axes_text = " and ".join(f"axis {i} ({shape[i]})" for i in params["over"])
    fields = {"chip": chip.display, "slice": params["slice"], "op": C.OP_LABELS[params["op"]],
              "axes": axes_text, "array": f"{HOW[params['op']]} a {dtype}[{rows},{cols}] array",
              "size": f"V = {sci(t.nbytes)} B", "hop_latency": seconds(float(lat.value))}
    steps = [f"V = {rows}·{cols}·{DTYPE_BYTES[dtype]} ({dtype}) = {sci(t.nbytes)} B",
             f"wraparound rule: {rule.note} {cite(rule)}",
             f"ICI per link: one way {sci(float(one.value))} B/s, bidirectional {sci(float(bidi.value))} B/s {cite(one)}",
             f"per-hop latency {seconds(float(lat.value))}, the book's worked-problem assumption {cite(lat)}",
             *C.collective_lines(t)]
    key = f"{params['op']}-{params['slice']}-o{''.join(map(str, params['over']))}-{rows}x{cols}-{dtype}"
    if skill.variant == "bound":
        answer = Answer(choice=t.bound, choices=BOUNDS)
    else:
        answer = Answer(value=t.t_s, unit="s")
    prompt = (spec.prompts[skill.variant].format(**fields) + f" ICI {sci(float(one.value))} B/s one way, "
              f"{sci(float(bidi.value))} bidirectional, a link.")
    return problem(spec, skill, key, prompt, answer, steps, dict(params),
                   spec.hints[skill.variant].format(**fields), (f"dtype::{dtype}",))


# --- named wrong methods (the misconception catalogue's ids), for the grader to recognise -----------------

def gb_gib_moves(cat: Catalogue, params: CollectiveParams) -> bool:
    """Whether a GB/GiB slip moves the answer: a bandwidth-bound collective moves; a latency-bound one does not."""
    return compute(cat, params).bound == "bandwidth"


DROPS_ONLY_WITHIN_TOLERANCE = True  # ``misconceptions`` drops only answers within the tolerance
# an op a learner times as one AllGather over the same axes -> the mistake's id
AS_ALLGATHER = {"all_reduce": "allreduce-as-allgather", "all_to_all": "alltoall-as-allgather"}


def misconceptions(spec: FamilySpec, cat: Catalogue, params: CollectiveParams) -> dict[str, float]:
    """Misconception id -> the answer (seconds) that mistake gives, for a timed variant.

    Only mistakes whose answer falls outside the tolerance are returned: one that lands
    on the key (an axis of 2, where a ring and a line coincide) can not be told apart.
    """
    if params["variant"] == "bound":
        return {}
    right = compute(cat, params)
    chip = cat.get(params["chip"])
    one, bidi = (float(f.value) for f in C.ici_figures(chip))
    lat = float(cat.fact(C.HOP_LATENCY_FACT).value)
    rows, cols = params["shape"]

    def redo(nbytes: float = right.nbytes, wrap: tuple[bool, ...] = right.wrap, w1: float = one, wb: float = bidi,
             lat: float = lat, op: str = params["op"]) -> C.CollectiveTime:
        return C.collective_time(op, nbytes, right.axes, wrap, w1, wb, lat)

    wrong: dict[str, float] = {}
    if params["op"] in AS_ALLGATHER:  # first: where a swapped figure gives the same number, this is likelier
        wrong[AS_ALLGATHER[params["op"]]] = redo(op="all_gather").t_s
    wrong |= {
        "one-way-vs-bidirectional": redo(w1=bidi, wb=one).t_s,  # the two per-link figures swapped
        "wrong-hops": redo(wrap=tuple(not w for w in right.wrap)).t_s,  # wraparound ignored or assumed
        "elements-not-bytes": redo(nbytes=costs.array_bytes((rows, cols), "int8")).t_s,  # 1 byte an element
        "sum-not-max": C.collective_seconds(right.t_bandwidth_s, right.t_latency_s, overlap=False),
        "forgot-latency": redo(lat=0.0).t_s,  # the hop latency left out
        "bits-for-bytes": redo(w1=one / 8, wb=bidi / 8).t_s,  # the link rates divided by 8 (bytes taken for bits)
        "bits-for-bytes/": redo(w1=one * 8, wb=bidi * 8).t_s,  # or a bit rate read as bytes
    }
    return {k: v for k, v in wrong.items() if abs(v - right.t_s) > spec.tolerance * right.t_s}
