"""generator/model/collectives.py: pod totals, collective times, point-to-point transfers.

Examples use only figures the reference (shared/reference/chips.md, the scaling book's
"All About TPUs" tables and text) states; properties check the model's invariants.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import catalogue
from generator.model import collectives as C

CAT = catalogue.load()
V5E, V5P, V6E, V3 = (CAT.get(n) for n in ("v5e", "v5p", "v6e", "v3"))


# --- pods and slices ------------------------------------------------------------

def test_v5e_pod_totals_from_the_table():
    # pod 16x16, host 4x2, one TensorCore, 1.97e14 bf16 FLOP/s and 16 GB per chip
    t = C.pod_totals(V5E)
    assert (t.chips, t.chips_per_host, t.hosts, t.tensorcores) == (256, 8, 32, 256)
    assert t.peak_flops_per_s == pytest.approx(256 * 1.97e14)
    assert t.hbm_bytes == pytest.approx(256 * 16e9)
    assert t.ici_wraparound == (True, True)  # an axis of 16 has wraparound


def test_v5p_pod_totals_from_the_table():
    # pod 16x20x28, host 2x2x1, megacore (2 TensorCores), 4.59e14 FLOP/s and 96 GB per chip
    t = C.pod_totals(V5P)
    assert (t.chips, t.chips_per_host, t.hosts, t.tensorcores) == (8960, 4, 2240, 17920)
    assert t.peak_flops_per_s == pytest.approx(8960 * 4.59e14)
    assert t.hbm_bytes == pytest.approx(8960 * 96e9)
    assert t.ici_wraparound == (True, True, True)  # 16, 20, 28 are all multiples of 4


def test_slice_wraparound_rules():
    assert C.pod_totals(V5E, (8, 16)).ici_wraparound == (False, True)  # only an axis of 16
    assert C.pod_totals(V6E, (4, 4)).ici_wraparound == (False, False)
    assert C.pod_totals(V5P, (4, 4, 8)).ici_wraparound == (True, True, True)
    # the book: "a 2x2x4 won't have any wraparounds" (the optical switches come with whole 4x4x4 cubes)
    assert C.pod_totals(V5P, (2, 2, 4)).ici_wraparound == (False, False, False)
    assert C.pod_totals(catalogue.get("v4p"), (4, 4, 4)).ici_wraparound \
        == (True, True, True)
    assert C.pod_totals(V3, (4, 4)).ici_wraparound == (None, None)  # not stated for v3


@pytest.mark.parametrize("chip, shape", [("v5e", (3, 5)), ("v5e", (4, 12)), ("v5p", (2, 16, 16)), ("v5p", (2, 4, 6)),
                                         ("v4p", (4, 4, 6))])
def test_only_slices_that_exist(chip, shape):
    with pytest.raises(C.TopologyError, match="no TPU"):
        C.pod_totals(catalogue.get(chip), shape)


def test_an_axis_of_4_on_v5p_needs_the_slice():
    with pytest.raises(C.TopologyError, match="whole"):
        C.resolve_wrap(V5P, (4,))
    assert C.resolve_wrap(V5P, (4,), shape=(4, 4, 4)) == (True,)
    assert C.resolve_wrap(V5P, (4,), shape=(2, 2, 4)) == (False,)
    assert C.resolve_wrap(V5P, (16,)) == (True,) and C.resolve_wrap(V5P, (2,)) == (False,)


def test_all_to_all_on_a_line_is_computed_for_a_line():
    # the middle link of a line of 8 carries 4*4/64 = V/4 each way at the one-way bandwidth
    t = C.collective_time("all_to_all", 1e9, (8,), (False,), 4.5e10, 9e10, 1e-6)
    assert t.t_bandwidth_s == pytest.approx(1e9 / 4 / 4.5e10)
    ring = C.collective_time("all_to_all", 1e9, (8,), (True,), 4.5e10, 9e10, 1e-6)
    assert ring.t_bandwidth_s == pytest.approx(1e9 / 4 / 9e10)
    assert "line" in " ".join(C.collective_lines(t)) and "ring" not in " ".join(C.collective_lines(t))


def test_small_slice_still_needs_a_host():
    assert C.pod_totals(V5E, (2, 2)).hosts == 1
    assert C.pod_totals(V5E, (4, 4)).hosts == 2


@pytest.mark.parametrize("shape", [(32, 32), (4, 4, 4), (17, 2)])
def test_slice_must_fit_the_pod(shape):
    with pytest.raises(C.TopologyError):
        C.pod_totals(V5E, shape)


@pytest.mark.parametrize("text", ["", "4x", "4xa", "0x4", "4,4", "-1x4"])
def test_bad_shapes(text):
    with pytest.raises(C.TopologyError):
        C.parse_shape(text)


def test_gpu_has_no_pod():
    with pytest.raises(C.TopologyError, match="no pod size"):
        C.pod_totals(CAT.get("h100"))


# --- collectives: examples --------------------------------------------------------------

def test_all_gather_with_wrap_is_V_over_W_bidi():
    # v5e, an axis of 16 (wraparound): T = V / W_bidi = 1e9 / 9e10
    t = C.chip_collective(CAT, V5E, "all_gather", 1e9, (16,))
    assert t.wrap == (True,)
    assert t.t_bandwidth_s == pytest.approx(1e9 / 9e10)
    assert t.hops == 8 and t.t_latency_s == pytest.approx(8e-6)
    assert t.bound == "bandwidth" and t.t_s == pytest.approx(1e9 / 9e10)


def test_all_gather_without_wrap():
    # v5e, an axis of 8 (no wraparound): (N-1)/N * V / W_one_way = 7/8 * 1e9 / 4.5e10
    t = C.chip_collective(CAT, V5E, "all_gather", 1e9, (8,))
    assert t.wrap == (False,)
    assert t.t_bandwidth_s == pytest.approx(7 / 8 * 1e9 / 4.5e10)
    assert t.hops == 7


def test_two_wrapped_axes_halve_the_time():
    # the book: V / (W_bidi * n_axes)
    t = C.chip_collective(CAT, V5E, "all_gather", 1e9, (16, 16))
    assert t.t_bandwidth_s == pytest.approx(1e9 / (9e10 * 2))
    assert t.hops == 16


def test_no_wrap_typically_doubles():
    # the reference: smaller slices have no wraparound, "which typically doubles collective time"
    wrap = C.chip_collective(CAT, V5P, "all_gather", 1e9, (16,), "yes")
    line = C.chip_collective(CAT, V5P, "all_gather", 1e9, (16,), "no")
    assert line.t_bandwidth_s / wrap.t_bandwidth_s == pytest.approx(2 * 15 / 16)


def test_op_factors():
    base = C.chip_collective(CAT, V5E, "all_gather", 1e9, (16,))
    assert C.chip_collective(CAT, V5E, "reduce_scatter", 1e9, (16,)).t_s == pytest.approx(base.t_s)
    assert C.chip_collective(CAT, V5E, "all_reduce", 1e9, (16,)).t_bandwidth_s == pytest.approx(2 * base.t_bandwidth_s)
    assert C.chip_collective(CAT, V5E, "all_to_all", 1e9, (16,)).t_bandwidth_s == pytest.approx(base.t_bandwidth_s / 4)


def test_small_collective_is_latency_bound():
    # 1 MB over an axis of 16 on v5e: 1e6 / 9e10 = 11 us < 8 hops x 1 us? no: 11.1 us > 8 us.
    # 100 kB: 1.1 us bandwidth vs 8 us latency -> latency-bound
    t = C.chip_collective(CAT, V5E, "all_gather", 1e5, (16,))
    assert t.bound == "latency" and t.t_s == pytest.approx(8e-6)


def test_auto_wrap_needs_a_rule():
    with pytest.raises(C.TopologyError, match="wraparound"):
        C.chip_collective(CAT, V3, "all_gather", 1e9, (4,))
    assert C.chip_collective(CAT, V3, "all_gather", 1e9, (4,), "yes").wrap == (True,)


@pytest.mark.parametrize("kwargs", [dict(op="gather"), dict(nbytes=0), dict(nbytes=float("nan")),
                                    dict(axes=(1,)), dict(axes=())])
def test_collective_rejects_bad_input(kwargs):
    args = dict(op="all_gather", nbytes=1e9, axes=(4,), wrap=(True,), w_one_way=1.0, w_bidi=2.0, hop_latency_s=1e-6)
    args.update(kwargs)
    if "axes" in kwargs:
        args["wrap"] = tuple(True for _ in kwargs["axes"])
    with pytest.raises(C.TopologyError):
        C.collective_time(**args)


def test_worked_lines_name_the_numbers():
    lines = C.collective_lines(C.chip_collective(CAT, V5E, "all_reduce", 1e9, (8,)))
    text = "\n".join(lines)
    assert "no wraparound" in text and "4.5e10" in text and "bandwidth-bound" in text


# --- collectives: properties ----------------------------------------------------------------

axis = st.integers(min_value=2, max_value=64)
sizes = st.floats(min_value=1.0, max_value=1e12, allow_nan=False)
ops = st.sampled_from(C.OPS)
W1, WB, HOP = 4.5e10, 9e10, 1e-6


@given(ops, sizes, st.lists(axis, min_size=1, max_size=3))
def test_no_wrap_never_faster_than_wrap(op, v, axes):
    wrap = C.collective_time(op, v, tuple(axes), (True,) * len(axes), W1, WB, HOP)
    line = C.collective_time(op, v, tuple(axes), (False,) * len(axes), W1, WB, HOP)
    assert line.t_s >= wrap.t_s * (1 - 1e-12)
    assert line.t_bandwidth_s >= wrap.t_bandwidth_s * (1 - 1e-12)
    assert line.hops >= wrap.hops


@given(sizes, st.lists(axis, min_size=1, max_size=3), st.lists(st.booleans(), min_size=3, max_size=3))
def test_all_reduce_is_two_all_gathers_when_bandwidth_bound(v, axes, flags):
    wrap = tuple(flags[:len(axes)])
    ag = C.collective_time("all_gather", v, tuple(axes), wrap, W1, WB, HOP)
    ar = C.collective_time("all_reduce", v, tuple(axes), wrap, W1, WB, HOP)
    assert ar.t_bandwidth_s == pytest.approx(2 * ag.t_bandwidth_s)
    if ag.bound == "bandwidth":
        assert ar.bound == "bandwidth" and ar.t_s == pytest.approx(2 * ag.t_s)


@given(ops, st.integers(min_value=2, max_value=4096), st.integers(min_value=2, max_value=4096))
def test_bandwidth_term_with_wrap_is_independent_of_n(op, n, m):
    a = C.collective_time(op, 1e12, (n,), (True,), W1, WB, HOP)
    b = C.collective_time(op, 1e12, (m,), (True,), W1, WB, HOP)
    assert a.t_bandwidth_s == b.t_bandwidth_s
    if a.bound == b.bound == "bandwidth":
        assert a.t_s == b.t_s


@given(ops, st.booleans(), st.integers(min_value=2, max_value=4096), st.integers(min_value=1, max_value=4096))
def test_latency_bound_time_grows_with_hops(op, wrap, n, extra):
    small = C.collective_time(op, 1.0, (n,), (wrap,), W1, WB, HOP)  # 1 byte: latency-bound
    big = C.collective_time(op, 1.0, (n + 2 * extra,), (wrap,), W1, WB, HOP)
    assert small.bound == big.bound == "latency"
    assert big.hops > small.hops and big.t_s > small.t_s
    assert big.t_s == pytest.approx(big.hops * HOP)


@settings(max_examples=50)
@given(ops, sizes, st.lists(axis, min_size=1, max_size=3))
def test_more_axes_never_slower_bandwidth(op, v, axes):
    one = C.collective_time(op, v, (axes[0],), (True,), W1, WB, HOP)
    many = C.collective_time(op, v, tuple(axes), (True,) * len(axes), W1, WB, HOP)
    assert many.t_bandwidth_s == pytest.approx(one.t_bandwidth_s / len(axes))


# --- point to point -----------------------------------------------------------------------

def test_corner_to_corner_on_a_4x4_v5e():
    # no wraparound on a 4x4 v5e slice: 3 + 3 = 6 hops, two outgoing ports point the right way
    t = C.chip_transfer(CAT, V5E, (4, 4), (0, 0), (3, 3), 16e6)
    assert t.wrap == (False, False)
    assert t.hops == 6 and t.ports == 2
    assert t.first_byte_s == pytest.approx(6e-6)
    assert t.t_s == pytest.approx(6e-6 + 16e6 / (2 * 4.5e10))


def test_wraparound_takes_the_short_way():
    t = C.chip_transfer(CAT, V5E, (16, 16), (0, 0), (15, 0), 1e6)
    assert t.hops == 1 and t.ports == 1
    half = C.chip_transfer(CAT, V5E, (16, 16), (0, 0), (8, 0), 1e6)
    assert half.hops == 8 and half.ports == 2  # halfway round the ring: both directions are shortest


def test_transfer_rejects_same_chip_and_bad_coords():
    with pytest.raises(C.TopologyError):
        C.chip_transfer(CAT, V5E, (4, 4), (1, 1), (1, 1), 1e6)
    with pytest.raises(C.TopologyError):
        C.parse_coord("4,0", (4, 4))
    with pytest.raises(C.TopologyError):
        C.parse_coord("1,2,3", (4, 4))
    with pytest.raises(C.TopologyError):
        C.parse_coord("a,b", (4, 4))


coord = st.tuples(st.integers(0, 15), st.integers(0, 15))


@given(coord, coord, st.floats(min_value=1, max_value=1e10))
def test_transfer_wrap_never_slower(a, b, v):
    if a == b:
        return
    ring = C.transfer((16, 16), a, b, (True, True), v, W1, HOP)
    line = C.transfer((16, 16), a, b, (False, False), v, W1, HOP)
    assert ring.hops <= line.hops
    assert ring.t_s <= line.t_s * (1 + 1e-12)
    assert 1 <= ring.ports <= 4 and 1 <= line.ports <= 2
    assert math.isclose(line.t_s, line.hops * HOP + v / (line.ports * W1))
