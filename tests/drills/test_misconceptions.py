"""A classic mistake is never graded right, and the feedback names it.

Each case is a worked example: the key and the mistaken answer are computed here
by hand from the chip's published figures (not by the misconception code), then
graded by ``drills.quiz.assess`` exactly as the quiz and ``drill check`` grade them.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from drills.quiz import assess
from drills.cli import cli
from generator.problems import generate
from generator.problems.families.mistakes import wrong_answers
from generator.problems.misconceptions import BY_ID, CATALOGUE
from generator.model.units import fmt

V5E_PEAK, V5E_INT8, V5E_BW = 1.97e14, 3.94e14, 8.2e11
H100_PEAK, H100_BW = 9.9e14, 3.4e12


def solve(skill_id: str, **params):
    r = generate.registry()
    skill = r.skill(skill_id)
    return r.solve(skill, params)


def check(problem, text: str, seconds: float = 30.0) -> assess.Outcome:
    return assess.assess(problem, text, generate.grading_bands(problem.family), seconds, 0)


def assert_named(problem, text: str, misconception: str) -> None:
    outcome = check(problem, text)
    assert outcome.status == "graded", outcome.feedback
    assert outcome.correct is False and outcome.grade.rating.name == "Again", outcome.feedback
    named = [m.misconception.id for m in outcome.matches]
    assert misconception in named, outcome.feedback
    assert f"'{misconception}'" in outcome.feedback and BY_ID[misconception].name in outcome.feedback


def op(family: str, chip: str, case: str, shape, dtype="bf16", **extra):
    return solve(f"{family}:{chip}:{case}" + (f"-{extra['quantity']}" if extra.get("quantity", "floor") != "floor"
                                              else ""),
                 chip=chip, op="matmul" if "matmul" in case else case, case=case, shape=list(shape), dtype=dtype,
                 **extra)


def test_intensity_elements_output_and_macs() -> None:
    n = 2048
    p = op("intensity", "v5e", "matmul_large", (n, n, n))
    key = 2 * n**3 / (3 * n * n * 2)  # 682.7 FLOPs/byte
    assert p.answer.value == pytest.approx(key)
    assert check(p, f"{key:.1f}").correct  # the prompt names FLOPs per byte: a bare number is read in it
    assert_named(p, f"{2 * n**3 / (3 * n * n):.1f}", "elements-not-bytes")      # 1365.3: elements, not bytes
    assert_named(p, f"{2 * n**3 / (2 * n * n * 2):.1f}", "forgot-output-write")  # 1024: inputs only
    assert_named(p, f"{n**3 / (3 * n * n * 2):.1f}", "macs-not-flops")          # 341.3: MACs


def test_floor_sum_not_max_unit_slip_and_macs() -> None:
    p = op("floor", "v5e", "matmul_large", (4096, 1024, 1024), quantity="floor")
    t_math = 2 * 4096 * 1024 * 1024 / V5E_PEAK                            # 43.6 µs
    t_comms = (4096 * 1024 * 2 + 1024 * 1024 * 2 + 4096 * 1024 * 2) / V5E_BW  # 23.0 µs
    assert p.answer.value == pytest.approx(max(t_math, t_comms))
    assert_named(p, f"{(t_math + t_comms) * 1e6:.1f} us", "sum-not-max")        # 66.6 µs
    assert_named(p, f"{t_math * 1e6:.1f} ms", "unit-slip-1000")                 # 43.6 ms
    assert_named(p, f"{max(t_math / 2, t_comms) * 1e6:.2f} us", "macs-not-flops")


def test_floor_sparse_peak_on_a_gpu() -> None:
    n = 4096
    p = op("floor", "h100", "matmul_large", (n, n, n), quantity="floor")
    dense = 2 * n**3 / H100_PEAK  # 139 µs, compute-bound
    assert p.answer.value == pytest.approx(max(dense, 3 * n * n * 2 / H100_BW))
    assert_named(p, f"{dense / 2 * 1e6:.1f} us", "sparse-peak")


def test_a_flipped_bound_verdict_names_what_the_verdict_follows_from() -> None:
    """Counting elements would flip this verdict, and so might other slips: a verdict has no numeric slip
    to name, so the feedback names the one comparison that decides it (intensity 62.1 < ridge 240.2)."""
    p = op("bound", "v5e", "matmul_skinny", (128, 8192, 8192))
    bytes_ = 128 * 8192 * 2 + 8192 * 8192 * 2 + 128 * 8192 * 2
    assert 2 * 128 * 8192 * 8192 / bytes_ < V5E_PEAK / V5E_BW < 2 * 128 * 8192 * 8192 / (bytes_ / 2)
    assert p.answer.choice == "memory"
    assert_named(p, "compute", "wrong-verdict")
    (named,) = check(p, "compute").matches
    assert f"{2 * 128 * 8192 * 8192 / bytes_:.1f} < {V5E_PEAK / V5E_BW:.1f}" in named.step


def test_ridge_wrong_dtype_macs_and_sparse() -> None:
    p = solve("ridge:v5e:bf16", chip="v5e", dtype="bf16")
    assert p.answer.value == pytest.approx(V5E_PEAK / V5E_BW)
    assert_named(p, f"{V5E_INT8 / V5E_BW:.1f} FLOPs/byte", "wrong-dtype-peak")  # 480.5
    assert_named(p, f"{V5E_PEAK / 2 / V5E_BW:.1f} FLOPs/byte", "macs-not-flops")  # 120.1
    gpu = solve("ridge:h100:bf16", chip="h100", dtype="bf16")
    assert_named(gpu, f"{2 * H100_PEAK / H100_BW:.1f} FLOPs/byte", "sparse-peak")  # 582.4


def cb(chip: str, mode: str, form: str, act: str, w: str, D: int, F: int):
    return solve(f"critical_batch:{chip}:{mode}-{form}", chip=chip, op="matmul", mode=mode, form=form,
                 activations=act, weights=w, D=D, F=F)


def test_critical_batch_int8_weights_and_the_shortcut() -> None:
    ridge = V5E_PEAK / V5E_BW
    p = cb("v5e", "int8w_bf16a", "approx", "bf16", "int8", 16384, 28672)
    assert p.answer.value == pytest.approx(ridge / 2)          # 120: the scaling book's ridge / 2
    assert_named(p, f"{ridge:.0f}", "wrong-dtype-size")         # 240: int8 weights counted as bf16
    D = F = 4096
    exact = cb("v5e", "bf16", "exact", "bf16", "bf16", D, F)
    b_star = ridge * D * F * 2 / (2 * D * F - ridge * (2 * D + 2 * F))  # 272.2
    assert exact.answer.value == pytest.approx(b_star)
    assert_named(exact, f"{ridge:.1f}", "shortcut-not-exact")   # 240.2: B << D where the exact count was asked


def test_lattice_packing_ignored() -> None:
    p = solve("lattice:legal-bf16", variant="legal", dtype="bf16", block=[8, 128])
    assert p.answer.choice == "no"  # bf16 packs (16, 128)
    assert_named(p, "yes", "packing-ignored")


def test_vmem_forgot_double_buffering_and_elements() -> None:
    bm, bk, bn = 2048, 128, 512
    p = solve("vmem_fit:v5e:bytes", chip="v5e", op="matmul", variant="bytes", dtype="bf16",
              block=[bm, bk, bn], buffers=2)
    assert p.answer.value == 2 * (bm * bk + bk * bn) * 2 + bm * bn * 2
    assert_named(p, f"{(bm * bk + bk * bn) * 2 + bm * bn * 2} B", "forgot-buffers")
    assert_named(p, f"{2 * (bm * bk + bk * bn) + bm * bn} B", "elements-not-bytes")


def test_transformer_causal_halving_and_sum_not_max() -> None:
    P, L, D, B, S = 7_000_000_000, 32, 4096, 8, 4096
    p = solve("transformer_step:v5e:prefill", chip="v5e", op="transformer_prefill", shape=[B, S], dtype="bf16",
              model="7B", params=P, layers=L, d_model=D, kv_d_model=D, phase="prefill", batch=B, seq=S)
    attention = L * B * (2 * S * D * S + 2 * S * S * D)  # Q·Kᵀ and A·V over the full context
    flops = 2 * P * B * S + attention
    assert p.answer.value == pytest.approx(flops / V5E_PEAK)  # compute-bound: 2.69 s
    assert_named(p, f"{(2 * P * B * S + attention / 2) / V5E_PEAK:.3f} s", "causal-halving")
    assert_named(p, f"{flops / 2 / V5E_PEAK:.3f} s", "macs-not-flops")
    # A short prefill where T_math and T_comms are close: adding them is far off the max.
    B, S = 1, 128
    short = solve("transformer_step:v5e:prefill", chip="v5e", op="transformer_prefill", shape=[B, S],
                  dtype="bf16", model="7B", params=P, layers=L, d_model=D, kv_d_model=D, phase="prefill",
                  batch=B, seq=S)
    flops = 2 * P * B * S + L * B * (4 * S * D * S)
    bytes_ = P * 2 + 2 * L * B * S * D * 2 + 2 * L * B * S * D * 2
    assert short.answer.value == pytest.approx(max(flops / V5E_PEAK, bytes_ / V5E_BW))
    assert_named(short, f"{(flops / V5E_PEAK + bytes_ / V5E_BW) * 1e3:.2f} ms", "sum-not-max")


def test_interconnect_hops_latency_and_bidirectional() -> None:
    r = generate.registry()
    one_way = float(r.catalogue.get("v5p").figure("ici_bytes_per_s_one_way").value)
    latency = float(r.catalogue.facts["ici_hop_latency_s"].value)
    rows, cols = 8, 128  # a small f32 array: latency and hops decide the answer
    p = solve("interconnect:v5p:ici", chip="v5p", variant="ici", dtype="f32", shape=[rows, cols], axis=16,
              src=1, dst=15, wrap=True)
    nbytes = rows * cols * 4
    assert p.answer.value == pytest.approx(nbytes / one_way + 2 * latency)  # ring: 2 hops
    assert_named(p, f"{(nbytes / one_way + 14 * latency) * 1e6:.3f} us", "wrong-hops")  # a line: 14 hops
    assert_named(p, f"{nbytes / one_way * 1e6:.4f} us", "forgot-latency")
    big = solve("interconnect:v5p:ici", chip="v5p", variant="ici", dtype="f32", shape=[8192, 8192], axis=16,
                src=1, dst=3, wrap=True)
    big_bytes = 8192 * 8192 * 4
    assert_named(big, f"{(big_bytes / (2 * one_way) + 2 * latency) * 1e3:.4f} ms", "one-way-vs-bidirectional")


def test_vocabulary_term_confusion() -> None:
    p = solve("vocabulary:term-mxu", card="term-mxu")
    assert p.answer.choice == "MXU"
    assert_named(p, "VPU", "term-confusion")


def test_every_named_wrong_answer_of_every_family_is_graded_wrong() -> None:
    """Over generated problems of every family: each misconception's answer (as a learner would type
    it, through the one formatter) is never correct, and is diagnosed."""
    problems = generate.generate(count=2, seed=3)
    seen_families, checked = set(), 0
    for p in problems:
        for wrong in wrong_answers(p):
            text = wrong.value if p.answer.is_choice else f"{float(wrong.value)!r} {p.answer.unit}".strip()
            outcome = check(p, text)
            assert outcome.status == "graded" and outcome.correct is False, (p.id, wrong, outcome.feedback)
            assert outcome.misconception is not None, (p.id, wrong)
            seen_families.add(p.family)
            checked += 1
    assert seen_families == set(generate.FAMILY_NAMES) and checked > 1000


def test_the_key_itself_is_never_diagnosed() -> None:
    for p in generate.generate(count=1, seed=5):
        text = p.answer.choice if p.answer.is_choice else fmt(float(p.answer.value), p.answer.unit)
        outcome = check(p, text.replace("FLOPs/byte", "FLOP/byte"))
        assert outcome.correct and outcome.misconception is None, (p.id, outcome.feedback)


def test_drill_misconceptions_lists_the_catalogue() -> None:
    result = CliRunner().invoke(cli, ["misconceptions", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    ids = {m["id"] for m in data}
    assert ids == {m.id for m in CATALOGUE}
    assert {"elements-not-bytes", "forgot-output-write", "sparse-peak", "sum-not-max", "wrong-dtype-peak",
            "macs-not-flops", "gb-gib", "unit-slip-1000", "one-way-vs-bidirectional", "wrong-hops",
            "causal-halving", "shortcut-not-exact"} <= ids
    assert all(set(m) == {"id", "name", "families", "explanation"} and m["families"] for m in data)


def test_collective_one_way_bandwidth_for_a_ring_is_named() -> None:
    """v5e, AllGather of bf16[8192,16384] over the 16-chip axis of a 16x16 slice (wraparound: a ring).
    The key is V / W_bidi (the scaling book's ring); using the one-way figure doubles it."""
    one_way, bidi = 4.5e10, 9.0e10
    V = 8192 * 16384 * 2
    p = solve("collective:v5e:all_gather", chip="v5e", variant="all_gather", op="all_gather", slice="16x16",
              over=[0], dtype="bf16", shape=[8192, 16384])
    assert p.answer.value == pytest.approx(V / bidi)
    assert_named(p, f"{V / one_way * 1e3:.3f} ms", "one-way-vs-bidirectional")
    assert_named(p, f"{V / 2 / bidi * 1e3:.3f} ms", "elements-not-bytes")


def _ridge_problems():
    return [p for p in generate.generate(families=["ridge"], count=1, seed=0) if not p.answer.is_choice]


def test_the_closest_named_mistake_comes_first() -> None:
    """Where an answer lands within tolerance of several named mistakes, the nearest is named first."""
    from generator.problems.families.mistakes import diagnose_all
    from generator.problems.misconceptions import rel as _rel

    several = 0
    for p in _ridge_problems():
        for wrong in wrong_answers(p):
            given = float(wrong.value)
            found = diagnose_all(p, given)
            distances = [_rel(given, float(w.value)) for w in found]
            assert distances == sorted(distances), (p.id, given, [w.misconception.id for w in found])
            several += len(found) > 1 and distances[0] < distances[-1]
    assert several  # the case the order is for: more than one candidate, at different distances


def test_a_problem_without_a_tolerance_of_its_own_reads_five_percent() -> None:
    """Tolerance 0 means the 5% default: a GB/GiB slip (7.4% off) is named, 4% off is the key."""
    import dataclasses

    from generator.problems.families.mistakes import diagnose_all
    from generator.problems.misconceptions import GIB_PER_GB

    (p, *_) = [p for p in _ridge_problems() if any(w.misconception.id == "gb-gib" for w in wrong_answers(p))]
    untoleranced = dataclasses.replace(p, tolerance=0.0)
    key = p.answer.number
    assert [w.misconception.id for w in diagnose_all(untoleranced, key * GIB_PER_GB)][:1] == ["gb-gib"]
    assert diagnose_all(untoleranced, key * 1.04) == []
