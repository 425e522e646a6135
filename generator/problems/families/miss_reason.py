"""Family 16 [miss_reason]: a real lab run missed its prediction by more than 2x; re-predict it.

Each case is one missed op of a real lab record; the key is the corrected time the smallest
set of reasons gives (``generator.explain``), within 15%.
Details: docs/internals.md.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from pathlib import Path
from typing import Any, TypedDict, cast

from generator import explain as miss_reasons
from generator.io import safeio, startcache
from generator.model.catalogue import Catalogue
from generator.problems.families.base import Mastery, Skill, make_skill, problem
from generator.problems.problem import Answer, Problem
from generator.problems import record_mistakes
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import fmt

NAME = "miss_reason"
ORDER = 160  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_116  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 6: what shows it (drill progress)
MASTERY = {6: Mastery("a lab record whose every miss has an accepted corrected estimate: a reason and a "
                      "corrected time its numbers reproduce, never revealed (drill lab, drill explain; a CPU practice run counts)", lab=True)}
PROMPTS = {"corrected": {"device", "size", "op", "predicted", "measured", "evidence"}}
DATA_DIR = Path(__file__).with_name("data")
GENERATOR_DIR = Path(__file__).resolve().parents[2]
CASES_SCHEMA = "rudrite-kernels/miss-reason-cases"
MAX_CASES_BYTES = 4 * 1024 * 1024
KEYS = {"cases_file"}
CASE_KEYS = {"id", "op", "label", "shape", "dtype", "record", "date", "platform", "device_kind", "size", "graded",
             "predicted_seconds", "prediction_text", "evidence"}
MISCONCEPTION = "unsupported-reason"  # generator.problems.misconceptions: re-predicting with a reason the numbers rule out
# Practice on the device a lab record came from (CPU records, mostly): a quiz filtered by chip leaves it out
# unless asked for by name (``--family miss_reason``), so a first --chip v5e day is about the v5e.
DEVICE_PRACTICE = True
MOST_REASONS = 2  # a case's key names at most two reasons (e.g. learner-arithmetic + fixed-cost)
MIN_TOLERANCE = 0.02  # the narrowest a case's tolerance gets (relative), however near measured its key is


class MissReasonParams(TypedDict):
    """A drawn miss: the id of its case in the cases file."""

    case: str


def params_of(problem: Problem) -> MissReasonParams:
    """The params of a miss_reason problem."""
    return cast(MissReasonParams, problem.params)


def tolerance(spec_tolerance: float, right_seconds: list[float], measured_seconds: float) -> float:
    """The case's relative tolerance: the family's, narrowed to half the distance from the measured time
    printed in the prompt of every right answer (the key, and each ``also_right``), at least
    ``MIN_TOLERANCE``: copying the measurement is no re-prediction."""
    apart = [abs(measured_seconds - r) / r for r in right_seconds if r > 0]
    return max(MIN_TOLERANCE, min([spec_tolerance, *(a / 2 for a in apart)]))


def key_reasons(case: dict[str, Any]) -> tuple[str, ...] | None:
    """The smallest set of reasons that explains the case (first in catalogue order), or None."""
    found = explanations(case["ev"])
    return found[0] if found else None


@functools.lru_cache(maxsize=1024)
def explanations(ev: miss_reasons.OpEvidence) -> tuple[tuple[str, ...], ...]:
    """``miss_reasons.explanations(ev, MOST_REASONS)``, searched once per evidence: a function of the
    record's numbers alone (the key is the evidence's value, never its identity), which a case's
    solve and each of its wrong-answer hooks would otherwise search again."""
    return tuple(miss_reasons.explanations(ev, MOST_REASONS))


def other_explanations(case: dict[str, Any], tolerance: float) -> list[tuple[tuple[str, ...], float]]:
    """Every other set of reasons the case's numbers support as well (``drill explain`` would accept
    it), with its corrected time, where that time lies outside the key's tolerance: each is right too
    (a case with two supported answers accepts both)."""
    ev = case["ev"]
    found = explanations(ev)
    if not found:
        return []
    right = derived_seconds(ev, found[0])
    out: list[tuple[tuple[str, ...], float]] = []
    for combo in found[1:]:
        value = derived_seconds(ev, combo)
        # Apart by the narrowest tolerance a case gets: the case's own tolerance narrows toward it (``tolerance``),
        # so an explanation within the family's tolerance of the key may still lie outside the case's.
        if abs(value - right) > MIN_TOLERANCE * right and all(abs(value - v) > MIN_TOLERANCE * v for _, v in out):
            out.append((combo, value))
    return out


def derived_seconds(ev: miss_reasons.OpEvidence, combo: tuple[str, ...]) -> float:
    """The time of the derivation these reasons allow nearest measured (``miss_reasons.best``): what
    `drill explain` accepts for them."""
    found = miss_reasons.best(ev, combo)
    return found.seconds if found is not None else miss_reasons.corrected_time(ev, combo)


def _wrong_lands_on_key(case: dict[str, Any], within: float) -> bool:
    """Some reason the evidence contradicts, re-predicted as ``wrong_reasons`` does, gives a time within
    ``within`` of the key: that wrong method ('unsupported-reason') would be graded right, so the case
    teaches nothing. (A reason that changes nothing gives the key itself: no other method to tell apart.)"""
    ev = case["ev"]
    key = key_reasons(case) or ()
    right = derived_seconds(ev, key)
    base = ("learner-arithmetic",) if "learner-arithmetic" in key else ()
    for reason in miss_reasons.REASONS:
        if reason.id in key or reason.allowed(ev).supported:
            continue
        value = miss_reasons.corrected_time(ev, (*base, reason.id))
        if 1e-9 * right < abs(value - right) <= within * right:  # the same number is no other method
            return True
    return False


def _explained_ids(cases: dict[str, dict[str, Any]], within: float) -> list[str]:
    """The ids of the cases whose miss the evidence explains and where no wrong method lands within
    ``within`` of the key, in file order. Finding them tries every reason on every case (tens of ms,
    before a quiz's first prompt), and the answer follows from the cases file and the model's code
    alone: so it is kept in the start-up cache, keyed by the bytes of every file under ``generator/``
    (the cases file and the family's spec among them)."""
    def build() -> list[str]:
        return [cid for cid, case in cases.items() if key_reasons(case) and not _wrong_lands_on_key(case, within)]

    ids = startcache.cached("miss_reason", startcache.files_under(GENERATOR_DIR), build)
    return ids if isinstance(ids, list) and all(isinstance(i, str) for i in ids) else build()


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required=KEYS, allowed=KEYS)
    name = check.text(p["cases_file"], ("params", "cases_file"))
    path = DATA_DIR / name
    if Path(name).name != name:
        check.fail(("params", "cases_file"), "a file name in generator/problems/families/data, not a path")
    try:
        doc = safeio.read_json_bounded(path, MAX_CASES_BYTES)
    except (safeio.SafeIOError, OSError) as exc:
        check.fail(("params", "cases_file"), f"can not read {name}: {exc}")
    if not isinstance(doc, dict) or doc.get("schema") != CASES_SCHEMA or not isinstance(doc.get("cases"), list):
        check.fail(("params", "cases_file"), f"{name} is not a '{CASES_SCHEMA}' document with a list of cases")
    cases: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(doc["cases"]):
        where = ("params", "cases_file")
        if not isinstance(raw, dict) or set(raw) != CASE_KEYS:
            check.fail(where, f"{name}: case {i}: expected the keys {', '.join(sorted(CASE_KEYS))}")
        if not isinstance(raw["id"], str) or ":" in raw["id"] or " " in raw["id"] or raw["id"] in cases:
            check.fail(where, f"{name}: case {i}: a unique id without ':' or spaces, got {raw['id']!r}")
        try:
            ev = record_mistakes.priced(miss_reasons.OpEvidence.from_dict(raw["evidence"]))
        except (TypeError, ValueError, KeyError) as exc:
            check.fail(where, f"{name}: case {raw['id']}: unusable evidence: {exc}")
        cases[raw["id"]] = {**raw, "ev": ev}
    usable = {cid: cases[cid] for cid in _explained_ids(cases, float(spec.tolerance)) if cid in cases}
    if not usable:
        check.fail(("params", "cases_file"), f"{name}: no case whose miss the evidence explains")
    return {"cases": usable, "cases_file": name}


def _ops(spec: FamilySpec) -> dict[str, str]:
    """op -> its label, in the order the cases first name them."""
    out: dict[str, str] = {}
    for case in spec.params["cases"].values():
        out.setdefault(case["op"], case["label"])
    return out


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    return [make_skill(NAME, None, op, f"a real lab run's {label} missed its prediction: re-predict it",
                       ("kind::lab", f"op::{op}"))
            for op, label in _ops(spec).items()]


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> MissReasonParams:
    cases = sorted(cid for cid, c in spec.params["cases"].items() if c["op"] == skill.variant)
    return {"case": rng.choice(cases)}


def _evidence_text(case: dict[str, Any], ev: miss_reasons.OpEvidence) -> str:
    """The record's numbers, neutrally: what each reason is decided on, none of them named."""
    # the floor itself is left to the learner (it can be the key): its counts and peaks are given
    probed = ev.attained_flops_per_s == ev.peak_flops_per_s and ev.attained_bytes_per_s == ev.peak_bytes_per_s
    parts = [f"By hand {ev.bound}-bound, {fmt(ev.model_flops, 'FLOP')}, {fmt(ev.model_bytes, 'B')}; peaks"
             f"{' (probed)' if probed else ''} {fmt(ev.peak_flops_per_s, 'FLOP/s')}, {fmt(ev.peak_bytes_per_s, 'B/s')}"]
    if ev.fixed_cost_seconds is not None:
        parts.append(f"smallest call {fmt(ev.fixed_cost_seconds, 's')}")
    if ev.xla_bytes is not None:
        flops = f"{fmt(ev.xla_flops, 'FLOP')}, " if ev.xla_flops is not None else ""
        parts.append(f"XLA {flops}{fmt(ev.xla_bytes, 'B')}")
    probes: list[str] = []
    if ev.attained_bytes_per_s is not None:
        probes.append(f"copy {fmt(ev.attained_bytes_per_s, 'B/s')}")
    if ev.attained_flops_per_s is not None:
        probes.append(f"matmul {fmt(ev.attained_flops_per_s, 'FLOP/s')}")
    if probes and not probed:
        parts.append("probes: " + ", ".join(probes))
    if ev.noisy_probes:
        parts.append("every probe noisy" if len(ev.noisy_probes) >= 3 else f"noisy: {', '.join(ev.noisy_probes)}")
    if ev.emulated_dtype is not None and ev.dtype != "f32":
        parts.append(f"{ev.dtype}->f32 {'converted' if ev.emulated_dtype else 'not converted'}")
    if ev.working_set_bytes and ev.cache_bytes:
        parts.append(f"inputs {fmt(ev.working_set_bytes, 'B')}, cache {fmt(ev.cache_bytes, 'B')}")
    return "; ".join(parts)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: MissReasonParams) -> Problem:
    case = spec.params["cases"][params["case"]]
    ev = case["ev"]
    key = key_reasons(case)
    if key is None:  # a hand-made id naming a case the evidence cannot explain
        raise ValueError(f"{params['case']}: no set of reasons explains this miss")
    derivation = miss_reasons.best(ev, key)
    value = derivation.seconds if derivation is not None else miss_reasons.corrected_time(ev, key)
    mine = case["graded"] == "learner"
    whose = "predicted" if mine else f"the {case['graded']} roofline predicted"
    shown, text = fmt(ev.reference_seconds, "s"), case["prediction_text"]
    typed = f" (typed '{text}')" if text and text.replace(" ", "") != shown.replace(" ", "") else ""
    predicted = f"{whose} {shown}"
    predicted = predicted[0].upper() + predicted[1:]
    shape = "x".join(str(d) for d in case["shape"])
    measured = fmt(ev.measured_seconds, "s")
    device = case["device_kind"] if case["device_kind"] == case["platform"] else \
        f"{case['device_kind']} ({case['platform']})"
    fields = {"device": device, "size": str(case["size"]),
              "op": f"{case['label']} [{shape}] {case['dtype']}", "predicted": predicted, "measured": measured,
              "evidence": _evidence_text(case, ev)}
    steps = [f"measured {fmt(ev.measured_seconds, 's')} / predicted {fmt(ev.reference_seconds, 's')}{typed} = "
             f"{ev.ratio:.2f}x: outside 2x, a miss"]
    steps += [f"{rid}: {miss_reasons.find(rid).allowed(ev).why}; corrected time: "
              f"{miss_reasons.find(rid).corrected_time}" for rid in key]
    worked = f"{derivation.text} = " if derivation is not None else ""
    steps.append(f"{' + '.join(key)}: {worked}{fmt(value, 's')}, within {miss_reasons.CORRECTED_FACTOR}x of measured "
                 f"{fmt(ev.measured_seconds, 's')}")
    steps.append(f"[lab record {case['record'].rsplit('/', 1)[-1]}, {case['device_kind']}, {case['date'][:10]}; "
                 f"reasons and their corrected times: drill miss-reasons]")
    others = other_explanations(case, spec.tolerance)
    also_right = tuple({"value": v, "note": f"{' + '.join(combo)} gives {fmt(v, 's')}: this record's numbers "
                                            f"support that explanation as well"} for combo, v in others)
    if others:
        steps.insert(-1, "also right: " + "; ".join(f"{' + '.join(c)} = {fmt(v, 's')}" for c, v in others))
    run = case["id"].removesuffix(f"-{case['op']}")  # the skill already names the op
    made = problem(spec, skill, run, spec.prompts["corrected"].format(**fields), Answer(value=value, unit="s"),
                   steps, dict(params), spec.hints["corrected"].format(**fields), (f"dtype::{case['dtype']}",),
                   also_right)
    return dataclasses.replace(made, tolerance=tolerance(spec.tolerance, [value, *(v for _, v in others)], ev.measured_seconds))


def wrong_reasons(spec: FamilySpec, params: MissReasonParams) -> list[tuple[str, float, str]]:
    """(reason, the time re-predicting with it gives, why the numbers rule it out) for each reason
    outside the key whose time lands outside the tolerance (after ``learner-arithmetic`` when the key
    has it)."""
    case = spec.params["cases"][params["case"]]
    ev = case["ev"]
    key = key_reasons(case) or ()
    right = derived_seconds(ev, key)
    also = [v for _, v in other_explanations(case, spec.tolerance)]
    base = ("learner-arithmetic",) if "learner-arithmetic" in key else ()
    out = []
    for reason in miss_reasons.REASONS:
        if reason.id in key:
            continue
        combo = (*base, reason.id)
        value = miss_reasons.corrected_time(ev, combo)
        if any(abs(value - r) <= spec.tolerance * r for r in (right, *also)):
            continue  # a right answer (the key, or another explanation the numbers support) is no mistake
        allowed = reason.allowed(ev)
        why = allowed.why if not allowed.supported else (
            f"{allowed.why}, but {' + '.join(combo)} gives {fmt(value, 's')} against measured "
            f"{fmt(ev.measured_seconds, 's')}")
        out.append((reason.id, value, why))
    return out


def misconceptions(spec: FamilySpec, cat: Catalogue, params: MissReasonParams) -> dict[str, float]:
    """``unsupported-reason/<reason>`` -> the corrected time that reason gives (outside the tolerance)."""
    return {f"{MISCONCEPTION}/{rid}": value for rid, value, _ in wrong_reasons(spec, params)}
