"""``generator.model.costs``: one known answer per op and dtype, mixed matmul dtypes included, each worked by hand.

The conventions are the scaling book's ("Rooflines"): a matmul [B,D] @ [D,F] is 2·B·D·F FLOPs and moves
each input once and its output once, the FLOPs (and the output, unless named) in the wider of its two input
dtypes; a dot of two [N] vectors is 2N FLOPs and (2N + 1) elements. Add, softmax and reduce_sum follow the
course seed's LAB·0.1 ``predict()``: 3, 2 and (M·N + M) elements moved, 1, 5 and 1 FLOPs per element. An
embedding gathers T rows of width D (no FLOPs): the rows read, T int32 indices read, the rows written.

Small shapes with distinct dims (B=2, D=3, F=5; M=3, N=5) keep the working short and catch a swapped dim;
bytes per element: f32 4, bf16 2, fp8 1, int8 1 (int32 indices 4). Every expected value below is a literal
worked in the comment beside it, not the formula run again.
"""

from __future__ import annotations

import pytest

from generator.model import costs

# matmul B=2, D=3, F=5: FLOPs 2·2·3·5 = 60 for every dtype; bytes = 6·lhs + 15·rhs + 10·out.
# (lhs, rhs) -> (compute dtype, total bytes, output bytes written)
MATMUL_2_3_5 = {
    ("f32", "f32"): ("f32", 124, 40),     # 24 + 60 + 40
    ("bf16", "bf16"): ("bf16", 62, 20),   # 12 + 30 + 20
    ("fp8", "fp8"): ("fp8", 31, 10),      # 6 + 15 + 10
    ("int8", "int8"): ("int8", 31, 10),   # 6 + 15 + 10
    # mixed: the FLOPs, and the output, in the wider dtype
    ("int8", "bf16"): ("bf16", 56, 20),   # 6 + 30 + 20 (int8 activations, bf16 weights)
    ("bf16", "int8"): ("bf16", 47, 20),   # 12 + 15 + 20 (bf16 activations, int8 weights: the book's case)
    ("fp8", "bf16"): ("bf16", 56, 20),    # 6 + 30 + 20
    ("bf16", "fp8"): ("bf16", 47, 20),    # 12 + 15 + 20
    ("int8", "f32"): ("f32", 106, 40),    # 6 + 60 + 40
    ("f32", "int8"): ("f32", 79, 40),     # 24 + 15 + 40
    ("fp8", "f32"): ("f32", 106, 40),     # 6 + 60 + 40
    ("f32", "fp8"): ("f32", 79, 40),      # 24 + 15 + 40
    ("bf16", "f32"): ("f32", 112, 40),    # 12 + 60 + 40
    ("f32", "bf16"): ("f32", 94, 40),     # 24 + 30 + 40
}
# fp8 and int8 are both 1 byte: whichever computes, the bytes are 6 + 15 + 10 = 31.
SAME_WIDTH_MIXED = (("int8", "fp8"), ("fp8", "int8"))

# M=3, N=5 (15 elements) for the elementwise ops and reduce_sum; dot N=7; embedding T=3, V=11, D=5.
# dtype -> (FLOPs, bytes, output bytes written)
ADD_3_5 = {"f32": (15, 180, 60), "bf16": (15, 90, 30), "fp8": (15, 45, 15), "int8": (15, 45, 15)}  # 3·15·b
SOFTMAX_3_5 = {"f32": (75, 120, 60), "bf16": (75, 60, 30), "fp8": (75, 30, 15), "int8": (75, 30, 15)}  # 5·15; 2·15·b
REDUCE_SUM_3_5 = {"f32": (15, 72, 12), "bf16": (15, 36, 6), "fp8": (15, 18, 3), "int8": (15, 18, 3)}  # (15+3)·b
DOT_7 = {"f32": (14, 60, 4), "bf16": (14, 30, 2), "fp8": (14, 15, 1), "int8": (14, 15, 1)}  # 2·7; (14+1)·b
EMBEDDING_3_11_5 = {"f32": (0, 132, 60), "bf16": (0, 72, 30), "fp8": (0, 42, 15), "int8": (0, 42, 15)}  # 30·b + 3·4

ELEMENTWISE = {
    ("add", (3, 5)): ADD_3_5, ("softmax", (3, 5)): SOFTMAX_3_5, ("reduce_sum", (3, 5)): REDUCE_SUM_3_5,
    ("dot", (7,)): DOT_7, ("embedding", (3, 11, 5)): EMBEDDING_3_11_5,
}


def test_every_op_and_dtype_has_a_known_answer_here():
    """The tables cover every op of ``costs.OPS`` and every dtype a roofline can be asked about."""
    from generator.model.units import COMPUTE_DTYPES

    assert {op for op, _ in ELEMENTWISE} | {"matmul"} == set(costs.OPS)
    for table in ELEMENTWISE.values():
        assert set(table) == set(COMPUTE_DTYPES)
    pairs = set(MATMUL_2_3_5) | set(SAME_WIDTH_MIXED)
    assert pairs == {(a, b) for a in COMPUTE_DTYPES for b in COMPUTE_DTYPES}


@pytest.mark.parametrize("lhs, rhs", sorted(MATMUL_2_3_5))
def test_matmul_flops_and_bytes_per_dtype_pair(lhs, rhs):
    compute, nbytes, written = MATMUL_2_3_5[(lhs, rhs)]
    c = costs.cost("matmul", (2, 3, 5), lhs, rhs_dtype=rhs)
    assert (c.flops, c.bytes, c.bytes_written, c.dtype) == (60, nbytes, written, compute)
    assert c.operand_dtypes == {"lhs": lhs, "rhs": rhs, "out": compute}
    assert c.bytes_working == f"2×3×{nbytes_of(lhs)} + 3×5×{nbytes_of(rhs)} + 2×5×{nbytes_of(compute)}"


def nbytes_of(dtype: str) -> int:
    return {"f32": 4, "bf16": 2, "fp8": 1, "int8": 1}[dtype]


@pytest.mark.parametrize("lhs, rhs", SAME_WIDTH_MIXED)
def test_matmul_of_two_one_byte_dtypes_moves_the_same_bytes(lhs, rhs):
    c = costs.cost("matmul", (2, 3, 5), lhs, rhs_dtype=rhs)
    assert (c.flops, c.bytes, c.bytes_written) == (60, 31, 10)
    assert c.dtype in (lhs, rhs)


def test_the_issues_int8_by_bf16_matmul_writes_a_bf16_output():
    """``--dtype int8 --rhs-dtype bf16`` at 1024³: 1024² x 1 (int8 lhs) + 1024² x 2 (bf16 rhs) + 1024² x 2
    (the bf16 output) = 1,048,576 + 2,097,152 + 2,097,152 = 5,242,880 B (5.243e6), not 4.194e6 with an
    int8 output; 2 x 1024³ = 2,147,483,648 FLOPs at bf16's peak."""
    c = costs.cost("matmul", (1024, 1024, 1024), "int8", rhs_dtype="bf16")
    assert (c.bytes, c.bytes_written, c.flops, c.dtype) == (5_242_880, 2_097_152, 2_147_483_648, "bf16")
    assert f"{c.bytes:.3e}" == "5.243e+06"


def test_a_named_output_dtype_is_what_is_written():
    """int8 x int8 accumulated and written as int32: 6 + 15 + 10 x 4 = 61 B; still int8 FLOPs."""
    c = costs.cost("matmul", (2, 3, 5), "int8", rhs_dtype="int8", out_dtype="int32")
    assert (c.flops, c.bytes, c.bytes_written, c.dtype) == (60, 61, 40, "int8")
    assert c.operand_dtypes["out"] == "int32"


def test_ex01_the_seeds_example():
    """EX·01: bf16 2048³ on v5e: 2 x 2048³ = 17,179,869,184 FLOPs; 3 x 2048² x 2 = 25,165,824 B; 682.7 FLOPs/B."""
    c = costs.cost("matmul", (2048, 2048, 2048), "bf16")
    assert (c.flops, c.bytes) == (17_179_869_184, 25_165_824)
    assert round(c.intensity_flops_per_byte, 1) == 682.7


@pytest.mark.parametrize("op, shape, dtype", [(op, shape, d) for (op, shape), table in ELEMENTWISE.items()
                                              for d in table])
def test_each_op_and_dtype(op, shape, dtype):
    flops, nbytes, written = ELEMENTWISE[(op, shape)][dtype]
    c = costs.cost(op, shape, dtype)
    assert (c.flops, c.bytes, c.bytes_written, c.dtype, c.shape) == (flops, nbytes, written, dtype, shape)


def test_the_seeds_lab_counts_at_n_4096():
    """The seed's ``predict()`` lines at N=4096 (bf16): add 2·3·N², softmax 5N² and 2·2·N², reduce_sum
    2·(N² + N), the skinny matmul 2·(8N + N·N + 8N)."""
    n = 4096
    assert (costs.add(n, n).flops, costs.add(n, n).bytes) == (16_777_216, 100_663_296)
    assert (costs.softmax(n, n).flops, costs.softmax(n, n).bytes) == (83_886_080, 67_108_864)
    assert (costs.reduce_sum(n, n).flops, costs.reduce_sum(n, n).bytes) == (16_777_216, 33_562_624)
    skinny = costs.matmul(8, n, n)
    assert (skinny.flops, skinny.bytes) == (268_435_456, 33_685_504)


def test_the_dot_products_intensity_tends_to_one_half_in_bf16():
    """The scaling book's example: 2N FLOPs over (2N + 1) x 2 bytes."""
    c = costs.dot(1_000_000)
    assert c.flops == 2_000_000 and c.bytes == 4_000_002
    assert abs(c.intensity_flops_per_byte - 0.5) < 1e-6


def test_softmax_computes_one_exponential_per_element():
    assert costs.transcendentals(costs.softmax(3, 5, "f32")) == 15
    assert costs.transcendentals(costs.add(3, 5)) == 0 and costs.transcendentals(costs.matmul(2, 3, 5)) == 0


def test_vmem_footprint_of_a_double_buffered_tile():
    """bm=2, bk=3, bn=5, bf16: 2 buffers x (6 + 15) x 2 + 10 x 2 = 104 B; one buffer: 42 + 20 = 62 B."""
    assert costs.vmem_footprint_bytes(2, 3, 5) == 104
    assert costs.vmem_footprint_bytes(2, 3, 5, buffers=1) == 62
    assert costs.vmem_footprint_bytes(2, 3, 5, "f32") == 208


def test_the_wrong_methods_tweaked_costs_on_a_mixed_matmul():
    """int8 x bf16 at (2, 3, 5) is 56 B (6 + 30 + 20) and 60 FLOPs; each slip changes one thing."""
    c = costs.cost("matmul", (2, 3, 5), "int8", rhs_dtype="bf16")
    assert costs.inputs_only(c).bytes == 36                 # 6 + 30: the output write forgotten
    assert costs.one_input_only(c, "lhs").bytes == 26       # 6 + 20: the weights not read
    assert costs.one_input_only(c, "rhs").bytes == 50       # 30 + 20: the activations not read
    assert costs.as_elements(c).bytes == 31                 # 6 + 15 + 10: elements, not bytes
    assert costs.in_dtype_bytes(c, "f32").bytes == 124      # 24 + 60 + 40: every operand at 4 bytes
    assert costs.in_macs(c).flops == 30                     # 60 / 2 multiply-adds
    assert costs.in_dtype_bytes(c, "f32").dtype == "bf16"   # the peak that applies is unchanged


@pytest.mark.parametrize("shape, dtype, message", [
    ((2, 3), "bf16", "op 'matmul' takes 3 dims"),
    ((2, 0, 5), "bf16", "every dimension must be positive"),
    ((2, 3, 5), "f16", "unknown dtype 'f16'"),
])
def test_bad_shapes_and_dtypes_are_cost_errors(shape, dtype, message):
    with pytest.raises(costs.CostError, match=message):
        costs.cost("matmul", shape, dtype)


def test_the_command_line_gives_the_issues_mixed_matmul_bytes():
    import json

    from click.testing import CliRunner

    from drills.cli import cli

    result = CliRunner().invoke(cli, ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,1024,1024",
                                      "--dtype", "int8", "--rhs-dtype", "bf16", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["bytes"] == 5_242_880 and data["operand_dtypes"] == {"lhs": "int8", "rhs": "bf16", "out": "bf16"}
