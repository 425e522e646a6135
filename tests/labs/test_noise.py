"""Device-time quantiles and the `noisy` flag (pure Python): invariants, then the threshold's edges."""

import pytest
from hypothesis import given, strategies as st

from labs.measure import calls as measure

times = st.lists(st.floats(min_value=1e-7, max_value=1.0, allow_nan=False), min_size=1, max_size=60)


@given(times, st.floats(min_value=0.0, max_value=1.0))
def test_quantiles_lie_within_the_samples_and_grow_with_q(samples, q):
    ordered = sorted(samples)
    value = measure.quantile(ordered, q)
    assert ordered[0] <= value <= ordered[-1]
    assert measure.quantile(ordered, 0.0) == ordered[0] and measure.quantile(ordered, 1.0) == ordered[-1]
    assert measure.quantile(ordered, min(1.0, q + 0.1)) >= value


@given(st.lists(times, min_size=1, max_size=4), st.floats(min_value=1e-3, max_value=1e3))
def test_summary_is_ordered_and_scale_free(per_trace, scale):
    d = measure.summarize_device(per_trace)
    assert d.min_s <= d.p20_s <= d.p50_s <= d.p80_s and len(d.runs_s) == sum(map(len, per_trace))
    scaled = measure.summarize_device([[s * scale for s in t] for t in per_trace])
    assert scaled.spread == pytest.approx(d.spread, rel=1e-6, abs=1e-9)
    medians = d.trace_medians_s
    near_edge = abs(d.spread - measure.NOISY_SPREAD) < 1e-6 or (
        len(medians) > 1 and abs(max(medians) / min(medians) - measure.NOISY_TRACE_RATIO) < 1e-6)
    if not near_edge:  # rounding may tip a value sitting exactly on a threshold
        assert scaled.noisy == d.noisy  # noise is a property of the spread, not of the op's size


def test_quiet_runs_are_not_noisy_and_wide_runs_or_disagreeing_traces_are():
    quiet = measure.summarize_device([[1.0, 1.01, 0.99, 1.02], [1.0, 1.01, 0.99, 1.0], [1.01, 1.0, 1.02, 0.99]])
    assert not quiet.noisy and quiet.spread < 0.05 and quiet.p50_s == pytest.approx(1.0, abs=0.01)
    wide = measure.summarize_device([[1.0, 1.5, 0.7, 1.3, 0.8, 1.6]])
    assert wide.noisy and "IQR / median" in wide.noisy_why[0]
    apart = measure.summarize_device([[1.0, 1.0, 1.0], [1.3, 1.3, 1.3]])
    assert apart.noisy and any("trace medians 1.30x apart" in w for w in apart.noisy_why)
    edge = measure.summarize_device([[1.0, 1.0, 1.0], [1.25, 1.25, 1.25]])  # exactly at the threshold
    assert not any("trace medians" in w for w in edge.noisy_why)
