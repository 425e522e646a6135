"""The notebook's steps (labs.session): no measuring without five predictions unless practice; the
"why?" lines come before any table; explanations judged, the record rewritten, then the evidence."""

import pytest

from labs import records, session
from tests.labs import synthetic


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
    questions = session.why_questions(rec)
    assert len(questions) == 1 and questions[0].startswith("add: measured") and "why?" in questions[0]
    lines = session.explain(rec, path, {"add": "overhead"})
    assert lines[0].startswith("add: refused") and "still unexplained: add (try again)" in lines
    assert any(line.startswith("miss: elementwise add (3.00x (slower)): REFUSED 'overhead'") for line in lines)
    lines = session.explain(rec, path, {"add": "it streams at a third of the HBM bandwidth, 3 x 21 us = 63 us"})
    assert lines[0].startswith("add: accepted: below-peak-bandwidth") and "every miss explained" in lines
    assert any("explained by: below-peak-bandwidth" in line for line in lines)  # shown only once accepted
    assert any(line.endswith("[below-peak-bandwidth]") and line.startswith("miss: elementwise add") for line in lines)
    assert records.load(path)["ops"][2]["miss"]["accepted"] is True
