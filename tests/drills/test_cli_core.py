"""`drill chips` and `drill roofline` through the entry point in process (CliRunner)."""

import json

import pytest

from tests.conftest import invoke_drill, loaded_packages

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
    assert loaded_packages("import generator, generator.model.catalogue, generator.model.costs, generator.model.roofline, drills.cmd_core\n"
                           "from generator.model import catalogue; catalogue.load()", ("jax", "numpy")) == []


def test_help_lists_options():
    res = invoke_drill("roofline", "--help")
    assert res.returncode == 0 and "--shape" in res.stdout and "--json" in res.stdout


# ---------------------------------------------------------------- drill transformer: known model shapes

SEED_STEP = ["--batch", "8", "--seq", "4096", "--chip", "v5e"]


def _transformer(capsys, *argv):
    from drills.cli import main

    with pytest.raises(SystemExit) as info:
        main(["transformer", *argv])
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_transformer_params_7b_alone_fills_the_seeds_shape_and_says_so(capsys):
    code, out, err = _transformer(capsys, "--params", "7B", *SEED_STEP)
    assert code == 0, err
    _, given_json, _ = _transformer(capsys, "--params", "7B", "--layers", "32", "--d-model", "4096", *SEED_STEP,
                                    "--json")
    _, assumed_json, _ = _transformer(capsys, "--params", "7B", *SEED_STEP, "--json")
    explicit, filled = json.loads(given_json), json.loads(assumed_json)
    # the seed's 7B: 32 layers, d_model 4096, multi-head; the same floor as the shape given by hand
    assert (filled["layers"], filled["d_model"], filled["kv_d_model"]) == (32, 4096, 4096)
    assert filled["floor_s"] == explicit["floor_s"] and filled["params"] == 7_000_000_000
    assert explicit["assumed"] is None
    assert filled["assumed"]["from"] == "Llama 2 7B"
    assert filled["assumed"]["values"] == {"layers": 32, "d_model": 4096, "kv_d_model": 4096}
    assert any("arxiv.org/abs/2307.09288" in s for s in filled["assumed"]["sources"])
    assert "floor: 2.69 s (compute-bound)" in out
    assumed = [line for line in out.splitlines() if line.startswith("assumed")]
    assert assumed == ["assumed   : layers 32, d_model 4096, kv_d_model 4096 (not given), from Llama 2 7B:"]
    assert "huggingface.co/meta-llama/Llama-2-7b-hf" in out


def test_transformer_70b_fills_grouped_query_kv_unless_given(capsys):
    _, out, _ = _transformer(capsys, "--params", "70B", *SEED_STEP, "--json")
    data = json.loads(out)
    assert (data["layers"], data["d_model"], data["kv_d_model"]) == (80, 8192, 1024)
    _, out, _ = _transformer(capsys, "--params", "70b", "--kv-d-model", "8192", *SEED_STEP, "--json")
    data = json.loads(out)
    assert data["kv_d_model"] == 8192 and data["assumed"]["values"] == {"layers": 80, "d_model": 8192}


@pytest.mark.parametrize("argv, message", [
    (["--params", "5B"], "--layers and --d-model are needed: no known model has 5B parameters"),
    (["--params", "7B", "--layers", "32"], "give both --layers and --d-model, or neither"),
    (["--params", "7B", "--d-model", "4096"], "give both --layers and --d-model, or neither"),
])
def test_transformer_unknown_shape_is_one_line_naming_the_options(capsys, argv, message):
    code, out, err = _transformer(capsys, *argv, *SEED_STEP)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert "7B (Llama 2 7B)" in err and "70B (Llama 2 70B)" in err


def test_known_shapes_are_data_with_sources_and_agree_with_the_drills_models():
    from generator.model import transformer as tmodel
    from generator.problems.generate import registry

    shapes = tmodel.known_shapes()
    assert [s.name for s in shapes] == ["Llama 2 7B", "Llama 2 13B", "Llama 2 70B"]
    assert all(s.sources and all("<https://" in c and "retrieved" in c for c in s.sources) for s in shapes)
    # the transformer_step family's models of the same size have the same shape (one truth)
    matched = 0
    for model, _source in registry().specs["transformer_step"].params["models"].values():
        shape = tmodel.known_shape(model.params)
        if shape is not None:
            matched += 1
            assert (model.layers, model.d_model, model.kv_d_model) == (shape.layers, shape.d_model, shape.kv_d_model)
    assert matched == 3
