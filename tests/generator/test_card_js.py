"""The variant card's script (``generator.export.card.script()``) under Node against the Python rules.

The script, filled in as the deck ships it, runs in a Node ``vm`` context whose ``document`` holds only
the note's data, as a front side with no answer box: the script picks the day's variant and exposes
``window.rudriteCard`` (``pick`` and ``verdict``). Every case goes to one Node process; expectations
come from the Python at test time:

- **the rotation:** ``rudriteCard.pick`` against ``rotation.pick`` over seeds, days (before 1970
  included), K and the last variant shown; and the front's own choice, from a given clock and time zone
  (``Date`` replaced in the context) and a remembered last variant, against ``rotation.anki_day`` and
  ``rotation.pick``;
- **the tolerance and the closest mistake:** ``rudriteCard.verdict`` on a number typed in the card's
  unit, against ``drills.quiz.assess`` as `drill check` calls it (right or wrong by ``drills.quiz.grading.grade``,
  "needs-unit", and the mistake ``generator.problems.families.mistakes`` names), for numbers on and around
  the key, each classic wrong answer and each other edition's answer, at the tolerances' edges; and
  for choices.

The typed number's value is ``n * s / b`` in both languages (the same IEEE operations); the reader of
units, separators and workings is held in test_card_reader_js.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random

import pytest

from drills.quiz import assess
from drills.cmd_generate import card_rules
from generator.problems import families
from generator.problems.families import mistakes as named_mistakes
from generator.problems import generate as gen
from generator.export import card, rotation
from generator.export.variants import Variant, skill_notes, variant
from tests.js import run_node

HARNESS = r"""
const vm = require("vm");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
// A front side: only the note's data; no answer box, no back, no storage. clock: [ms, offset] or null.
function front(data, clock, last) {
  const el = { textContent: JSON.stringify(data) };
  const window = { name: "" };
  if (last !== null) window.rudriteLast = { [data.skill]: last };
  const ctx = { window, document: { readyState: "complete", querySelector: (s) => (s === ".rk-data" ? el : null),
                                    querySelectorAll: () => [] } };
  if (clock) {
    const FakeDate = function (t) { this.t = t; };
    FakeDate.now = () => clock[0];
    FakeDate.prototype.getTimezoneOffset = function () { return clock[1]; };
    ctx.Date = FakeDate;
  }
  vm.runInNewContext(input.script, ctx, { filename: "card.js" });
  if (!window.rudriteCard) throw new Error("the card script did not run (safely() caught an error)");
  return window;
}
const one = front(input.notes[0], null, null).rudriteCard;
const out = {
  pick: input.picks.map((c) => one.pick(c[0], c[1], c[2], c[3])),
  verdict: input.verdicts.map((c) => one.verdict(c[0], c[1])),
  shown: input.fronts.map((c) => front(input.notes[c[0]], c[1], c[2]).rudriteReview.id),
};
process.stdout.write(JSON.stringify(out));
"""

SEED = 20261202


def build_variants() -> tuple[list[dict], list[tuple[dict, Variant]]]:
    """Notes of every family on two chips (their card data), and each variant with its data; plus each
    numeric variant again with no tolerance of its own (the family's ``good_rel`` and the default
    diagnosis tolerance then apply)."""
    problems = gen.generate(families=list(families.FAMILIES), chips=["v5e", "h100"], count=3, seed=5)
    notes = skill_notes(problems, card_rules(), gen.registry().by_id, 4)
    pairs = [(d, v) for n in notes for d, v in zip(n.to_dict()["v"], n.variants)]
    rules = card_rules()
    for n in notes:
        for v in n.variants:
            if not v.problem.answer.is_choice and v.problem.tolerance > 0:
                bare = variant(dataclasses.replace(v.problem, tolerance=0.0), rules)
                pairs.append((bare.to_dict(), bare))
    return [n.to_dict() for n in notes], pairs


def edge(a: float, tol: float, sign: int) -> float:
    """A value whose relative error from ``a`` is ``tol`` exactly in doubles where one lies within 64 ulps of
    ``a * (1 + sign * tol)`` (else that product): the tolerance's very edge."""
    x = y = a * (1 + sign * tol)
    for _ in range(64):
        for z in (x, y):
            if a and abs(z - a) / abs(a) == tol:
                return z
        x, y = math.nextafter(x, math.inf), math.nextafter(y, -math.inf)
    return a * (1 + sign * tol)


def targets(v: Variant, rng: random.Random) -> list[float]:
    """Values (in the answer's unit) on and around the key and each other edition's answer (at, just
    inside and just outside the tolerance and the diagnosis tolerance), around up to four of the wrong
    answers (inside and at the edge of the diagnosis tolerance), and random ones."""
    d = v.to_dict()
    key = float(d["k"])
    wrong = sorted({float(w[0]) for w in d["w"] if not isinstance(w[0], str)})
    out = [0.0, -key, key * 1e3, key * 1e-3]
    for a in [key] + list(d.get("a", [])):
        for tol in (d["t"], d["dt"]):
            out += [edge(a, tol, 1), edge(a, tol, -1)]
            for f in (1 - 1e-9, 1 + 1e-9, 2.0):
                out += [a * (1 + f * tol), a * (1 - f * tol)]
    for w in rng.sample(wrong, min(4, len(wrong))):
        out += [w, w * (1 + d["dt"]), w * (1 - d["dt"] * 0.99), w * (1 + rng.uniform(-1.5, 1.5) * d["dt"])]
    # between two wrong answers, where only the closest may be named
    out += [(a + b) / 2 + (b - a) * rng.uniform(-0.2, 0.2) for a, b in zip(wrong, wrong[1:])][:4]
    return out


def expected_verdict(v: Variant, typed: str) -> list[str]:
    """What `drill check` says of ``typed`` (a bare number read in the card's unit, as ``drills.cmd_check``
    reads it, or a choice): right or wrong (``grading.grade``) and the mistake named; "needs-unit" where
    the bare number is right only in the answer's base unit."""
    out = assess.assess(v.problem, typed, gen.grading_bands(v.problem.family), bare_unit=v.unit or None)
    if out.status == assess.NEEDS_UNIT:
        return ["needs-unit", ""]
    assert out.status == assess.GRADED, out.reason
    named = out.misconception
    return ["right", ""] if out.correct else ["wrong", "" if named is None else named.misconception.id]


@pytest.fixture(scope="module")
def results():
    """One Node run over every case: (the cases, what Python expects, what the script returned)."""
    with pytest.MonkeyPatch.context() as mp:
        # wrong_answers is a function of the problem alone: computed once per problem, not per case
        known: dict[int, tuple] = {}
        plain = named_mistakes.wrong_answers

        def once(problem, cat=None):
            if cat is not None:
                return plain(problem, cat)
            if id(problem) not in known:
                known[id(problem)] = (problem, plain(problem))
            return known[id(problem)][1]

        mp.setattr(named_mistakes, "wrong_answers", once)
        stated: dict[int, tuple] = {}
        plain_stated = assess.stated_unit

        def stated_once(problem):  # so is the prompt's stated unit
            if id(problem) not in stated:
                stated[id(problem)] = (problem, plain_stated(problem))
            return stated[id(problem)][1]

        mp.setattr(assess, "stated_unit", stated_once)
        return _results()


def _results():
    rng = random.Random(SEED)
    notes, pairs = build_variants()
    seeds = [1, rotation.MODULUS - 1] + [n["seed"] for n in notes[:6]] + [rng.randint(1, rotation.MODULUS - 1)
                                                                         for _ in range(4)]
    picks = []
    for _ in range(2400):
        k = rng.choice([1, 2, 3, 4, 5, 8, 16, 64]) if rng.random() < 0.5 else rng.randint(1, 64)
        day = rng.choice([rng.randint(-30_000, 0), rng.randint(20_000, 22_000), rng.randint(-10, 10)])
        picks.append([rng.choice(seeds), day, k, None if rng.random() < 0.3 else rng.randrange(k)])
    for day in range(20_500, 20_564):  # consecutive days across block edges
        picks += [[seeds[2], day, k, last] for k in (2, 3, 5) for last in (None, day % k)]
    verdicts, want_verdicts = [], []
    for d, v in pairs:
        if v.problem.answer.is_choice:
            for typed in list(d["c"]) + [w[0] for w in d["w"]]:
                verdicts.append([d, typed])
                want_verdicts.append(expected_verdict(v, typed))
            continue
        for g in targets(v, rng):
            n = g * d["b"] / d["s"]  # the number typed in the card's unit
            verdicts.append([d, repr(n)])
            want_verdicts.append(expected_verdict(v, repr(n)))
    fronts, want_fronts = [], []
    multi = [i for i, n in enumerate(notes) if len(n["v"]) > 1]
    for _ in range(200):
        i = rng.choice(multi)
        ids = [x["id"] for x in notes[i]["v"]]
        ms = rng.choice([rng.uniform(-2e11, 0), rng.uniform(1.7e12, 1.9e12)])
        offset = rng.choice([0, -60, 300, -330, 720, -840, rng.randint(-840, 720)])
        last = None if rng.random() < 0.3 else rng.randrange(len(ids))
        fronts.append([i, [ms, offset], None if last is None else ids[last]])
        want_fronts.append(ids[rotation.pick(notes[i]["seed"], rotation.anki_day(ms, offset), len(ids), last)])
    out = run_node(HARNESS, {"script": card.script(), "notes": notes, "picks": picks, "verdicts": verdicts,
                             "fronts": fronts})
    return {"picks": picks, "verdicts": verdicts, "want_verdicts": want_verdicts, "fronts": fronts,
            "want_fronts": want_fronts, "out": out}


def test_the_cases_cover_every_outcome(results):
    kinds = {tuple(w) for w in results["want_verdicts"]}
    assert {k[0] for k in kinds} == {"right", "wrong", "needs-unit"}
    assert ("wrong", "") in kinds and len({k[1] for k in kinds if k[1]}) >= 10
    assert len(results["verdicts"]) >= 3000 and len(results["picks"]) >= 2500
    assert sum(len(d["w"]) > 0 and "a" in d for d, _ in results["verdicts"]) > 0  # other editions' answers too


def test_the_scripts_rotation_is_pythons(results):
    """``rudriteCard.pick`` is ``rotation.pick`` for every (seed, day, K, last)."""
    want = [rotation.pick(*c) for c in results["picks"]]
    diffs = [(c, w, g) for c, w, g in zip(results["picks"], want, results["out"]["pick"]) if w != g]
    assert not diffs, diffs[:5]


def test_the_front_shows_anki_days_variant(results):
    """The front's pick from the clock, the time zone offset and the remembered last variant."""
    diffs = [(c, w, g) for c, w, g in zip(results["fronts"], results["want_fronts"], results["out"]["shown"])
             if w != g]
    assert not diffs, diffs[:5]


def test_the_verdict_and_the_closest_mistake_are_drill_checks(results):
    """Right within the tolerance (or another edition's answer), else wrong, naming the closest mistake
    within the diagnosis tolerance: the card's ``verdict`` is grading.grade's and diagnose's."""
    diffs = [(d["id"], typed, w, g) for (d, typed), w, g in
             zip(results["verdicts"], results["want_verdicts"], results["out"]["verdict"]) if w != g]
    assert not diffs, json.dumps(diffs[:5])
