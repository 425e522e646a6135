"""The miss-reason catalogue: each reason's test against an op's evidence, and judging explanations."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generator import miss_reasons as mr

CONTRACT_IDS = {"learner-arithmetic", "fixed-cost", "below-peak-bandwidth", "below-peak-compute",
                "extra-traffic", "less-traffic", "emulated-dtype"}


def evidence(**over) -> mr.OpEvidence:
    """An add of 1024x1024 bf16 on a GPU-like device: 6.29 MB at 4.8 TB/s = 1.31 µs floor."""
    base = dict(op="add", bound="memory", platform="gpu", dtype="bf16", predicted_seconds=1.31e-6,
                measured_seconds=1.4e-6, floor_seconds=6291456 / 4.8e12, model_flops=1048576.0,
                model_bytes=6291456.0, xla_flops=1048576.0, xla_bytes=6291456.0, fixed_cost_seconds=2e-6,
                attained_bytes_per_s=4.0e12, attained_flops_per_s=7.0e14, peak_bytes_per_s=4.8e12,
                peak_flops_per_s=9.89e14, emulated_dtype=False, prediction_text="1.31us", cost_op="add",
                shape=(1024, 1024))
    base.update(over)
    return mr.OpEvidence(**base)


def test_catalogue_has_the_contract_ids_in_order_with_one_line_each():
    assert CONTRACT_IDS <= set(mr.BY_ID)
    for reason in mr.REASONS:
        assert reason.meaning and "\n" not in reason.meaning
        assert reason.evidence and "\n" not in reason.evidence
        assert set(reason.to_dict()) == {"id", "meaning", "evidence"}
    with pytest.raises(KeyError, match="unknown miss reason"):
        mr.find("vibes")


def test_fixed_cost_is_accepted_with_the_deciding_numbers():
    # The example: a trivial op takes 38 µs, the add's floor is 21 µs, the add measures 55 µs.
    ev = evidence(floor_seconds=21e-6, predicted_seconds=21e-6, measured_seconds=55e-6, fixed_cost_seconds=38e-6)
    j = mr.judge("the kernel launch dominates this small add", ev)
    assert j.accepted and j.reasons == ["fixed-cost"]
    assert "38 µs" in j.why and "21 µs" in j.why
    # The same words when the trivial op is far cheaper than the floor: contradicted, with a pointer.
    j2 = mr.judge("launch", dataclasses.replace(ev, fixed_cost_seconds=1e-6))
    assert not j2.accepted and "look at:" in j2.why and "1 µs" in j2.why
    # A fixed cost below the floor cannot dominate, even where floor + fixed cost is within 2x.
    below = mr.find("fixed-cost").test(dataclasses.replace(ev, measured_seconds=50e-6, fixed_cost_seconds=10e-6))
    assert not below.supported and "below the floor" in below.why


@pytest.mark.parametrize("shrug", ["overhead", "Overhead.", "noise", "x", "", "  ", "idk", "no idea"])
def test_shrugs_are_refused(shrug):
    ev = evidence(measured_seconds=60e-6, fixed_cost_seconds=50e-6)  # fixed-cost would be supported
    assert "fixed-cost" in mr.supported_reasons(ev)
    j = mr.judge(shrug, ev)
    assert not j.accepted and j.why.startswith("refused") and "look at:" in j.why


def test_learner_arithmetic_names_the_misconception_that_gives_the_learners_number():
    ev = evidence()
    slip = dataclasses.replace(ev, predicted_seconds=ev.floor_seconds * 1000)  # ms for µs
    finding = mr.find("learner-arithmetic").test(slip)
    assert finding.supported and "unit slip of 1000" in finding.why
    no_write = evidence(predicted_seconds=ev.floor_seconds * 2 / 3 / 2.5, measured_seconds=ev.floor_seconds)
    # 2/3 of the bytes (output left out) then a 2.5x slip: a miss, matched by no method
    assert mr.find("learner-arithmetic").test(no_write).supported
    # the floor itself is 10x off: not the learner's arithmetic
    far = evidence(predicted_seconds=ev.floor_seconds, measured_seconds=ev.floor_seconds * 10)
    assert not mr.find("learner-arithmetic").test(far).supported


def test_emulated_dtype_and_traffic_reasons():
    cpu = evidence(platform="cpu", emulated_dtype=True, measured_seconds=1.31e-5)
    assert "emulated-dtype" in mr.supported_reasons(cpu)
    assert mr.judge("bf16 gets upcast to f32 here", cpu).accepted
    assert "emulated-dtype" not in mr.supported_reasons(dataclasses.replace(cpu, emulated_dtype=False))
    assert "emulated-dtype" not in mr.supported_reasons(dataclasses.replace(cpu, emulated_dtype=None))
    two_pass = evidence(measured_seconds=4e-6, fixed_cost_seconds=None, xla_bytes=2 * 6291456.0)
    assert "extra-traffic" in mr.supported_reasons(two_pass)
    assert "extra-traffic" not in mr.supported_reasons(dataclasses.replace(two_pass, xla_bytes=None))
    cached = evidence(measured_seconds=0.3e-6)  # beat the memory roofline: fewer HBM bytes than counted
    assert mr.supported_reasons(cached) == ["less-traffic"]


def test_below_peak_needs_the_right_bound_and_no_dominating_fixed_cost():
    slow = evidence(measured_seconds=5e-6, fixed_cost_seconds=0.5e-6)
    assert "below-peak-bandwidth" in mr.supported_reasons(slow)
    assert "below-peak-compute" not in mr.supported_reasons(slow)
    assert "below-peak-bandwidth" not in mr.supported_reasons(dataclasses.replace(slow, fixed_cost_seconds=4e-6))
    mm = evidence(op="matmul", bound="compute", model_flops=2 * 4096**3, model_bytes=3 * 2 * 4096**2,
                  floor_seconds=2 * 4096**3 / 9.89e14, predicted_seconds=2 * 4096**3 / 9.89e14,
                  measured_seconds=4 * 2 * 4096**3 / 9.89e14, cost_op="matmul", shape=(4096, 4096, 4096))
    assert "below-peak-compute" in mr.supported_reasons(mm)


def test_read_reasons_maps_ids_and_words():
    for rid in mr.BY_ID:
        assert mr.read_reasons(rid) == [rid]
        assert mr.read_reasons(f"I think {rid.replace('-', ' ')}.") == [rid]
    assert mr.read_reasons("dispatch cost") == ["fixed-cost"]
    assert mr.read_reasons("it was upcast") == ["emulated-dtype"]
    assert mr.read_reasons("overhead") == []


def test_a_shotgun_of_reasons_is_refused():
    ev = evidence(measured_seconds=60e-6, fixed_cost_seconds=50e-6)
    j = mr.judge("", ev, reasons=["fixed-cost", "less-traffic", "extra-traffic", "emulated-dtype"])
    assert not j.accepted and "guesses" in j.why
    assert mr.judge("", ev, reasons=["fixed-cost"]).accepted
    assert not mr.judge("overhead", ev, reasons=["fixed-cost"]).accepted  # a shrug beside an id: still a shrug


# --- properties -------------------------------------------------------------------------------------

positive = st.floats(min_value=1e-9, max_value=1e-1, allow_nan=False)
rates = st.floats(min_value=1e6, max_value=1e16, allow_nan=False)
counts = st.floats(min_value=1.0, max_value=1e13, allow_nan=False)


@st.composite
def evidences(draw):
    flops, nbytes = draw(counts), draw(counts)
    peak_f, peak_b = draw(rates), draw(rates)
    floor = max(flops / peak_f, nbytes / peak_b)
    assume(floor > 0)
    return mr.OpEvidence(
        op=draw(st.sampled_from(["matmul", "add", "softmax", "reduce_sum", "skinny_matmul"])),
        bound="compute" if flops / peak_f >= nbytes / peak_b else "memory",
        platform=draw(st.sampled_from(["cpu", "gpu", "tpu"])), dtype=draw(st.sampled_from(["bf16", "f32"])),
        predicted_seconds=draw(st.none() | positive), measured_seconds=draw(positive), floor_seconds=floor,
        model_flops=flops, model_bytes=nbytes, xla_flops=draw(st.none() | counts), xla_bytes=draw(st.none() | counts),
        fixed_cost_seconds=draw(st.none() | positive), attained_bytes_per_s=draw(st.none() | rates),
        attained_flops_per_s=draw(st.none() | rates), peak_bytes_per_s=peak_b, peak_flops_per_s=peak_f,
        emulated_dtype=draw(st.none() | st.booleans()), prediction_text=draw(st.text(max_size=20)))


@settings(max_examples=200, deadline=None)
@given(evidences())
def test_assess_is_one_finding_per_reason_and_only_on_a_miss(ev):
    found = mr.assess(ev)
    assert [f.reason_id for f in found] == [r.id for r in mr.REASONS]
    assert all(f.why for f in found)
    if not ev.is_miss:
        assert mr.supported_reasons(ev) == []
    slow_side = {"fixed-cost", "below-peak-bandwidth", "below-peak-compute", "extra-traffic", "emulated-dtype"}
    supported = set(mr.supported_reasons(ev))
    assert not (supported & slow_side and "less-traffic" in supported)


@settings(max_examples=200, deadline=None)
@given(evidences(), st.integers(min_value=-20, max_value=20))
def test_findings_do_not_depend_on_the_time_scale(ev, n):
    """Every time x2^n and every rate /2^n (exact in binary): the same reasons hold."""
    k = 2.0 ** n
    scale = lambda v: None if v is None else v * k  # noqa: E731
    scaled = dataclasses.replace(
        ev, predicted_seconds=scale(ev.predicted_seconds), measured_seconds=ev.measured_seconds * k,
        floor_seconds=ev.floor_seconds * k, fixed_cost_seconds=scale(ev.fixed_cost_seconds),
        attained_bytes_per_s=None if ev.attained_bytes_per_s is None else ev.attained_bytes_per_s / k,
        attained_flops_per_s=None if ev.attained_flops_per_s is None else ev.attained_flops_per_s / k,
        peak_bytes_per_s=ev.peak_bytes_per_s / k, peak_flops_per_s=ev.peak_flops_per_s / k)
    assert mr.supported_reasons(scaled) == mr.supported_reasons(ev)


@settings(max_examples=200, deadline=None)
@given(evidences(), st.sampled_from(sorted(mr.SHRUGS)), st.lists(st.sampled_from(sorted(mr.BY_ID)), max_size=3))
def test_judge_accepts_only_supported_reasons_and_never_a_shrug(ev, shrug, named):
    assert not mr.judge(shrug, ev).accepted
    j = mr.judge("the numbers in the record say so", ev, reasons=named or None)
    if j.accepted:
        assert set(j.reasons) & set(mr.supported_reasons(ev))
    else:
        assert "look at:" in j.why or "refused" in j.why
    if named and all(r in mr.supported_reasons(ev) for r in named):
        assert j.accepted


@settings(max_examples=100, deadline=None)
@given(evidences())
def test_learner_arithmetic_is_the_floor_within_2x_and_the_prediction_not(ev):
    floor_ok = 0.5 <= ev.measured_seconds / ev.floor_seconds <= 2
    expected = bool(ev.predicted_seconds) and ev.is_miss and floor_ok
    assert mr.find("learner-arithmetic").test(ev).supported == expected


@settings(max_examples=100, deadline=None)
@given(evidences())
def test_evidence_round_trips(ev):
    assert mr.OpEvidence.from_dict(ev.to_dict()) == ev
    assert mr.judge("launch", ev).to_dict().keys() == {"reasons", "text", "accepted", "why"}


def test_drill_miss_reasons_lists_the_catalogue():
    import json

    from click.testing import CliRunner

    from drills.cli import cli

    res = CliRunner().invoke(cli, ["miss-reasons", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [d["id"] for d in data] == [r.id for r in mr.REASONS]
    assert all(set(d) == {"id", "meaning", "evidence"} for d in data)
    text = CliRunner().invoke(cli, ["miss-reasons"]).output
    assert all(f"{r.id}: {r.meaning}" in text for r in mr.REASONS)
