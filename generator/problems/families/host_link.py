"""Family 14 [host_link]: rooflines over PCIe and DCN, and the critical batch over a link.

When an op's bytes cross a host link, that link replaces HBM as the roofline's memory side.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, TypedDict, cast

from generator.model import collectives as C
from generator.model import costs, roofline
from generator.model.catalogue import Catalogue
from generator.problems.families.base import Skill, VERDICTS, cite, figure_sentence, derived, other_editions, per_chip, problem, show
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import sci, seconds

NAME = "host_link"
ORDER = 140  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_114  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# Fair draws: a floor's T_math + T_link differs from the max by more than 10% and the output write left out misses by more than 5%; a verdict is the same under both editions' link figures. Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"sum-not-max": 0.10, "forgot-output-write": 0.05}
LINKS = ("pcie", "dcn")
LABEL = {"pcie": "PCIe", "dcn": "DCN"}
KINDS = ("ridge", "critical_batch", "floor", "bound")
VARIANTS = tuple(f"{k}_{link}" for k in KINDS for link in LINKS)
PROMPTS = {v: {"chip", "link", "shape", "dtype"} for v in VARIANTS}


class _ChipVariant(TypedDict):
    chip: str
    variant: str


class HostLinkParams(_ChipVariant, total=False):
    """A drawn host-link problem: the chip and the variant (``KIND_LINK``); a floor or bound problem also
    the matmul's (B, D, F) ``shape``."""

    shape: list[int]


def params_of(problem: Problem) -> HostLinkParams:
    """The params of a host_link problem."""
    return cast(HostLinkParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"matmuls", "variants"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    m = check.mapping(p["matmuls"], ("params", "matmuls"), required={"b", "d", "f"}, allowed={"b", "d", "f"})
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"b": check.int_list(m["b"], ("params", "matmuls", "b")), "d": check.int_list(m["d"], ("params", "matmuls", "d")),
            "f": check.int_list(m["f"], ("params", "matmuls", "f")), "variants": variants}


def _split(variant: str) -> tuple[str, str]:
    kind, link = variant.rsplit("_", 1)
    return kind, link


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    what = {"ridge": "ridge (critical intensity) over {l}", "critical_batch": "critical batch with weights over {l}",
            "floor": "floor time of a matmul whose bytes cross {l}", "bound": "compute- or {l}-bound"}
    return per_chip(spec, cat, spec.params["variants"],
                    lambda chip, v: f"{what[_split(v)[0]].format(l=LABEL[_split(v)[1]])} ({chip.display})",
                    keep=lambda chip, v: chip.figure(C.LINK_FIGURES[_split(v)[1]]) is not None,
                    tags=lambda v: (f"link::{_split(v)[1]}",))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> HostLinkParams:
    """Fair draws: a bound problem's verdict is the same under every published figure of the link
    (the February 2025 edition's PCIe/DCN too), and a floor's classic mistakes (the sum for the max,
    the output write left out) each miss the key by more than the tolerance, where any draw allows."""
    p = spec.params
    params: HostLinkParams = {"chip": skill.chip_name, "variant": skill.variant}
    kind, _ = _split(skill.variant)
    if kind not in ("floor", "bound"):
        return params
    for _ in range(MAX_TRIES):
        params["shape"] = [rng.choice(p["b"]), rng.choice(p["d"]), rng.choice(p["f"])]
        shape = tuple(params["shape"])
        if derived(spec, cat, "host_link:fair", (skill.chip, skill.variant, shape), lambda: fair(spec, cat, params)):
            break
    return params


MAX_TRIES = 50


def _matmul(params: HostLinkParams) -> costs.OpCost:
    """The drawn bf16 matmul's cost: every operand and the result cross the link."""
    return costs.cost("matmul", tuple(params["shape"]), "bf16")


def fair(spec: FamilySpec, cat: Catalogue, params: HostLinkParams) -> bool:
    chip = cat.get(params["chip"])
    kind, link = _split(params["variant"])
    ceil = C.link_ceilings(chip, link, "bf16")
    cost = _matmul(params)
    figures = [ceil.hbm_bytes_per_s] + [v for v, _ in chip.other_figures(C.LINK_FIGURES[link])]
    if kind == "bound":
        return len({roofline.estimate(ceil.with_bandwidth(bw), cost).bound for bw in figures}) == 1
    est = roofline.estimate(ceil, cost)
    slips = (est.upper_s, roofline.estimate(ceil, costs.inputs_only(cost)).floor_s)
    return all(abs(w - est.floor_s) > spec.tolerance * est.floor_s for w in slips)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: HostLinkParams) -> Problem:
    chip = cat.get(params["chip"])
    kind, link = _split(params["variant"])
    ceil = C.link_ceilings(chip, link, "bf16")
    fig = chip.figures[C.LINK_FIGURES[link]]
    peak = chip.peak_flops["bf16"]
    ridge = ceil.ridge_flops_per_byte
    shape = params.get("shape")
    fields = {"chip": chip.display, "link": LABEL[link], "dtype": "bf16",
              "shape": "x".join(map(str, shape)) if shape else ""}
    steps = [f"{chip.display} bf16 peak = {sci(float(peak.value))} FLOP/s {cite(peak)}",
             f"{LABEL[link]} bandwidth = {sci(float(fig.value))} B/s {cite(fig)}" + (f" ({fig.note})" if fig.note else ""),
             f"ridge over {LABEL[link]} = peak / link bandwidth = {sci(float(peak.value))} / {sci(float(fig.value))} "
             f"= {ridge:.1f} FLOPs/byte"]
    key = ""
    if kind == "ridge":
        answer = Answer(value=ridge, unit="FLOP/byte")
    elif kind == "critical_batch":
        steps.append("bf16 weights bf16[D,F] cross the link every step: FLOPs 2BDF over 2DF bytes -> intensity ≈ B "
                     "(B << D, F, the book's Rooflines rule)")
        steps.append(f"compute-bound once B > ridge = {ridge:.0f}")
        answer = Answer(value=ridge, unit="")
    else:
        est = roofline.estimate(ceil, _matmul(params))
        key = fields["shape"]
        steps += [f"FLOPs = {est.cost.flops_formula} = {est.cost.flops_working} = {sci(est.cost.flops)}",
                  f"bytes over {LABEL[link]} = {est.cost.bytes_working} = {sci(est.cost.bytes)} "
                  "(every operand and the result cross the link)",
                  f"intensity = {est.intensity_flops_per_byte:.1f} FLOPs/byte "
                  f"{'>=' if est.bound == 'compute' else '<'} ridge {ridge:.1f} -> {est.bound}-bound",
                  f"T_math = {sci(est.cost.flops)} / {sci(float(peak.value))} = {seconds(est.t_math_s)}",
                  f"T_{LABEL[link]} = {sci(est.cost.bytes)} / {sci(float(fig.value))} = {seconds(est.t_comms_s)}",
                  f"floor = max = {show(est.floor_s, 's')}"]
        if kind == "floor":
            answer = Answer(value=est.floor_s, unit="s")
        else:
            answer = Answer(choice=est.bound, choices=VERDICTS)
    bw = float(fig.value)
    prompt = spec.prompts[params["variant"]].format(**fields) + figure_sentence(LABEL[link], bw)
    also: tuple[dict[str, Any], ...] = ()
    if not answer.is_choice:
        def answer_with(other_bw: float) -> float:
            if kind in ("ridge", "critical_batch"):
                return ceil.with_bandwidth(other_bw).ridge_flops_per_byte
            return roofline.estimate(ceil.with_bandwidth(other_bw), _matmul(params)).floor_s
        also = other_editions(chip, C.LINK_FIGURES[link], LABEL[link], answer_with, answer.number,
                              answer.unit, spec.tolerance)
    return problem(spec, skill, key, prompt, answer, steps, dict(params),
                   spec.hints[params["variant"]].format(**fields), (f"link::{link}",), also)


# --- named wrong methods, for the grader to recognise ------------------------------------------------

def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: ``roofline.estimate`` over the link on a tweaked cost, with another peak, or with
    the link rate mis-read (GB/GiB, bits, another chip's or edition's figure); a verdict names what it follows from."""
    params = params_of(problem)
    chip = cat.get(params["chip"])
    kind, link = _split(params["variant"])
    ceil = C.link_ceilings(chip, link, "bf16")
    bw, peak = ceil.hbm_bytes_per_s, ceil.peak_flops_per_s
    int8 = C.link_ceilings(chip, link, "int8") if "int8" in chip.peak_flops else None
    if kind == "bound":
        est = roofline.estimate(ceil, _matmul(params))
        sign = ">=" if est.bound == "compute" else "<"
        yield wrong("wrong-verdict", "memory" if est.bound == "compute" else "compute",
                    f"the verdict follows from the intensity against the ridge over {LABEL[link]}: "
                    f"{est.intensity_flops_per_byte:.1f} {sign} {ceil.ridge_flops_per_byte:.1f} FLOPs/byte")
        return

    def answer_with(k: roofline.Ceilings = ceil, cost: costs.OpCost | None = None) -> float:
        if kind == "floor":
            return roofline.estimate(k, cost or _matmul(params)).floor_s
        return k.ridge_flops_per_byte

    def with_rate(w: float) -> float:
        return answer_with(ceil.with_bandwidth(w))

    ici = chip.figure("ici_bytes_per_s_one_way")
    if ici is not None:  # first: likelier than another chip's figure of the same value
        yield wrong("ici-for-offchip", with_rate(float(ici.value)),
                    f"ICI's {sci(float(ici.value))} B/s one way instead of {LABEL[link]}'s {sci(bw)}")
    yield from slips.stated_figure_slips(problem, cat, chip, C.LINK_FIGURES[link], LABEL[link], with_rate)
    if kind == "floor":
        cost = _matmul(params)
        est = roofline.estimate(ceil, cost)
        yield wrong("sum-not-max", est.upper_s, f"T_math + T_{LABEL[link]} instead of their max")
        yield wrong("elements-not-bytes", answer_with(cost=costs.as_elements(cost)), "bytes counted as elements")
        yield wrong("forgot-output-write", answer_with(cost=costs.inputs_only(cost)), "the output's bytes left out")
        yield from slips.unit_slips(problem)
    else:
        inverted = ceil.with_peak(bw).with_bandwidth(peak).ridge_flops_per_byte  # the two ceilings swapped
        yield wrong("ridge-inverted", inverted, f"{LABEL[link]} bandwidth / peak = {sci(inverted)} bytes per FLOP")
    if int8 is not None:
        yield wrong("wrong-dtype-peak", answer_with(int8), f"the int8 peak {sci(int8.peak_flops_per_s)} instead of "
                                                          f"bf16's {sci(peak)}")
    yield from slips.gib_slips(with_rate, bw)
    yield from slips.bits_slips(with_rate, bw, LABEL[link])
