"""Scoring and timing helpers: math invariants (hypothesis) and the rotation plan."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from labs.measure import calls as measure, timing
from labs.records import score

positive = st.floats(min_value=1e-9, max_value=1e3, allow_nan=False, allow_infinity=False)


@given(positive, positive)
def test_ratio_is_measured_over_predicted(measured, predicted):
    r = score.ratio(measured, predicted)
    assert r == pytest.approx(measured / predicted)
    assert r * predicted == pytest.approx(measured)


@given(st.floats(min_value=1e-6, max_value=1e6))
def test_within_2x_is_symmetric_in_slower_and_faster(r):
    assert score.within(r) == score.within(1 / r)


@given(st.floats(min_value=0.5, max_value=2.0))
def test_everything_between_half_and_double_is_a_hit(r):
    assert score.within(r) is True


@given(st.floats(min_value=2.0, max_value=1e6, exclude_min=True))
def test_beyond_double_is_a_miss_either_way(r):
    assume(r > 2.0)
    assert score.within(r) is False and score.within(1 / r) is False


def test_missing_values_give_no_ratio():
    assert score.ratio(None, 1.0) is None and score.ratio(1.0, 0.0) is None
    assert score.within(None) is None


def test_graded_kind_prefers_the_learner():
    assert score.graded_kind({"learner": 1.0, "datasheet": 1.0}) == "learner"
    assert score.graded_kind({"learner": None, "datasheet": 1.0, "calibrated": 1.0}) == "datasheet"
    assert score.graded_kind({"calibrated": 1.0}) == "calibrated"
    assert score.graded_kind({}) is None


@given(st.lists(positive, min_size=1, max_size=50))
def test_summary_orders_min_median_max(samples):
    s = timing.summarize(samples)
    assert s.min_s <= s.median_s <= s.max_s and s.samples == len(samples)
    assert s.spread >= 0


def test_summary_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        timing.summarize([])


@given(set_bytes=st.integers(1, 2**34), cache=st.one_of(st.none(), st.integers(1, 2**28)),
       budget=st.one_of(st.none(), st.floats(1e6, 1e12)))
def test_rotation_stays_in_budget_and_beats_the_cache_when_it_can(set_bytes, cache, budget):
    try:
        r = timing.plan_rotation(set_bytes, cache, budget)
    except MemoryError:
        assert budget is not None and 2 * set_bytes > budget
        return
    assert 1 <= r.sets <= timing.MAX_BUFFER_SETS
    if budget is not None:
        assert (r.sets + 1) * set_bytes <= budget or r.sets == 1
    if r.defeats_cache:
        assert r.total_bytes > 2 * cache
    room = math.inf if budget is None else budget // set_bytes - 1
    if cache and budget is None and 2 * cache // set_bytes + 1 <= timing.MAX_BUFFER_SETS:
        assert r.defeats_cache
    if budget is None:
        assert r.sets >= timing.MIN_BUFFER_SETS
    assert r.sets <= max(1, room)


def test_rotation_examples():
    # an H200 at N=4096, bf16 add: two 32 MiB inputs per set, 50 MB L2 -> 2 sets (134 MB > 100 MB)
    r = timing.plan_rotation(2 * 4096 * 4096 * 2, 50_000_000, 80e9)
    assert r.sets == 2 and r.defeats_cache
    # a 4 MiB set behind a 32 MiB cache needs 17 sets
    assert timing.plan_rotation(4 * 2**20, 32 * 2**20, None).sets == 17
    with pytest.raises(MemoryError):
        timing.plan_rotation(10**12, None, 1e9)


@pytest.mark.parametrize("cache", [None, 0])
def test_an_unknown_cache_is_never_said_to_be_defeated(cache):
    r = timing.plan_rotation(4096, cache, None)
    assert r.sets == timing.MIN_BUFFER_SETS
    assert r.to_dict() == {"buffer_sets": timing.MIN_BUFFER_SETS, "buffer_set_bytes": 4096,
                           "cache_bytes": cache, "defeats_cache": False}


def test_time_calls_excludes_warmup_and_counts_every_call():
    calls = []

    class Done:
        def block_until_ready(self):
            return self

    def call(i):
        calls.append(i)
        return Done()

    samples = timing.time_calls(call, reps=5, warmup=3)
    assert len(samples) == 5 and calls == list(range(8)) and all(s >= 0 for s in samples)


@pytest.mark.parametrize("analysis, expected", [
    ({"flops": 10.0, "bytes accessed": 20.0, "transcendentals": 3.0}, (10.0, 20.0, 3.0)),
    ([{"flops": 4.0}], (4.0, 0.0, 0.0)),  # older jax: a list, take element 0; absent keys are zero
    ([], (0.0, 0.0, 0.0)),
    (None, (0.0, 0.0, 0.0)),
    # H200, jax 0.11.2: a cuBLAS custom call is reported as -1, i.e. not counted
    ({"flops": -1.0, "bytes accessed": -1.0}, (None, None, 0.0)),
])
def test_cost_analysis_is_read_with_defaults(analysis, expected):
    got = measure.read_cost_analysis(analysis)
    assert (got["flops"], got["bytes_accessed"], got["transcendentals"]) == expected


def test_xla_counts_differ_outside_ten_percent():
    agree = measure.XlaCost(1.05e9, 2e6, 0, 1_000_000_000, 2_000_000)
    assert not agree.flops_differ and not agree.bytes_differ
    differ = measure.XlaCost(2e9, 0.0, 0, 1_000_000_000, 2_000_000)
    assert differ.flops_differ and differ.bytes_differ
    uncounted = measure.XlaCost(None, None, None, 1_000_000_000, 2_000_000)
    assert not uncounted.flops_differ and not uncounted.bytes_differ
