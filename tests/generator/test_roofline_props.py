"""Hypothesis properties of the cost models and the roofline."""

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import catalogue, costs, roofline

CAT = catalogue.load()
chips = st.sampled_from(CAT.chips)
dims = st.integers(min_value=1, max_value=1 << 16)
dtypes = st.sampled_from(["bf16", "int8"])


@st.composite
def op_costs(draw):
    op = draw(st.sampled_from(list(costs.OPS)))
    shape = tuple(draw(dims) for _ in costs.OPS[op].dims)
    return costs.cost(op, shape, draw(dtypes))


@given(chips, op_costs())
def test_floor_is_max_and_upper_at_most_twice_floor(chip, cost):
    est = roofline.estimate(chip, cost)
    assert est.floor_s == max(est.t_math_s, est.t_comms_s)
    assert est.floor_s <= est.upper_s <= 2 * est.floor_s
    assert est.attainable_flops_per_s <= est.ceilings.peak_flops_per_s


@given(chips, op_costs())
def test_verdict_agrees_with_which_term_dominates(chip, cost):
    est = roofline.estimate(chip, cost)
    # Compute-bound exactly when intensity >= ridge, i.e. when T_math >= T_comms.
    assert (est.bound == "compute") == (est.intensity_flops_per_byte >= est.ridge_flops_per_byte)
    if est.bound == "compute":
        assert est.t_math_s >= est.t_comms_s * (1 - 1e-12)
    else:
        assert est.t_math_s <= est.t_comms_s * (1 + 1e-12)


@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=1, max_value=10**9),
       st.integers(min_value=0, max_value=60))
def test_verdict_flips_exactly_at_the_ridge(ridge, nbytes, bw_exponent):
    """An op whose intensity equals the ridge is compute-bound; one FLOP fewer, memory-bound."""
    bandwidth = float(2**bw_exponent)  # powers of two keep ridge = peak / bandwidth exact
    ceilings = roofline.Ceilings("test", ridge * bandwidth, bandwidth)
    assert ceilings.ridge_flops_per_byte == ridge

    def verdict(flops):
        return roofline.estimate(ceilings, costs.OpCost(
            "synthetic", (1,), "bf16", flops, nbytes, "", "", "", "", "test")).bound

    assert verdict(ridge * nbytes) == "compute"
    assert verdict(ridge * nbytes - 1) == "memory"


@given(dims, dims, dims, dtypes)
def test_matmul_scaling_when_a_dimension_doubles(B, D, F, dtype):
    one = costs.matmul(B, D, F, dtype)
    assert costs.matmul(2 * B, D, F, dtype).flops == 2 * one.flops
    b = one.bytes // (B * D + D * F + B * F)
    assert costs.matmul(2 * B, D, F, dtype).bytes == one.bytes + (B * D + B * F) * b
    assert costs.matmul(B, D, 2 * F, dtype).bytes == one.bytes + (D * F + B * F) * b


@given(dims, dims, st.sampled_from(["add", "softmax", "reduce_sum"]))
def test_elementwise_and_reductions_scale_linearly(M, N, op):
    one, twice = costs.cost(op, (M, N)), costs.cost(op, (2 * M, N))
    assert twice.flops == 2 * one.flops
    assert twice.bytes == 2 * one.bytes
    assert twice.intensity_flops_per_byte == one.intensity_flops_per_byte


@given(st.integers(min_value=1, max_value=1 << 20))
def test_bf16_square_matmul_intensity_is_n_over_3(N):
    assert costs.matmul(N, N, N, "bf16").intensity_flops_per_byte * 3 == N


@given(chips, op_costs(), st.floats(min_value=1.5, max_value=10))
def test_faster_chip_never_predicts_a_slower_floor(chip, cost, factor):
    base = roofline.Ceilings.from_chip(chip, cost.dtype)
    faster = roofline.Ceilings("faster", base.peak_flops_per_s * factor, base.hbm_bytes_per_s * factor)
    assert roofline.estimate(faster, cost).floor_s <= roofline.estimate(base, cost).floor_s


@settings(max_examples=50)
@given(st.lists(st.integers(min_value=-5, max_value=5000), min_size=1, max_size=4))
def test_parse_shape_round_trips_or_names_the_problem(dims_list):
    text = ",".join(str(d) for d in dims_list)
    if all(d > 0 for d in dims_list):
        assert costs.parse_shape(text) == tuple(dims_list)
    else:
        try:
            costs.parse_shape(text)
        except costs.CostError as exc:
            assert "positive" in str(exc)
        else:
            raise AssertionError("non-positive shape accepted")


@given(st.integers(min_value=1, max_value=64), st.data())
def test_hops_are_symmetric_and_wraparound_never_costs_more(n, data):
    from generator.model import links

    src = data.draw(st.integers(min_value=0, max_value=n - 1))
    dst = data.draw(st.integers(min_value=0, max_value=n - 1))
    line, ring = links.hops(n, src, dst, False), links.hops(n, src, dst, True)
    assert line == links.hops(n, dst, src, False) and ring == links.hops(n, dst, src, True)
    assert ring <= line and ring <= n // 2
    assert links.transfer_seconds(1e9, 4.5e10, ring, 1e-6) >= links.transfer_seconds(1e9, 4.5e10)


@given(dims, dims, dims, dtypes)
def test_single_buffered_vmem_footprint_is_the_matmuls_bytes(bm, bk, bn, dtype):
    one = costs.vmem_footprint_bytes(bm, bk, bn, dtype, buffers=1)
    assert one == costs.matmul(bm, bk, bn, dtype).bytes
    two = costs.vmem_footprint_bytes(bm, bk, bn, dtype, buffers=2)
    assert two - one == (bm * bk + bk * bn) * (2 if dtype == "bf16" else 1)
