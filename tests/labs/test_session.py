"""The notebook's steps (labs.session): off the catalogue the probes shown first as the device's datasheet
and stored as the record's constants; no measuring without five predictions unless practice; the
"why?" lines come before any table; explanations judged, the record rewritten, then the evidence."""

import pytest

from generator import explain as miss_reasons
from generator.model.units import fmt
from labs.records import folder as records
from labs import runner, session
from labs.records.types import as_record
from tests.labs import synthetic

SEED = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")


def test_measuring_without_all_five_predictions_is_refused_unless_practice(tmp_path):
    plan = synthetic.plan(tmp_path)
    learner, read = session.read_predictions({"matmul": "700us"})
    with pytest.raises(session.NeedPredictions, match="missing: skinny_matmul, add, softmax, reduce_sum"):
        session.measure_and_save(plan, learner, read)
    with pytest.raises(session.NeedPredictions, match="PRACTICE = True"):
        session.measure_and_save(plan, *session.read_predictions({}))
    assert not list((tmp_path / "bench").glob("*.json"))  # nothing measured, nothing saved


def test_why_then_explain_then_the_evidence(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0})
    path = records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu")
    questions = session.why_questions(as_record(rec))
    assert len(questions) == 1 and questions[0].startswith("add: measured") and "why?" in questions[0]
    typed, lines = session.explain(as_record(rec), path, {"add": "overhead"})
    assert lines[0].startswith("add: refused") and "still unexplained: add (try again)" in lines
    assert any(line.startswith("miss: elementwise add (3.00x (slower)): REFUSED 'overhead'") for line in lines)
    # words alone name no reason: refused, and still asked
    typed, lines = session.explain(typed, path, {"add": "it streams at a third of the HBM bandwidth, 3 x 21 us = 63 us"})
    assert lines[0].startswith("add: refused: name your reasons first") and "still unexplained: add (try again)" in lines
    ev = records.op_evidence(rec, "add")  # the reason named first, the working in the record's own numbers
    corrected = fmt(ev.model_bytes / ev.attained_bytes_per_s, "s")
    typed, lines = session.explain(typed, path, {"add": f"below-peak-bandwidth: it streams {fmt(ev.model_bytes, 'B')} / "
                                               f"the copy probe's {fmt(ev.attained_bytes_per_s, 'B/s')} = {corrected}"})
    assert lines[0].startswith("add: accepted: below-peak-bandwidth") and "every miss explained" in lines
    assert any("explained by: below-peak-bandwidth" in line for line in lines)  # shown only once accepted
    assert any(line.endswith("[below-peak-bandwidth]") and line.startswith("miss: elementwise add") for line in lines)
    miss = records.load(path)["ops"][2]["miss"]
    assert miss["accepted"] is True and [a["verdict"] for a in miss["attempts"]] == ["refused", "refused", "accepted"]


def _cpu_plan_with_fake_probes(tmp_path, monkeypatch):
    """A CPU plan (no catalogue entry) whose probes and ops are numbers, not jax: ``calls`` counts
    how often the probes are measured."""
    from labs.measure import probes, timing
    from labs.measure import ops as lab_ops

    plan = synthetic.plan(tmp_path, synthetic.device("cpu", "cpu"), size=128)
    probed = synthetic.probed_for(plan, 2e11, 1.5e10, fixed_cost_s=3e-6)
    calls = []

    def measure_probes(p, progress=None):
        calls.append(p)
        return probed

    def measure_op(p, name):
        m = synthetic.measurement(50e-6, trace_dir=p.trace_dir / name)
        synthetic.write_traces(m, "cpu", lab_ops.OPS[name].module_name())
        return runner.OpResult(m, None)

    monkeypatch.setattr(probes, "measure_probes", measure_probes)
    monkeypatch.setattr(runner, "_measure_op", measure_op)
    monkeypatch.setattr(timing, "dispatch_overhead_s", lambda: 5e-6)
    return plan, probed, calls


def test_off_the_catalogue_the_probes_are_shown_first_and_stored_as_the_constants(tmp_path, monkeypatch):
    from generator.model.units import fmt

    plan, probed, calls = _cpu_plan_with_fake_probes(tmp_path, monkeypatch)
    shown: list[str] = []
    assert session.measured_datasheet(plan, shown.append) is probed
    assert any("This device's datasheet (cpu), measured just now" in line for line in shown)
    assert any(fmt(2e11, "FLOP/s") in line for line in shown) and any(fmt(1.5e10, "B/s") in line for line in shown)
    learner, read = session.read_predictions({op: "40us" for op in SEED})  # read after the datasheet
    rec, path = session.measure_and_save(plan, learner, read, probed=probed)
    assert len(calls) == 1  # the probes shown are the record's: never measured twice
    assert rec == as_record(records.load(path))  # the record as stored
    rec = records.load(path)
    consts = rec["constants"]["measured_datasheet"]
    assert consts["peak_flops_per_s"] == probed.calibration.flops_per_s == rec["probes"]["attained_flops_per_s"]
    assert consts["hbm_bytes_per_s"] == probed.calibration.bytes_per_s == rec["probes"]["attained_bytes_per_s"]
    assert consts["fixed_cost_by_op_s"] == {op: v["fixed_cost_s"] for op, v in rec["probes"]["fixed_cost_by_op"].items()}
    assert consts["fixed_cost_by_op_s"]["add"] == pytest.approx(3e-6, rel=0.01)
    assert consts["shown_before_predictions"] is True
    # the same plan may not measure again (it would overwrite the traces this record points at)
    assert "run the cell that makes the plan" in session.already_measured(plan)
    with pytest.raises(runner.LabError, match="already measured a run"):
        session.measure_and_save(plan, learner, read, probed=probed)


def test_predictions_read_before_the_datasheet_was_shown_are_not_made_from_it(tmp_path, monkeypatch):
    plan, probed, _ = _cpu_plan_with_fake_probes(tmp_path, monkeypatch)
    learner, read = session.read_predictions({op: "40us" for op in SEED})  # read first ...
    session.measured_datasheet(plan, lambda line: None)  # ... then shown
    _, path = session.measure_and_save(plan, learner, read, probed=probed)
    assert records.load(path)["constants"]["measured_datasheet"]["shown_before_predictions"] is False


def test_a_catalogued_chip_measures_no_probes_before_the_predictions(tmp_path, monkeypatch):
    from labs.measure import probes

    monkeypatch.setattr(probes, "measure_probes", lambda *a, **k: pytest.fail("probed a catalogued chip"))
    shown: list[str] = []
    assert session.measured_datasheet(synthetic.plan(tmp_path), shown.append) is None and shown == []


def test_a_miss_the_evidence_cannot_explain_is_shown_as_a_finding_never_asked_why():
    from tests.conftest import REPO

    from generator import explain as miss_reasons

    rec = records.load(REPO / "tests" / "labs" / "fixtures" / "hierarchy"
                       / "lab-0.1-cpu-cpu-n128-20261202T064841Z.json")
    rec["probes"].pop("fixed_cost_by_op")  # without its fixed-cost probes, the N=128 run's misses explain less
    rec["probes"]["fixed_cost_s"] = 0.0
    misses = [r["op"] for r in rec["ops"] if r["verdict"] == "miss"]
    found = [op for op in misses if miss_reasons.unexplainable(records.op_evidence(rec, op))]
    assert found, "a miss no reason explains"
    questions = {q.split(":", 1)[0]: q for q in session.why_questions(as_record(rec))}
    assert sorted(questions) == sorted(misses)
    for op in found:
        assert "unexplained by the evidence" in questions[op] and "why? (" not in questions[op]
        assert "no derivation the evidence allows" in questions[op]
    assert all("why? (" in questions[op] for op in misses if op not in found)
