"""Hand-made bugs in the miss reasons' corrected times that the rest of the fast set let through, each
pinned by a known answer worked by hand (docs/development.md lists every mutant and the test that kills it)."""

from __future__ import annotations

import pytest

from generator import explain as mr

FLOOR_S = 21e-6  # a memory-bound add's floor, predicted right
FIXED_S = 38e-6  # this op kind's smallest call, beyond its work (the fixed-cost probe)
FRESH_S = 12e-6  # its output written to new memory each call, beyond writing it in place (the fresh-output probe)


def small_add(**over) -> mr.OpEvidence:
    """A 21 µs add measured at 71 µs, whose record holds both a fixed cost and a fresh-output cost."""
    base = dict(
        op="add", bound="memory", platform="cpu", dtype="f32", predicted_seconds=FLOOR_S, measured_seconds=71e-6,
        floor_seconds=FLOOR_S, model_flops=1.0e6, model_bytes=FLOOR_S * 4.8e12, xla_flops=1.0e6,
        xla_bytes=FLOOR_S * 4.8e12, fixed_cost_seconds=FIXED_S, attained_bytes_per_s=4.0e12,
        attained_flops_per_s=7.0e14, peak_bytes_per_s=4.8e12, peak_flops_per_s=9.89e14, emulated_dtype=False,
        cost_op="add", shape=(1024, 1024), fresh_output_seconds=FRESH_S)
    base.update(over)
    return mr.OpEvidence(**base)


def test_each_added_cost_adds_to_the_estimate_alone():
    ev = small_add()
    assert mr.corrected_time(ev, []) == pytest.approx(FLOOR_S)
    assert mr.corrected_time(ev, ["fixed-cost"]) == pytest.approx(FLOOR_S + FIXED_S)  # 59 µs
    assert mr.corrected_time(ev, ["fresh-output"]) == pytest.approx(FLOOR_S + FRESH_S)  # 33 µs


def test_fresh_output_adds_to_the_fixed_cost_never_replaces_it():
    """Mutant: ``_fresh_output_fix`` setting ``fixed_s`` to the fresh-output time, dropping the fixed cost
    already added (71 µs would become 33 µs)."""
    ev = small_add()
    both = FLOOR_S + FIXED_S + FRESH_S  # 21 + 38 + 12 = 71 µs
    assert mr.corrected_time(ev, ["fixed-cost", "fresh-output"]) == pytest.approx(both)
    assert mr.corrected_time(ev, ["fresh-output", "fixed-cost"]) == pytest.approx(both)  # the order named: none
    # with a third reason that changes the rate, both added costs still stand on top of its time
    faster = small_add(level_name="L2", level_bytes_per_s=9.6e12, level_size_bytes=2e6)
    assert mr.corrected_time(faster, ["cache-level", "fixed-cost", "fresh-output"]) == pytest.approx(
        FLOOR_S / 2 + FIXED_S + FRESH_S)
