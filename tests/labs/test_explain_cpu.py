"""Explaining misses on CPU records made by the lab (issue 22's done-when), judged without jax.

The two records under tests/labs/fixtures/ are `drill lab --size 128|256 --reps 10 --predictions
tests/labs/fixtures/predictions-cpu-issue22.yaml` runs on this 2-core machine (jax 0.10.2), shared
with other work: several probes were noisy even re-measured, and say so. Every number a test uses
comes from the record; a test that needs another prediction changes only the prediction.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil

import pytest
from click.testing import CliRunner

from drills.cli import cli
from generator import miss_reasons as mr
from generator.units import fmt
from labs import evidence, records
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "labs" / "fixtures"
N128 = FIXTURES / "lab-0.1-cpu-cpu-n128-20261201T201951Z.json"
N256 = FIXTURES / "lab-0.1-cpu-cpu-n256-20261201T202020Z.json"


def _copy(tmp_path, source):
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    return path


def _ev(source, op):
    return evidence.op_evidence(records.load(source), op)


def _explain(path, tmp_path, text):
    expl = tmp_path / "why.yaml"
    expl.write_text(text)
    return CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(expl)])


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g} us"


def test_the_records_hold_the_evidence_and_no_answer_key():
    for source in (N128, N256):
        rec = records.load(source)
        assert rec["schema_version"] == records.SCHEMA_VERSION and rec["platform"] == "cpu"
        text = source.read_text()
        assert "supported_reasons" not in text and '"findings"' not in text
        by_op = rec["probes"]["fixed_cost_by_op"]
        assert set(by_op) == {r["op"] for r in rec["ops"]}
        for probe in by_op.values():  # each op kind's own smallest call, with its spread
            assert probe["size"] == 128 and probe["device_s"] > 0 and probe["spread"] >= 0
            assert probe["fixed_cost_s"] == pytest.approx(max(0.0, probe["device_s"] - probe["work_floor_s"]))


def test_bf16_is_emulated_on_this_jax_from_the_compiled_programs_converts():
    rec = records.load(N256)
    for row in rec["ops"]:
        assert row["compiled"]["converts"] > 0 and row["compiled"]["hlo"] == "optimized"
        ev = evidence.op_evidence(rec, row["op"])
        assert ev.emulated_dtype is True and "convert(s) to f32 in the optimized HLO" in ev.emulated_from
    # the verdict follows the program, not the platform name: the same record without converts is native
    native = dict(rec, ops=[dict(r, compiled={"converts": 0, "hlo": "optimized"}) for r in rec["ops"]])
    assert evidence.op_evidence(native, "matmul").emulated_dtype is False


def test_one_miss_refused_then_accepted_with_a_composed_corrected_estimate(tmp_path):
    path = _copy(tmp_path, N256)
    ev = _ev(path, "skinny_matmul")  # predicted 10 ms, measured 48.9 µs; floor 20.5 µs; its fixed cost 20.1 µs
    assert mr.explanations(ev) == [("learner-arithmetic", "fixed-cost")]
    floor, fixed = ev.floor_seconds, ev.fixed_cost_seconds
    res = _explain(path, tmp_path, f"skinny_matmul: I slipped a unit, the floor is {us(floor)}\n")
    assert "skinny_matmul: refused: your corrected" in res.output and "below measured" in res.output
    assert "look at:" in res.output and "fixed-cost" not in res.output  # never the accepted reason
    right = floor + fixed
    res = _explain(path, tmp_path, f"skinny_matmul: I slipped a unit (1000x), and the per-call cost of a small "
                                   f"matmul adds {us(fixed)}, so {us(floor)} + {us(fixed)} = {us(right)}\n")
    assert "skinny_matmul: accepted: learner-arithmetic + fixed-cost" in res.output, res.output
    assert "the numbers support: learner-arithmetic + fixed-cost" in res.output
    miss = next(r for r in records.load(path)["ops"] if r["op"] == "skinny_matmul")["miss"]
    assert miss["accepted"] and miss["reasons"] == ["learner-arithmetic", "fixed-cost"]
    assert miss["corrected_s"] == pytest.approx(right, rel=1e-3)
    assert [a["verdict"] for a in miss["attempts"]] == ["refused", "accepted"]


def test_refused_for_3x_off_for_a_contradicted_reason_and_for_an_ignored_sentence():
    ev = _ev(N256, "skinny_matmul")
    right = mr.corrected_time(ev, ["learner-arithmetic", "fixed-cost"])
    three = mr.judge("I slipped a unit and the per-call cost adds up", ev, None, 3 * ev.measured_seconds)
    assert not three.accepted and "3.00x above measured" in three.why
    for rid in ("below-peak-bandwidth", "below-peak-compute", "emulated-dtype"):  # the noisy probes
        j = mr.judge(f"{rid} explains it = {us(ev.measured_seconds)}", ev)
        assert not j.accepted and "noisy" in j.why, rid
    extra = mr.judge(f"extra-traffic: more bytes than counted = {us(ev.measured_seconds)}", ev)
    assert not extra.accepted and ("contradicts" in extra.why or "do not give" in extra.why)
    cat = mr.judge("my cat walked on the keyboard", ev, ["learner-arithmetic", "fixed-cost"], right)
    assert not cat.accepted and "does not say why" in cat.why


def test_not_fused_is_not_less_traffic_on_a_record_where_less_traffic_is_allowed():
    ev = _ev(N128, "add")  # rotated inputs fit the 32 MiB cache the CPU reports
    assert mr.find("less-traffic").allowed(ev).supported
    t = mr.corrected_time(ev, ["less-traffic"])
    assert mr.judge(f"not fused = {us(t)}", ev).reasons == ["extra-traffic"]


def test_a_prediction_2000x_off_is_explained_by_the_arithmetic_plus_a_machine_reason():
    ev = _ev(N256, "skinny_matmul")
    ev = dataclasses.replace(ev, predicted_seconds=ev.measured_seconds * 2000)
    assert ev.ratio == pytest.approx(1 / 2000)
    alone = mr.corrected_time(ev, ["learner-arithmetic"])  # the floor: still over 2x off measured
    assert ev.measured_seconds / alone > 2 and not mr.judge(f"learner-arithmetic: my typo = {us(alone)}", ev).accepted
    both = mr.corrected_time(ev, ["learner-arithmetic", "fixed-cost"])
    j = mr.judge(f"a typo (1000x) and the per-call launch cost = {us(both)}", ev)
    assert j.accepted, j.why


def test_brute_force_with_the_original_prediction_explains_nothing():
    for source in (N128, N256):
        rec = records.load(source)
        for row in rec["ops"]:
            ev = evidence.op_evidence(rec, row["op"])
            for k in range(1, len(mr.REASONS) + 1):
                for combo in itertools.combinations(mr.BY_ID, k):
                    j = mr.judge(" + ".join(combo), ev, None, ev.predicted_seconds)
                    assert not j.accepted, (source.name, row["op"], combo)


def test_a_noisy_probe_supports_nothing():
    rec = records.load(N128)
    ev = evidence.op_evidence(rec, "softmax")  # its fixed-cost probe was quiet
    assert "fixed cost" not in ev.noisy_probes and ("fixed-cost",) in mr.explanations(ev)
    t = mr.corrected_time(ev, ["fixed-cost"])
    assert mr.judge(f"the per-call cost dominates = {us(t)}", ev).accepted
    rec["probes"]["fixed_cost_by_op"]["softmax"]["noisy"] = True  # the same probe, had it been noisy
    noisy = evidence.op_evidence(rec, "softmax")
    j = mr.judge(f"the per-call cost dominates = {us(t)}", noisy)
    assert not j.accepted and "noisy even re-measured" in j.why and mr.explanations(noisy) == []
    assert fmt(noisy.fixed_cost_seconds, "s") in j.why  # it names the number, and why it cannot count
