"""Family 8 [transformer_step]: step-time floor of a transformer forward pass from chip constants alone.

Prefill and one decode step, priced by ``generator.model.transformer`` and
``generator.model.roofline``; model sizes come from the spec.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Iterator, TypedDict, cast

from generator.model import catalogue, costs, roofline, transformer
from generator.model.catalogue import Catalogue, Chip, UnknownChipError
from generator.problems.families.base import Mastery, Skill, make_skill, problem
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, normalize_dtype, sci, si

NAME = "transformer_step"
ORDER = 80  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_108  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 5: what shows it (drill progress)
MASTERY = {5: Mastery("a transformer step-time floor right")}
# Fair draws: T_math + T_comms differs from the floor by more than 10%. Mistake id -> least relative miss of the key; the registry redraws
# (same rng) until each holds, and a solution notes any named mistake that still lands inside the tolerance.
TEACHES = {"sum-not-max": 0.10}
PROMPTS = {phase: {"chip", "model", "batch", "seq", "dtype", "fit"} for phase in transformer.PHASES}
_FIT_TRIES = 30
TRAINING_FLOPS_PER_PARAM = 6  # a training step's FLOPs per parameter per token (forward + backward): the slip's count
MODEL_KEYS = {"name", "params", "layers", "d_model", "kv_d_model", "source"}
FIXED_KEYS = {"name", "model", "batch", "seq", "chip", "phases", "note"}


class TransformerStepParams(TypedDict):
    """A drawn step: the chip, the op (``transformer_PHASE``), [batch, seq] as ``shape``, the dtype, the
    spec's model by name with its sizes (``params`` is its parameter count), the phase, batch and seq."""

    chip: str
    op: str
    shape: list[int]
    dtype: str
    model: str
    params: int
    layers: int
    d_model: int
    kv_d_model: int
    phase: str
    batch: int
    seq: int


def params_of(problem: Problem) -> TransformerStepParams:
    """The params of a transformer_step problem."""
    return cast(TransformerStepParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"dtype", "models", "batches", "seqs", "phases", "fixed"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    try:
        dtype = normalize_dtype(check.text(p["dtype"], ("params", "dtype")))
    except ValueError as exc:
        check.fail(("params", "dtype"), str(exc))
    if not isinstance(p["models"], list) or not p["models"]:
        check.fail(("params", "models"), "expected a non-empty list of models")
    models = {}
    for i, raw in enumerate(p["models"]):
        at = ("params", "models", i)
        raw = check.mapping(raw, at, required=MODEL_KEYS - {"kv_d_model"}, allowed=MODEL_KEYS)
        try:
            count = transformer.parse_count(str(raw["params"]))
        except ValueError as exc:
            check.fail((*at, "params"), str(exc))
        name = check.text(str(raw["name"]), (*at, "name"))
        check.text(raw["source"], (*at, "source"))
        kv = raw.get("kv_d_model")
        models[name] = (transformer.Model(count, check.integer(raw["layers"], (*at, "layers")),
                                          check.integer(raw["d_model"], (*at, "d_model")),
                                          None if kv is None else check.integer(kv, (*at, "kv_d_model")), name),
                        raw["source"])
    phases = check.text_list(p["phases"], ("params", "phases"))
    for i, ph in enumerate(phases):
        check.one_of(ph, ("params", "phases", i), transformer.PHASES)
    fixed = []
    for i, raw in enumerate(p["fixed"] or []):
        at = ("params", "fixed", i)
        raw = check.mapping(raw, at, required=FIXED_KEYS - {"note"}, allowed=FIXED_KEYS)
        try:
            chip = catalogue.get(str(raw["chip"])).name
        except UnknownChipError as exc:
            check.fail((*at, "chip"), str(exc))
        fixed_phases = check.text_list(raw["phases"], (*at, "phases"))
        for j, ph in enumerate(fixed_phases):
            check.one_of(ph, (*at, "phases", j), transformer.PHASES)
        fixed.append({"name": check.text(raw["name"], (*at, "name")),
                      "model": check.one_of(str(raw["model"]), (*at, "model"), list(models)),
                      "batch": check.integer(raw["batch"], (*at, "batch")),
                      "seq": check.integer(raw["seq"], (*at, "seq")), "chip": chip, "phases": fixed_phases,
                      "note": str(raw.get("note", ""))})
    return {"dtype": dtype, "models": models, "batches": check.int_list(p["batches"], ("params", "batches")),
            "seqs": check.int_list(p["seqs"], ("params", "seqs")), "phases": phases, "fixed": tuple(fixed)}


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: ``roofline.estimate`` on a tweaked step cost (``transformer``) or tweaked ceilings."""
    p = params_of(problem)
    chip = cat.get(p["chip"])
    model = transformer.Model(params=p["params"], layers=p["layers"], d_model=p["d_model"],
                              kv_d_model=p.get("kv_d_model"))
    step, right = transformer.estimate(chip, model, p["phase"], p["batch"], p["seq"], p["dtype"])
    ceil, cost = right.ceilings, right.cost
    peak, bw = ceil.peak_flops_per_s, ceil.hbm_bytes_per_s

    def floor(c: costs.OpCost = cost, k: roofline.Ceilings = ceil) -> float:
        return roofline.estimate(k, c).floor_s

    yield wrong("sum-not-max", right.upper_s, "floor = T_math + T_comms instead of the max")
    if step.bytes_kv_cache:
        yield wrong("kv-cache-left-out", floor(c=replace(cost, bytes=cost.bytes - step.bytes_kv_cache)),
                    f"bytes without the K/V cache's {sci(step.bytes_kv_cache)}: weights and activations only")
    yield wrong("macs-not-flops", floor(c=costs.in_macs(cost)), "2·params FLOPs per token counted as params")
    if p["phase"] == "prefill" and step.flops_attention:
        causal = replace(step, flops_attention=step.flops_attention / 2)  # type: ignore[arg-type]  # a wrong method: half may be fractional
        yield wrong("causal-halving", floor(c=causal.op_cost()),
                    f"attention FLOPs halved for the causal mask: {sci(causal.flops_attention)} "
                    f"instead of {sci(step.flops_attention)}")
    yield wrong("sparse-peak", floor(k=ceil.with_peak(slips.SPARSE_FACTOR * peak)), slips.sparse_step(chip, peak))
    for other, other_peak in slips.other_peaks(chip, step.dtype):
        yield wrong("wrong-dtype-peak", floor(k=ceil.with_peak(other_peak, other)), f"the {other} peak")
    training = replace(step, flops_weights=step.flops_weights * TRAINING_FLOPS_PER_PARAM // costs.FLOPS_PER_MAC)
    yield wrong("training-flops", floor(c=training.op_cost()),
                f"weight FLOPs {TRAINING_FLOPS_PER_PARAM}·P per token (training) instead of {costs.FLOPS_PER_MAC}·P")
    if step.flops_attention:
        no_attention = replace(step, flops_attention=0)
        yield wrong("attention-left-out", floor(c=no_attention.op_cost()),
                    f"attention FLOPs ({sci(step.flops_attention)}) left out: only the weights' {sci(step.flops_weights)}")
    if DTYPE_BYTES[step.dtype] == 2:  # bf16 counted at f32's 4 bytes an element, at the bf16 peak
        wide = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], "f32").op_cost()
        yield wrong("wrong-dtype-size", floor(c=replace(cost, bytes=wide.bytes)),
                    f"bytes counted at 4 per element ({step.dtype} is {DTYPE_BYTES[step.dtype]})")
    if DTYPE_BYTES[step.dtype] != 1:
        elements = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], "int8").op_cost()
        yield wrong("elements-not-bytes", floor(c=elements), "bytes counted as elements (params, not params x bytes)")
    yield from slips.gib_slips(lambda w: floor(k=ceil.with_bandwidth(w)), bw)
    yield from slips.unit_slips(problem)


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    out = []
    dtype = spec.params["dtype"]
    for name in spec.chips:
        chip = cat.get(name)
        if dtype not in chip.peak_flops:
            continue
        for fx in spec.params["fixed"]:
            if fx["chip"] == chip.name:
                for phase in fx["phases"]:
                    out.append(make_skill(NAME, chip.name, f"{fx['name']}-{phase}",
                                          f"{phase} floor: {fx['model']} model, batch {fx['batch']}, seq {fx['seq']} "
                                          f"on one {chip.display}", (f"phase::{phase}", "fixed::" + fx["name"])))
        for phase in spec.params["phases"]:
            out.append(make_skill(NAME, chip.name, phase, f"{phase} step-time floor of a transformer on one "
                                  f"{chip.display}", (f"phase::{phase}",)))
    return out


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> TransformerStepParams:
    p = spec.params
    phase = skill.variant.rsplit("-", 1)[-1]
    for fx in p["fixed"]:
        if skill.variant == f"{fx['name']}-{phase}" and fx["chip"] == skill.chip:
            return _params(spec, skill.chip_name, fx["model"], phase, fx["batch"], fx["seq"])
    chip = cat.get(skill.chip_name)
    for _ in range(_FIT_TRIES):  # prefer a draw that fits the chip's HBM; else the prompt says it does not
        params = _params(spec, skill.chip_name, rng.choice(list(p["models"])), phase, rng.choice(p["batches"]),
                         rng.choice(p["seqs"]))
        if _footprint(spec, params) <= chip.hbm_bytes:
            break
    return params


def _footprint(spec: FamilySpec, params: TransformerStepParams) -> int:
    """Bytes that must sit in HBM at once: the weights plus the full K/V cache (``StepCost.hbm_footprint_bytes``)."""
    return transformer.hbm_footprint_bytes(spec.params["models"][params["model"]][0], params["batch"],
                                           params["seq"], params["dtype"])


def fit_text(need: float, chip: Chip) -> str:
    """The prompt's sentence when the model does not fit one chip's HBM ("" when it fits)."""
    if need <= chip.hbm_bytes:
        return ""
    return f" Assume it fits (does not fit: {si(need, 'B')} > {si(chip.hbm_bytes, 'B')})."


def _params(spec: FamilySpec, chip: str, model_name: str, phase: str, batch: int, seq: int) -> TransformerStepParams:
    m = spec.params["models"][model_name][0]
    return {"chip": chip, "op": f"transformer_{phase}", "shape": [batch, seq], "dtype": spec.params["dtype"],
            "model": model_name, "params": m.params, "layers": m.layers, "d_model": m.d_model,
            "kv_d_model": m.kv_width, "phase": phase, "batch": batch, "seq": seq}


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: TransformerStepParams) -> Problem:
    chip = cat.get(params["chip"])
    model, source = spec.params["models"][params["model"]]
    step, est = transformer.estimate(chip, model, params["phase"], params["batch"], params["seq"], params["dtype"])
    steps = [f"model {model.label()} [{source}]", *transformer.worked_lines(step, est, chip)]
    fields = {"chip": chip.display, "model": model.label().split(": ", 1)[-1], "batch": str(params["batch"]),
              "seq": str(params["seq"]), "dtype": params["dtype"], "fit": fit_text(step.hbm_footprint_bytes, chip)}
    phase = params["phase"]
    return problem(spec, skill, f"{params['model']}-b{params['batch']}-s{params['seq']}-{params['dtype']}",
                   spec.prompts[phase].format(**fields), Answer(value=est.floor_s, unit="s"), steps, dict(params),
                   spec.hints[phase].format(**fields), (f"dtype::{params['dtype']}",))
