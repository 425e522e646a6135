"""`drill explain`: a miss is explained by a corrected estimate the record's own numbers reproduce."""

import json

import pytest
from click.testing import CliRunner

from drills.cli import cli
from labs import gate, records
from tests.conftest import REPO, invoke_drill
from tests.labs import synthetic

# On the synthetic H200 records the copy probe attains a third of the HBM peak and the fixed cost is
# 2 µs: add (floor 21.0 µs) measures 3x its floor, softmax (floor 14.0 µs) 3x too.
BANDWIDTH = "add streams at a third of the HBM bandwidth, 3 x 21 us = 63 us"
SOFTMAX = "softmax streams at a third of the bandwidth the floor uses, 3 x 14 us = 42 us"


def _failing_record(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 3.0})
    return records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-test")


def _explain(path, tmp_path, text, *more):
    expl = tmp_path / "why.yaml"
    expl.write_text(text)
    return CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(expl), *more])


def _miss(path, op):
    return next(r for r in records.load(path)["ops"] if r["op"] == op)["miss"]


def test_corrected_estimates_explain_the_misses_and_the_gate_judges_the_all_five_rule(tmp_path):
    path = _failing_record(tmp_path)
    assert gate.evaluate(tmp_path / "bench").rows[0].verdict == "incomplete"
    res = _explain(path, tmp_path, f"softmax: {SOFTMAX}\nadd: {BANDWIDTH}\n")
    assert res.exit_code == 0, res.output
    assert "2 miss(es) explained" in res.output and "accepted: below-peak-bandwidth" in res.output
    assert "explained by: below-peak-bandwidth" in res.output  # the evidence table, after acceptance only
    rec = records.load(path)
    misses = {r["op"]: r["miss"] for r in rec["ops"] if r["verdict"] == "miss"}
    assert misses["add"]["corrected_s"] == pytest.approx(63e-6) and misses["add"]["text"] == BANDWIDTH
    assert all(m["accepted"] and m["reasons"] == ["below-peak-bandwidth"] and not m["revealed"]
               and [a["verdict"] for a in m["attempts"]] == ["accepted"] for m in misses.values())
    assert all("supported_reasons" not in r["evidence"] and "findings" not in r["evidence"] for r in rec["ops"])
    result = gate.evaluate(tmp_path / "bench")
    (row,) = result.rows
    assert result.status == "fail" and row.explained == ["add", "softmax"] and row.verdict == "fail"


def test_the_record_holds_no_answer_key_before_the_answer(tmp_path):
    path = _failing_record(tmp_path)
    text = path.read_text()
    assert "supported_reasons" not in text and "below-peak-bandwidth" not in text
    res = _explain(path, tmp_path, "add: overhead\n")
    assert "explained by" not in res.output and "below-peak-bandwidth" not in res.output


@pytest.mark.parametrize("text, why", [
    ("overhead", "shrug"), ("x", "shrug"), ("noise", "shrug"),
    ("it is the launch cost = 23 us", "1.5x"),  # floor + fixed cost: 23 µs, but measured is 63 µs
    ("add streams at a third of the HBM bandwidth = 21 us", "3.00x below measured"),
    ("my cat walked on the keyboard = 63 us", "names no reason"),
    ("below-peak-compute since the MXU idles = 63 us", "do not give 63 µs"),
])
def test_refused_explanations_point_at_the_numbers_and_every_attempt_is_kept(tmp_path, text, why):
    path = _failing_record(tmp_path)
    res = _explain(path, tmp_path, f"add: {text}\n")
    assert res.exit_code == 0, res.output
    assert "add: refused" in res.output and why in res.output and "look at:" in res.output
    assert "still unexplained: add, softmax" in res.output and "63 µs from" not in res.output
    miss = _miss(path, "add")
    assert miss["accepted"] is False and miss["text"] == text and len(miss["attempts"]) == 1
    # the learner can try again; both attempts stay in the record
    res = _explain(path, tmp_path, f"add: {BANDWIDTH}\n")
    assert "accepted: below-peak-bandwidth" in res.output and "still unexplained: softmax" in res.output
    miss = _miss(path, "add")
    assert [a["verdict"] for a in miss["attempts"]] == ["refused", "accepted"]
    assert miss["attempts"][0]["text"] == text and miss["attempts"][1]["corrected_s"] == pytest.approx(63e-6)
    (row,) = gate.evaluate(tmp_path / "bench").rows  # the public line shows the trail
    assert "explained misses: add (after 1 refused)" in row.measured_text()
    assert [j["refused_attempts"] for j in row.explanations if j["op"] == "add"] == [1]


def test_an_explanation_may_name_reason_ids_and_give_the_corrected_time_apart(tmp_path):
    path = _failing_record(tmp_path)
    res = _explain(path, tmp_path, "add:\n  reasons: [below-peak-bandwidth]\n  corrected: 63 us\n"
                                   "  text: the copy probe streams at a third of peak bandwidth\n")
    assert res.exit_code == 0 and "1 miss(es) explained" in res.output, res.output
    assert _miss(path, "add")["corrected_s"] == pytest.approx(63e-6)


def test_show_reveals_the_answer_and_the_miss_never_counts(tmp_path):
    path = _failing_record(tmp_path)
    res = CliRunner().invoke(cli, ["explain", str(path), "--show"])
    assert res.exit_code == 0, res.output
    assert "add: below-peak-bandwidth = 62.9 µs" in res.output and "2 miss(es) revealed" in res.output
    assert _miss(path, "add")["revealed"] is True
    res = _explain(path, tmp_path, f"add: {BANDWIDTH}\n")
    assert "no unexplained misses" in res.output  # nothing left to ask: revealed misses are closed
    (row,) = gate.evaluate(tmp_path / "bench").rows
    assert row.verdict == "incomplete" and "add" in row.unexplained


def test_without_file_or_terminal_is_a_usage_error_and_the_record_is_untouched(tmp_path):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    res = invoke_drill("explain", str(path), input="", cwd=REPO)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--explanations" in res.stderr and "Traceback" not in res.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("content, message", [
    ("conv: no such op\n", "unknown op 'conv'"),
    ("- add\n- softmax\n", "must map op names"),
    ("add:\n  reasons: [vibes]\n  text: t\n", "unknown reason 'vibes'"),
    ("add:\n  reasons: fixed-cost\n  colour: red\n", "unknown key(s) colour"),
    ("add: " + "y" * 3000 + "\n", "at most 2000"),
    ("add: [1, 2]\n", "expected one sentence"),
    ("add: fixed-cost = -5 us\n", "add: '-5 us': a corrected time must be positive"),
    ("add: the launch = 3 GB/s\n", "is not a time"),
    ("add: the launch = 2e5 s\n", "over a day"),
    ("add:\n  reasons: [fixed-cost]\n  corrected: 70\n  text: t\n", "70 what?"),
    ("add: launch = 1 us\nadd: launch = 2 us\n", "line 2: 'add' is given twice (first on line 1)"),
])
def test_bad_explanations_files_are_one_line_and_change_nothing(tmp_path, content, message):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    expl = tmp_path / "why.yaml"
    expl.write_text(content)
    res = invoke_drill("explain", str(path), "--explanations", str(expl), cwd=REPO)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_a_huge_explanations_file_is_refused(tmp_path):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    expl = tmp_path / "why.yaml"
    expl.write_text("add: " + "y" * (2 << 20) + "\n")
    res = invoke_drill("explain", str(path), "--explanations", str(expl), cwd=REPO)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_a_broken_record_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "lab-0.1-broken.json"
    bad.write_text("{not json")
    res = invoke_drill("explain", str(bad), cwd=REPO)
    assert res.returncode == 2 and "not JSON" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_an_older_record_is_judged_on_what_it_has_and_says_what_it_lacks(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0}, probes=None)
    path = records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-old")
    res = _explain(path, tmp_path, "add: the launch cost dominates = 60 us\n")
    assert "add: refused" in res.output and "no fixed cost probe" in res.output
    data = json.loads(CliRunner().invoke(cli, ["gate", "--bench", str(tmp_path / "bench"), "--json"]).output)
    assert any("fixed cost" in lack for lack in data["rows"][0]["lacking"])


def test_an_explanation_from_before_corrected_estimates_is_not_accepted_and_says_so(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0})
    row = next(r for r in rec["ops"] if r["op"] == "add")
    row["miss"].update({"reasons": ["below-peak-bandwidth"], "text": "add streams below the bandwidth",
                        "accepted": True, "why": "accepted (schema 3)"})
    rec["schema_version"] = 3
    for r in rec["ops"]:
        if r["miss"]:
            for key in ("corrected_s", "revealed", "attempts"):
                r["miss"].pop(key)
    records.save(rec, tmp_path / "bench", "lab-0.1-gpu-v3")
    (row,) = gate.evaluate(tmp_path / "bench").rows
    assert row.unexplained == ["add"] and any("corrected time" in lack for lack in row.lacking)
    assert not any("edited?" in w for w in row.why_not)  # an older accepted sentence is not tampering
