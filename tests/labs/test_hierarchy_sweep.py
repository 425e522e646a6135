"""The CPU hierarchy's levels from a sweep: plateaus, their names from sysfs, the order check, the
interleaved and re-measured probes (labs.measure.hierarchy), on made-up sweeps: no jax, no timing."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.model.hierarchy import Level
from labs.measure import hierarchy as lab_hierarchy
from labs.measure.hierarchy import SweepPoint

KIB, MIB = 2**10, 2**20


def _points(rates_by_size: list[tuple[int, float]], spread: float = 0.02) -> list[SweepPoint]:
    return [SweepPoint(float(w), r, spread) for w, r in rates_by_size]


def _sizes(first: int, count: int) -> list[int]:
    return [first * 2**k for k in range(count)]


def test_the_sweep_runs_from_16_kib_to_well_past_the_largest_cache_and_within_the_budget():
    sizes = lab_hierarchy.sweep_sizes(32 * MIB, None)
    assert sizes[0] == 16 * KIB and sizes[-1] >= 4 * 32 * MIB and sizes[-1] < 8 * 32 * MIB
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    assert lab_hierarchy.sweep_sizes(300 * MIB, None)[-1] <= lab_hierarchy.SWEEP_MAX_TOP_BYTES  # a host's L3
    assert lab_hierarchy.sweep_sizes(None, None)[-1] >= lab_hierarchy.SWEEP_MIN_TOP_BYTES
    assert lab_hierarchy.sweep_sizes(32 * MIB, 64 * MIB)[-1] <= 16 * MIB  # a quarter of the budget


def test_three_plateaus_are_found_and_a_lone_step_between_two_is_no_level():
    sizes = _sizes(16 * KIB, 14)  # 16 KiB .. 128 MiB
    rates = [200e9] * 3 + [120e9] * 3 + [90e9] + [60e9] * 4 + [20e9] * 3  # 90 GB/s: the step into L3
    groups = lab_hierarchy.plateaus(_points(list(zip(sizes, rates))))
    assert [len(g) for g in groups] == [3, 3, 4, 3]
    assert [round(sum(p.bytes_per_s for p in g) / len(g) / 1e9) for g in groups] == [200, 120, 60, 20]


def test_points_within_their_spreads_stay_one_plateau():
    noisy = _points([(w, 100e9 * (1.3 if k % 2 else 1.0)) for k, w in enumerate(_sizes(16 * KIB, 8))], spread=0.2)
    assert len(lab_hierarchy.plateaus(noisy)) == 1  # 30% apart, but each point's spread is 20%
    quiet = _points([(w, 100e9 * (1.3 if k >= 4 else 1.0)) for k, w in enumerate(_sizes(16 * KIB, 8))], spread=0.01)
    assert len(lab_hierarchy.plateaus(quiet)) == 2


@given(st.lists(st.floats(1e9, 1e12), min_size=1, max_size=20), st.floats(0.0, 0.5))
def test_every_point_lands_in_one_plateau_in_order_unless_it_is_a_lone_step(rates, spread):
    points = _points(list(zip(_sizes(16 * KIB, len(rates)), rates)), spread)
    groups = lab_hierarchy.plateaus(points)
    kept = [p for g in groups for p in g]
    assert kept == sorted(kept, key=lambda p: p.working_set_bytes)  # smallest first, never reordered
    assert kept[-1] == points[-1] and kept[0] == points[0]  # the first and the last (main memory) always kept
    assert all(g for g in groups)


def test_sysfs_only_names_the_plateaus_and_a_disagreement_is_noted():
    sysfs = [("L1d", 48 * KIB), ("L2", 2 * MIB), ("L3", 300 * MIB)]
    names, notes = lab_hierarchy.label_plateaus([32 * KIB, 1 * MIB, 32 * MIB], sysfs)
    assert [n for n, _ in names] == ["L1d", "L2", "L3"]
    assert any(n.startswith("L3: sysfs lists 315 MB") and "the sweep's plateau ends at 33.6 MB" in n for n in notes)
    assert not any(n.startswith(("L1d", "L2:")) for n in notes)  # within 2x: nothing to say
    names, notes = lab_hierarchy.label_plateaus([1 * MIB, 32 * MIB], sysfs)  # no plateau for L1d
    assert [n for n, _ in names] == ["L2", "L3"]
    assert any("L1d (sysfs) show no plateau of their own" in n for n in notes)
    names, notes = lab_hierarchy.label_plateaus([32 * KIB, 1 * MIB, 8 * MIB, 64 * MIB], sysfs[:2])
    assert [n for n, _ in names] == ["L1d", "L2", "C3", "C4"]  # more plateaus than sysfs lists
    names, _ = lab_hierarchy.label_plateaus([32 * KIB], [])
    assert names[0][0] == "C1"


def _level(name: str, rate: float, spread: float, main: bool = False) -> Level:
    return Level(name, "", None if main else 1e6, rate, "", spread, None, main)


def test_a_level_slower_than_the_next_one_out_beyond_both_spreads_is_out_of_order():
    levels = [_level("L1d", 11e9, 0.05), _level("L2", 105e9, 0.05), _level("L3", 20e9, 0.1),
              _level("DRAM", 30e9, 0.1, True)]
    assert lab_hierarchy.out_of_order(levels) == [0, 2]  # L1d < L2, L3 < DRAM (as the Xeon's loaded sweep)
    assert lab_hierarchy.out_of_order([_level("L2", 95e9, 0.3), _level("L3", 110e9, 0.3)]) == []  # within 60%
    assert lab_hierarchy.out_of_order([_level("L2", 200e9, 0.0), _level("DRAM", 20e9, 0.0, True)]) == []


class _FakeProbe:
    """A probe whose rounds return the next spread's samples: median 1 s, spread as given."""

    def __init__(self, spreads: list[float]):
        self.spreads = iter(spreads)
        self.rounds = 0

    def run(self, reps: int, round_index: int) -> list[float]:
        self.rounds += 1
        s = next(self.spreads)
        return [1.0 - s, 1.0 - s / 2, 1.0, 1.0 + s / 2, 1.0 + s][:reps]


def test_probes_are_interleaved_and_a_noisy_one_is_re_measured_once_then_flagged():
    order: list[str] = []
    quiet_fake, noisy_fake, calmed_fake = _FakeProbe([0.01] * 9), _FakeProbe([0.9] * 9), _FakeProbe([0.9] * 3 + [0.01] * 3)
    probes = [lab_hierarchy._Probe(name, fake.run, 1e9) for name, fake in
              (("quiet", quiet_fake), ("noisy", noisy_fake), ("calmed", calmed_fake))]
    lab_hierarchy.settle(probes, order.append, rounds=3, reps=5)
    assert order[:6] == ["quiet", "noisy", "calmed"] * 2  # each round runs every probe in turn
    assert order[9:] == ["noisy", "calmed"] * 3  # re-measured once, interleaved, only the noisy ones
    assert quiet_fake.rounds == 3 and noisy_fake.rounds == 6 and calmed_fake.rounds == 6
    flagged = {p.label: p.flagged for p in probes}
    assert flagged == {"quiet": False, "noisy": True, "calmed": False}
    assert probes[2].spread <= lab_hierarchy.NOISY_SPREAD  # the re-measure replaced the noisy samples


def test_the_dram_figure_and_the_calibrated_copy_are_the_same_op_sized_calls():
    from labs.measure import calibrate

    assert lab_hierarchy.MAIN_CALL_BYTES == calibrate.CPU_COPY_CALL_BYTES
    assert 2 * MIB <= 2 * lab_hierarchy.MAIN_CALL_BYTES <= 32 * MIB  # the op-sized range, bytes moved


@pytest.mark.parametrize("kind,dtype", list(itertools.product(("add", "reduce_sum", "softmax", "convert"),
                                                              ("bf16", "f32"))))
def test_an_op_probe_counts_its_bytes_as_generator_costs_does(kind, dtype):
    from generator.model import costs

    shape = (64, 2048)
    if kind == "convert":
        other = "f32" if dtype == "bf16" else "bf16"
        assert lab_hierarchy.op_bytes(kind, shape, dtype) == costs.array_bytes(shape, dtype) + costs.array_bytes(shape, other)
    else:
        assert lab_hierarchy.op_bytes(kind, shape, dtype) == costs.cost(kind, shape, dtype).bytes
