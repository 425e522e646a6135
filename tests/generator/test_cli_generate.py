"""`drill transformer`, `drill deck`, `drill export`: output, JSON keys, and one-line errors with exit 2."""

import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from drills.cli import main
from generator.problems.specs import SPECS_DIR
from tests.conftest import REPO, bound

SEED_7B = ["transformer", "--params", "7B", "--layers", "32", "--d-model", "4096", "--batch", "8",
           "--seq", "4096", "--chip", "v5e"]


def run(capsys, *argv):
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def usage_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_transformer_seed_case(capsys):
    code, out, _ = run(capsys, *SEED_7B)
    assert code == 0
    assert "floor: 2.69 s (compute-bound)" in out and "does NOT fit" in out


def test_transformer_json(capsys):
    code, out, _ = run(capsys, *SEED_7B, "--phase", "decode", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"flops", "bytes", "t_math_s", "t_comms_s", "floor_s", "bound"} <= set(data)
    assert data["bound"] == "memory" and data["floor_s"] == max(data["t_math_s"], data["t_comms_s"])
    assert data["phase"] == "decode" and data["tokens"] == 8


@pytest.mark.parametrize("change", [("--chip", "v9"), ("--params", "seven"), ("--batch", "0"), ("--phase", "train"),
                                    ("--dtype", "f64"), ("--dtype", "f32")])
def test_transformer_bad_input(capsys, change):
    argv = list(SEED_7B)
    if change[0] in argv:
        argv[argv.index(change[0]) + 1] = change[1]
    else:
        argv += list(change)
    usage_error(capsys, *argv)


def test_deck_writes_a_package(capsys, tmp_path):
    out_path = tmp_path / "d.apkg"
    code, out, _ = run(capsys, "deck", "--chip", "v5e", "--family", "ridge", "--family", "bound", "-o", str(out_path))
    assert code == 0 and "notes" in out
    with zipfile.ZipFile(out_path) as z:
        assert "collection.anki2" in z.namelist()


def test_export_json_to_stdout(capsys):
    code, out, _ = run(capsys, "export", "--format", "json", "--family", "bound", "--chip", "v6e", "--count", "2")
    data = json.loads(out)
    assert code == 0 and len(data) == 12
    assert all(d["params"]["chip"] == "v6e" and d["answer"]["choice"] in ("compute", "memory") for d in data)


def test_export_csv_to_file(capsys, tmp_path):
    target = tmp_path / "p.csv"
    code, out, err = run(capsys, "export", "--format", "csv", "--family", "lattice", "-o", str(target))
    assert code == 0 and out == "" and "wrote" in err
    assert target.read_text().startswith("family,skill,id,prompt")


def test_export_is_deterministic(capsys):
    argv = ["export", "--format", "json", "--family", "floor", "--chip", "v5e", "--seed", "4"]
    assert run(capsys, *argv)[1] == run(capsys, *argv)[1]


@pytest.mark.parametrize("argv,message", [
    (["--family", "roofs"], "unknown family 'roofs'"),
    (["--chip", "v9"], "unknown chip 'v9'"),
    (["--count", "0"], "--count"),
    (["--count", "1000001"], "--count"),
    (["--count", "1000000"], "more than 1000000"),
])
def test_bad_selection_is_one_line_exit_2(capsys, tmp_path, argv, message):
    target = tmp_path / "x.apkg"
    assert message in usage_error(capsys, "deck", "--fixed", *argv, "-o", str(target))
    assert message in usage_error(capsys, "export", "--format", "json", *argv)
    assert not target.exists()


def test_unwritable_output(capsys, tmp_path):
    assert "does not exist" in usage_error(capsys, "deck", "-o", str(tmp_path / "no" / "x.apkg"))
    assert "is a directory" in usage_error(capsys, "export", "--format", "csv", "-o", str(tmp_path))
    assert ".apkg" in usage_error(capsys, "deck", "-o", str(tmp_path / "x.txt"))
    assert list(tmp_path.iterdir()) == []


def test_broken_spec_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, specs)
    (specs / "bound.yaml").write_text((specs / "bound.yaml").read_text().replace("chips: all", "chips: [all"))
    target = tmp_path / "x.apkg"
    err = usage_error(capsys, "deck", "--specs", str(specs), "-o", str(target))
    assert f"{specs / 'bound.yaml'}:" in err and "invalid YAML" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["specs"]


def test_help_documents_the_options(capsys):
    code, out, _ = run(capsys, "deck", "--help")
    assert code == 0
    for word in ("--chip", "--family", "--count", "--seed", "per skill", "-o"):
        assert word in out


@pytest.mark.slow
def test_generate_commands_import_neither_jax_nor_numpy():
    code = ("import sys, drills.cmd_generate, generator.problems.generate as g, generator.export.anki, "
            "generator.export.tabular; g.generate(count=1); "
            "assert 'jax' not in sys.modules and 'numpy' not in sys.modules, "
            "[m for m in sys.modules if m in ('jax', 'numpy')]")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=bound(120))
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_real_entry_point_errors(drill, tmp_path):
    result = drill("deck", "--family", "nope", "-o", str(tmp_path / "x.apkg"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "unknown family" in result.stderr
    ok = drill(*SEED_7B, "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["bound"] == "compute"
