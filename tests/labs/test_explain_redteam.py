"""Red-team of "explain every miss" on the CPU records the lab wrote (tests/labs/fixtures/, see
test_explain_cpu.py): words that deny a reason, a reason named with no sentence, shrugs in new
wording, and a learner's trail of refused attempts. Every number comes from the record."""

from __future__ import annotations

import pytest

from generator import miss_reasons as mr
from labs import evidence, records
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "labs" / "fixtures"
N128 = FIXTURES / "lab-0.1-cpu-cpu-n128-20261201T201951Z.json"


def _ev(source, op):
    return evidence.op_evidence(records.load(source), op)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g} us"


@pytest.mark.parametrize("text, denied", [
    ("no upcast: bf16 runs natively", "emulated-dtype"), ("never upcast", "emulated-dtype"),
    ("bf16 is not emulated", "emulated-dtype"), ("no launch cost here", "fixed-cost"),
    ("it is not launch-bound", "fixed-cost"), ("not a cache effect", "less-traffic"),
    ("nothing to do with the cache", "less-traffic"), ("it is not the bandwidth", "below-peak-bandwidth"),
    ("no extra traffic", "extra-traffic"), ("it wasn't a typo", "learner-arithmetic"),
    ("the add is not fused", "less-traffic"),
])
def test_words_that_deny_a_reason_do_not_name_it(text, denied):
    assert denied not in mr.read_reasons(text)


def test_a_sentence_that_denies_the_arithmetic_slip_does_not_explain_it():
    ev = _ev(N128, "add")  # predicted 5 ns, the floor is right: learner-arithmetic explains it
    floor = us(mr.corrected_time(ev, ["learner-arithmetic"]))
    assert mr.judge(f"I used GiB instead of GB and ns for us: the floor = {floor}", ev).accepted
    for text in (f"not a typo: my arithmetic was right = {floor}", f"no arithmetic slip = {floor}",
                 f"it wasn't my arithmetic, the machine = {floor}"):
        assert not mr.judge(text, ev).accepted, text
    j = mr.judge("it was not a typo", ev, ["learner-arithmetic"], mr.corrected_time(ev, ["learner-arithmetic"]))
    assert not j.accepted and "denies" in j.why


def test_a_reason_named_with_no_sentence_of_its_own_is_refused():
    ev = _ev(N128, "add")
    floor = us(mr.corrected_time(ev, ["learner-arithmetic"]))
    for text in (f"typo = {floor}", f"learner-arithmetic = {floor}", f"gb = {floor}", f"slip = {floor}",
                 f"learner-arithmetic: lol = {floor}", f"learner-arithmetic: computers are weird = {floor}"):
        j = mr.judge(text, ev)
        assert not j.accepted and "sentence" in j.why, text
    for text in (f"arithmetic: no clue = {floor}", f"beats me, arithmetic = {floor}",
                 f"can't say, arithmetic = {floor}", f"learner-arithmetic: it just is = {floor}", f"for some reason my arithmetic was off = {floor}"):
        assert not mr.judge(text, ev).accepted, text
    assert mr.judge(f"learner-arithmetic: I typed ns for us, so the floor = {floor}", ev).accepted


def test_the_trail_of_refused_attempts_is_counted_where_the_verdict_is_shown(tmp_path):
    """Guessing leaves a trail: drill explain says how many refused attempts came before an accepted one."""
    import shutil

    from click.testing import CliRunner

    from drills.cli import cli

    path = tmp_path / N128.name
    shutil.copyfile(N128, path)
    floor = us(mr.corrected_time(_ev(N128, "add"), ["learner-arithmetic"]))
    why = tmp_path / "why.yaml"
    for text, seen in ((f"I used GiB instead of GB: the floor = 3 us", "1 refused attempt"),
                       (f"I used GiB instead of GB: the floor = 4 us", "2 refused attempts"),
                       (f"I used GiB instead of GB and ns for us: the floor = {floor}", "after 2 refused attempts")):
        why.write_text(f"add: '{text}'\n")
        out = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(why)])
        assert out.exit_code == 0 and seen in out.output, out.output
