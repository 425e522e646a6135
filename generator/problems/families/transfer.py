"""Family 13 [transfer]: an ICI point-to-point transfer across a 2-D slice.

Fair draws: assuming or ignoring wraparound misses by more than 5%.

``generator.model.collectives.transfer``: hops the shortest way on each axis (wraparound only
where the chip's rule gives it), outgoing ports on a shortest path, first byte after
hops × the book's ~1 µs per hop, total = first byte + bytes / (ports × one-way bandwidth).
"""

from __future__ import annotations

import random
import re
from typing import Any, TypedDict, cast

from generator.model import collectives as C
from generator.model import costs
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Skill, cite, per_chip, problem
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, sci, seconds

NAME = "transfer"
ORDER = 130  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_113  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: assuming or ignoring wraparound misses by more than 5%. Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"wrong-hops": 0.05}
VARIANTS = ("time", "hops", "first_byte")
MAX_TRIES = 50
FIELDS = {"chip", "slice", "src", "dst", "array", "size", "hop_latency"}
PROMPTS = {v: FIELDS for v in VARIANTS}


class TransferParams(TypedDict):
    """A drawn transfer: the chip, the variant, the slice (``4x4``), the source and destination
    coordinates, and the array's dtype and shape."""

    chip: str
    variant: str
    slice: str
    src: list[int]
    dst: list[int]
    dtype: str
    shape: list[int]


def params_of(problem: Problem) -> TransferParams:
    """The params of a transfer problem."""
    return cast(TransferParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"slices", "arrays", "variants"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    a = check.mapping(p["arrays"], ("params", "arrays"), required={"shapes", "dtypes"}, allowed={"shapes", "dtypes"})
    slices = []
    for i, text in enumerate(check.text_list(p["slices"], ("params", "slices"))):
        try:
            shape = C.parse_shape(text)
        except C.TopologyError as exc:
            check.fail(("params", "slices", i), str(exc))
        if len(shape) != 2:
            check.fail(("params", "slices", i), "this family drills 2-D slices: give AxB")
        slices.append(shape)
    shapes = []
    if not isinstance(a["shapes"], list) or not a["shapes"]:
        check.fail(("params", "arrays", "shapes"), "expected a non-empty list of shapes")
    for i, s in enumerate(a["shapes"]):
        shapes.append(check.int_list(s, ("params", "arrays", "shapes", i)))
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"slices": tuple(slices), "shapes": tuple(shapes),
            "dtypes": tuple(check.dtype_list(a["dtypes"], ("params", "arrays", "dtypes"))), "variants": variants}


def _slices(spec: FamilySpec, chip: Chip) -> list[tuple[int, ...]]:
    out = []
    for s in spec.params["slices"]:
        try:
            C.check_slice(chip, s)
        except C.TopologyError:
            continue
        out.append(s)
    return out


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    what = {"time": "time of a point-to-point ICI transfer", "hops": "ICI hops between two chips of a slice",
            "first_byte": "first-byte latency of an ICI transfer"}
    return per_chip(spec, cat, spec.params["variants"],
                    lambda chip, v: f"{what[v]} on a two-dimensional slice ({chip.display})",
                    keep=lambda chip, v: (chip.figure("ici_wraparound") is not None
                                          and chip.figure("ici_bytes_per_s_one_way") is not None
                                          and bool(_slices(spec, chip))))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> TransferParams:
    p = spec.params
    chip = cat.get(skill.chip_name)
    for _ in range(MAX_TRIES):  # redraw pairs whose prompt numbers would state the answer
        shape = rng.choice(_slices(spec, chip))
        src = [rng.randrange(n) for n in shape]
        dst = [rng.randrange(n) for n in shape]
        if dst == src:
            continue
        params: TransferParams = {"chip": chip.name, "variant": skill.variant, "slice": C.fmt_shape(shape), "src": src, "dst": dst,
                  "dtype": rng.choice(p["dtypes"]), "shape": list(rng.choice(p["shapes"]))}
        if not states_answer(solve(spec, cat, skill, params)):
            break
    return params


def states_answer(p: Problem) -> bool:
    """Whether the answer appears in its own prompt: a hop count among the coordinates, or a
    one-hop first byte equal to the per-hop latency the prompt gives."""
    if p.answer.unit == "s":
        return seconds(p.answer.number) in p.prompt
    return f"{p.answer.number:g}" in re.findall(r"\d+(?:\.\d+)?", p.prompt)


def compute(cat: Catalogue, params: TransferParams) -> C.Transfer:
    return C.chip_transfer(cat, cat.get(params["chip"]), C.parse_shape(params["slice"]), tuple(params["src"]),
                           tuple(params["dst"]), costs.array_bytes(params["shape"], params["dtype"]))


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: TransferParams) -> Problem:
    chip = cat.get(params["chip"])
    shape = C.parse_shape(params["slice"])
    t = compute(cat, params)
    one = chip.figures["ici_bytes_per_s_one_way"]
    lat = cat.fact(C.HOP_LATENCY_FACT)
    rule = chip.figures["ici_wraparound"]
    dims = ",".join(map(str, params["shape"]))
    src, dst = ",".join(map(str, t.src)), ",".join(map(str, t.dst))
    fields = {"chip": chip.display, "slice": params["slice"], "src": f"({src})", "dst": f"({dst})",
              "array": f"{params['dtype']}[{dims}]", "size": f"{sci(t.nbytes)} bytes",
              "hop_latency": seconds(float(lat.value))}
    steps = [f"bytes = {' · '.join(map(str, params['shape']))} · {DTYPE_BYTES[params['dtype']]} = {sci(t.nbytes)} B",
             f"wraparound rule: {rule.note} {cite(rule)}"]
    for n, a, b, w, h in zip(shape, t.src, t.dst, t.wrap, t.hops_per_axis):
        how = f"min(|{a}-{b}|, {n}-|{a}-{b}|)" if w else f"|{a}-{b}|"
        steps.append(f"axis of {n} ({'wraparound' if w else 'no wraparound'}): {how} = {h} hops, "
                     f"{C.shortest_ports(n, a, b, w)} outgoing port(s) on a shortest path")
    steps.append(f"hops = {' + '.join(map(str, t.hops_per_axis))} = {t.hops}")
    steps.append(f"first byte = {t.hops} × {seconds(t.hop_latency_s)} (the book's per-hop assumption {cite(lat)}) "
                 f"= {seconds(t.first_byte_s)}")
    steps.append(f"bandwidth = {t.ports} port(s) × {sci(t.w_one_way)} B/s one way {cite(one)} = {sci(t.bytes_per_s)} B/s")
    steps.append(f"T = first byte + bytes / bandwidth = {seconds(t.first_byte_s)} + {seconds(t.t_bandwidth_s)} "
                 f"= {seconds(t.t_s)}")
    answer = {"time": Answer(value=t.t_s, unit="s"), "hops": Answer(value=float(t.hops), unit=""),
              "first_byte": Answer(value=t.first_byte_s, unit="s")}[skill.variant]
    key = f"{params['slice']}-{src.replace(',', '.')}to{dst.replace(',', '.')}"
    if skill.variant == "time":  # hops and first byte do not depend on the array
        key += f"-{dims.replace(',', 'x')}-{params['dtype']}"
    prompt = spec.prompts[skill.variant].format(**fields)
    if skill.variant == "time":
        prompt += f" ICI: {sci(float(one.value))} B/s one way per link."
    return problem(spec, skill, key, prompt, answer, steps, dict(params),
                   spec.hints[skill.variant].format(**fields), (f"dtype::{params['dtype']}",))


# --- named wrong methods (the misconception catalogue's ids), for the grader to recognise -----------------

def gb_gib_moves(cat: Catalogue, params: TransferParams) -> bool:
    """Whether a GB/GiB slip moves the answer: a transfer's total time moves; hops and first bytes do not."""
    return params.get("variant") == "time"


DROPS_ONLY_WITHIN_TOLERANCE = True  # ``misconceptions`` drops only answers within the tolerance


def misconceptions(spec: FamilySpec, cat: Catalogue, params: TransferParams) -> dict[str, float]:
    """Misconception id -> the answer that mistake gives (only those outside the tolerance)."""
    right = compute(cat, params)
    key = {"time": right.t_s, "hops": float(right.hops), "first_byte": right.first_byte_s}
    def redo(wrap: tuple[bool, ...] = right.wrap, nbytes: float = right.nbytes, w_one_way: float = right.w_one_way,
             lat: float = right.hop_latency_s) -> C.Transfer:
        """The model (``collectives.transfer``) on one tweaked input."""
        return C.transfer(right.shape, right.src, right.dst, wrap, nbytes, w_one_way, lat)

    flipped = redo(wrap=tuple(not w for w in right.wrap))
    variant = params["variant"]
    wrong = {"wrong-hops": {"time": flipped.t_s, "hops": float(flipped.hops), "first_byte": flipped.first_byte_s}[variant]}
    if variant == "time":
        bidi = float(cat.get(params["chip"]).figures["ici_bytes_per_s_bidi"].value)
        wrong["one-way-vs-bidirectional"] = redo(w_one_way=bidi).t_s  # the bidirectional figure per port
        wrong["elements-not-bytes"] = redo(nbytes=costs.array_bytes(params["shape"], "int8")).t_s  # 1 byte an element
        wrong["forgot-latency"] = redo(lat=0.0).t_s
        wrong["bits-for-bytes"] = redo(w_one_way=right.w_one_way / 8).t_s  # the link rate divided by 8
        wrong["bits-for-bytes/"] = redo(w_one_way=right.w_one_way * 8).t_s  # a bit rate read as bytes
        # the array sent whole at every hop; after bits-for-bytes, the likelier name where 8 hops give the same number
        wrong["store-and-forward"] = redo(nbytes=right.nbytes * right.hops).t_s
    want = key[variant]
    return {k: v for k, v in wrong.items() if abs(v - want) > spec.tolerance * want}
