"""Classic wrong answers are never graded right and the feedback names them (``bench/bench_wrong_answers.py``
on a small fixed sample), plus the named cases: a unit slip of 1000 on a collective, the DCN factor of 2 that
another edition's figure gives, the generic PCIe rate on a v6e, a wrong verdict, a Can-you card."""

from __future__ import annotations

import pytest

from bench import bench_wrong_answers as bench
from drills.quiz import assess
from generator.problems import generate
from generator.problems.families import mistakes


@pytest.fixture(scope="module")
def graded():
    return [bench.grade(s) for s in bench.samples(500, seed=7)]


def _check(problem_id: str, text: str) -> assess.Outcome:
    p = generate.problem(problem_id)
    return assess.assess(p, text, generate.grading_bands(p.family))


def test_a_sample_of_classic_wrong_answers_is_never_right_and_is_named(graded):
    assert len(graded) == 500 and {g.sample.family for g in graded} == set(generate.FAMILY_NAMES)
    right = [f"{g.sample.problem.id} {g.sample.value!r} ({g.sample.kind})" for g in graded if g.right]
    assert right == []
    assert sum(g.first for g in graded) >= 0.97 * len(graded)
    unnamed = [f"{g.sample.problem.id} {g.sample.value!r} ({g.sample.kind})" for g in graded if not g.anywhere]
    assert len(unnamed) <= 0.01 * len(graded), unnamed


def test_the_sample_holds_every_new_kind(graded):
    kinds = {g.sample.kind for g in graded}
    assert {"unit slip of 1000", "bf16 counted as 4 bytes", "bits for bytes", "one operand's bytes",
            "ridge inverted", "per chip for per slice", "6·P training FLOPs", "wrong choice"} <= kinds


def test_a_unit_slip_of_1000_on_a_collective_is_named():
    out = _check("collective:v5e:all_gather:all_gather-8x16-o1-1024x128-bf16@fb768a1e", "8 ms")
    assert out.correct is False and [m.misconception.id for m in out.matches][:1] == ["unit-slip-1000"]


def test_the_dcn_factor_of_2_is_graded_wrong_and_names_the_figure():
    """On a TPU7x the February 2025 edition's DCN per chip (per host / 4) is half today's: the prompt states
    today's, so the doubled ridge is a slip, not the other edition's right answer."""
    p = generate.problem("host_link:tpu7x:ridge_dcn@af0f4efe")
    assert p.also_right == () and "1.25e10 B/s per chip" in p.prompt
    out = _check(p.id, "368000")
    assert out.correct is False and out.matches[0].misconception.id == "not-the-stated-figure"
    assert "6.25e9" in out.matches[0].step


def test_the_other_edition_is_still_right_where_it_is_no_factor_of_2():
    out = _check("host_link:v6e:critical_batch_pcie", "61,000")  # the book's tpus Q3: PCIe 1.5e10 on a v6e
    assert out.correct is True


def test_the_generic_pcie_rate_on_a_v6e_is_named_as_that_figure():
    out = _check("host_link:v6e:critical_batch_pcie", "57,500")  # 9.2e14 / 1.6e10: the generic PCIe rate
    assert out.correct is False
    first = out.matches[0]
    assert first.misconception.id == "not-the-stated-figure" and "1.6e10" in first.step and "3.2e10" in first.step


def test_a_wrong_verdict_is_blamed_on_one_thing_what_it_follows_from():
    p = next(p for p in generate.generate(families=["bound"], count=1, seed=3) if p.params["op"] == "matmul")
    other = next(c for c in p.answer.choices if c != p.answer.choice)
    out = assess.assess(p, other, generate.grading_bands(p.family))
    assert [m.misconception.id for m in out.matches] == ["wrong-verdict"]
    assert "intensity" in out.matches[0].step and "ridge" in out.matches[0].step


def test_a_two_way_choice_with_several_numeric_mistakes_names_its_deciding_line():
    """A fits/does-not-fit card whose slips all give the other answer names the comparison, once."""
    for p in generate.generate(families=["vmem_fit"], count=2, seed=0):
        if not p.answer.is_choice:
            continue
        other = next(c for c in p.answer.choices if c != p.answer.choice)
        found = [w for w in mistakes.wrong_answers(p) if w.value == other]
        assert len({w.misconception.id for w in found}) <= 1, p.id


def test_a_can_you_card_names_what_its_skills_own_card_names():
    card = next(p for p in generate.generate(families=["vocabulary"], count=1, seed=0)
                if p.params.get("check_skill", "").startswith("transformer_step"))
    own = generate.registry().solve(generate.registry().skill(card.params["check_skill"]),
                                    {k: v for k, v in card.params.items() if k not in ("can_you", "check_skill")})
    assert own.answer.number == card.answer.number
    slip = card.answer.number * 1000
    mine = [w.misconception.id for w in mistakes.diagnose_all(card, slip)]
    theirs = [w.misconception.id for w in mistakes.diagnose_all(own, slip)]
    assert mine == theirs and "unit-slip-1000" in mine
