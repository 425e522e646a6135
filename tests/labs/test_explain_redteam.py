"""Red-team of "explain every miss" on the CPU records the lab wrote (tests/labs/fixtures/, see
test_explain_cpu.py): words that deny (or name) a reason outside the prefix, a reason named with no
working, shrugs in new wording, and a learner's trail of refused attempts. Every number comes from the record."""

from __future__ import annotations

import pytest

from generator import explain as mr
from generator.model.units import fmt
from labs.records import folder as records
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "labs" / "fixtures"
N128 = FIXTURES / "lab-0.1-cpu-cpu-n128-20261201T201951Z.json"


def _ev(source, op):
    return records.op_evidence(records.load(source), op)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g} us"


def _numbers(ev) -> dict:
    return {"bytes": fmt(ev.model_bytes, "B"), "peak": fmt(ev.peak_bytes_per_s, "B/s"),
            "floor": fmt(ev.floor_seconds, "s")}


DENIALS = [
    ("no upcast: bf16 runs natively", "emulated-dtype"), ("never upcast", "emulated-dtype"),
    ("bf16 is not emulated", "emulated-dtype"), ("no launch cost here", "fixed-cost"),
    ("it is not launch-bound", "fixed-cost"), ("not a cache effect", "cache-level"),
    ("nothing to do with the cache", "cache-level"), ("it is not the bandwidth", "below-peak-bandwidth"),
    ("no extra traffic", "extra-traffic"), ("it wasn't a typo", "learner-arithmetic"),
    ("the add is not fused", "less-traffic"),
]


@pytest.mark.parametrize("text, reason", DENIALS)
def test_a_word_in_the_sentence_names_no_reason_and_denies_none_only_the_prefix_does(text, reason):
    ev = _ev(N128, "add")
    floor = us(mr.corrected_time(ev, ["learner-arithmetic"]))
    # alone, the words (a synonym among them: upcast, launch, cache, typo, fused) name nothing
    assert mr.split_reasons(text)[0] == []
    j = mr.judge(f"{text}, the floor {_numbers(ev)['floor']} = {floor}", ev)
    assert j.reasons == [] and not j.accepted and "name your reasons first" in j.why
    # behind a prefix they deny nothing: the prefix's reasons are the reasons named
    assert mr.split_reasons(f"{reason}: {text}")[0] == [reason]
    assert mr.split_reasons(f"learner-arithmetic: {text}")[0] == ["learner-arithmetic"]


def test_only_the_prefix_names_the_arithmetic_slip_and_no_word_denies_it():
    ev = _ev(N128, "add")  # predicted 5 ns, the floor is right: learner-arithmetic explains it
    t = mr.corrected_time(ev, ["learner-arithmetic"])
    floor, n = us(t), _numbers(ev)
    assert mr.judge(f"learner-arithmetic: I used GiB instead of GB and ns for us: {n['bytes']} / {n['peak']} = {floor}",
                    ev).accepted
    # the floor alone is no derivation (a bare X = X)
    assert not mr.judge(f"learner-arithmetic: the floor {n['floor']} = {floor}", ev).accepted
    for text in (f"not a typo: my arithmetic was right = {floor}", f"no arithmetic slip = {floor}",
                 f"it wasn't my arithmetic, the machine = {floor}", f"I used GiB instead of GB: the floor = {floor}"):
        j = mr.judge(text, ev)  # no prefix: nothing is named, whatever the words say
        assert not j.accepted and j.reasons == [] and "name your reasons first" in j.why, text
    # the prefix names it and the sentence's "not a typo" denies nothing: the numbers decide
    j = mr.judge(f"learner-arithmetic: not a typo, my arithmetic was right: {n['bytes']} / {n['peak']} = {floor}", ev)
    assert j.accepted and j.reasons == ["learner-arithmetic"], j.why
    j = mr.judge("it was not a typo", ev, ["learner-arithmetic"], t)  # named in the mapping, but no record number
    assert not j.accepted and "the working shows no quantity" in j.why
    j = mr.judge(f"it was not a typo: {n['bytes']} / {n['peak']}", ev, ["learner-arithmetic"], t)
    assert j.accepted and j.reasons == ["learner-arithmetic"], j.why


def test_a_reason_named_with_no_working_of_its_own_is_refused():
    ev = _ev(N128, "add")
    floor, n = us(mr.corrected_time(ev, ["learner-arithmetic"])), _numbers(ev)
    for text in (f"typo = {floor}", f"learner-arithmetic = {floor}", f"gb = {floor}", f"slip = {floor}"):
        j = mr.judge(text, ev)  # a name with no ':' after it is no prefix
        assert not j.accepted and "name your reasons first" in j.why, text
    for text in (f"learner-arithmetic: lol = {floor}", f"learner-arithmetic: computers are weird = {floor}",
                 f"typo: I typed ns for us = {floor}"):
        j = mr.judge(text, ev)  # named, but the working uses none of the record's numbers
        assert not j.accepted and j.reasons == ["learner-arithmetic"] and "the working shows no quantity" in j.why, text
    for text in (f"arithmetic: no clue = {floor}", f"beats me, arithmetic = {floor}",
                 f"can't say, arithmetic = {floor}", f"learner-arithmetic: it just is = {floor}",
                 f"for some reason my arithmetic was off = {floor}",
                 f"learner-arithmetic: no clue, the floor is {n['floor']} = {floor}"):
        assert not mr.judge(text, ev).accepted, text
    assert mr.judge(f"learner-arithmetic: I typed ns for us; {n['bytes']} / {n['peak']} = {floor}", ev).accepted


def test_the_trail_of_refused_attempts_is_counted_where_the_verdict_is_shown(tmp_path):
    """Guessing leaves a trail: drill explain says how many refused attempts came before an accepted one."""
    import shutil

    from click.testing import CliRunner

    from drills.cli import cli

    path = tmp_path / N128.name
    shutil.copyfile(N128, path)
    floor = us(mr.corrected_time(_ev(N128, "add"), ["learner-arithmetic"]))
    why = tmp_path / "why.yaml"
    n = _numbers(_ev(N128, "add"))
    number = f"{n['bytes']} / {n['peak']}"
    for text, seen in ((f"learner-arithmetic: I used GiB instead of GB, {number} = 3 us", "1 refused attempt"),
                       (f"learner-arithmetic: I used GiB instead of GB, {number} = 4 us", "2 refused attempts"),
                       (f"learner-arithmetic: I used GiB instead of GB and ns for us: {number} = {floor}",
                        "after 2 refused attempts")):
        why.write_text(f"add: '{text}'\n")
        out = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(why)])
        assert out.exit_code == 0 and seen in out.output, out.output
