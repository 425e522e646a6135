"""Explaining misses on CPU records made by the lab, judged without jax.

The two records under tests/labs/fixtures/ are `drill lab --size 128|256 --reps 10 --predictions
tests/labs/fixtures/predictions-cpu-issue22.yaml` runs on this 2-core machine (jax 0.10.2), shared
with other work: several probes were noisy even re-measured, and say so. Every number a test uses
comes from the record; a test that needs another prediction changes only the prediction.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil

import pytest
from click.testing import CliRunner

from drills.cli import cli
from generator import explain as mr
from generator.model.units import fmt
from labs.records import folder as records
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "labs" / "fixtures"
N128 = FIXTURES / "lab-0.1-cpu-cpu-n128-20261201T201951Z.json"
N256 = FIXTURES / "lab-0.1-cpu-cpu-n256-20261201T202020Z.json"


def _copy(tmp_path, source):
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    return path


def _ev(source, op):
    return records.op_evidence(records.load(source), op)


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
        ev = records.op_evidence(rec, row["op"])
        assert ev.emulated_dtype is True and "convert(s) to f32 in the optimized HLO" in ev.emulated_from
    # the verdict follows the program, not the platform name: the same record without converts is native
    native = dict(rec, ops=[dict(r, compiled={"converts": 0, "hlo": "optimized"}) for r in rec["ops"]])
    assert records.op_evidence(native, "matmul").emulated_dtype is False


def _yaml(op, text):
    return f"{op}: {json.dumps(text)}\n"  # quoted: the sentence holds ':' after its reason ids


def _n(ev) -> dict:
    """The record's numbers as a learner copies them (3 figures)."""
    return {"bytes": fmt(ev.model_bytes, "B"), "peak": fmt(ev.peak_bytes_per_s, "B/s"),
            "flops": fmt(ev.model_flops, "FLOP"), "floor": fmt(ev.floor_seconds, "s"),
            "fixed": fmt(ev.fixed_cost_seconds, "s") if ev.fixed_cost_seconds else "",
            "xla": fmt(ev.xla_bytes, "B") if ev.xla_bytes else "", "copy": fmt(ev.attained_bytes_per_s, "B/s"),
            "matmul": fmt(ev.attained_flops_per_s, "FLOP/s")}


def _value(working: str) -> str:
    return us(mr.evaluate(working)[0].value)


def test_one_miss_refused_then_accepted_with_a_composed_derivation(tmp_path):
    path = _copy(tmp_path, N256)
    ev = _ev(path, "skinny_matmul")  # predicted 10 ms, measured 48.9 µs; floor 20.5 µs; its fixed cost 20.1 µs
    # the noisy copy (46%) and matmul (145%) probes widen the band of the reasons resting on them, never veto them
    assert ("learner-arithmetic", "fixed-cost") in mr.explanations(ev)
    n = _n(ev)
    floor_working = f"{n['bytes']} / {n['peak']}"
    res = _explain(path, tmp_path, _yaml("skinny_matmul", f"learner-arithmetic: I slipped a unit, {floor_working} = "
                                                          f"{_value(floor_working)}"))
    assert "skinny_matmul: refused: your derivation gives" in res.output and "below measured" in res.output
    assert "look at:" in res.output and "fixed-cost" not in res.output  # never the accepted reason
    working = f"{n['floor']} + {n['fixed']}"
    right = _value(working)
    res = _explain(path, tmp_path, _yaml("skinny_matmul", f"learner-arithmetic + fixed-cost: I slipped a unit, "
                                         f"and a small matmul's per-call cost adds to the floor: "
                                         f"{working} = {right}"))
    assert "skinny_matmul: accepted: learner-arithmetic + fixed-cost" in res.output, res.output
    assert "the numbers support:" in res.output and "learner-arithmetic + fixed-cost" in res.output
    miss = next(r for r in records.load(path)["ops"] if r["op"] == "skinny_matmul")["miss"]
    assert miss["accepted"] and miss["reasons"] == ["learner-arithmetic", "fixed-cost"]
    assert miss["corrected_s"] == pytest.approx(mr.parse_corrected(right), rel=1e-3)
    assert [a["verdict"] for a in miss["attempts"]] == ["refused", "accepted"]


def test_refused_for_a_reason_that_does_no_work_a_contradicted_one_and_an_ignored_sentence():
    ev = _ev(N256, "skinny_matmul")
    n = _n(ev)
    both = ["learner-arithmetic", "fixed-cost"]
    # on this uncatalogued CPU the copy and matmul probes are the peaks the floor uses: naming them changes nothing
    for rid, working in (("below-peak-bandwidth", f"{n['bytes']} / {n['copy']}"),
                         ("below-peak-compute", f"{n['flops']} / {n['matmul']}")):
        j = mr.judge(f"{rid}: {working} = {_value(working)}", ev)
        assert not j.accepted and f"{rid} does no work" in j.why and "noisy" not in j.why.split("(look")[0], rid
    less = mr.judge(f"less-traffic: {n['xla']} / {n['copy']} = {_value(n['xla'] + ' / ' + n['copy'])}", ev)
    assert not less.accepted and "does not allow it" in less.why and "not fewer bytes" in less.why
    cat = mr.judge("my cat walked on the keyboard", ev, both, ev.measured_seconds)
    assert not cat.accepted and "the working shows no quantity" in cat.why


def test_a_word_in_the_sentence_names_no_reason_and_a_cache_is_not_less_traffic():
    ev = _ev(N128, "add")  # rotated inputs fit the 32 MiB cache the CPU reports; XLA's bytes = the hand count
    less = mr.find("less-traffic").allowed(ev)
    assert not less.supported and "not fewer bytes" in less.why and "cache-level" in less.why
    cache = mr.find("cache-level").allowed(ev)  # no measured hierarchy in this record: nothing to compare with
    assert not cache.supported and "no measured hierarchy" in cache.why
    assert mr.explanations(ev) == [("learner-arithmetic",)]
    n = _n(ev)
    working = f"{n['bytes']} / {n['peak']}"
    floor = _value(working)
    for words in (f"not fused = {floor}", f"the add is fused: {working} = {floor}", f"no upcast, no cache = {floor}"):
        j = mr.judge(words, ev)
        assert j.reasons == [] and not j.accepted and "name your reasons first" in j.why, words
    j = mr.judge(f"learner-arithmetic: not fused, no extra traffic, no fixed cost: {working} = {floor}", ev)
    assert j.reasons == ["learner-arithmetic"] and j.accepted, j.why  # "no ..." denies nothing, adds nothing
    j = mr.judge(f"fusion: not fused, {working} = {floor}", ev)  # a synonym in the prefix names its reason
    assert j.reasons == ["less-traffic"] and not j.accepted


def test_a_prediction_2000x_off_is_explained_by_the_arithmetic_plus_a_machine_reason():
    ev = _ev(N256, "skinny_matmul")
    ev = dataclasses.replace(ev, predicted_seconds=ev.measured_seconds * 2000)
    assert ev.ratio == pytest.approx(1 / 2000)
    n = _n(ev)
    working = f"{n['bytes']} / {n['peak']}"  # the floor: still over 2x off measured
    assert ev.measured_seconds / mr.parse_corrected(_value(working)) > 2
    j = mr.judge(f"learner-arithmetic: my typo, {working} = {_value(working)}", ev)
    assert not j.accepted and "below measured" in j.why
    both = f"{n['floor']} + {n['fixed']}"
    j = mr.judge(f"learner-arithmetic + fixed-cost: a typo, the floor {n['floor']} + the "
                 f"per-call launch cost {n['fixed']} = {_value(both)}", ev)
    assert j.accepted, j.why


def test_brute_force_with_the_original_prediction_explains_nothing():
    for source in (N128, N256):
        rec = records.load(source)
        for row in rec["ops"]:
            ev = records.op_evidence(rec, row["op"])
            for k in range(1, len(mr.REASONS) + 1):
                for combo in itertools.combinations(mr.BY_ID, k):
                    j = mr.judge(" + ".join(combo), ev, None, ev.predicted_seconds)
                    assert not j.accepted, (source.name, row["op"], combo)


def test_a_noisy_probe_widens_the_band_and_vetoes_nothing():
    rec = records.load(N128)
    ev = records.op_evidence(rec, "softmax")  # its fixed-cost probe was quiet
    assert "fixed cost" not in ev.noisy_probes and ("fixed-cost",) in mr.explanations(ev)
    n = _n(ev)
    working = f"{n['floor']} + {n['fixed']}"
    sentence = f"fixed-cost: the floor {n['floor']} + the per-call cost {n['fixed']} = {_value(working)}"
    assert mr.judge(sentence, ev).accepted
    rec["probes"]["fixed_cost_by_op"]["softmax"]["noisy"] = True  # the same probe, had it been noisy
    noisy = records.op_evidence(rec, "softmax")
    assert "fixed cost" in noisy.noisy_probes
    j = mr.judge(sentence, noisy)
    assert j.accepted and ("fixed-cost",) in mr.explanations(noisy), j.why
    # its spread widens the band: 1.5x (1 + spread), the spread counted at most 50%
    assert mr.band(noisy, ["fixed-cost"]) == pytest.approx(1.5 * (1 + noisy.fixed_cost_spread))
    wide = _ev(N256, "skinny_matmul")
    two = ["fixed-cost", "emulated-dtype"]  # XLA's bytes of the upcast program over the copy, plus the fixed cost
    assert wide.matmul_spread > 0.5 and mr.band(wide, two) == pytest.approx(2.25)
    w = _n(wide)
    working = f"{w['xla']} / {w['copy']} + {w['fixed']}"
    t = mr.parse_corrected(_value(working))
    text = f"fixed-cost + emulated-dtype: the upcast moves {w['xla']} / {w['copy']} + {w['fixed']} = {_value(working)}"
    assert mr.judge(text, wide).accepted == (1 / 2.25 <= t / wide.measured_seconds <= 2.25)
    quiet = dataclasses.replace(wide, fixed_cost_spread=0.0, copy_spread=0.0, matmul_spread=0.0, shape_spread=None)
    assert mr.band(quiet, two) == pytest.approx(1.5)
    # a time between 1.5x and 2.25x of measured: accepted while the probes are noisy, refused once quiet
    far = f"{w['flops']} / {w['matmul']} + {w['fixed']} + {w['fixed']}"
    assert "counted once" in mr.judge(f"fixed-cost + emulated-dtype: {far} = {_value(far)}", wide).why
