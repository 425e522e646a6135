"""The notebook's measure cell refuses to run before the learner's five predictions are written and read."""

from __future__ import annotations

from labs import inputs, notebook_guard

SEED = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")
FIVE = {"matmul": "700us", "skinny_matmul": "12 us", "add": "26us", "softmax": "28us", "reduce_sum": "11us"}


def _read(mapping):
    return inputs.predictions_from_mapping(mapping, SEED)


def test_all_five_written_and_read_may_measure():
    assert notebook_guard.measure_refusal(FIVE, _read(FIVE), False, SEED) is None


def test_empty_predictions_are_refused_with_the_way_out():
    empty = {op: "" for op in SEED}
    why = notebook_guard.measure_refusal(empty, None, False, SEED)
    assert "write your predictions for all 5 ops" in why and "PRACTICE = True" in why
    assert notebook_guard.measure_refusal({}, None, False, SEED) is not None


def test_a_missing_op_is_named():
    four = {**FIVE, "softmax": "  "}
    why = notebook_guard.measure_refusal(four, _read({k: v for k, v in four.items() if v.strip()}), False, SEED)
    assert why.startswith("no prediction yet for softmax")


def test_predictions_edited_after_they_were_read_must_be_read_again():
    edited = {**FIVE, "add": "40us"}
    why = notebook_guard.measure_refusal(edited, _read(FIVE), False, SEED)
    assert "changed since the predictions cell read them" in why
    assert notebook_guard.measure_refusal(FIVE, None, False, SEED).startswith("MY_PREDICTIONS changed")


def test_an_unreadable_prediction_says_which():
    why = notebook_guard.measure_refusal({**FIVE, "add": "fast"}, None, False, SEED)
    assert "add" in why and "fix it in MY_PREDICTIONS" in why
    assert "must be a dict" in notebook_guard.measure_refusal(["700us"], None, False, SEED)


def test_practice_mode_measures_without_predictions():
    assert notebook_guard.measure_refusal({}, None, True, SEED) is None
    assert notebook_guard.measure_refusal({}, None, "yes", SEED) is not None  # only True sets practice
