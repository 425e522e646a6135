"""No giveaways and no questions that cannot be judged fairly, over every exported problem.

The scan generates every family on every chip, ``COUNT`` problems per skill, for
``SEEDS`` seeds (what ``drill export`` would write), and checks each problem
against its own prompt, hint and quiz header (the skill's description):

- no prompt, header or hint contains its own answer: a number in the project's
  print styles (``si``, ``sci``, ``.4g``; outside operand shapes like
  ``bf16[8,4096]``, which are the problem's data), or, for a choice, the answer
  term as a whole word where the question asks for a term (where the text names
  the choices, the answer may not be named more often than another choice);
- no compute-vs-memory draw within 10% of its ridge (intensity / ridge outside
  [1/1.1, 1.1]);
- ICI problems obey the catalogue's wraparound rule (no v5e/v6e ring shorter
  than 16) and leaving out the latency, the bandwidth term, or using the other
  hop count misses by more than the tolerance (at least 5%);
- exact critical-batch problems: the B << D, F shortcut misses by more than 5%
  (and more than the tolerance);
- transformer prompts say "does not fit" exactly when the weights plus the K/V
  cache exceed the chip's HBM, state the attention convention; softmax prompts
  state the FLOPs per element.

Each check recomputes from the catalogue and the dtype widths, not from the
families' helpers. ``test_scan_size`` prints the counts.
"""

from __future__ import annotations

import math
import re

import pytest

from generator.model import catalogue, costs
from generator.problems.families.base import show
from generator.problems.generate import FAMILY_NAMES, generate, registry
from generator.model.units import DTYPE_BYTES, sci, si

CAT = catalogue.load()
SEEDS = (0, 1, 2)
COUNT = 6
LEAST = 0.05  # the least miss a slip must produce ("outside a 5% tolerance")
PROBLEMS = [p for seed in SEEDS for p in generate(count=COUNT, seed=seed)]
SKILLS = {s.id: s for s in registry().all_skills}


def _inner_skill(p) -> str:
    """The skill a problem really asks (a "Can you" card asks another family's problem)."""
    return p.params.get("check_skill", p.skill)


def _of(family: str):
    return [p for p in PROBLEMS if _inner_skill(p).startswith(family + ":")]


def _words(text: str, term: str) -> int:
    """Whole-word, case-insensitive occurrences of ``term`` in ``text``."""
    return len(re.findall(rf"(?<![\w.]){re.escape(term)}(?![\w]|\.\d)", text, re.IGNORECASE))


def _number_forms(value: float, unit: str) -> set[str]:
    """The ways the project prints an answer value."""
    forms = {f"{value:.4g}", sci(value), si(value, unit).strip(), si(value, unit, 4).strip()}
    if unit:
        forms |= {show(value, unit), f"{value:.4g} {unit}"}
    return {f for f in forms if f}


def giveaways(p, header: str) -> list[str]:
    """What in the prompt, hint or header gives ``p``'s answer away (empty when nothing does)."""
    found = []
    texts = {"prompt": p.prompt, "header": header, "hint": p.hint}
    a = p.answer
    if a.is_choice:
        others = [c for c in a.choices if c != a.choice]
        forms = [a.choice]
        shape = re.fullmatch(r"(\d+)x(\d+)", a.choice)
        if shape:  # a block shape may also be written as a tuple
            forms.append(f"({shape[1]}, {shape[2]})")
        for where, text in texts.items():
            # Naming the choices ("compute- or memory-bound?") is fair; naming the answer more
            # often than any other choice (a term question names none) gives it away.
            mine = max(_words(text, f) for f in forms)
            if mine > max((_words(text, c) for c in others), default=0):
                found.append(f"{where} names the answer '{a.choice}': {text!r}")
    else:
        for where, text in texts.items():
            data = re.sub(r"\[[^\]]*\]", "[]", text)  # an operand's shape is the problem's data, not a printed answer
            for form in _number_forms(a.value, a.unit):
                if _words(data, form):
                    found.append(f"{where} prints the answer as '{form}': {text!r}")
    return found


def test_scan_size():
    families = {p.family for p in PROBLEMS}
    chips = {p.params.get("chip") for p in PROBLEMS} - {None}
    print(f"\nscanned {len(PROBLEMS)} problems ({len(SKILLS)} skills, {len(families)} families, {len(chips)} chips, "
          f"seeds {SEEDS}, {COUNT} per skill): bound {len(_of('bound'))}, ICI "
          f"{sum(p.params.get('variant') == 'ici' for p in _of('interconnect'))}, critical-batch exact "
          f"{sum(p.params.get('form') == 'exact' for p in _of('critical_batch'))}, transformer "
          f"{len(_of('transformer_step'))}")
    assert families == set(FAMILY_NAMES) and chips == set(CAT.names())
    assert len(PROBLEMS) > 5000


def test_no_prompt_header_or_hint_contains_its_answer():
    bad = [f"{p.id}: {g}" for p in PROBLEMS for g in giveaways(p, SKILLS[p.skill].description)]
    assert not bad, f"{len(bad)} giveaways, e.g.\n" + "\n".join(bad[:10])


def test_the_giveaway_check_catches_what_it_should():
    """The checker itself: a number, a named term, a padded shape written as a tuple."""
    ridge = next(p for p in _of("ridge") if not p.answer.is_choice)
    assert giveaways(ridge, f"ridge {ridge.answer.value:.4g}") and giveaways(ridge, si(ridge.answer.value, "FLOP/byte"))
    assert not giveaways(ridge, SKILLS[ridge.skill].description)
    mxu = next(p for p in PROBLEMS if p.skill == "vocabulary:term-mxu")
    assert giveaways(mxu, "vocabulary: MXU") and not giveaways(mxu, "vocabulary: card 1")
    bound = _of("bound")[0]
    assert not giveaways(bound, "compute- or memory-bound?")
    assert giveaways(bound, f"{bound.answer.choice}-bound")
    pad = next(p for p in _of("lattice") if p.params["variant"] == "pad")
    r, c = pad.answer.choice.split("x")
    assert giveaways(pad, f"pads to ({r}, {c})")


def test_vocabulary_definitions_do_not_name_their_term_and_megacore_omits_v6e():
    terms = [p for p in PROBLEMS if p.skill.startswith("vocabulary:term-")]
    assert len({p.skill for p in terms}) >= 9
    for p in terms:
        assert not _words(p.prompt, p.answer.choice), p.prompt
    megacore = next(p for p in terms if p.answer.choice == "megacore")
    two_cores, _, one_core = megacore.prompt.partition(";")
    assert "v4p" in two_cores and "v5p" in two_cores and "v6e" not in two_cores
    assert "v6e" in one_core and "one TensorCore" in one_core


def test_bound_draws_stay_ten_percent_from_the_ridge():
    bound = _of("bound")
    assert len(bound) > 500
    for p in bound:
        chip = CAT.get(p.params["chip"])
        cost = costs.cost(p.params["op"], p.params["shape"], p.params["dtype"])
        ratio = (cost.flops / cost.bytes) / (chip.peak_flops_per_s(cost.dtype) / chip.hbm_bytes_per_s)
        assert ratio >= 1.1 or ratio <= 1 / 1.1, f"{p.id}: intensity / ridge = {ratio:.3f}"
        assert p.answer.choice == ("compute" if ratio >= 1 else "memory")
    assert {p.answer.choice for p in bound} == {"compute", "memory"}


def _wraps(chip: str, n: int) -> bool:
    """The catalogue's rule as chips.md words it: v5e/v6e only on an axis of 16; v4p/v5p only in a slice of
    whole 4x4x4 cubes, so an axis of 8 or 16 wraps, an axis of 2 does not, and an axis of 4 (which could be
    a 2x2x4) is taken as a line."""
    if chip in ("v5e", "v6e"):
        return n == 16
    if chip in ("v4p", "v5p"):
        return n % 4 == 0 and n > 4
    return False  # no stated rule: the problem gives a line


def test_ici_wraparound_obeys_the_catalogue():
    ici = [p for p in _of("interconnect") if p.params.get("variant") == "ici"]
    for p in ici:
        chip, n, wrap = p.params["chip"], p.params["axis"], p.params["wrap"]
        if chip in ("v5e", "v6e"):
            assert not (wrap and n < 16), f"{p.id}: a {chip} ring of {n}"
        assert wrap == _wraps(chip, n), p.id
        assert ("with wraparound" in p.prompt) == wrap and ("without wraparound" in p.prompt) == (not wrap)
    assert {(p.params["chip"], p.params["wrap"]) for p in ici} >= {("v5e", True), ("v5e", False), ("v5p", True)}


def test_ici_latency_bandwidth_and_hop_count_each_decide_the_answer():
    ici = [p for p in _of("interconnect") if p.params.get("variant") == "ici"]
    assert len(ici) >= 100
    lat = float(CAT.facts["ici_hop_latency_s"].value)
    for p in ici:
        chip = CAT.get(p.params["chip"])
        rows, cols = p.params["shape"]
        t_bw = rows * cols * DTYPE_BYTES[p.params["dtype"]] / chip.value("ici_bytes_per_s_one_way")
        n, a, b = p.params["axis"], p.params["src"], p.params["dst"]
        ring, line = min(abs(a - b), n - abs(a - b)), abs(a - b)
        right, wrong = (ring, line) if p.params["wrap"] else (line, ring)
        want = t_bw + right * lat
        assert p.answer.value == pytest.approx(want)
        least = max(LEAST, p.tolerance)
        for slip, value in (("latency left out", t_bw), ("bandwidth left out", right * lat),
                            ("the other hop count", t_bw + wrong * lat)):
            assert abs(value - want) / want > least, f"{p.id}: {slip} gives {value:.3g} s vs {want:.3g} s"


def test_exact_critical_batch_is_beyond_the_shortcut():
    exact = [p for p in _of("critical_batch") if p.params["form"] == "exact"]
    assert len(exact) >= 100
    for p in exact:
        chip, w = CAT.get(p.params["chip"]), DTYPE_BYTES[p.params["weights"]]
        compute = "int8" if p.params["activations"] == p.params["weights"] == "int8" else "bf16"
        shortcut = chip.ridge_flops_per_byte(compute) * w / 2  # B << D, F: intensity = 2·B / w
        miss = abs(shortcut - p.answer.value) / p.answer.value
        assert miss > max(LEAST, p.tolerance), f"{p.id}: the shortcut {shortcut:.1f} is {miss:.1%} off"


def test_transformer_prompts_state_fit_and_attention_convention():
    steps = _of("transformer_step")
    assert len(steps) >= 100
    not_fitting = 0
    for p in steps:
        chip, b = CAT.get(p.params["chip"]), DTYPE_BYTES[p.params["dtype"]]
        kv = p.params["kv_d_model"]
        need = p.params["params"] * b + 2 * p.params["layers"] * p.params["batch"] * p.params["seq"] * kv * b
        fits = need <= chip.hbm_bytes
        assert ("does not fit" in p.prompt) == (not fits), f"{p.id}: needs {need:.3g} B of {chip.hbm_bytes:.3g}"
        not_fitting += not fits
        if p.params["phase"] == "prefill":
            assert "full context" in p.prompt and "not halved for the causal mask" in p.prompt
        assert "Q·Kᵀ and A·V" in p.prompt
    seed = [p for p in steps if p.skill.startswith("transformer_step:v5e:seed-7b")]
    assert seed and all("does not fit" in p.prompt for p in seed)  # the seed's 7B on one v5e stays
    assert not_fitting < len(steps) / 4  # random draws prefer models that fit


def test_softmax_prompts_state_flops_per_element():
    softmax = [p for f in ("intensity", "bound", "floor") for p in _of(f) if p.params.get("op") == "softmax"]
    assert softmax
    for p in softmax:
        per_element = costs.cost("softmax", p.params["shape"], p.params["dtype"]).flops / math.prod(p.params["shape"])
        assert per_element == 5 and "counting 5 FLOPs per element" in p.prompt, p.prompt


def test_redrawn_families_stay_deterministic():
    """The fair-draw loops take every number from the skill's rng: same seed, same problems."""
    families = ["bound", "critical_batch", "interconnect", "transformer_step"]
    first = [p.to_dict() for p in generate(families, count=3, seed=7)]
    registry.cache_clear()
    again = [p.to_dict() for p in generate(families, count=3, seed=7)]
    assert first == again and len(first) > 300
    assert [p.id for p in generate(families, count=3, seed=8)] != [p["id"] for p in first]
