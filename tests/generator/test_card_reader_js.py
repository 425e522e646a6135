"""The card's answer reader under Node against `drill check`: what the grammar reads, the card reads.

``generator.export.card``'s script writes ``generator.model.answers``' grammar out in JavaScript. Here it runs,
as the deck ships it, on typed answers to real generated problems of every family, and each verdict
is compared with ``drills.quiz.assess`` called as ``drill check`` calls it (a bare number read in the card's
unit): right, wrong (and the mistake named), "needs-unit", or not read ("none", for every answer the
grammar refuses). The answers:

- the right answer as learners type it (``answer_spellings.right_spellings``: "Memory-bound.",
  "(172.4)", "172.4*1", "172.4.", the base unit ...): all right, in both;
- the key in the base unit with no unit, as a number or a working, where the card reads another
  unit (``answer_spellings.bare_base_spellings``): "needs-unit" in both, with both readings said;
- text drawn from the grammar's pieces (numbers, units of every kind in several cases, operators,
  parentheses, separators, full stops, "per", refused units, limits) and around the key and the
  classic wrong answers: the same verdict in both.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from drills.quiz import assess
from drills.cmd_generate import card_rules
from generator.problems import families
from generator.model import answers
from generator.problems import generate as gen
from generator.problems.families import mistakes as named_mistakes
from generator.export import card
from generator.export.variants import Variant, variant
from tests.generator.answer_spellings import bare_base_spellings, right_spellings
from tests.js import run_node

# A back side: the note's data, a verdict box and the back's element; no storage. Each case runs
# ``rudriteCard.verdict``; ``shown`` cases run ``rudriteCard.show`` and read the box and the attributes.
HARNESS = r"""
const vm = require("vm");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
function back(data) {
  const el = { textContent: JSON.stringify(data) };
  const attrs = {};
  const backEl = { setAttribute: (k, v) => { attrs[k] = v; }, getAttribute: (k) => attrs[k] };
  const box = { textContent: "", appendChild: (c) => { box.textContent += c.textContent; } };
  const window = { name: "" };
  const found = { ".rk-data": el, ".rk-back": backEl, ".rk-verdict": box };
  const document = { readyState: "complete", querySelector: (s) => found[s] || null, querySelectorAll: () => [],
                     createElement: () => ({ textContent: "" }) };
  vm.runInNewContext(input.script, { window, document }, { filename: "card.js" });
  if (!window.rudriteCard) throw new Error("the card script did not run (safely() caught an error)");
  return { card: window.rudriteCard, attrs, box };
}
const side = back(input.note);
const out = {
  verdict: input.verdicts.map((c) => side.card.verdict(input.note.v[c[0]], c[1])),
  shown: input.shown.map((c) => { side.card.show(c[0], c[1]); return [side.attrs["data-verdict"], side.box.textContent]; }),
};
process.stdout.write(JSON.stringify(out));
"""

SEED = 31
FORMS_PER_VARIANT = 48  # drawn answers a variant (of a few hundred forms): every form is drawn for some variant
# Units of each dimension a learner types, beyond the card's own: prefixes, cases, spelled words,
# "per", and units the grammar refuses (bits, "MS").
UNITS = {"1,0,0": ["ms", "us", "µs", "μs", "ns", "ps", "s", "sec", "microseconds", "USEC", "Ms", "MS", "mS"],
         "0,1,0": ["B", "bytes", "KiB", "kB", "MB", "GiB", "GB", "gigabytes", "TB", "Gb", "MiB"],
         "0,0,1": ["FLOP", "GFLOP", "TFLOPs", "teraflops", "flops", "PFLOP"],
         "-1,0,1": ["TFLOP/s", "FLOP/s", "TFLOPS", "TFLOPs", "PFLOP/s", "GFLOPs per s", "teraflops", "TFLOP / s"],
         "-1,1,0": ["GB/s", "TB/s", "B/s", "GBps", "gigabytes per second", "Gb/s", "Gbps", "GiB/s", "TB / s"],
         "0,-1,1": ["FLOPs/byte", "FLOP/byte", "flops per byte", "FLOP/B", "FLOPs/B"],
         "0,0,0": ["", "k", "K", "M", "chips", "tokens", "Hosts"]}
OTHER = ["3 GiB", "12 us", "4 GB", "5 us", "7 FLOP", "9 s", "3 us", "5 us/s", "2 s/s", "12 chips/s"]
PIECES = ["2", "3", "0", "1e3", "1,024", "1,5", ".5", "5.", "(", ")", "*", "/", "+", "-", "**", "^", "×", "÷", "−", "·",
          " ", "  ", ".", "k", "us", "s", "GB", "TB/s", "per", "FLOP", "x", "e", "chips", "MS", "1e400", "2^10", "~", "≈",
          "87,2"]


def typed_forms(v: Variant, rng: random.Random) -> list[str]:
    """Answers drawn from the grammar's pieces around ``v``'s key and wrong answers (see the module docstring)."""
    d = v.to_dict()
    if "c" in d:
        names = list(d["c"]) + [str(w[0]) for w in d["w"]]
        out = [f"{c}{s}" for c in names for s in (".", "!", "?", " !", "..", ",", ";", " -bound.", "–bound", "—bound")]
        out += [c[:n] for c in names for n in (1, 2, 3)] + [c.upper() + " Bound!" for c in names]
        out += ["zzz", ".", "!", "bound", "-bound", "memory bandwidth.", "HBM-bound.", "comms bound?", "(3, 5).",
                "3 by 5!", "3×5", "48 x 512", "y.", "N!", "c.", "M", "x" * 201]
        return rng.sample(out, min(len(out), FORMS_PER_VARIANT))
    n = float(d["k"]) * d["b"] / d["s"]  # the key in the card's unit
    u, bu = d["u"], d["bu"]
    units = [u, bu] + UNITS[d["x"]]
    values = [n, -n, n * 1e3, n * 1e-3, float(d["k"])] + [float(w[0]) * d["b"] / d["s"] for w in d["w"][:4]]
    out = []
    for x in values:
        unit_here = rng.choice(units)
        g = f"{x:.5g}"
        out += [g, f"({g})", f"{g}.", f"{g} .", f"{g}*1", f"2*{x / 2:.5g}", f"{x * 3:.5g}/3", f"{g} {unit_here}",
                f"{g}{unit_here}.", f"({g}) {unit_here}", f"2*{x / 2:.5g} {unit_here}", f"({g} {unit_here})",
                f"{x:,.3f} {unit_here}", f"{g} {unit_here} * 1", f"1 * {g} {unit_here}", f"{g} {unit_here}/1",
                f"-({g})", f"- -{g}", f"+{g} {unit_here}", f"{x / 1024:.6g}*2**10", f"{x / 1024:.6g}*2^10 {unit_here}",
                f"{g}e0", f"{g} {unit_here}!", f"{g} {unit_here}{unit_here}", f"{g} {unit_here} {unit_here}"]
    out += OTHER + ["1e400", "1e308*10", "0/0", "1/0", "2**101", "2**100", "(-8)**0.5", "4 s**0.5", "2 s**2",
                    "(2 s)**2", "10**-3 s", "2**3**2", "2**-1", "-2**2", "((((((((((((((((((((((((((((((((1))))))))"
                    "))))))))))))))))))))))))", "-" * 31 + "1", "-" * 29 + "1", "1,234.5", "1,234,567 us", "12,34",
                    "1,2345", "1.234,5", "3 − 1", "3 × 2", "6 ÷ 2", "2·3", "2*3 " + u, "(2*3) " + u, "2 " + u + " * 3",
                    "2*2048**3 FLOP / 197 TFLOP/s", "197 TFLOPs", "5 petaflops", "2.4k", "2.4 k", "12 chips", "us",
                    "(", ")", "", " ", "2 3", "2 (3)", "(2)(3)", "3 TBps", "3 Tb/s", "1 MS", "1 Ms", "1 mS"]
    for _ in range(12):  # a soup of pieces
        out.append("".join(rng.choice(PIECES + [u, bu]) for _ in range(rng.randint(1, 7))))
    return rng.sample(out, min(len(out), FORMS_PER_VARIANT))


def drill_check_verdict(v: Variant, typed: str) -> list[str]:
    """`drill check`'s verdict, as the card says it: right, wrong (and the mistake), needs-unit or none."""
    out = assess.assess(v.problem, typed, gen.grading_bands(v.problem.family), bare_unit=v.unit or None)
    if out.status == assess.NEEDS_UNIT:
        return ["needs-unit", ""]
    if out.status != assess.GRADED:
        return ["none", ""]
    named = out.misconception
    return ["right", ""] if out.correct else ["wrong", "" if named is None else named.misconception.id]


@pytest.fixture(scope="module")
def variants() -> list[Variant]:
    """A problem of every skill of every family on two chips, as card variants."""
    problems = gen.generate(families=list(families.FAMILIES), chips=["v5e", "v6e"], count=1, seed=SEED)
    rules = card_rules()
    return [variant(p, rules) for p in problems]


@pytest.fixture(scope="module")
def results(variants):
    """One Node run over every case: {kind: [(variant, typed, Python's verdict, the card's verdict)]}."""
    rng = random.Random(SEED)
    cases: list[tuple[str, int, str]] = []
    for i, v in enumerate(variants):
        cases += [("right", i, t) for t in right_spellings(v)]
        cases += [("bare", i, t) for t in bare_base_spellings(v)]
        cases += [("drawn", i, t) for t in typed_forms(v, rng)]
    note = {"skill": "reader", "seed": 1, "v": [v.to_dict() for v in variants], "m": {}}
    # The back shows a needs-unit answer in words: one case of each numeric variant with bare spellings.
    shown = [[i, bare_base_spellings(v)[0]] for i, v in enumerate(variants) if bare_base_spellings(v)]
    plain, stated, known = named_mistakes.wrong_answers, assess.stated_unit, {}

    def once(problem, cat=None):  # wrong_answers is a function of the problem: computed once, not per case
        if cat is not None:
            return plain(problem, cat)
        if id(problem) not in known:
            known[id(problem)] = (problem, plain(problem), stated(problem))
        return known[id(problem)][1]

    def stated_once(problem):  # so is the prompt's stated unit
        once(problem)
        return known[id(problem)][2]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(named_mistakes, "wrong_answers", once)
        mp.setattr(assess, "stated_unit", stated_once)
        want = [drill_check_verdict(variants[i], t) for _, i, t in cases]
    out = run_node(HARNESS, {"script": card.script(), "note": note, "verdicts": [[i, t] for _, i, t in cases],
                             "shown": shown})
    by_kind: dict[str, list] = {}
    for (kind, i, t), w, g in zip(cases, want, out["verdict"]):
        by_kind.setdefault(kind, []).append((variants[i], t, w, g))
    return {"cases": by_kind, "shown": [(variants[i], t, s) for (i, t), s in zip(shown, out["shown"])]}


def _show(rows):
    return json.dumps([(v.problem.id, t, w, g) for v, t, w, g in rows[:6]], ensure_ascii=False)


def test_the_cases_reach_every_family_and_outcome(results, variants):
    cases = results["cases"]
    assert {v.problem.family for v in variants} == set(families.FAMILIES)
    assert len(cases["right"]) >= 3000 and len(cases["bare"]) >= 250 and len(cases["drawn"]) >= 6000
    said = {w[0] for *_, w, _ in cases["drawn"]}
    assert said == {"right", "wrong", "needs-unit", "none"}, said
    named = {w[1] for *_, w, _ in cases["drawn"] if w[1]}
    assert len(named) >= 10, named


def test_every_right_spelling_is_right_in_drill_check_and_on_the_card(results):
    """"Memory-bound.", "Yes!", "(172.4)", "172.4*1", "172.4." ...: drill check grades each right, and so
    does the card."""
    rows = results["cases"]["right"]
    not_right = [r for r in rows if r[2] != ["right", ""] or r[3] != ["right", ""]]
    assert not not_right, _show(not_right)
    typed = {t for _, t, _, _ in rows}
    assert any(t.endswith("-bound.") for t in typed) and any(re.fullmatch(r"\([0-9.e+-]+\)", t) for t in typed)


def test_a_bare_answer_right_only_in_the_base_unit_needs_its_unit(results):
    """The key in the base unit typed with no unit (as a number or a working) where the card reads another
    unit: never graded (wrong or right); "needs-unit" in both."""
    rows = results["cases"]["bare"]
    off = [r for r in rows if r[2] != ["needs-unit", ""] or r[3] != ["needs-unit", ""]]
    assert not off, _show(off)


def test_the_card_reads_what_drill_check_reads(results):
    """Every drawn answer: the card's verdict and mistake are `drill check`'s, "none" where it reads nothing."""
    rows = results["cases"]["drawn"]
    diffs = [r for r in rows if r[2] != r[3]]
    assert not diffs, _show(diffs)


def test_the_back_says_both_readings_of_a_bare_answer(results):
    """A needs-unit answer on the back: the unit it was read in, its value in the base unit, what to type."""
    assert results["shown"]
    for v, typed, (said, text) in results["shown"]:
        assert said == "needs-unit", (v.problem.id, typed, said, text)
        base = v.problem.answer.unit
        assert f"read in {v.unit}" in text and f" {base}, which is right" in text, text
        value = float(re.search(rf"it is (\S+) {re.escape(base)}, which", text).group(1))
        assert value == pytest.approx(v.problem.answer.number, rel=max(v.good_rel, 5e-3)), text


def test_drill_check_says_both_readings_of_the_issue_s_example():
    """``2*4096*2048*8192/197e12`` with no unit on a v5e matmul whose card reads µs: needs-unit, naming µs,
    the 698 ps it would be there and the 698 µs it is in seconds."""
    from click.testing import CliRunner

    from drills.cli import cli

    pid = "floor:v5e:matmul_large-t_math:2048x8192x4096-bf16@3c6da5d7"
    result = CliRunner().invoke(cli, ["check", "--problem-id", pid, "--answer", "2*4096*2048*8192/197e12", "--json"])
    out = json.loads(result.stdout)
    assert out["status"] == "needs-unit" and out["correct"] is None, out
    assert "read in µs, which is 698 ps" in out["feedback"] and "in s it is 698 µs" in out["feedback"], out
    assert "(2*4096*2048*8192/197e12) s" in out["feedback"], out
    right = CliRunner().invoke(cli, ["check", "--problem-id", pid, "--answer", "(2*4096*2048*8192/197e12) s", "--json"])
    assert json.loads(right.stdout)["correct"] is True


def test_the_grammar_s_data_reaches_the_card():
    """The patterns and tables the card reads with are answers' own (nothing typed twice)."""
    reader = answers.card_reader()
    script = card.script()
    assert json.dumps(reader, ensure_ascii=True, separators=(",", ":")) in script
    assert reader["number"] == answers._NUMBER.pattern and reader["stops"] == answers.CHOICE_STOPS
    assert reader["limits"] == [answers.MAX_NESTING, answers.MAX_EXPONENT]
