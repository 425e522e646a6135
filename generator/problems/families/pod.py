"""Family 11 [pod]: totals of a TPU pod or slice (chips, hosts, TensorCores, FLOP/s, HBM) and its wraparound.

Every number comes from ``generator.model.collectives.pod_totals`` over catalogue figures (pod
and host sizes, per-chip peak and HBM, cores per chip, the wraparound rule), each cited.
"""

from __future__ import annotations

import random
import re
from typing import Any, TypedDict, cast

from generator.model import collectives as C
from generator.model import units
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Skill, YES_NO, cite, derived, per_chip, problem, show
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import sci

NAME = "pod"
ORDER = 110  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_111  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
VARIANTS = ("chips", "hosts", "tensorcores", "flops", "hbm", "wrap")
SLICE_FIELDS = {"chip", "slice"}
PROMPTS = {"chips": SLICE_FIELDS, "hosts": SLICE_FIELDS, "tensorcores": SLICE_FIELDS, "flops": SLICE_FIELDS,
           "hbm": SLICE_FIELDS, "wrap": SLICE_FIELDS | {"n", "axis"}}
# variant -> catalogue figures it needs beyond the pod size
NEEDS = {"hosts": ("host_topology",), "tensorcores": ("tensorcores_per_chip",), "wrap": ("ici_wraparound",)}
MAX_TRIES = 20
FULL = "pod"  # the spec's word for the whole pod in a list of slices


class _ChipVariantSlice(TypedDict):
    chip: str
    variant: str
    slice: str


class PodParams(_ChipVariantSlice, total=False):
    """A drawn pod problem: the chip, the variant and the slice (``8x16``); a ``wrap`` problem also
    the index of the ``axis`` it asks about."""

    axis: int


def params_of(problem: Problem) -> PodParams:
    """The params of a pod problem."""
    return cast(PodParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"slices", "variants"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    slices: list[tuple[int, ...] | None] = []  # None: the whole pod
    for i, text in enumerate(check.text_list(p["slices"], ("params", "slices"))):
        if text == FULL:
            slices.append(None)
            continue
        try:
            slices.append(C.parse_shape(text))
        except C.TopologyError as exc:
            check.fail(("params", "slices", i), str(exc))
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"slices": tuple(slices), "variants": variants}


def _fits(chip: Chip, shape: tuple[int, ...] | None) -> bool:
    try:
        C.pod_totals(chip, shape)
        return True
    except C.TopologyError:
        return False


def slices_for(spec: FamilySpec, chip: Chip) -> list[tuple[int, ...] | None]:
    return [s for s in spec.params["slices"] if _fits(chip, s)]


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    what = {"chips": "chips in a pod or slice", "hosts": "hosts of a pod or slice",
            "tensorcores": "TensorCores of a pod or slice", "flops": "bf16 FLOP/s of a pod or slice",
            "hbm": "HBM of a pod or slice", "wrap": "which axes of a slice have wraparound links"}
    def keep(chip: Chip, v: str) -> bool:
        return (chip.figure("pod_topology") is not None and bool(slices_for(spec, chip))
                and all(chip.figure(k) is not None for k in NEEDS.get(v, ())))

    return per_chip(spec, cat, spec.params["variants"], lambda chip, v: f"{what[v]} ({chip.display})", keep)


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> PodParams:
    chip = cat.get(skill.chip_name)
    for _ in range(MAX_TRIES):  # redraw a slice whose own numbers would state the answer (8x16 -> 16 hosts)
        shape = rng.choice(derived(spec, cat, "pod:slices", chip.name, lambda: tuple(slices_for(spec, chip))))
        shape = C.pod_shape(chip) if shape is None else shape
        params: PodParams = {"chip": chip.name, "variant": skill.variant, "slice": C.fmt_shape(shape)}
        if skill.variant == "wrap":
            params["axis"] = rng.randrange(len(shape))
            return params
        if not states_answer(solve(spec, cat, skill, params)):
            return params
    return params


def states_answer(p: Problem) -> bool:
    """Whether a count answer appears as a number in its own prompt."""
    if p.answer.is_choice or p.answer.unit:
        return False
    return f"{p.answer.number:g}" in re.findall(r"\d+(?:\.\d+)?", p.prompt)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: PodParams) -> Problem:
    chip, variant = cat.get(params["chip"]), params["variant"]
    shape = C.parse_shape(params["slice"])
    t = C.pod_totals(chip, shape)
    full = shape == C.pod_shape(chip)
    pod_fig = chip.figures["pod_topology"]
    where = f"the full {chip.display} pod ({params['slice']})" if full else f"a {chip.display} slice of {params['slice']}"
    fields = {"chip": chip.display, "slice": where}
    dims = " × ".join(map(str, shape))
    steps = [f"chips = {dims} = {t.chips} (a pod is {pod_fig.value} {cite(pod_fig)})"]
    key = params["slice"]
    if variant == "chips":
        answer = Answer(value=float(t.chips), unit="")
    elif variant == "hosts":
        host = chip.figures["host_topology"]
        steps.append(f"one host holds {host.value} = {t.chips_per_host} chips {cite(host)}")
        steps.append(f"hosts = ceil({t.chips} / {t.chips_per_host}) = {t.hosts}")
        answer = Answer(value=float(t.hosts), unit="")
    elif variant == "tensorcores":
        cores = chip.figures["tensorcores_per_chip"]
        steps.append(f"TensorCores = {t.chips} × {t.tensorcores_per_chip} per chip {cite(cores)} = {t.tensorcores}")
        answer = Answer(value=float(t.tensorcores), unit="")
    elif variant == "flops":
        peak = chip.peak_flops["bf16"]
        steps.append(f"bf16 FLOP/s = {t.chips} × {sci(float(peak.value))} {cite(peak)} = {show(t.peak_flops_per_s, 'FLOP/s')}")
        answer = Answer(value=t.peak_flops_per_s, unit="FLOP/s")
    elif variant == "hbm":
        hbm = chip.figures["hbm_bytes"]
        steps.append(f"HBM = {t.chips} × {sci(float(hbm.value))} B {cite(hbm)} = {show(t.hbm_bytes, 'B')}")
        answer = Answer(value=t.hbm_bytes, unit="B")
    else:
        axis = params["axis"]
        n = shape[axis]
        rule = chip.figures["ici_wraparound"]
        w = t.ici_wraparound[axis]
        steps.append(f"rule: {rule.note} {cite(rule)}")
        steps.append(f"the axis of {n}: {'wraparound' if w else 'no wraparound'}")
        fields.update(n=str(n), axis=str(axis))
        key += f"-a{axis}"
        answer = Answer(choice="yes" if w else "no", choices=YES_NO)
    return problem(spec, skill, key, spec.prompts[variant].format(**fields), answer, steps, dict(params),
                   spec.hints[variant].format(**fields))


# --- named wrong methods (the misconception catalogue's ids), for the grader to recognise -----------------

DROPS_ONLY_WITHIN_TOLERANCE = True  # ``misconceptions`` drops only answers within the tolerance


def misconceptions(spec: FamilySpec, cat: Catalogue, params: PodParams) -> dict[str, float]:
    """Misconception id -> the number that mistake gives (only those outside the tolerance)."""
    chip = cat.get(params["chip"])
    shape = C.parse_shape(params["slice"])
    totals = C.pod_totals(chip, shape)
    wrong: dict[str, float]
    if params["variant"] == "hbm":
        right = totals.hbm_bytes
        # GB and GiB mixed, both ways: 16 GB per chip counted as 16 GiB, or the total printed in GiB read as GB
        wrong = {"gb-gib": right * units.GIB_PER_GB, "gb-gib/": right / units.GIB_PER_GB,
                 "per-chip-not-pod": right / totals.chips}  # one chip's share: its own HBM
    elif params["variant"] == "flops":
        right = totals.peak_flops_per_s  # bf16
        wrong = {"per-chip-not-pod": right / totals.chips}  # one chip's share: its own peak
        if "int8" in chip.peak_flops:
            wrong["wrong-dtype-peak"] = C.pod_totals(chip, shape, "int8").peak_flops_per_s  # the int8 peak summed
    elif params["variant"] == "tensorcores":
        right, wrong = float(totals.tensorcores), {"per-chip-not-pod": float(totals.tensorcores_per_chip),
                                                   "one-core-per-chip": float(totals.chips)}  # 1 per chip
    elif params["variant"] == "hosts":
        right, wrong = float(totals.hosts), {"chips-as-hosts": float(totals.chips)}  # one host per chip
    else:
        return {}
    return {k: v for k, v in wrong.items() if abs(v - right) > spec.tolerance * right}
