"""Mistakes named since the answer key's fourth round, and the spellings it accepts.

Each wrong answer here is worked by hand from the problem's params and the chip's figures (never
through a family's hook), typed as a learner writes it, and graded as `drill check` grades it: it
must be wrong and its mistake named first. Where two mistakes give the same number, the likelier
is named first (HBM read per core on a two-core chip; AllReduce as one AllGather on a line).
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from drills.quiz import assess
from drills.cli import cli
from generator.model import catalogue, units
from generator.problems import generate

CAT = catalogue.load()
LAT = float(CAT.fact("ici_hop_latency_s").value)


def _fig(chip: str, key: str) -> float:
    return float(CAT.get(chip).figures[key].value)


def _solve(skill_id: str, **params):
    reg = generate.registry()
    return reg.solve(reg.skill(skill_id), params)


def _first(p, value: float) -> list[str]:
    """The named mistakes of ``value`` typed to four figures in the answer's unit, after checking it is wrong."""
    out = assess.assess(p, f"{value:.4g} {p.answer.unit}".strip(), generate.grading_bands(p.family))
    assert out.status == assess.GRADED and out.correct is False, (p.id, value, out.feedback)
    return [m.misconception.id for m in out.matches]


def _floor(chip: str, case: str, shape: list[int], quantity: str = "floor", dtype: str = "bf16"):
    variant = case if quantity == "floor" else f"{case}-{quantity}"
    op = {"matmul_large": "matmul", "matmul_skinny": "matmul"}.get(case, case)
    return _solve(f"floor:{chip}:{variant}", chip=chip, op=op, case=case, shape=shape, dtype=dtype, quantity=quantity)


def test_bits_for_bytes_on_an_hbm_floor():
    p = _floor("a100", "softmax", [1024, 131072])
    nbytes = 2 * 1024 * 131072 * 2  # read and write, bf16
    assert _first(p, nbytes / (_fig("a100", "hbm_bytes_per_s") / 8))[0] == "bits-for-bytes"


def test_hbm_read_per_core_is_named_first_on_a_two_core_chip():
    p = _floor("v5p", "add", [8192, 8192], "t_comms")
    nbytes = 3 * 8192 * 8192 * 2
    assert _first(p, nbytes / (_fig("v5p", "hbm_bytes_per_s") / 2))[0] == "hbm-per-core"  # before wrong-dtype-size
    ridge = _solve("ridge:v4p:bf16", chip="v4p", dtype="bf16")
    peak = float(CAT.get("v4p").peak_flops["bf16"].value)
    assert _first(ridge, peak / (_fig("v4p", "hbm_bytes_per_s") / 2))[0] == "hbm-per-core"  # before sparse-peak


def test_t_comms_alone_on_a_compute_bound_floor_through_drill_check():
    result = CliRunner().invoke(cli, ["check", "--problem-id", "floor:v5e:matmul_large:2048x2048x2048-bf16@0357cfa2",
                                      "--answer", "30.7 us", "--json"])
    data = json.loads(result.output)
    assert data["correct"] is False and data["misconception"] == "one-term-floor", data


def test_the_ridge_given_as_an_intensity():
    p = _solve("intensity:v5e:add", chip="v5e", op="add", case="add", shape=[4096, 4096], dtype="bf16")
    ridge = float(CAT.get("v5e").peak_flops["bf16"].value) / _fig("v5e", "hbm_bytes_per_s")
    assert _first(p, ridge)[0] == "ridge-as-intensity"


def test_a_unit_slip_on_bytes():
    vmem = _solve("vmem_fit:v5e:bytes", chip="v5e", op="matmul", variant="bytes", dtype="bf16", block=[512, 512, 512],
                  buffers=2)
    need = (2 * (512 * 512 + 512 * 512) + 512 * 512) * 2
    assert _first(vmem, 1000 * need)[0] == "unit-slip-1000"
    pod = _solve("pod:v5p:hbm", chip="v5p", variant="hbm", slice="4x4x4")
    assert _first(pod, 64 * _fig("v5p", "hbm_bytes") / 1000)[0] == "unit-slip-1000"


def test_one_tensorcore_per_chip():
    p = _solve("pod:v5p:tensorcores", chip="v5p", variant="tensorcores", slice="4x4x8")
    assert _first(p, 128.0)[0] == "one-core-per-chip"


def _line_all_gather(chip: str, n: int, nbytes: float) -> float:
    """One AllGather over a line of ``n`` chips (no wraparound): (N-1)/N·V one way, N-1 hops."""
    return max((n - 1) / n * nbytes / _fig(chip, "ici_bytes_per_s_one_way"), (n - 1) * LAT)


@pytest.mark.parametrize("op, expected", [("all_reduce", "allreduce-as-allgather"),
                                          ("all_to_all", "alltoall-as-allgather")])
def test_a_collective_timed_as_one_all_gather(op, expected):
    # v5e 8x8: no wraparound (only an axis of 16 wraps); 4096x4096 bf16 over axis 0: bandwidth-bound
    p = _solve(f"collective:v5e:{op}", chip="v5e", variant=op, op=op, slice="8x8", over=[0], dtype="bf16",
               shape=[4096, 4096])
    assert _first(p, _line_all_gather("v5e", 8, 4096 * 4096 * 2))[0] == expected


def test_store_and_forward_and_bits_for_bytes_on_a_transfer():
    # v5e 8x8, (0,1) -> (5,1): 5 hops on a line, one port
    p = _solve("transfer:v5e:time", chip="v5e", variant="time", slice="8x8", src=[0, 1], dst=[5, 1], dtype="bf16",
               shape=[4096, 4096])
    wire = 4096 * 4096 * 2 / _fig("v5e", "ici_bytes_per_s_one_way")
    assert _first(p, 5 * wire + 5 * LAT)[0] == "store-and-forward"
    assert _first(p, 8 * wire + 5 * LAT)[0] == "bits-for-bytes"
    ici = _solve("interconnect:v5e:ici", chip="v5e", variant="ici", dtype="bf16", shape=[4096, 4096], axis=8, src=0,
                 dst=3, wrap=False)
    assert _first(ici, 3 * (wire + LAT))[0] == "store-and-forward"


def test_ici_bandwidth_for_a_pcie_or_dcn_transfer():
    p = _solve("interconnect:v5e:pcie", chip="v5e", variant="pcie", dtype="bf16", shape=[4096, 4096])
    assert _first(p, 4096 * 4096 * 2 / _fig("v5e", "ici_bytes_per_s_one_way"))[0] == "ici-for-offchip"
    ridge = _solve("host_link:v5e:ridge_dcn", chip="v5e", variant="ridge_dcn")
    peak = float(CAT.get("v5e").peak_flops["bf16"].value)
    assert _first(ridge, peak / _fig("v5e", "ici_bytes_per_s_one_way"))[0] == "ici-for-offchip"


def test_the_kv_cache_left_out():
    p = next(q for q in generate.generate(families=["transformer_step"], count=40, seed=5)
             if q.params["phase"] == "decode" and q.params["chip"] == "v5e")
    x = p.params
    b = units.DTYPE_BYTES[x["dtype"]]
    kv = 2 * x["layers"] * x["batch"] * x["seq"] * (x.get("kv_d_model") or x["d_model"]) * b
    weights = x["params"] * b
    activations = 2 * x["layers"] * x["batch"] * x["d_model"] * b  # one token per sequence in decode
    flops = 2 * x["params"] * x["batch"] + 4 * x["layers"] * x["batch"] * x["seq"] * x["d_model"]
    t_math = flops / float(CAT.get("v5e").peak_flops[x["dtype"]].value)
    without = max(t_math, (weights + activations) / _fig("v5e", "hbm_bytes_per_s"))
    assert math.isclose(float(p.answer.value), max(t_math, (weights + activations + kv) / _fig("v5e", "hbm_bytes_per_s")),
                        rel_tol=0.01), "the hand count of the step is the model's"
    assert _first(p, without)[0] == "kv-cache-left-out"


# --- spellings ---------------------------------------------------------------------------------------

def _check(pid: str, answer: str) -> dict:
    result = CliRunner().invoke(cli, ["check", "--problem-id", pid, "--answer", answer, "--json"])
    return json.loads(result.output)


FLOOR = "floor:v5e:matmul_large:2048x2048x2048-bf16@0357cfa2"  # 87.2 µs


@pytest.mark.parametrize("answer", ["~87.2 us", "≈ 87.2 µs", "~ 87 µs", "≈87.2us", "(~87.2) us"])
def test_about_before_a_number_is_read(answer):
    data = _check(FLOOR, answer)
    assert data["status"] == "graded" and data["correct"] is True, data


def test_a_decimal_comma_is_not_graded_and_says_why():
    data = _check(FLOOR, "87,2 us")
    assert data["status"] == "unreadable" and data["correct"] is None, data
    assert "decimal comma" in data["feedback"] and "87.2" in data["feedback"] and "never" in data["feedback"], data


@pytest.mark.parametrize("answer", ["bandwidth-bound", "memory-bandwidth-bound", "BW-bound", "HBM-bound",
                                    "Memory bandwidth bound."])
def test_the_memory_verdict_by_its_other_names(answer):
    p = next(q for q in generate.generate(families=["bound"], count=30, seed=3) if q.answer.choice == "memory")
    out = assess.assess(p, answer, generate.grading_bands(p.family))
    assert out.correct is True, (answer, out.feedback)


@pytest.mark.parametrize("answer", ["TPU {}", "the {}", "The TPU {}."])
def test_a_chip_choice_by_its_product_name(answer):
    p = next(q for q in generate.generate(families=["ridge"], count=60, seed=1)
             if q.answer.is_choice and q.answer.choice == "v6e")
    other = next(c for c in p.answer.choices if c != "v6e")
    assert assess.assess(p, answer.format("v6e"), generate.grading_bands(p.family)).correct is True
    assert assess.assess(p, answer.format(other), generate.grading_bands(p.family)).correct is False


def test_mistakes_as_close_as_the_closest_keep_the_family_s_order():
    """A four-figure answer can not tell two mistakes 0.05% apart: the one the family lists first is named first;
    a mistake further off than that comes after, closest first."""
    from generator.problems import misconceptions as M

    p = generate.registry().problem(FLOOR)
    key = float(p.answer.value)
    listed = [M.WrongAnswer(M.find("hbm-per-core"), 2 * key, ""),
              M.WrongAnswer(M.find("wrong-dtype-size"), 2 * key * 1.0004, ""),
              M.WrongAnswer(M.find("sparse-peak"), 2 * key * 0.99, "")]
    named = [w.misconception.id for w in M.diagnose_all(p, 2 * key * 1.0005, listed)]
    assert named == ["hbm-per-core", "wrong-dtype-size", "sparse-peak"]
    assert [w.misconception.id for w in M.diagnose_all(p, 2 * key * 0.991, listed)][0] == "sparse-peak"
