"""`drill chips` and `drill roofline` through the entry point in process (CliRunner)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO, invoke_drill

ROOFLINE_KEYS = {"chip", "op", "shape", "dtype", "flops", "bytes", "intensity_flops_per_byte",
                 "ridge_flops_per_byte", "bound", "t_math_s", "t_comms_s", "floor_s", "upper_s",
                 "attainable_flops_per_s"}


def test_roofline_prints_the_ex01_view_and_the_arithmetic():
    res = invoke_drill("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "2048,2048,2048")
    assert res.returncode == 0, res.stderr
    for line in ("intensity: 682.7 FLOPs/byte", "verdict: compute-bound",
                 "attainable: 197 TFLOP/s", "floor latency: 87.2 µs"):
        assert line in res.stdout
    assert "T_math" in res.stdout and "1.97e14" in res.stdout and "retrieved 2026-07-26" in res.stdout


def test_roofline_json_has_the_interface_keys():
    res = invoke_drill("roofline", "--chip", "Trillium", "--op", "softmax", "--shape", "4096,4096", "--json")
    data = json.loads(res.stdout)
    assert ROOFLINE_KEYS <= set(data)
    assert data["chip"] == "v6e" and data["shape"] == [4096, 4096] and data["bound"] == "memory"
    assert data["flops"] == 5 * 4096 * 4096 and data["bytes"] == 2 * 2 * 4096 * 4096
    assert data["floor_s"] == max(data["t_math_s"], data["t_comms_s"])


def test_roofline_mixed_dtype_matmul():
    res = invoke_drill("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "128,8192,8192",
                    "--rhs-dtype", "int8", "--json")
    data = json.loads(res.stdout)
    assert data["bytes"] == 128 * 8192 * 2 + 8192 * 8192 + 128 * 8192 * 2
    assert data["dtype"] == "bf16"


@pytest.mark.parametrize("args,needle", [
    (["--chip", "v5x", "--op", "matmul", "--shape", "1,2,3"], "did you mean"),
    (["--chip", "v5e", "--op", "conv", "--shape", "1,2,3"], "unknown op 'conv'; accepted: matmul"),
    (["--chip", "v5e", "--op", "matmul", "--shape", "1,2"], "takes 3 dims"),
    (["--chip", "v5e", "--op", "add", "--shape", "4096,0"], "positive"),
    (["--chip", "v5e", "--op", "add", "--shape", "4096,abc"], "malformed shape"),
    (["--chip", "v5e", "--op", "add", "--shape", "4096,4096", "--dtype", "f64"], "unknown dtype 'f64'"),
    (["--chip", "v5e", "--op", "add", "--shape", "4096,4096", "--dtype", "f32"], "no published f32 peak"),
    (["--chip", "v5e", "--op", "add", "--shape", "4,4", "--rhs-dtype", "int8"], "matmul only"),
    (["--op", "add", "--shape", "4,4"], "--chip"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    res = invoke_drill("roofline", *args)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert needle in lines[0]
    assert "Traceback" not in res.stderr


def test_chips_table_and_json():
    table = invoke_drill("chips")
    assert table.returncode == 0
    assert "v5e" in table.stdout and "240" in table.stdout and "retrieved 2026-07-26" in table.stdout
    data = json.loads(invoke_drill("chips", "--json").stdout)
    assert len(data) == 10
    for chip in data:
        assert {"name", "aliases", "kind", "peak_flops_per_s", "hbm_bytes_per_s", "hbm_bytes",
                "ridge_flops_per_byte", "sources"} <= set(chip)
        assert chip["kind"] in ("tpu", "gpu") and chip["sources"]
        assert chip["ridge_flops_per_byte"] == chip["peak_flops_per_s"]["bf16"] / chip["hbm_bytes_per_s"]


def test_generator_and_core_commands_do_not_import_jax_or_numpy():
    code = ("import sys, generator, generator.catalogue, generator.costs, generator.roofline, drills.cmd_core;"
            "from generator import catalogue; catalogue.load();"
            "bad = [m for m in ('jax', 'numpy') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_help_lists_options():
    res = invoke_drill("roofline", "--help")
    assert res.returncode == 0 and "--shape" in res.stdout and "--json" in res.stdout
