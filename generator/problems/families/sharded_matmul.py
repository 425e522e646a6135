"""Family 15 [sharded_matmul]: the scaling book's sharded-matmul strategies ("Sharding").

A bf16 matmul over one mesh axis of N chips: gather first, all-reduce or reduce-scatter after,
and when the split is compute-bound.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from typing import Any, TypedDict, cast

from dataclasses import replace

from generator.model import collectives as C
from generator.model import costs, roofline
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Skill, cite, per_chip, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import sci, seconds

NAME = "sharded_matmul"
ORDER = 150  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_115  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: the max (overlap assumed) misses the no-overlap sum by more than 5%. Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"max-not-sum": 0.05}
VARIANTS = ("gather_time", "allreduce_time", "reducescatter_time", "split_bound")
BOUNDS = ("compute", "comms")
PROMPTS = {v: {"chip", "n", "i", "j", "k", "hop_latency"} for v in VARIANTS}
COLLECTIVE = {"gather_time": "all_gather", "allreduce_time": "all_reduce", "reducescatter_time": "reduce_scatter",
              "split_bound": "all_reduce"}


class ShardedMatmulParams(TypedDict):
    """A drawn sharded matmul C[I, K] = A[I, J] · B[J, K]: the chip, the variant, the axis of ``n`` chips
    and the sizes ``i``, ``j``, ``k``."""

    chip: str
    variant: str
    n: int
    i: int
    j: int
    k: int


def params_of(problem: Problem) -> ShardedMatmulParams:
    """The params of a sharded_matmul problem."""
    return cast(ShardedMatmulParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"axis_sizes", "i", "j", "k", "variants"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"axis_sizes": check.int_list(p["axis_sizes"], ("params", "axis_sizes"), low=2),
            **{d: check.int_list(p[d], ("params", d)) for d in ("i", "j", "k")}, "variants": variants}


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    what = {"gather_time": "AllGather-then-matmul time", "allreduce_time": "matmul-then-AllReduce time",
            "reducescatter_time": "matmul-then-ReduceScatter time",
            "split_bound": "whether a 2-chip sharded matmul is compute- or comms-bound"}
    return per_chip(spec, cat, spec.params["variants"], lambda chip, v: f"{what[v]} ({chip.display})",
                    keep=lambda chip, v: (chip.figure("ici_wraparound") is not None
                                          and chip.figure("ici_bytes_per_s_bidi") is not None))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> ShardedMatmulParams:
    p = spec.params
    n = 2 if skill.variant == "split_bound" else rng.choice(p["axis_sizes"])
    return {"chip": skill.chip_name, "variant": skill.variant, "n": n,
            "i": rng.choice(p["i"]), "j": rng.choice(p["j"]), "k": rng.choice(p["k"])}


def slice_of(chip: Chip, n: int) -> tuple[int, ...]:
    """The slice the prompt names for an axis of ``n`` chips, so wraparound follows from it: on a
    3-D chip whole 4x4x4 cubes (n x 4 x 4) when n is a multiple of 4, else n x 2 x 2 inside one
    cube; on a 2-D chip n x n."""
    if len(C.pod_shape(chip)) == 3:
        return (n, 4, 4) if n % 4 == 0 else (n, 2, 2)
    return (n, n)


def terms(cat: Catalogue, params: ShardedMatmulParams) -> tuple[float, float, C.CollectiveTime]:
    """(FLOPs per chip, T_math seconds, the collective) for drawn ``params``."""
    chip = cat.get(params["chip"])
    n, i, j, k, v = params["n"], params["i"], params["j"], params["k"], params["variant"]
    # AllGather A[I, J] then the full matmul; or the local matmul over J/N, then a collective of C[I, K]
    matmul = costs.matmul(i, j, k, "bf16")
    if v == "gather_time":
        local, nbytes = matmul, costs.array_bytes((i, j), "bf16")
    else:
        # each chip's share of 2·I·J·K: J splits into N equal shards, so the share is a whole count
        local, nbytes = replace(matmul, flops=matmul.flops // n), costs.array_bytes((i, k), "bf16")
    coll = C.chip_collective(cat, chip, COLLECTIVE[v], nbytes, (n,), shape=slice_of(chip, n))
    return local.flops, roofline.estimate(chip, local).t_math_s, coll


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: ShardedMatmulParams) -> Problem:
    chip = cat.get(params["chip"])
    v = params["variant"]
    n, i, j, k = params["n"], params["i"], params["j"], params["k"]
    flops, t_math, coll = terms(cat, params)
    peak = chip.peak_flops["bf16"]
    rule = chip.figures["ici_wraparound"]
    fields = {"chip": chip.display, "n": str(n), "i": str(i), "j": str(j), "k": str(k),
              "hop_latency": seconds(coll.hop_latency_s)}
    label = C.OP_LABELS[COLLECTIVE[v]]
    if v == "gather_time":
        steps = [f"AllGather A: V = 2·I·J = 2·{i}·{j} = {sci(coll.nbytes)} B",
                 f"then every chip multiplies the full A by B: FLOPs = 2·I·J·K = {sci(flops)}"]
    else:
        steps = [f"local matmul on J/N: FLOPs per chip = 2·I·J·K / N = 2·{i}·{j}·{k} / {n} = {sci(flops)}",
                 f"then {label} the partial C: V = 2·I·K = 2·{i}·{k} = {sci(coll.nbytes)} B"]
    steps += [f"T_math = {sci(flops)} / {sci(float(peak.value))} {cite(peak)} = {seconds(t_math)}",
              f"wraparound rule: {rule.note} {cite(rule)}",
              *C.collective_lines(coll)]
    t_comms = coll.t_s
    if v == "split_bound":
        bound = {"compute": "compute", "memory": "comms"}[roofline.bound_of_seconds(t_math, t_comms)]
        steps.append(f"T_math {seconds(t_math)} {'>=' if bound == 'compute' else '<'} T_comms {seconds(t_comms)} "
                     f"-> {bound}-bound")
        answer = Answer(choice=bound, choices=BOUNDS)
    else:
        total = roofline.upper_seconds(t_math, t_comms)  # one after the other: no overlap
        steps.append(f"T = T_math + T_{label} = {seconds(t_math)} + {seconds(t_comms)} = {seconds(total)} "
                     "(one after the other, no overlap)")
        answer = Answer(value=total, unit="s")
    key = f"n{n}-{i}x{j}x{k}"
    shape = C.fmt_shape(slice_of(chip, n))
    prompt = (spec.prompts[v].format(**fields) + f" The slice is {shape} (axis 0). ICI {sci(coll.w_one_way)} "
              f"B/s a link each way; peak {sci(float(peak.value))} FLOP/s.")
    return problem(spec, skill, key, prompt, answer, steps, dict(params), spec.hints[v].format(**fields))


# --- named wrong methods (the misconception catalogue's ids), for the grader to recognise -----------------

DROPS_ONLY_WITHIN_TOLERANCE = True  # ``misconceptions`` drops only answers within the tolerance


def misconceptions(spec: FamilySpec, cat: Catalogue, params: ShardedMatmulParams) -> dict[str, float]:
    """Misconception id -> the time that mistake gives (timed variants; only those outside the tolerance)."""
    if params["variant"] == "split_bound":
        return {}
    _, t_math, coll = terms(cat, params)
    right = roofline.upper_seconds(t_math, coll.t_s)
    one, bidi = coll.w_one_way, coll.w_bidi

    def redo(wrap: tuple[bool, ...] = coll.wrap, w1: float = one, wb: float = bidi,
             lat: float = coll.hop_latency_s) -> float:
        """The key's T_math then the collective redone on a tweaked input (no overlap, as in the key)."""
        return roofline.upper_seconds(t_math, C.collective_time(coll.op, coll.nbytes, coll.axes, wrap, w1, wb, lat).t_s)

    wrong = {"one-way-vs-bidirectional": redo(w1=bidi, wb=one),
             "wrong-hops": redo(wrap=tuple(not w for w in coll.wrap)),
             "max-not-sum": roofline.floor_seconds(t_math, coll.t_s),  # overlap assumed where the prompt says none
             "forgot-latency": redo(lat=0.0),  # the hop latency left out
             "bits-for-bytes": redo(w1=one / 8, wb=bidi / 8),  # the link rates divided by 8 (bytes taken for bits)
             "bits-for-bytes/": redo(w1=one * 8, wb=bidi * 8)}  # or a bit rate read as bytes
    return {k: v for k, v in wrong.items() if abs(v - right) > spec.tolerance * right}
