"""A measured op kind's rate: the call size nearest the op's picked in its working set's level, and the
fixed cost charged once (the whole-call rate less the fixed cost), whatever the sizes."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.model import costs
from generator.model.hierarchy import FIXED_SHARE_MAX, MEASURED, Hierarchy, Level, OpRate
from generator.model.roofline import Ceilings

MIB = 1024 * 1024
L2 = Level("L2", "cache", 2 * MIB, 100e9, "sweep", 0.05)
DRAM = Level("DRAM", "main memory", None, 20e9, "sweep", 0.05, main_memory=True)
FALLBACK = Ceilings("cpu", 1e12, 20e9, "f32", "calibrated")


def _rate(level: str, call_bytes: float, bytes_per_s: float) -> OpRate:
    return OpRate("add", "f32", call_bytes * 4, bytes_per_s, 0.05, level, "probe", call_bytes=call_bytes)


def _hierarchy(*rates: OpRate) -> Hierarchy:
    return Hierarchy("cpu", MEASURED, (L2, DRAM), op_rates=rates)


def test_the_rate_measured_at_the_nearest_call_size_in_the_same_level_is_used():
    small, large = _rate("DRAM", 1 * MIB, 10e9), _rate("DRAM", 16 * MIB, 18e9)
    h = _hierarchy(small, large, _rate("L2", 12 * MIB, 99e9))
    assert h.op_rate_for("add", "f32", 64 * MIB, 2 * MIB) is small
    assert h.op_rate_for("add", "f32", 64 * MIB, 12 * MIB) is large
    assert h.op_rate_for("add", "f32", 64 * MIB) is large  # no call size: the largest call
    assert h.op_rate_for("add", "bf16", 64 * MIB, 2 * MIB) is None  # never another dtype's
    assert h.op_rate_for("reduce_sum", "f32", 64 * MIB, 2 * MIB) is None  # nor another kind's


def test_the_streaming_rate_is_the_whole_call_less_its_fixed_cost():
    rate = _rate("DRAM", 1e6, 10e9)  # a call of 100 us
    assert rate.streaming_bytes_per_s(0.0) == 10e9
    assert rate.streaming_bytes_per_s(20e-6) == pytest.approx(1e6 / 80e-6)
    # A fixed cost probed larger than the call is clipped to FIXED_SHARE_MAX of it.
    assert rate.streaming_bytes_per_s(1.0) == pytest.approx(1e6 / ((1 - FIXED_SHARE_MAX) * 100e-6))
    no_size = OpRate("add", "f32", 4e6, 10e9, None, "DRAM", "probe")
    assert no_size.streaming_bytes_per_s(20e-6) == 10e9


@given(st.floats(0.0, 200e-6), st.sampled_from([256, 512, 1024, 2048]))
def test_an_op_of_the_probed_size_is_predicted_at_its_whole_call_time(fixed_cost_s, n):
    """The probe's own call, predicted: its streaming at the reduced rate plus the fixed cost on top
    gives back the whole call's measured time (the fixed cost counted once), until the clip binds."""
    cost = costs.add(n, n, "f32")
    call_s = 150e-6
    rate = _rate("DRAM", float(cost.bytes), cost.bytes / call_s)
    h = _hierarchy(rate)
    predicted = h.prediction(FALLBACK, cost, 64 * MIB, fixed_cost_s).seconds
    if fixed_cost_s <= FIXED_SHARE_MAX * call_s:
        assert predicted == pytest.approx(call_s, rel=1e-9)
    else:
        assert predicted == pytest.approx((1 - FIXED_SHARE_MAX) * call_s + fixed_cost_s, rel=1e-9)
