"""GATE 00 on synthetic records: what counts (predict, then measure), pass, fail, practice, pending."""

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from drills.cli import cli as cli_main
from drills.cmd_lab import gate as gate_command
from generator import explain as miss_reasons
from generator.model.units import fmt
from labs.gate import verdict as gate
from labs.records import folder as records
from labs import runner
from labs.records.types import as_record
from labs.measure.ops import SEED_OPS
from tests.conftest import invoke_drill
from tests.labs import synthetic

REPO = Path(__file__).resolve().parents[2]


def _save(rec, bench, name):
    return records.save_run(rec, bench, name)


def _only_row(bench):
    result = gate.evaluate(bench)
    (row,) = result.rows
    return result, row


def test_no_record_is_pending(tmp_path):
    result = gate.evaluate(tmp_path / "missing")
    assert result.status == "pending" and result.rows == []
    text = "\n".join(gate.format_lines(result))
    assert "GATE 00 OPEN" in text and gate.PENDING_TEXT in text and gate.CRITERION in text


# The synthetic add's floor is 21.0 µs (101 MB counted); its copy probe attains a third of the HBM peak
# (1.6 TB/s): the reason named first, the working in the record's own numbers (checked against the record
# in test_one_miss_with_an_accepted_explanation_is_a_counted_fail).
BANDWIDTH = "below-peak-bandwidth: add moves 101 MB / the copy probe's 1.6 TB/s = 62.9 µs"


def test_a_first_gpu_run_with_all_five_within_2x_counts_and_passes(tmp_path):
    _save(synthetic.record(tmp_path, {"softmax": 1.9, "add": 0.95}), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "pass"
    assert row.counted and row.why_not == [] and row.status == "pass" and row.verdict == "pass"
    assert row.misses == [] and row.within_2x == 5 and row.ops == 5


def test_one_miss_with_an_accepted_explanation_is_a_counted_fail(tmp_path):
    # The seed: a pass needs all five within 2x; every miss still needs its explanation.
    rec = synthetic.record(tmp_path, {"add": 3.0}, explanations={"add": BANDWIDTH})
    (add,) = [r for r in rec["ops"] if r["op"] == "add"]
    assert add["miss"]["accepted"] and add["miss"]["reasons"] == ["below-peak-bandwidth"], add["miss"]["why"]
    ev = records.op_evidence(rec, "add")  # BANDWIDTH's numbers are this record's own
    assert BANDWIDTH == (f"below-peak-bandwidth: add moves {fmt(ev.model_bytes, 'B')} / the copy probe's "
                         f"{fmt(ev.attained_bytes_per_s, 'B/s')} = "
                         f"{fmt(miss_reasons.corrected_time(ev, ['below-peak-bandwidth']), 's')}")
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "fail" and row.counted and row.verdict == "fail" and row.status == "fail"
    assert row.misses == ["add"] and row.explained == ["add"] and row.unexplained == [] and row.within_2x == 4
    assert row.why_not == ["1 of 5 predictions more than 2x off (add): a pass needs all five within 2x"]


def test_all_five_three_times_off_explained_with_x_never_passes(tmp_path):
    # the gate once passed this record (five misses, each "explained" by any sentence)
    ops = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")
    rec = synthetic.record(tmp_path, {op: 3.0 for op in ops}, explanations={op: "x" for op in ops})
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "fail" and row.verdict == "incomplete" and row.within_2x == 0
    assert sorted(row.unexplained) == sorted(ops) and row.explained == []
    assert row.why_not[0].startswith("5 of 5 predictions more than 2x off")
    assert all(any(w.startswith(f"{op}: miss not explained (refused: 'x' is a shrug") for w in row.why_not) for op in ops)


@pytest.mark.parametrize("text", [None, "x", "overhead", "noise", "the cache made it faster"])
def test_a_miss_without_an_accepted_explanation_is_incomplete(tmp_path, text):
    rec = synthetic.record(tmp_path, {"add": 3.0}, explanations={"add": text} if text else None)
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "fail" and row.counted and row.verdict == "incomplete" and row.status == "incomplete"
    assert row.unexplained == ["add"] and row.explained == []
    assert any(w.startswith("add: miss not explained yet" if text is None else "add: miss not explained (refused")
               for w in row.why_not)
    text = "\n".join(gate.format_lines(result))
    assert "UNEXPLAINED: add" in text and text.startswith("GATE 00 FAIL (and incomplete")


def test_a_miss_faster_than_predicted_counts_as_a_miss(tmp_path):
    _save(synthetic.record(tmp_path, {"add": 0.3}), tmp_path / "bench", "lab-0.1-gpu")
    assert gate.evaluate(tmp_path / "bench").rows[0].misses == ["add"]


def test_a_record_without_learner_predictions_is_not_counted(tmp_path):
    # Perfect against the datasheet, but the learner predicted nothing: teaching, never graded.
    _save(synthetic.record(tmp_path, mine=False), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and not row.counted and row.verdict == "ungraded"
    assert any("no prediction of yours" in w for w in row.why_not)


def test_a_practice_run_without_predictions_never_takes_the_first_run_slot(tmp_path):
    bench = tmp_path / "bench"
    _save(synthetic.record(tmp_path, mine=False, started_at="2026-11-29T11:00:00+00:00"), bench, "lab-0.1-gpu-a")
    _save(synthetic.record(tmp_path, started_at="2026-11-29T12:00:00+00:00"), bench, "lab-0.1-gpu-b")
    result = gate.evaluate(bench)
    rows = {Path(r.path).name: r for r in result.rows}
    assert rows["lab-0.1-gpu-b.json"].counted and result.status == "pass"
    assert not rows["lab-0.1-gpu-a.json"].takes_slot


def test_a_record_with_a_wall_clock_op_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, wall_ops=("add",)), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and not row.counted
    assert row.why_not == ["add: wall clock, not device time (trace failed: RuntimeError: test)"]


def test_a_record_with_a_noisy_op_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, noisy_ops=("softmax",)), tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and row.why_not == ["softmax: noisy (runs spread 60% (IQR / median) > 25%)"]


def test_predictions_read_after_the_measurement_began_are_not_counted(tmp_path):
    late = runner.PredictionsRead("test", (synthetic.NOW + dt.timedelta(seconds=5)).isoformat())
    _save(synthetic.record(tmp_path, read=late), tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and len(row.why_not) == 1
    assert "not before the measurement began" in row.why_not[0]


def test_prediction_seconds_edited_under_a_valid_sha256_are_caught(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 3.0})
    row = next(r for r in rec["ops"] if r["op"] == "matmul")
    row["predictions"]["learner"]["seconds"] = row["measured"]["measured_s"]  # the text (and SHA) unchanged
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, judged = _only_row(tmp_path / "bench")
    assert not judged.counted
    assert any(w.startswith("matmul: your prediction reads") and "seconds edited" in w for w in judged.why_not)


@pytest.mark.parametrize("platform, device_kind, chip, expected", [
    ("tpu", "NVIDIA H200", "h200", "platform 'tpu' but device_kind 'NVIDIA H200'"),
    ("gpu", "cpu", "h200", "platform 'gpu' but device_kind 'cpu'"),
    ("gpu", "NVIDIA H200", "v5e", "chip 'v5e' predicted, but device_kind 'NVIDIA H200' is 'h200'"),
])
def test_platform_device_kind_and_chip_must_agree(tmp_path, platform, device_kind, chip, expected):
    rec = synthetic.record(tmp_path)
    rec["platform"], rec["device_kind"], rec["chip"] = platform, device_kind, chip
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and any(expected in w for w in row.why_not), row.why_not


def test_a_device_label_without_device_medians_is_caught(tmp_path):
    rec = synthetic.record(tmp_path, wall_ops=("add",))
    m = next(r for r in rec["ops"] if r["op"] == "add")["measured"]
    m["measured_from"], m["noisy"], m["noisy_why"] = "device", False, []
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and any(w.startswith("add: labelled device time but the record has no device median")
                                   for w in row.why_not)


def test_noise_flags_are_recomputed_from_the_stored_runs(tmp_path):
    rec = synthetic.record(tmp_path)
    m = next(r for r in rec["ops"] if r["op"] == "softmax")["measured"]
    median = m["device_median_s"]
    m["device_runs_s"] = sorted([median * 0.3, median * 0.5, median, median, median, median * 1.8, median * 2.5,
                                 median * 3, median * 0.4])
    m["noisy"], m["noisy_why"] = False, []  # the flag cleared by hand
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted and any(w.startswith("softmax: noisy (runs spread") for w in row.why_not), row.why_not


def test_a_second_run_kept_after_deleting_the_first_is_not_counted(tmp_path):
    bench = tmp_path / "bench"
    first = _save(synthetic.record(tmp_path, {"matmul": 5.0}, started_at="2026-11-29T12:00:00+00:00"), bench, "lab-0.1-gpu-a")
    _save(synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00"), bench, "lab-0.1-gpu-b")
    first.unlink()
    result, row = _only_row(bench)
    assert not row.counted and result.status == "practice"
    assert any("the ledger lists 1 earlier run(s)" in w and "lab-0.1-gpu-a (deleted?" in w for w in row.why_not), row.why_not
    (bench / records.LEDGER_NAME).unlink()  # deleting the ledger too is seen as well
    _, row = _only_row(bench)
    assert not row.counted and any("has no ledger" in w for w in row.why_not)


def test_predictions_edited_after_the_run_break_their_sha256(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 3.0})
    row = next(r for r in rec["ops"] if r["op"] == "matmul")
    row["predictions"]["learner"] = {"seconds": row["measured"]["measured_s"], "text": "what I saw"}
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, judged = _only_row(tmp_path / "bench")
    assert not judged.counted and any("SHA-256" in w for w in judged.why_not)


def test_only_the_first_run_per_device_kind_counts_at_any_counted_size(tmp_path):
    bench = tmp_path / "bench"
    first = synthetic.record(tmp_path, {"matmul": 5.0}, started_at="2026-11-29T12:00:00+00:00")
    second = synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00")  # after seeing the numbers
    other_n = synthetic.record(tmp_path, size=8192, started_at="2026-11-29T14:00:00+00:00")
    tiny = synthetic.record(tmp_path, size=4097, started_at="2026-11-29T15:00:00+00:00")
    _save(first, bench, "lab-0.1-gpu-b")
    _save(second, bench, "lab-0.1-gpu-a")  # names sort the second run first: order must come from the times
    result = gate.evaluate(bench)
    rows = {r.path.rsplit("/", 1)[-1]: r for r in result.rows}
    assert rows["lab-0.1-gpu-b.json"].counted and rows["lab-0.1-gpu-b.json"].status == "incomplete"
    assert not rows["lab-0.1-gpu-a.json"].counted and rows["lab-0.1-gpu-a.json"].verdict == "pass"
    assert any("not your first run on NVIDIA H200" in w for w in rows["lab-0.1-gpu-a.json"].why_not)
    assert result.status == "fail"
    _save(other_n, bench, "lab-0.1-gpu-c")  # N=8192 is the same slot: practice, not a fresh first run
    _save(tiny, bench, "lab-0.1-gpu-d")  # N=4097 is no counted size: practice, and takes no slot
    result = gate.evaluate(bench)
    rows = {r.path.rsplit("/", 1)[-1]: r for r in result.rows}
    assert result.status == "fail" and [n for n, r in rows.items() if r.counted] == ["lab-0.1-gpu-b.json"]
    assert any("earlier run(s)" in w or "not your first run" in w for w in rows["lab-0.1-gpu-c.json"].why_not)
    assert any(w.startswith("size: N=4097 is practice") for w in rows["lab-0.1-gpu-d.json"].why_not)
    assert not rows["lab-0.1-gpu-d.json"].takes_slot


def test_cpu_records_are_practice_even_when_perfect(tmp_path):
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    rec = synthetic.record(tmp_path, dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=512)
    assert rec["summary"]["criterion_met"] and rec["graded"] == "learner"
    # no compiled program in a synthetic record: whether bf16 is emulated is unknown, never read off "cpu"
    assert all(r["evidence"]["emulated_dtype"] is None for r in rec["ops"])
    _save(rec, tmp_path / "bench", "lab-0.1-cpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and row.status == "practice" and not row.counted
    assert row.why_not[0] == "CPU: not real hardware (the gate needs a TPU or GPU)"
    assert any(w.startswith("size: N=512 is practice") for w in row.why_not)


def test_a_record_without_the_five_ops_is_not_counted(tmp_path):
    _save(synthetic.record(tmp_path, ops=("matmul", "add")), tmp_path / "bench", "lab-0.1-gpu-partial")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "practice" and row.verdict == "incomplete" and not row.counted
    assert row.missing_ops == ["skinny_matmul", "softmax", "reduce_sum"]


def test_the_gate_recomputes_ratios_instead_of_trusting_the_record(tmp_path):
    rec = synthetic.record(tmp_path, {"matmul": 10.0})
    row = rec["ops"][0]
    row["verdict"], row["ratios"]["learner"], row["within_2x"]["learner"], row["miss"] = "hit", 1.0, True, None
    rec["summary"] = runner.with_summary(as_record(rec)).summary.to_dict()  # consistent with the edit
    _save(rec, tmp_path / "bench", "lab-0.1-gpu-tampered")
    assert gate.evaluate(tmp_path / "bench").rows[0].status == "incomplete"


def test_an_explanation_marked_accepted_by_hand_is_re_judged(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0}, explanations={"add": "overhead"})
    row = next(r for r in rec["ops"] if r["op"] == "add")
    row["miss"]["accepted"], row["explanation"] = True, "overhead"
    rec["summary"] = runner.with_summary(as_record(rec)).summary.to_dict()  # consistent with the edit
    _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    _, judged = _only_row(tmp_path / "bench")
    assert not judged.counted and judged.unexplained == ["add"]
    assert any("says its explanation was accepted" in w for w in judged.why_not)


def test_learner_predictions_are_what_gets_graded(tmp_path):
    p = synthetic.plan(tmp_path)
    est = p.datasheet_estimates()
    # the learner predicted 10x the roofline for every op; measurements match the learner
    learner = {n: runner.LearnerPrediction(e.floor_s * 10, f"{e.floor_s * 10}s") for n, e in est.items()}
    rec = synthetic.record(tmp_path, learner=learner)
    assert rec["graded"] == "learner"
    assert all(row["verdict"] == "hit" for row in rec["ops"])
    assert all(row["within_2x"]["datasheet"] is False for row in rec["ops"])
    _save(rec, tmp_path / "bench", "lab-0.1-gpu-learner")
    assert gate.evaluate(tmp_path / "bench").status == "pass"


def test_broken_and_foreign_records_are_reported_and_skipped(tmp_path):
    bench = tmp_path / "bench"
    _save(synthetic.record(tmp_path), bench, "lab-0.1-gpu-good")
    (bench / "lab-0.1-broken.json").write_text("{ not json")
    foreign = synthetic.record(tmp_path)
    foreign["schema_version"] = 7
    (bench / "lab-0.1-future.json").write_text(json.dumps(foreign))
    result = gate.evaluate(bench)
    assert result.status == "pass", [r.why_not for r in result.rows]
    reasons = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in result.skipped}
    assert set(reasons) == {"lab-0.1-broken.json", "lab-0.1-future.json"}
    assert "unknown schema version 7" in reasons["lab-0.1-future.json"]
    assert "[skipped]" in "\n".join(gate.format_lines(result))


@pytest.mark.parametrize("kwargs, status, counted, verdict", [
    ({}, "pass", True, "pass"),
    ({"ratios": {"add": 3.0}, "explanations": {"add": BANDWIDTH}}, "fail", True, "fail"),
    ({"ratios": {"add": 3.0}, "explanations": {"add": "overhead"}}, "fail", True, "incomplete"),
    ({"mine": False}, "practice", False, "ungraded"),
    ({"wall_ops": ("matmul",)}, "practice", False, "pass"),
])
def test_gate_json_has_status_counted_and_why_not(tmp_path, kwargs, status, counted, verdict):
    _save(synthetic.record(tmp_path, **kwargs), tmp_path / "bench", "lab-0.1-gpu")
    res = CliRunner().invoke(gate_command, ["--bench", str(tmp_path / "bench"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["status"] == status and data["status"] in gate.STATUSES
    (row,) = data["rows"]
    assert {"within_2x", "misses", "explained", "verdict", "counted", "why_not"} <= set(row)
    assert row["counted"] is counted and row["verdict"] == verdict and isinstance(row["why_not"], list)
    assert bool(row["why_not"]) is not (status == "pass")


def test_gate_and_explain_refuse_a_bench_folder_that_does_not_exist(tmp_path):
    for verb in ("gate", "explain"):
        res = invoke_drill(verb, "--bench", str(tmp_path / "nope"))
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, (verb, res.stderr)
        assert "does not exist" in res.stderr and "Traceback" not in res.stderr


def test_the_gate_reads_the_learners_records_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "bench"))
    res = CliRunner().invoke(gate_command, ["--json"])
    data = json.loads(res.output)
    assert data["status"] == "pending" and data["bench"] == str(tmp_path / "bench") and data["rows"] == []
    _save(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")  # its traces are there too
    assert json.loads(CliRunner().invoke(gate_command, ["--json"]).output)["status"] == "pass"


def test_the_courses_published_h200_records_are_shown_not_counted_as_the_learners(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "fresh"))
    bench = tmp_path / "bench"
    shutil.copytree(REPO / "bench", bench, ignore=shutil.ignore_patterns("traces"))
    data = json.loads(CliRunner().invoke(gate_command, ["--bench", str(bench), "--json"]).output)
    h200 = [r for r in data["rows"] if r["device_kind"] == "NVIDIA H200"]
    assert sorted(r["size"] for r in h200) == [4096, 8192]
    # schema-1 records: no proof of when the predictions were read, one trace per op, runs split by count
    assert all(not r["counted"] and any("when your predictions were read" in w for w in r["why_not"])
               and any(w.startswith("matmul: no noise check") for w in r["why_not"])
               and any("counting events" in w for w in r["why_not"]) for r in h200)
    assert data["skipped"] == []


@pytest.fixture(scope="module")
def clean_record(tmp_path_factory) -> dict:
    """One synthetic record for the module's property tests, which edit deep copies of it."""
    return synthetic.record(tmp_path_factory.mktemp("clean-record"))


@settings(max_examples=60)
@given(op=st.sampled_from(SEED_OPS), factor=st.floats(min_value=1e-3, max_value=1e3).filter(
    lambda f: abs(f - 1) > 1e-6))
def test_any_edit_of_a_predictions_seconds_is_caught(clean_record, op, factor):
    """Property: scaling one stored prediction by any factor (the text, and so the SHA, unchanged)
    blocks the record and names that op; the untouched record is not blocked for it."""
    import copy

    rec = copy.deepcopy(clean_record)
    assert not any("seconds edited" in w for w in gate.judge_record(rec).blockers)
    edited = copy.deepcopy(rec)
    row = next(r for r in edited["ops"] if r["op"] == op)
    row["predictions"]["learner"]["seconds"] *= factor
    blockers = gate.judge_record(edited).blockers
    assert [w.split(":")[0] for w in blockers if "seconds edited" in w] == [op]


# ----------------------------------------------------------------- physically and internally consistent

def _why_of(tmp_path, rec, edit=None):
    path = _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    if edit is not None:  # an edit made through drill's own update (the ledger vouches for the new bytes)
        records.update(path, synthetic.json_edit(edit))
    _, row = _only_row(tmp_path / "bench")
    assert not row.counted
    return row.why_not


def test_an_op_faster_than_the_chips_roofline_floor_never_counts(tmp_path):
    why = _why_of(tmp_path, synthetic.record(tmp_path, {"add": 0.5}))
    assert any(w.startswith("datasheet floor: add measured") and "50% of the NVIDIA H200's roofline floor" in w
               for w in why), why


def test_probes_far_below_the_chips_datasheet_never_count(tmp_path):
    p = synthetic.plan(tmp_path)
    probes = synthetic.probes_for(p, 0.01 * p.datasheet.peak_flops_per_s, 0.7 * p.datasheet.hbm_bytes_per_s)
    why = _why_of(tmp_path, synthetic.record(tmp_path, probes=probes))
    (attained,) = [w for w in why if w.startswith("attained:")]  # the bandwidth probe, at 70%, is plausible
    assert "FLOP/s is 1% of the NVIDIA H200's datasheet" in attained and "plausible: 10% to 110%" in attained


def test_a_catalogued_chip_without_its_datasheet_constants_never_counts(tmp_path):
    def strip(rec):
        rec["constants"]["datasheet"] = None
    why = _why_of(tmp_path, synthetic.record(tmp_path), strip)
    assert any(w.startswith("datasheet: device_kind 'NVIDIA H200' is the catalogued") for w in why), why


def test_a_tpu_record_with_gpu_traces_never_counts(tmp_path):
    def relabel(rec):
        rec.update(platform="tpu", device_kind="TPU v5 lite", chip="v5e")
    why = _why_of(tmp_path, synthetic.record(tmp_path), relabel)
    assert any(w.startswith("device planes: platform 'tpu' but the traces hold no /device:TPU plane") for w in why), why


def test_evidence_that_disagrees_with_the_probes_never_counts(tmp_path):
    def edit(rec):
        rec["probes"]["fixed_cost_by_op"]["add"]["fixed_cost_s"] = 8e-05
    why = _why_of(tmp_path, synthetic.record(tmp_path), edit)
    assert any(w.startswith("probes: fixed cost add: fixed_cost_s 8e-05 s is not its device time") for w in why), why
    assert any(w.startswith("evidence: add: evidence.fixed_cost_s") for w in why), why


def test_an_older_schema_never_counts(tmp_path):
    def lower(rec):
        rec["schema_version"] = 3
    why = _why_of(tmp_path, synthetic.record(tmp_path), lower)
    assert any(w.startswith("schema: version 3 is older than 4") for w in why), why


def test_a_record_copied_into_another_folder_keeps_no_ledger_vouching(tmp_path):
    path = _save(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")
    other = tmp_path / "other"
    other.mkdir()
    (other / path.name).write_bytes(path.read_bytes())
    (row,) = gate.evaluate(other).rows
    assert not row.counted and any(w.startswith("ledger: the records folder has no ledger") for w in row.why_not)


FINDINGS = Path(__file__).resolve().parent / "fixtures" / "hierarchy"  # drill lab runs with probes.hierarchy


def _stripped(rec: dict) -> dict:
    """The record without its fixed-cost probes and matmul rates: less evidence, more findings."""
    rec["probes"].pop("fixed_cost_by_op", None)
    rec["probes"]["fixed_cost_s"] = 0.0
    rec["probes"]["hierarchy"]["matmul_rates"] = []
    return rec


def _finding_cases() -> list[tuple[str, bool]]:
    """(fixture name, stripped?) for each checked-in record with a finding, as it is or stripped."""
    from labs.records import folder as lab_records

    out = []
    for path in sorted(FINDINGS.glob("lab-*.json")):
        for strip in (False, True):
            rec = json.loads(path.read_text())
            rec = _stripped(rec) if strip else rec
            if any(miss_reasons.unexplainable(lab_records.op_evidence(rec, r["op"]))
                   for r in rec["ops"] if r["verdict"] == "miss"):
                out.append((path.name, strip))
    return out


@pytest.mark.parametrize("name, strip", _finding_cases())
def test_a_miss_the_evidence_cannot_explain_is_a_finding_not_an_unexplained_miss(tmp_path, name, strip):
    rec = json.loads((FINDINGS / name).read_text())
    rec = _stripped(rec) if strip else rec
    misses = [r["op"] for r in rec["ops"] if r["verdict"] == "miss"]
    found = [op for op in misses if miss_reasons.unexplainable(records.op_evidence(rec, op))]
    unexplained = [op for op in misses if op not in found]
    _, row = _only_row(_bench_with(tmp_path / "bench", rec, name))
    assert [f.split(":", 1)[0] for f in row.findings] == found and row.unexplained == unexplained
    assert row.verdict == ("incomplete" if unexplained else "fail") and row.explained == []
    assert all("no derivation the evidence allows" in f for f in row.findings)
    assert ("unexplained by the evidence (a finding, not blocking): " + ", ".join(found)) in row.measured_text()
    judged = {j["op"]: j for j in row.explanations}
    assert all(judged[op].get("finding") and judged[op]["why"].startswith("unexplained-by-evidence:") for op in found)
    # the same record without its measured hierarchy: judged as before, every miss asked
    rec["probes"].pop("hierarchy")
    _, plain = _only_row(_bench_with(tmp_path / "plain", rec, name))
    assert plain.findings == [] and sorted(plain.unexplained) == sorted(misses)


def test_some_checked_in_record_has_every_miss_a_finding_once_stripped():
    assert any(strip for _, strip in _finding_cases()) and any(not strip for _, strip in _finding_cases())


def _bench_with(bench, rec, name):
    bench.mkdir()
    (bench / name).write_text(records.record_text(rec))
    return bench


def test_the_gate_shows_the_most_refused_attempts_of_the_record_and_its_ledger(tmp_path):
    bench = tmp_path / "bench"
    path = _save(synthetic.record(tmp_path, {"add": 3.0}), bench, "lab-0.1-gpu")
    why = tmp_path / "why.yaml"
    for text in ("overhead", "x", json.dumps(BANDWIDTH)):
        why.write_text(f"add: {text}\n")
        assert CliRunner().invoke(cli_main, ["explain", str(path), "--explanations", str(why)]).exit_code == 0
    _, row = _only_row(bench)
    assert "explained misses: add (after 2 refused)" in row.measured_text()
    assert records.read_ledger(bench)[-1]["refused_attempts"] == {"add": 2}
    # the record rewritten by hand without its trail: the ledger still counts the refusals
    rec = records.load(path)
    next(r for r in rec["ops"] if r["op"] == "add")["miss"]["attempts"] = []
    path.write_text(records.record_text(rec))
    _, row = _only_row(bench)
    assert "explained misses: add (after 2 refused)" in row.measured_text()
    assert [j["refused_attempts"] for j in row.explanations if j["op"] == "add"] == [2]


# --------------------------------------------------------------- the consistency rules' thresholds

def _why_not(tmp_path, rec, edit=None) -> list[str]:
    """The gate's reasons against ``rec`` saved by drill (and ``edit``-ed through drill's own update)."""
    path = _save(rec, tmp_path / "bench", "lab-0.1-gpu")
    if edit is not None:
        records.update(path, synthetic.json_edit(edit))
    return _only_row(tmp_path / "bench")[1].why_not


@pytest.mark.parametrize("ratio,refused", [(0.85, True), (0.89, True), (0.91, False), (1.0, False)])
def test_an_op_more_than_a_tenth_under_the_roofline_floor_never_counts(tmp_path, ratio, refused):
    why = _why_not(tmp_path, synthetic.record(tmp_path, {"add": ratio}))
    assert any(w.startswith("datasheet floor: add measured") for w in why) == refused, why


@pytest.mark.parametrize("fraction,refused", [(1.05, False), (1.09, False), (1.15, True), (1.5, True)])
def test_a_probe_more_than_a_tenth_over_the_datasheet_never_counts(tmp_path, fraction, refused):
    p = synthetic.plan(tmp_path)
    probes = synthetic.probes_for(p, fraction * p.datasheet.peak_flops_per_s, 0.5 * p.datasheet.hbm_bytes_per_s)
    why = _why_not(tmp_path, synthetic.record(tmp_path, probes=probes))
    attained = [w for w in why if w.startswith("attained:")]
    assert bool(attained) == refused, why
    if refused:
        assert "FLOP/s is" in attained[0] and "plausible: 10% to 110%" in attained[0]


def test_an_op_timed_from_its_fixed_cost_probes_traces_never_counts(tmp_path):
    """The op's measurement replaced by its fixed-cost probe's (the same XLA module, so the traces
    re-derive the times): two measurements may not cite one trace folder, and the module the traces
    ran was compiled for the probe's size, not N."""
    def borrow(rec):
        probe = rec["probes"]["fixed_cost_by_op"]["matmul"]["measurement"]
        (row,) = [r for r in rec["ops"] if r["op"] == "matmul"]
        row["measured"].update({k: v for k, v in probe.items() if k in row["measured"]})
    why = _why_not(tmp_path, synthetic.record(tmp_path), borrow)
    assert any(w.startswith("traces: matmul and fixed cost matmul cite the same traces") for w in why), why
    assert any(w.startswith("traces: matmul: cannot re-derive: trace-1: its jit_lab_matmul ran program 7, compiled "
                            "for bf16[128,128], bf16[128,128], not this measurement's bf16[4096,4096], bf16[4096,4096]")
               for w in why), why


# -- a CPU record relabelled as an H200: its traces give it away --------------------------------------

def _op_traces(tmp_path, rec, op):
    (row,) = [r for r in rec["ops"] if r["op"] == op]
    root = tmp_path / "bench" / row["measured"]["trace_dir"]  # stored relative to the records folder
    return sorted(root.glob("trace-*/plugins/profile/*/host.xplane.pb.gz"))


def test_one_trace_copied_three_times_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    first, *others = _op_traces(tmp_path, rec, "add")
    for other in others:
        other.write_bytes(first.read_bytes())
    why = _why_of(tmp_path, rec)
    assert any(w.startswith("traces: add: cannot re-derive: trace-1 and trace-2 are byte-identical") for w in why), why


def test_three_traces_with_one_timeline_never_count(tmp_path):
    """One trace with a byte changed in each copy (a host thread's name): other bytes, the same times."""
    import gzip

    rec = synthetic.record(tmp_path)
    first, *others = _op_traces(tmp_path, rec, "softmax")
    data = gzip.decompress(first.read_bytes())
    assert data.count(b"python") == 1
    for k, other in enumerate(others, start=1):
        other.write_bytes(gzip.compress(data.replace(b"python", f"pytho{k}".encode()), mtime=0))
    why = _why_of(tmp_path, rec)
    assert any(w.startswith("traces: softmax: cannot re-derive: trace-1 and trace-2 hold the module's events at "
                            "the same times") for w in why), why


def test_a_device_plane_whose_lines_are_host_threads_never_counts(tmp_path):
    """A CPU trace's /host:CPU plane renamed /device:GPU:0 keeps its thread lines (tf_XLA..., python)."""
    import gzip

    rec = synthetic.record(tmp_path)
    for trace in _op_traces(tmp_path, rec, "matmul"):
        data = gzip.decompress(trace.read_bytes())
        assert b"Stream #13" in data
        trace.write_bytes(gzip.compress(data.replace(b"Stream #13", b"tf_XLAExec"), mtime=0))
    why = _why_of(tmp_path, rec)
    assert any(w.startswith("device planes: the device plane's lines are host threads (tf_XLAExec)")
               for w in why), why
    assert not any(w.startswith("traces: matmul") for w in why), why  # its times still re-derive


def test_an_op_citing_another_runs_traces_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    own = tmp_path / "bench" / rec["trace_dir"]
    shutil.copytree(own / "add", tmp_path / "bench" / "traces" / "another-run" / "add")

    def borrow(r):
        (row,) = [o for o in r["ops"] if o["op"] == "add"]
        row["measured"]["trace_dir"] = "traces/another-run/add"
    why = _why_of(tmp_path, rec, borrow)
    assert any(w.startswith("traces: add: its traces") and "are not under the record's own traces/lab-0.1-gpu"
               in w for w in why), why
    assert not any(w.startswith("traces: add: cannot") for w in why), why  # the borrowed times re-derive


def test_a_record_whose_own_trace_folder_is_outside_its_records_folder_never_counts(tmp_path):
    def move(r):
        r["trace_dir"] = str(tmp_path / "elsewhere")
    why = _why_of(tmp_path, synthetic.record(tmp_path), move)
    assert any(w.startswith("traces: the record's own trace folder") for w in why), why


def test_a_first_gpu_run_at_the_counted_size_8192_counts_and_passes(tmp_path):
    assert 8192 in records.COUNTED_SIZES
    _save(synthetic.record(tmp_path, {"softmax": 1.9}, size=8192), tmp_path / "bench", "lab-0.1-gpu")
    result, row = _only_row(tmp_path / "bench")
    assert result.status == "pass" and row.counted and row.why_not == [] and row.status == "pass"
    assert row.within_2x == 5 and row.takes_slot


def test_a_gpu_run_at_n_1024_is_practice_and_takes_no_slot(tmp_path):
    """N=1024 is no counted size (records.COUNTED_SIZES), so it is practice even on a GPU. A perfect first
    run there is not counted and leaves the device's first-run slot to a counted size."""
    bench = tmp_path / "bench"
    small = synthetic.record(tmp_path, size=1024, started_at="2026-11-29T12:00:00+00:00")
    assert small["summary"]["criterion_met"] and small["platform"] == "gpu"
    _save(small, bench, "lab-0.1-gpu-a")
    result, row = _only_row(bench)
    assert result.status != "pass" and not row.counted and not row.takes_slot
    assert any(w.startswith("size: N=1024 is practice") for w in row.why_not), row.why_not
    _save(synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00"), bench, "lab-0.1-gpu-b")
    result = gate.evaluate(bench)
    rows = {r.path.rsplit("/", 1)[-1]: r for r in result.rows}
    assert result.status == "pass" and rows["lab-0.1-gpu-b.json"].counted  # N=4096 after it is the first run
    assert not rows["lab-0.1-gpu-a.json"].counted
