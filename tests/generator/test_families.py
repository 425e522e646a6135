"""Every family generates well-formed problems whose answers agree with independent recomputation."""

import math
import random
import re

import pytest

from generator.model import catalogue, costs, roofline
from generator.problems.generate import FAMILY_NAMES, draw, generate, registry, skills
from generator.model.units import DTYPE_BYTES

CAT = catalogue.load()
ALL = generate(count=4, seed=11)
BY_FAMILY = {f: [p for p in ALL if p.family == f] for f in FAMILY_NAMES}


def test_every_family_generates():
    for family in FAMILY_NAMES:
        assert BY_FAMILY[family], f"no problems for {family}"


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_problems_are_well_formed(family):
    for p in BY_FAMILY[family]:
        assert p.id.startswith(p.skill) and p.skill.startswith(family + ":")
        assert p.prompt and "{" not in p.prompt and "}" not in p.prompt, p.prompt
        assert p.hint and p.solution and all(isinstance(s, str) and s for s in p.solution)
        assert all(" " not in t for t in p.tags) and f"family::{family}" in p.tags
        a = p.answer
        if a.is_choice:
            assert a.choice in a.choices and len(set(a.choices)) == len(a.choices) >= 2
            assert p.tolerance == 0
        else:
            assert math.isfinite(a.value) and a.value >= 0
            assert a.unit in ("s", "B", "FLOP", "FLOP/byte", "FLOP/s", "B/s", "")
            assert 0 < p.tolerance < 1


def test_ids_are_unique_and_stable():
    ids = [p.id for p in ALL]
    assert len(ids) == len(set(ids))
    assert [p.id for p in generate(count=4, seed=11)] == ids


def test_op_families_carry_chip_op_shape_dtype():
    for family in ("intensity", "bound", "floor"):
        for p in BY_FAMILY[family]:
            assert {"chip", "op", "shape", "dtype"} <= set(p.params)
            assert all(isinstance(d, int) for d in p.params["shape"])
            assert p.params["op"] in costs.OPS


def _verdict(p):
    """The verdict recomputed from the params with the roofline, independently of the family code."""
    est = roofline.estimate(CAT.get(p.params["chip"]), costs.cost(p.params["op"], p.params["shape"], p.params["dtype"]))
    return est


@pytest.mark.parametrize("family", ["intensity", "bound", "floor"])
def test_draws_land_on_both_sides_of_each_chips_ridge(family):
    problems = generate(families=[family], count=12, seed=3)
    for chip in CAT.names():
        verdicts = {_verdict(p).bound for p in problems if p.params["chip"] == chip}
        assert verdicts == {"compute", "memory"}, (family, chip, verdicts)


def test_bound_covers_the_seeds_five_ops_plus_embedding_on_every_chip():
    for chip in CAT.names():
        cases = {s.variant for s in skills(["bound"], [chip]) if s.chip == chip}
        assert cases == {"matmul_large", "matmul_skinny", "add", "softmax", "reduce_sum", "embedding"}


def test_answers_match_the_roofline():
    for p in BY_FAMILY["bound"]:
        assert p.answer.choice == _verdict(p).bound
    for p in BY_FAMILY["intensity"]:
        assert p.answer.value == _verdict(p).intensity_flops_per_byte
    for p in BY_FAMILY["floor"]:
        est = _verdict(p)
        want = {"floor": est.floor_s, "t_math": est.t_math_s, "t_comms": est.t_comms_s}[p.params["quantity"]]
        assert p.answer.value == want


def test_ridge_values_and_comparisons():
    for p in BY_FAMILY["ridge"]:
        chip = CAT.get(p.params["chip"])
        if "other" in p.params:
            other = CAT.get(p.params["other"])
            d = p.params["dtype"]
            winner = chip if chip.ridge_flops_per_byte(d) > other.ridge_flops_per_byte(d) else other
            assert p.answer.choice == winner.name
        else:
            peak = float(chip.peak_flops[p.params["dtype"]].value)
            assert p.answer.value == pytest.approx(peak / float(chip.figures["hbm_bytes_per_s"].value))
    v5e = draw("ridge:v5e:bf16", random.Random(0))
    assert round(v5e.answer.value) == 240  # the seed: "about 240 FLOPs per byte"


def test_solutions_cite_their_sources():
    for family in ("ridge", "critical_batch", "lattice", "vmem_fit", "interconnect", "transformer_step"):
        for p in BY_FAMILY[family]:
            text = "\n".join(p.solution)
            assert "retrieved" in text, (family, p.id)


def test_critical_batch_matches_the_scaling_book_rules():
    for chip in CAT.chips:
        r = chip.ridge_flops_per_byte("bf16")
        bf16 = draw(f"critical_batch:{chip.name}:bf16-approx", random.Random(0)).answer.value
        mixed = draw(f"critical_batch:{chip.name}:int8w_bf16a-approx", random.Random(0)).answer.value
        int8 = draw(f"critical_batch:{chip.name}:int8-approx", random.Random(0)).answer.value
        assert bf16 == pytest.approx(r)  # B* ~ ridge
        assert mixed == pytest.approx(r / 2)  # int8 weights, bf16 FLOPs: ridge / 2
        assert int8 == pytest.approx(chip.ridge_flops_per_byte("int8") / 2)


def test_critical_batch_exact_form_is_the_threshold():
    for p in generate(families=["critical_batch"], count=6, seed=5):
        if p.params["form"] != "exact":
            continue
        chip, b_star = CAT.get(p.params["chip"]), p.answer.value
        def bound(b):
            c = costs.matmul(b, p.params["D"], p.params["F"], p.params["activations"], rhs_dtype=p.params["weights"])
            return roofline.estimate(chip, c).bound
        assert bound(math.ceil(b_star)) == "compute"
        assert bound(math.ceil(b_star) - 1) == "memory"


def test_lattice_answers():
    for p in BY_FAMILY["lattice"]:
        sub, lane = {"f32": (8, 128), "bf16": (16, 128), "int8": (32, 128)}[p.params["dtype"]]
        r, c = p.params["block"]
        if p.params["variant"] == "legal":
            assert p.answer.choice == ("yes" if r % sub == 0 and c % lane == 0 else "no")
        else:
            R, C = (int(x) for x in p.answer.choice.split("x"))
            assert R % sub == 0 and C % lane == 0 and R >= r and C >= c
            assert R - sub < r and C - lane < c  # smallest


def test_lattice_legality_draws_both_answers():
    answers = {p.answer.choice for p in generate(families=["lattice"], count=20) if p.params["variant"] == "legal"}
    assert answers == {"yes", "no"}


def test_vmem_fit_footprint_and_both_verdicts():
    problems = generate(families=["vmem_fit"], count=30, seed=2)
    assert {p.answer.choice for p in problems if p.params["variant"] == "fits"} == {"yes", "no"}
    for p in problems:
        bm, bk, bn = p.params["block"]
        need = (2 * (bm * bk + bk * bn) + bm * bn) * DTYPE_BYTES[p.params["dtype"]]
        vmem = CAT.get(p.params["chip"]).value("vmem_bytes")
        if p.params["variant"] == "bytes":
            assert p.answer.value == need
        else:
            assert p.answer.choice == ("yes" if need <= vmem else "no")
    assert {s.chip for s in skills(["vmem_fit"])} == {c.name for c in CAT.chips if c.value("vmem_bytes")}


def test_interconnect_hops_and_times():
    problems = generate(families=["interconnect"], count=10, seed=4)
    for p in problems:
        chip = CAT.get(p.params["chip"])
        if p.params["variant"] == "link":
            continue
        rows, cols = p.params["shape"]
        nbytes = rows * cols * DTYPE_BYTES[p.params["dtype"]]
        if p.params["variant"] == "ici":
            n, a, b = p.params["axis"], p.params["src"], p.params["dst"]
            hops = min(abs(a - b), n - abs(a - b)) if p.params["wrap"] else abs(a - b)
            want = nbytes / chip.value("ici_bytes_per_s_one_way") + hops * CAT.facts["ici_hop_latency_s"].value
        else:
            want = nbytes / chip.value(f"{p.params['variant']}_bytes_per_s")
        assert p.answer.value == pytest.approx(want)
    assert {p.params["wrap"] for p in problems if p.params["variant"] == "ici"} == {True, False}


def test_interconnect_link_inside_a_pod_is_ici():
    links = {p.answer.choice for p in generate(families=["interconnect"], chips=["v5e"], count=8)
             if p.params["variant"] == "link"}
    assert links == {"ICI", "DCN", "PCIe"}


def test_transformer_step_includes_the_seeds_fixed_case():
    p = draw("transformer_step:v5e:seed-7b-prefill", random.Random(0))
    assert (p.params["params"], p.params["batch"], p.params["seq"], p.params["chip"]) == (7_000_000_000, 8, 4096, "v5e")
    from generator.problems.generate import unseeded_id
    assert unseeded_id(p.id) in {unseeded_id(q.id) for q in generate(families=["transformer_step"], chips=["v5e"])}
    decode = draw("transformer_step:v5e:seed-7b-decode", random.Random(0))
    assert "decode" in decode.prompt and decode.answer.value < p.answer.value


def test_vocabulary_covers_the_working_vocabulary():
    terms = {p.answer.choice for p in BY_FAMILY["vocabulary"] if p.params.get("card", "").startswith("term-")}
    assert {"MXU", "VPU", "VMEM", "HBM", "SMEM", "ICI", "DCN", "tiling lattice", "megacore"} <= terms
    where = {p.answer.choice for p in BY_FAMILY["vocabulary"] if p.params.get("card", "").startswith("where-")}
    assert where == {"HBM", "VMEM", "SMEM"}


def test_vocabulary_definitions_quote_catalogue_figures():
    mxu = draw("vocabulary:term-mxu", random.Random(0))
    assert "256x256 on v6e" in mxu.prompt and "128x128" in mxu.prompt
    vmem = draw("vocabulary:term-vmem", random.Random(0))
    assert "128 MiB on TPU v5e" in vmem.prompt and "22x" in vmem.prompt
    lattice = draw("vocabulary:term-lattice", random.Random(0))
    assert "(8, 128)" in lattice.prompt and "(16, 128)" in lattice.prompt


def test_can_you_items_are_cards():
    from generator.problems.generate import CAN_YOU

    assert [n for n, _, _ in CAN_YOU] == list(range(1, 8))
    seed_words = ["ridge point", "compute-bound or memory-bound", "VMEM versus HBM versus SMEM", "(8, 128)",
                  "step-time floor", "more than 2x", "ICI and DCN"]
    for (n, text, skill_id), words in zip(CAN_YOU, seed_words):
        assert words in text
        p = draw(skill_id, random.Random(0))
        assert p.family == "vocabulary" and p.skill == skill_id and p.solution[0] == f"Can you: {text}"
        assert p.params["can_you"] == n
    assert draw("vocabulary:can-you-7", random.Random(0)).answer.choice == "ICI"
    assert draw("vocabulary:can-you-4", random.Random(0)).answer.choice == "no"  # (8,128) is not a bf16 tile
    seed_7b = draw("vocabulary:can-you-5", random.Random(0))
    assert seed_7b.answer.value == draw("transformer_step:v5e:seed-7b-prefill", random.Random(0)).answer.value


def test_every_skill_draws():
    rng = random.Random(1)
    for s in registry().all_skills:
        p = draw(s.id, rng)
        assert p.skill == s.id
        assert re.fullmatch(r"[a-z_]+(:[A-Za-z0-9_.\-]+)+", s.id), s.id



def test_skill_descriptions_take_an_before_a_vowel():
    """The Anki Skill field quotes the description: "floor of an elementwise add", never "of a elementwise"."""
    from generator.export import card
    from generator.export.variants import SkillNote

    wrong = [s.description for s in skills() if re.search(r"\ba [aeiou]", s.description, re.IGNORECASE)]
    assert not wrong, wrong
    (add,) = [s for s in skills(["floor"], ["v6e"]) if s.id == "floor:v6e:add"]
    field = card.skill_html(SkillNote(add.id, add.family, add.description, add.tags, ()))
    assert "floor of an elementwise add on TPU v6e" in field
