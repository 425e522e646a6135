"""The learner's files, op names and sizes, the CPU cache size: parsed, never evaluated."""

import json
import re

import pytest

from generator.model import costs
from labs.measure import device, ops
from labs import inputs


def test_seed_ops_in_the_seed_order():
    assert ops.parse_ops(None) == ops.SEED_OPS
    assert ops.parse_ops("seed") == ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum")
    assert ops.parse_ops("seed,embedding") == (*ops.SEED_OPS, "embedding")
    assert ops.parse_ops("Reduce-Sum, skinny ,matmul") == ("reduce_sum", "skinny_matmul", "matmul")


@pytest.mark.parametrize("text, message", [("conv2d", "unknown op 'conv2d'"), ("matmul,,add", "empty name")])
def test_bad_op_lists(text, message):
    with pytest.raises(ops.OpError, match=message):
        ops.parse_ops(text)


def test_every_op_counts_through_generator_costs():
    n = 512
    assert ops.OPS["matmul"].cost(n, "bf16") == costs.cost("matmul", (n, n, n), "bf16")
    assert ops.OPS["skinny_matmul"].cost(n, "bf16") == costs.cost("matmul", (ops.SKINNY_ROWS, n, n), "bf16")
    assert ops.OPS["embedding"].cost(n, "f32") == costs.cost("embedding", (n, n, n), "f32")
    for name in ("add", "softmax", "reduce_sum"):
        assert ops.OPS[name].cost(n, "bf16") == costs.cost(name, (n, n), "bf16")


def test_input_bytes_are_the_arrays_one_call_reads():
    assert ops.OPS["add"].input_set_bytes(1024, "bf16") == 2 * 1024 * 1024 * 2
    assert ops.OPS["skinny_matmul"].input_set_bytes(1024, "f32") == (8 * 1024 + 1024 * 1024) * 4
    assert ops.OPS["embedding"].input_set_bytes(100, "bf16") == 100 * 100 * 2 + 100 * 4


def test_size_and_dtype_checks():
    ops.check_size(9, ops.SEED_OPS)
    ops.check_size(1, ("add",))
    with pytest.raises(ops.OpError, match="needs N > 8"):
        ops.check_size(8, ops.SEED_OPS)
    assert ops.check_dtype("bfloat16") == "bf16"
    with pytest.raises(ops.OpError):
        ops.check_dtype("fp8")


def test_predictions_yaml_with_units(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("matmul: 700us\nskinny: 15 µs\nadd: 0.1ms\nsoftmax: 2*4096*4096*2*2/8.2e11 s\nreduce_sum: 8e-5 s\n")
    got = inputs.load_predictions(f, ops.SEED_OPS)
    assert got["matmul"].seconds == pytest.approx(700e-6) and got["matmul"].text == "700us"
    assert got["skinny_matmul"].seconds == pytest.approx(15e-6)
    assert got["softmax"].seconds == pytest.approx(2 * 4096 * 4096 * 2 * 2 / 8.2e11)
    assert got["reduce_sum"].seconds == pytest.approx(8e-5)


def test_predictions_json(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"matmul": "1.2 ms"}))
    assert inputs.load_predictions(f, ops.SEED_OPS)["matmul"].seconds == pytest.approx(1.2e-3)


@pytest.mark.parametrize("text, message", [
    ("matmul: [1, 2\n", "does not parse"),
    ("- 1\n- 2\n", "must map op names"),
    ("conv: 1ms\n", "unknown op 'conv'"),
    ("embedding: 1ms\n", "not among this run's ops"),
    ("matmul: 3 GB\n", "matmul"),
    ("matmul: __import__('os')\n", "matmul"),
    ("matmul: -1ms\n", "positive"),
    ("matmul: {a: 1}\n", "expected a time"),
    # one answer grammar; a bare number is never taken as seconds
    ("matmul: 70\n", "70 what? e.g. 70 us, 70 ms or 70 s"),
    ("matmul: 1e-3\n", "1e-3 what?"),
    ("matmul: 2024-01-01\n", "reads as a date"),
    ("matmul: yes\n", "boolean"),
    ("matmul: 1 ms\nadd: 2 us\nmatmul: 3 ms\n", "line 3: 'matmul' is given twice (first on line 1)"),
])
def test_bad_prediction_files_fail_with_one_line(tmp_path, text, message):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(inputs.InputError, match=re.escape(message)) as err:
        inputs.load_predictions(f, ops.SEED_OPS)
    assert "\n" not in str(err.value)


def test_a_missing_prediction_file(tmp_path):
    with pytest.raises(inputs.InputError, match="cannot read"):
        inputs.load_predictions(tmp_path / "nope.yaml", ops.SEED_OPS)


def test_explanations(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text("softmax: |\n  XLA runs softmax as three passes\n  over HBM.\n")
    assert inputs.load_explanations(f, ops.SEED_OPS) == {"softmax": "XLA runs softmax as three passes over HBM."}
    f.write_text("softmax: ''\n")
    with pytest.raises(inputs.InputError, match="one sentence"):
        inputs.load_explanations(f, ops.SEED_OPS)


@pytest.mark.parametrize("text, size", [("32768K", 32 * 2**20), ("1M", 2**20), ("512", 512),
                                        ("", None), ("lots", None), ("12X", None)])
def test_cache_sizes_from_sysfs_text(text, size):
    assert device.parse_cache_size(text) == size


def test_cpu_cache_is_the_largest_data_cache(tmp_path):
    for i, (kind, size) in enumerate([("Data", "48K"), ("Instruction", "64M"), ("Unified", "1024K"),
                                      ("Unified", "32768K")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "type").write_text(kind + "\n")
        (d / "size").write_text(size + "\n")
    assert device.cpu_cache_bytes(tmp_path) == 32 * 2**20
    assert device.cpu_cache_bytes(tmp_path / "absent") is None


def test_cpu_cache_levels_are_named_by_level_smallest_first(tmp_path):
    for i, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
                                             (3, "Unified", "32768K")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(kind + "\n")
        (d / "size").write_text(size + "\n")
    assert device.cpu_cache_levels(tmp_path) == [("L1d", 32 * 2**10), ("L2", 2**20), ("L3", 32 * 2**20)]
    assert device.cpu_cache_levels(tmp_path / "absent") == []


def test_unknown_cache_falls_back_to_the_largest_in_the_catalogue():
    size, where = device.largest_catalogue_cache()
    assert size == 134217728 and "vmem_bytes" in where  # v5e's 128 MiB VMEM beats B200's 126 MB L2
