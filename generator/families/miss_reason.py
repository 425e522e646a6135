"""Family 16 [miss_reason]: a real lab run missed its prediction by more than 2x; name the reason.

Built from real recorded runs: each case is one missed op of a lab record (the course's
``bench/`` records and this machine's CPU runs), with the op's evidence copied from the
record (``labs.miss_reason_cases`` writes ``generator/families/data/miss_reason_cases.json``).
Every answer comes from the miss-reason catalogue (``generator.miss_reasons.assess``) when
the spec loads, so the quiz agrees with ``drill explain``: the key is the one offered reason
the record's numbers support; every other offered reason is one the numbers contradict
(never one the record merely lacks the evidence for), and its Finding is the feedback for
choosing it (``wrong_choices``, read by ``generator.misconceptions``).

One skill per op kind (``miss_reason:softmax``) whose cases support at least two reasons: a draw
picks the key uniformly among them, a case that supports it, and up to ``choices - 1`` reasons
that case contradicts. Problem ids carry the case and
the offered reasons (``miss_reason:add:cpu-n1024-20261129T225540Z:r357``), never the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator import miss_reasons, safeio
from generator.catalogue import Catalogue
from generator.families.base import Mastery, make_skill, problem
from generator.problem import Answer
from generator.specs import Checker, FamilySpec
from generator.units import fmt

NAME = "miss_reason"
ORDER = 160  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_116  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 6: what shows it (drill progress)
MASTERY = {6: Mastery("a lab record whose every miss has an explanation the tool accepted: a reason its "
                      "numbers support, not a shrug (drill lab, drill explain; a CPU practice run counts)", lab=True)}
PROMPTS = {"reason": {"device", "size", "op", "predicted", "measured", "evidence", "choices"}}
DATA_DIR = Path(__file__).with_name("data")
CASES_SCHEMA = "rudrite-kernels/miss-reason-cases"
MAX_CASES_BYTES = 4 * 1024 * 1024
KEYS = {"cases_file", "choices"}
CASE_KEYS = {"id", "op", "label", "shape", "dtype", "record", "date", "platform", "device_kind", "size", "graded",
             "predicted_seconds", "prediction_text", "evidence"}
MISCONCEPTION = "unsupported-reason"  # generator.misconceptions: naming a reason the numbers contradict

# The evidence a reason's test decides on: a reason whose evidence the record lacks is never offered
# as a wrong choice (the learner could not rule it out from the numbers shown).
NEEDS = {"learner-arithmetic": ("predicted_seconds",), "fixed-cost": ("fixed_cost_seconds",),
         "extra-traffic": ("xla_bytes",), "emulated-dtype": ("emulated_dtype",)}


def _code(reason_id: str) -> str:
    """A reason's position in the catalogue, 1-based: ids name the offered reasons without naming the key."""
    return str([r.id for r in miss_reasons.REASONS].index(reason_id) + 1)


def judged(case: dict) -> tuple[miss_reasons.OpEvidence, dict[str, miss_reasons.Finding]]:
    ev = case["ev"]
    return ev, {f.reason_id: f for f in miss_reasons.assess(ev)}


def offered(case: dict) -> tuple[list[str], list[str]]:
    """(supported reasons, contradicted reasons that may be offered as wrong choices), catalogue order."""
    ev, findings = judged(case)
    supported = [rid for rid, f in findings.items() if f.supported]
    wrong = [rid for rid, f in findings.items()
             if not f.supported and all(getattr(ev, name) is not None for name in NEEDS.get(rid, ()))]
    return supported, wrong


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    p = check.mapping(spec.params, ("params",), required=KEYS, allowed=KEYS)
    choices = check.integer(p["choices"], ("params", "choices"), low=2)
    name = check.text(p["cases_file"], ("params", "cases_file"))
    path = DATA_DIR / name
    if Path(name).name != name:
        check.fail(("params", "cases_file"), "a file name in generator/families/data, not a path")
    try:
        doc = safeio.read_json_bounded(path, MAX_CASES_BYTES)
    except (safeio.SafeIOError, OSError) as exc:
        check.fail(("params", "cases_file"), f"can not read {name}: {exc}")
    if not isinstance(doc, dict) or doc.get("schema") != CASES_SCHEMA or not isinstance(doc.get("cases"), list):
        check.fail(("params", "cases_file"), f"{name} is not a '{CASES_SCHEMA}' document with a list of cases")
    cases: dict[str, dict] = {}
    for i, raw in enumerate(doc["cases"]):
        where = ("params", "cases_file")
        if not isinstance(raw, dict) or set(raw) != CASE_KEYS:
            check.fail(where, f"{name}: case {i}: expected the keys {', '.join(sorted(CASE_KEYS))}")
        if not isinstance(raw["id"], str) or ":" in raw["id"] or " " in raw["id"] or raw["id"] in cases:
            check.fail(where, f"{name}: case {i}: a unique id without ':' or spaces, got {raw['id']!r}")
        try:
            ev = miss_reasons.OpEvidence.from_dict(raw["evidence"])
        except (TypeError, ValueError, KeyError) as exc:
            check.fail(where, f"{name}: case {raw['id']}: unusable evidence: {exc}")
        cases[raw["id"]] = {**raw, "ev": ev}
    usable = {cid: c for cid, c in cases.items() if _usable(c)}
    if not any(len(keys) >= 2 for keys in keys_by_op(usable).values()):
        check.fail(("params", "cases_file"), f"{name}: no op has cases supporting two reasons (each with a "
                                             "contradicted one to offer beside it)")
    return {"cases": usable, "choices": choices, "cases_file": name}


def _usable(case: dict) -> bool:
    supported, wrong = offered(case)
    return bool(supported) and bool(wrong)


def keys_by_op(cases: dict[str, dict]) -> dict[str, set[str]]:
    """op -> every reason its cases support (the keys its problems can have)."""
    out: dict[str, set[str]] = {}
    for case in cases.values():
        out.setdefault(case["op"], set()).update(offered(case)[0])
    return out


def _ops(spec: FamilySpec) -> dict[str, str]:
    """op -> its label, in the order the cases first name them; only ops whose cases support at least
    two reasons: with one, every problem of the skill would have the same key (learnt by rote)."""
    keys = keys_by_op(spec.params["cases"])
    out: dict[str, str] = {}
    for case in spec.params["cases"].values():
        if len(keys[case["op"]]) >= 2:
            out.setdefault(case["op"], case["label"])
    return out


def skills(spec: FamilySpec, cat: Catalogue):
    return [make_skill(NAME, None, op, f"a real lab run's {label} missed its prediction: name the reason",
                       ("kind::lab", f"op::{op}"))
            for op, label in _ops(spec).items()]


def draw_params(spec: FamilySpec, cat: Catalogue, skill, rng) -> dict[str, Any]:
    """The key first, uniformly among the reasons this op's cases support (so no reason is the likely
    guess), then a case that supports it, then up to ``choices - 1`` reasons that case contradicts."""
    order = [r.id for r in miss_reasons.REASONS]
    by_reason: dict[str, list[str]] = {}
    for cid in sorted(cid for cid, c in spec.params["cases"].items() if c["op"] == skill.variant):
        for rid in offered(spec.params["cases"][cid])[0]:
            by_reason.setdefault(rid, []).append(cid)
    key = rng.choice(sorted(by_reason, key=order.index))
    case_id = rng.choice(by_reason[key])
    wrong = offered(spec.params["cases"][case_id])[1]
    others = rng.sample(wrong, min(spec.params["choices"] - 1, len(wrong)))
    return {"case": case_id, "choices": sorted([key, *others], key=order.index)}


def _evidence_text(case: dict, ev: miss_reasons.OpEvidence) -> str:
    """The record's numbers, neutrally: what each reason is decided on, none of them named."""
    parts = [f"the model calls it {ev.bound}-bound with a floor of {fmt(ev.floor_seconds, 's')} "
             f"(hand count {fmt(ev.model_flops, 'FLOP')}, {fmt(ev.model_bytes, 'B')}; peaks "
             f"{fmt(ev.peak_flops_per_s, 'FLOP/s')}, {fmt(ev.peak_bytes_per_s, 'B/s')})"]
    if ev.fixed_cost_seconds is not None:
        parts.append(f"a trivial op takes {fmt(ev.fixed_cost_seconds, 's')} on this device")
    if ev.xla_bytes is not None:
        flops = f"{fmt(ev.xla_flops, 'FLOP')} and " if ev.xla_flops is not None else ""
        parts.append(f"XLA's compiled program counts {flops}{fmt(ev.xla_bytes, 'B')} accessed")
    probes = []
    if ev.attained_bytes_per_s is not None:
        probes.append(f"a copy at {fmt(ev.attained_bytes_per_s, 'B/s')}")
    if ev.attained_flops_per_s is not None:
        probes.append(f"a large matmul at {fmt(ev.attained_flops_per_s, 'FLOP/s')}")
    if probes:
        parts.append("this device's probes ran " + " and ".join(probes))
    if ev.emulated_dtype is not None:
        parts.append(f"{ev.platform} {'has no native' if ev.emulated_dtype else 'has native'} {ev.dtype} arithmetic")
    return "; ".join(parts)


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def solve(spec: FamilySpec, cat: Catalogue, skill, params: dict[str, Any]):
    case = spec.params["cases"][params["case"]]
    choices = list(params["choices"])
    ev, findings = judged(case)
    right = [rid for rid in choices if findings[rid].supported]
    if len(right) != 1:  # a draw always offers exactly one supported reason; a hand-made id may not
        raise ValueError(f"{params['case']}: the offered reasons {choices} include {len(right)} supported ones")
    key = right[0]
    mine = case["graded"] == "learner"
    whose = "the learner predicted" if mine else f"the {case['graded']} roofline predicted"
    shown, text = fmt(ev.reference_seconds, "s"), case["prediction_text"]
    wrote = f" (written as '{text}')" if text and text.replace(" ", "") != shown.replace(" ", "") else ""
    predicted = f"{whose} {shown}{wrote}"
    predicted = predicted[0].upper() + predicted[1:]
    shape = "x".join(str(d) for d in case["shape"])
    direction = "slower" if ev.slower else "faster"
    measured = (f"{fmt(ev.measured_seconds, 's')}, {ev.ratio if ev.slower else 1 / ev.ratio:.2f}x {direction} "
                f"than predicted")
    fields = {"device": f"{case['device_kind']} ({case['platform']})", "size": str(case["size"]),
              "op": f"{case['label']} [{shape}] {case['dtype']}", "predicted": predicted, "measured": measured,
              "evidence": _evidence_text(case, ev), "choices": _or(choices)}
    steps = [f"measured {fmt(ev.measured_seconds, 's')} / predicted {fmt(ev.reference_seconds, 's')} = "
             f"{ev.ratio:.2f}x: outside 2x, a miss",
             f"{key}: {findings[key].why}"]
    steps += [f"not {rid}: {findings[rid].why}" for rid in choices if rid != key]
    steps.append(f"[lab record {case['record']}, {case['device_kind']}, {case['date'][:10]}; "
                 f"reasons: drill miss-reasons]")
    run = case["id"].removesuffix(f"-{case['op']}")  # the skill already names the op
    return problem(spec, skill, f"{run}:r{''.join(_code(c) for c in choices)}",
                   spec.prompts["reason"].format(**fields), Answer(choice=key, choices=tuple(choices)), steps,
                   dict(params), spec.hints["reason"].format(**fields), (f"dtype::{case['dtype']}",))


def wrong_choices(spec: FamilySpec, cat: Catalogue, params: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(misconception id, wrong choice, its flaw) for each offered reason the numbers contradict."""
    ev, findings = judged(spec.params["cases"][params["case"]])
    return [(MISCONCEPTION, rid, f"{rid}: {findings[rid].why}") for rid in params["choices"]
            if not findings[rid].supported]
