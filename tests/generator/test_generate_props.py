"""Properties of the generator: seeded, reproducible, selection-independent, and sound maths."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import catalogue, costs, roofline
from generator.problems.generate import (FAMILY_NAMES, MAX_PROBLEMS, TooManyProblemsError, UnknownFamilyError,
                                UnknownSkillError, draw, generate, registry, skills)
from generator.problems.problem import Problem

CAT = catalogue.load()
SKILL_IDS = [s.id for s in registry().all_skills]
FAST = settings(max_examples=60)


@FAST
@given(st.sampled_from(SKILL_IDS), st.integers(0, 2**32))
def test_draw_is_reproducible_and_round_trips(skill_id, seed):
    a = draw(skill_id, random.Random(seed))
    b = draw(skill_id, random.Random(seed))
    assert a == b
    assert Problem.from_dict(a.to_dict()) == a


@pytest.mark.slow  # 15 draws of every family's problems: ~10 s
@settings(max_examples=15)
@given(st.integers(0, 10**6), st.lists(st.sampled_from(FAMILY_NAMES), min_size=1, max_size=3, unique=True))
def test_a_skills_problems_do_not_depend_on_the_selection(seed, families):
    everything = {p.id: p for p in generate(count=2, seed=seed)}
    for p in generate(families=families, count=2, seed=seed):
        assert everything[p.id] == p


@settings(max_examples=10)
@given(st.integers(0, 10**6))
def test_same_seed_same_problems_other_seed_other_draws(seed):
    a = generate(families=["bound", "floor"], chips=["v5e"], count=3, seed=seed)
    assert a == generate(families=["bound", "floor"], chips=["v5e"], count=3, seed=seed)
    b = generate(families=["bound", "floor"], chips=["v5e"], count=3, seed=seed + 1)
    assert [p.id for p in a] != [p.id for p in b]


def test_count_is_per_skill_and_distinct():
    chosen = skills(["bound"], ["v6e"])
    problems = generate(families=["bound"], chips=["v6e"], count=3)
    assert len(problems) == 3 * len(chosen)
    assert len({p.id for p in problems}) == len(problems)
    # A skill with a single possible problem gives one, however many are asked for.
    assert len(generate(families=["ridge"], chips=["v5e"], count=5)) < 5 * len(skills(["ridge"], ["v5e"]))


def test_chip_filter_keeps_chip_independent_skills():
    chosen = skills(chips=["h100"])
    assert {s.chip for s in chosen} == {"h100", None}
    assert any(s.family == "lattice" for s in chosen) and any(s.family == "vocabulary" for s in chosen)
    assert skills(chips=["Trillium"]) == skills(chips=["v6e"])  # aliases resolve


def test_bad_selection():
    with pytest.raises(UnknownFamilyError, match="known families: ridge, intensity"):
        generate(families=["roofs"])
    with pytest.raises(catalogue.UnknownChipError):
        generate(chips=["v9"])
    with pytest.raises(UnknownSkillError):
        draw("ridge:v9:bf16", random.Random(0))
    with pytest.raises(ValueError):
        generate(count=0)
    with pytest.raises(TooManyProblemsError):
        generate(count=MAX_PROBLEMS)


@FAST
@given(st.sampled_from(CAT.chips), st.sampled_from(["bf16", "int8"]),
       st.integers(1, 1 << 14), st.integers(1, 1 << 15), st.integers(1, 1 << 15))
def test_critical_batch_splits_the_roofline(chip, dtype, b, d, f):
    """Whatever the shapes, B >= B* (exact form) is exactly when the roofline says compute-bound."""
    from generator.problems.families.critical_batch import critical_batch

    params = {"D": d, "F": f, "activations": dtype, "weights": dtype}
    b_star = critical_batch(chip.ridge_flops_per_byte(dtype), params, "exact")
    est = roofline.estimate(chip, costs.matmul(b, d, f, dtype))
    if math.isinf(b_star):
        assert est.bound == "memory"
    elif abs(b - b_star) > 1e-6 * b_star:
        assert (est.bound == "compute") == (b > b_star)


@FAST
@given(st.sampled_from([s for s in SKILL_IDS if s.startswith("floor:")]), st.integers(0, 2**32))
def test_floor_is_the_max_of_its_terms(skill_id, seed):
    p = draw(skill_id, random.Random(seed))
    est = roofline.estimate(CAT.get(p.params["chip"]), costs.cost(p.params["op"], p.params["shape"], p.params["dtype"]))
    assert est.floor_s == max(est.t_math_s, est.t_comms_s) <= est.upper_s
    assert p.answer.value in (est.floor_s, est.t_math_s, est.t_comms_s)


@FAST
@given(st.sampled_from([s for s in SKILL_IDS if s.startswith("lattice:pad")]), st.integers(0, 2**32))
def test_lattice_padding_is_the_smallest_legal_block(skill_id, seed):
    p = draw(skill_id, random.Random(seed))
    sub, lane = {"f32": 8, "bf16": 16, "int8": 32}[p.params["dtype"]], 128
    r, c = p.params["block"]
    assert r % sub or c % lane  # padding is asked only of illegal blocks
    R, C = (int(x) for x in p.answer.choice.split("x"))
    legal = [(x, y) for x, y in (tuple(int(v) for v in ch.split("x")) for ch in p.answer.choices)
             if x % sub == 0 and y % lane == 0 and x >= r and y >= c]
    assert (R, C) == min(legal, key=lambda xy: xy[0] * xy[1])
