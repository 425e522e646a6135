"""The course seed's numbers and the scaling book's worked answers, reproduced exactly."""

import pytest

from generator.model import catalogue, costs, roofline

# The seed's LAB·0.1 predict(), copied verbatim as the oracle (constants from its CHIPS dict).
SEED_CHIPS = {
    "v5e": {"flops": 1.97e14, "hbm_bw": 8.2e11},
    "v6e": {"flops": 9.20e14, "hbm_bw": 1.6e12},
}


def seed_predict(name, flops, bytes_moved, chip):
    c = SEED_CHIPS[chip]
    intensity = flops / bytes_moved
    ridge = c["flops"] / c["hbm_bw"]
    bound = "compute" if intensity >= ridge else "memory"
    floor_s = max(flops / c["flops"], bytes_moved / c["hbm_bw"])
    return {"op": name, "flops": flops, "bytes": bytes_moved, "intensity": intensity,
            "bound": bound, "floor_us": floor_s * 1e6}


N = 4096
SEED_OPS = [
    (seed_predict("matmul NxNxN", 2 * N**3, 2 * 3 * N**2, "v5e"), ("matmul", (N, N, N))),
    (seed_predict("matmul skinny 8xNxN", 2 * 8 * N**2, 2 * (8 * N + N * N + 8 * N), "v5e"), ("matmul", (8, N, N))),
    (seed_predict("elementwise add", N**2, 2 * 3 * N**2, "v5e"), ("add", (N, N))),
    (seed_predict("softmax rows", 5 * N**2, 2 * 2 * N**2, "v5e"), ("softmax", (N, N))),
    (seed_predict("reduce_sum", N**2, 2 * (N**2 + N), "v5e"), ("reduce_sum", (N, N))),
]


@pytest.mark.parametrize("seed,ours", SEED_OPS, ids=[s["op"] for s, _ in SEED_OPS])
def test_seed_lab_table_reproduced_exactly(seed, ours):
    op, shape = ours
    est = roofline.estimate(catalogue.get("v5e"), costs.cost(op, shape, "bf16"))
    assert est.cost.flops == seed["flops"]
    assert est.cost.bytes == seed["bytes"]
    assert est.intensity_flops_per_byte == seed["intensity"]
    assert est.bound == seed["bound"]
    assert est.floor_s * 1e6 == seed["floor_us"]


def test_seed_ridges_match_catalogue():
    for name, c in SEED_CHIPS.items():
        assert catalogue.get(name).ridge_flops_per_byte("bf16") == c["flops"] / c["hbm_bw"]
    assert round(catalogue.get("v5e").ridge_flops_per_byte()) == 240  # "about 240 FLOPs per byte"


def test_ex01_playground_numbers():
    est = roofline.estimate(catalogue.get("v5e"), costs.cost("matmul", (2048, 2048, 2048)))
    assert roofline.summary_lines(est) == [
        "intensity: 682.7 FLOPs/byte",
        "verdict: compute-bound",
        "attainable: 197 TFLOP/s",
        "floor latency: 87.2 µs",
    ]


def test_scaling_book_matmul_critical_batch():
    """bf16 matmul with B << D,F is compute-bound roughly when B exceeds the ridge (v5e ~240)."""
    chip = catalogue.get("v5e")
    D = F = 32768
    assert roofline.estimate(chip, costs.matmul(200, D, F)).bound == "memory"
    assert roofline.estimate(chip, costs.matmul(280, D, F)).bound == "compute"


def test_scaling_book_int8_rules():
    chip = catalogue.get("v5e")
    D = F = 32768
    # int8 everything: bytes halve and the int8 peak doubles, so the rule barely moves (B ~ 240).
    int8_ridge = chip.ridge_flops_per_byte("int8")
    assert roofline.estimate(chip, costs.matmul(200, D, F, "int8")).bound == "memory"
    assert roofline.estimate(chip, costs.matmul(280, D, F, "int8")).bound == "compute"
    assert int8_ridge == pytest.approx(2 * chip.ridge_flops_per_byte("bf16"))
    # int8 weights, bf16 activations, bf16 FLOPs: compute-bound once B > ridge / 2 (~120).
    mixed = costs.matmul(100, D, F, "bf16", rhs_dtype="int8")
    assert mixed.dtype == "bf16" and mixed.operand_dtypes["rhs"] == "int8"
    assert roofline.estimate(chip, mixed).bound == "memory"
    assert roofline.estimate(chip, costs.matmul(140, D, F, "bf16", rhs_dtype="int8")).bound == "compute"


def test_scaling_book_dot_product_intensity_tends_to_half():
    assert costs.dot(10**9).intensity_flops_per_byte == pytest.approx(0.5, rel=1e-6)
    assert costs.dot(10**9).flops == 2 * 10**9


def test_embedding_is_memory_bound_with_no_flops():
    c = costs.embedding(4096, 32000, 4096, "bf16")
    assert c.flops == 0
    assert c.bytes == 2 * 4096 * 4096 * 2 + 4096 * 4
    assert roofline.estimate(catalogue.get("v6e"), c).bound == "memory"
