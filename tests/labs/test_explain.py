"""`drill explain`: explaining a record's misses after the run turns a FAIL into a PASS."""

from drills.cli import cli
from click.testing import CliRunner

from labs import gate, records
from tests.conftest import run_drill
from tests.labs import synthetic


def _failing_record(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 2.5})
    return records.save(rec, tmp_path / "bench", "lab-0.1-gpu-test")


def test_explanations_file_fixes_the_gate(tmp_path):
    path = _failing_record(tmp_path)
    assert gate.evaluate(tmp_path / "bench").status == "fail"
    expl = tmp_path / "why.yaml"
    expl.write_text("softmax: XLA runs softmax as several passes over HBM.\nadd: it fused a convert.\n")
    res = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(expl)])
    assert res.exit_code == 0, res.output
    assert "2 miss(es) explained" in res.output
    rec = records.load(path)
    assert {r["op"]: r["explanation"] for r in rec["ops"] if r["verdict"] == "miss"} == {
        "softmax": "XLA runs softmax as several passes over HBM.", "add": "it fused a convert."}
    assert gate.evaluate(tmp_path / "bench").status == "pass"


def test_partial_explanations_leave_the_rest_unexplained(tmp_path):
    path = _failing_record(tmp_path)
    expl = tmp_path / "why.yaml"
    expl.write_text("softmax: several passes.\n")
    res = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(expl)])
    assert res.exit_code == 0 and "still unexplained: add" in res.output
    assert gate.evaluate(tmp_path / "bench").status == "fail"


def test_without_file_or_terminal_is_a_usage_error_and_the_record_is_untouched(tmp_path):
    path = _failing_record(tmp_path)
    before = path.read_bytes()
    res = run_drill("explain", str(path), input="")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--explanations" in res.stderr and "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_a_broken_record_or_unknown_op_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "lab-0.1-broken.json"
    bad.write_text("{not json")
    res = run_drill("explain", str(bad))
    assert res.returncode == 2 and "not JSON" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    path = _failing_record(tmp_path)
    expl = tmp_path / "why.yaml"
    expl.write_text("conv: no such op\n")
    res = run_drill("explain", str(path), "--explanations", str(expl))
    assert res.returncode == 2 and "conv" in res.stderr
