"""The learner's calibration over their records: bias (median measured/predicted), spread, trend.

Records are built by hand here (only the fields the computation reads) and by the
real runner (``tests.labs.synthetic``); every expected number is worked in the test.
"""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs import calibration_bias as cb
from tests.labs import synthetic

OPS = ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")


def _record(started: str, predicted: dict[str, float], measured: dict[str, float], **extra) -> dict:
    rows = []
    for op, seconds in measured.items():
        mine = {"seconds": predicted[op], "text": f"{predicted[op]}s"} if op in predicted else None
        rows.append({"op": op, "label": op.replace("_", " "), "predictions": {"learner": mine, "datasheet": None},
                     "measured": {"measured_s": seconds}})
    return {"measurement_started_at": started, "device_kind": "cpu", "size": 1024, "ops": rows, **extra}


def test_no_records_and_records_without_predictions_of_yours():
    empty = cb.prediction_bias([])
    assert empty.runs == [] and empty.median_ratio is None and empty.trend == "none"
    theirs = _record("2026-12-01T10:00:00+00:00", {}, {"add": 1e-3})
    assert cb.prediction_bias([("a.json", theirs)]).predictions == 0
    assert "no predictions of yours" in cb.format_lines(empty)[0]


def test_bias_per_op_overall_and_within_2x_worked_by_hand():
    # run 1: matmul 3x slower than predicted, add 0.25x (4x faster), softmax exact
    one = _record("2026-12-01T10:00:00+00:00", {"matmul": 1e-3, "add": 4e-4, "softmax": 2e-5},
                  {"matmul": 3e-3, "add": 1e-4, "softmax": 2e-5})
    # run 2 (later): matmul 1.5x, add 0.5x (exactly 2x: within), softmax 1.2x
    two = _record("2026-12-01T11:00:00+00:00", {"matmul": 1e-3, "add": 2e-4, "softmax": 1e-5},
                  {"matmul": 1.5e-3, "add": 1e-4, "softmax": 1.2e-5})
    bias = cb.prediction_bias([("two.json", two), ("one.json", one)])  # any order in, oldest first out
    assert [r.path for r in bias.runs] == ["one.json", "two.json"]
    by_op = {o.op: o for o in bias.ops}
    assert by_op["matmul"].median_ratio == pytest.approx(2.25) and by_op["matmul"].within_2x == 0.5
    assert by_op["add"].median_ratio == pytest.approx(0.375) and by_op["add"].within_2x == 0.5
    assert by_op["add"].low_ratio == pytest.approx(0.25 + 0.25 * 0.25) and by_op["add"].high_ratio == pytest.approx(
        0.25 + 0.25 * 0.75)
    assert by_op["softmax"].within_2x == 1.0
    every = [3.0, 0.25, 1.0, 1.5, 0.5, 1.2]
    assert bias.predictions == 6 and bias.median_ratio == pytest.approx(statistics.median(every))
    assert bias.within_2x == pytest.approx(4 / 6)
    assert bias.spread_factor == pytest.approx(math.exp(statistics.stdev(math.log(r) for r in every)))
    first = math.exp((math.log(3) + math.log(4) + 0) / 3)
    last = math.exp((math.log(1.5) + math.log(2) + math.log(1.2)) / 3)
    assert bias.runs[0].typical_miss == pytest.approx(first) and bias.runs[1].typical_miss == pytest.approx(last)
    assert bias.trend == "closer" and bias.leaning == "balanced"
    assert cb.prediction_bias([("one.json", one)]).trend == "one run"
    assert cb.prediction_bias([("a", two), ("b", _record("2026-12-01T12:00:00+00:00", {"add": 1e-5},
                                                         {"add": 1e-3}))]).trend == "further"


def test_ratios_are_recomputed_from_the_seconds_not_the_stored_ratios():
    rec = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4}, {"add": 5e-4})
    rec["ops"][0]["ratios"] = {"learner": 1.0}  # an edited ratio is ignored
    assert cb.prediction_bias([("a", rec)]).median_ratio == pytest.approx(5.0)


@pytest.mark.parametrize("bad", [0, -1e-3, None, "1ms", float("nan"), float("inf"), True])
def test_unusable_seconds_are_left_out(bad):
    rec = _record("2026-12-01T10:00:00+00:00", {"add": bad, "matmul": 1e-3}, {"add": 1e-4, "matmul": 2e-3})
    bias = cb.prediction_bias([("a", rec)])
    assert bias.predictions == 1 and bias.median_ratio == pytest.approx(2.0)


def test_leaning_says_which_way_you_miss():
    fast = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4, "matmul": 1e-4}, {"add": 3e-4, "matmul": 5e-4})
    slow = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4, "matmul": 1e-4}, {"add": 3e-5, "matmul": 5e-5})
    assert cb.prediction_bias([("a", fast)]).leaning == "too fast"
    assert cb.prediction_bias([("a", slow)]).leaning == "too slow"
    text = "\n".join(cb.format_lines(cb.prediction_bias([("a", fast)])))
    assert "ops take longer than you predict" in text and "median measured/predicted 4x" in text


def test_round_trip_through_json():
    rec = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4, "matmul": 1e-4}, {"add": 3e-4, "matmul": 5e-4})
    bias = cb.prediction_bias([("a", rec)])
    assert cb.PredictionBias.from_dict(bias.to_dict()) == bias


def test_a_record_made_by_the_runner(tmp_path):
    """The real record layout: learner predictions equal to the floors, ops measured at given ratios."""
    rec = synthetic.record(tmp_path, ratios={"matmul": 3.0, "add": 0.4})
    bias = cb.prediction_bias([("r", rec)])
    by_op = {o.op: o.median_ratio for o in bias.ops}
    assert set(by_op) == set(OPS)
    assert by_op["matmul"] == pytest.approx(3.0, rel=1e-4) and by_op["add"] == pytest.approx(0.4, rel=1e-4)
    assert by_op["softmax"] == pytest.approx(1.0) and bias.within_2x == pytest.approx(3 / 5)


_ratio = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60)
@given(st.lists(st.dictionaries(st.sampled_from(OPS), _ratio, min_size=1), min_size=1, max_size=6),
       st.floats(min_value=0.01, max_value=100))
def test_invariants(runs, scale):
    """Each op's median lies in its middle half; fractions are in [0, 1]; spread >= 1; typical miss >= 1;
    predicting every op ``scale`` times longer divides every ratio (and the medians) by ``scale``."""
    def records(k):
        return [(f"r{i}", _record(f"2026-12-01T{i:02d}:00:00+00:00", {op: 1e-4 * k for op in r},
                                  {op: 1e-4 * x for op, x in r.items()})) for i, r in enumerate(runs)]
    bias, scaled = cb.prediction_bias(records(1.0)), cb.prediction_bias(records(scale))
    assert bias.predictions == sum(len(r) for r in runs)
    for o in bias.ops:
        assert o.low_ratio <= o.median_ratio * (1 + 1e-12) and o.median_ratio <= o.high_ratio * (1 + 1e-12)
        assert 0 <= o.within_2x <= 1
    assert 0 <= bias.within_2x <= 1
    assert bias.spread_factor is None or bias.spread_factor >= 1 - 1e-12
    assert all(r.typical_miss >= 1 - 1e-12 for r in bias.runs)
    assert scaled.median_ratio == pytest.approx(bias.median_ratio / scale, rel=1e-9)
    for a, b in zip(bias.ops, scaled.ops):
        assert b.median_ratio == pytest.approx(a.median_ratio / scale, rel=1e-9)
    if bias.spread_factor is not None:
        assert scaled.spread_factor == pytest.approx(bias.spread_factor, rel=1e-6)


def test_a_runs_bias_is_its_median_not_its_mean():
    # One wild op in a run moves the mean (4x) but not the median (1x): the run's bias is the median.
    rec = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4, "matmul": 1e-4, "softmax": 1e-4},
                  {"add": 1e-4, "matmul": 1e-4, "softmax": 1e-3})
    run = cb.prediction_bias([("a", rec)]).runs[0]
    assert run.predictions == 3 and run.median_ratio == pytest.approx(1.0)
    two = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4, "matmul": 1e-4}, {"add": 1e-4, "matmul": 3e-4})
    assert cb.prediction_bias([("b", two)]).runs[0].median_ratio == pytest.approx(2.0)


@pytest.mark.parametrize("ratio,leaning", [
    (1.3, "too fast"), (2.0, "too fast"), (1.2, "balanced"), (1.0, "balanced"), (1 / 1.2, "balanced"),
    (1 / 1.3, "too slow"), (0.5, "too slow"),
])
def test_leaning_turns_at_a_quarter_either_way(ratio, leaning):
    # "balanced" within 1.25x either way: a median of 1.3x already leans.
    rec = _record("2026-12-01T10:00:00+00:00", {"add": 1e-4}, {"add": 1e-4 * ratio})
    bias = cb.prediction_bias([("a", rec)])
    assert bias.median_ratio == pytest.approx(ratio) and bias.leaning == leaning
