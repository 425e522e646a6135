"""`drill explain`: a miss is explained only by a reason the record's evidence supports."""

import json

import pytest
from click.testing import CliRunner

from drills.cli import cli
from labs import gate, records
from tests.conftest import run_drill
from tests.labs import synthetic

# On the synthetic H200 records: add 3x slower streams at a third of HBM peak (below-peak-bandwidth);
# softmax 2.5x slower likewise; the fixed cost (2 µs) is far below either op's floor.
BANDWIDTH = "add streams at a third of the HBM bandwidth"


def _failing_record(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 2.5})
    return records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-test")


def _explain(path, tmp_path, text):
    expl = tmp_path / "why.yaml"
    expl.write_text(text)
    return CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(expl)])


def test_supported_reasons_explain_the_misses_and_the_gate_judges_the_all_five_rule(tmp_path):
    path = _failing_record(tmp_path)
    assert gate.evaluate(tmp_path / "bench").rows[0].verdict == "incomplete"
    res = _explain(path, tmp_path, f"softmax: softmax streams well below the HBM bandwidth peak.\nadd: {BANDWIDTH}\n")
    assert res.exit_code == 0, res.output
    assert "2 miss(es) explained" in res.output and "accepted: below-peak-bandwidth" in res.output
    assert "supported reasons" in res.output  # the evidence table, shown after the answers
    rec = records.load(path)
    misses = {r["op"]: r["miss"] for r in rec["ops"] if r["verdict"] == "miss"}
    assert all(m["accepted"] and m["reasons"] == ["below-peak-bandwidth"] and "% of the" in m["why"]
               for m in misses.values())
    result = gate.evaluate(tmp_path / "bench")
    (row,) = result.rows
    assert result.status == "fail" and row.explained == ["add", "softmax"] and row.verdict == "fail"


@pytest.mark.parametrize("text", ["overhead", "x", "noise", "it is the launch cost"])
def test_shrugs_and_contradicted_reasons_are_refused_with_a_pointer(tmp_path, text):
    path = _failing_record(tmp_path)
    res = _explain(path, tmp_path, f"add: {text}\n")
    assert res.exit_code == 0, res.output
    assert "add: refused" in res.output and "look at:" in res.output and "still unexplained: add, softmax" in res.output
    rec = records.load(path)
    (add,) = [r for r in rec["ops"] if r["op"] == "add"]
    assert add["miss"]["accepted"] is False and add["miss"]["text"] == text and add["explanation"] is None
    # the learner can try again
    res = _explain(path, tmp_path, f"add: {BANDWIDTH}\n")
    assert "accepted: below-peak-bandwidth" in res.output and "still unexplained: softmax" in res.output


def test_an_explanation_may_name_reason_ids(tmp_path):
    path = _failing_record(tmp_path)
    res = _explain(path, tmp_path, "add:\n  reasons: [below-peak-bandwidth]\n  text: the copy probe shows it\n")
    assert res.exit_code == 0 and "1 miss(es) explained" in res.output


def test_without_file_or_terminal_is_a_usage_error_and_the_record_is_untouched(tmp_path):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    res = run_drill("explain", str(path), input="")
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
])
def test_bad_explanations_files_are_one_line_and_change_nothing(tmp_path, content, message):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    expl = tmp_path / "why.yaml"
    expl.write_text(content)
    res = run_drill("explain", str(path), "--explanations", str(expl))
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_a_huge_explanations_file_is_refused(tmp_path):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    expl = tmp_path / "why.yaml"
    expl.write_text("add: " + "y" * (2 << 20) + "\n")
    res = run_drill("explain", str(path), "--explanations", str(expl))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_a_broken_record_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "lab-0.1-broken.json"
    bad.write_text("{not json")
    res = run_drill("explain", str(bad))
    assert res.returncode == 2 and "not JSON" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_an_older_record_is_judged_on_what_it_has_and_says_what_it_lacks(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0}, probes=None)
    path = records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-old")
    res = _explain(path, tmp_path, "add: the launch cost dominates\n")
    assert "add: refused" in res.output and "no fixed cost" in res.output
    data = json.loads(CliRunner().invoke(cli, ["gate", "--bench", str(tmp_path / "bench"), "--json"]).output)
    assert any("fixed cost" in lack for lack in data["rows"][0]["lacking"])
