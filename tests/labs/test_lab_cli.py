"""`drill lab` end to end on the CPU with tiny sizes, and its one-line errors (real jax: slow)."""

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys

import jsonschema
import pytest

from labs.records import folder as records
from tests.conftest import REPO, bound, run_drill

pytestmark = pytest.mark.slow

TINY = ("--size", "128", "--reps", "3")


def _one_line_error(res, fragment):
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert fragment in lines[0]
    assert "Traceback" not in res.stderr


def test_full_run_with_predictions_explanations_plot_and_json(tmp_path):
    preds = tmp_path / "p.yaml"
    preds.write_text("matmul: 50us\nskinny_matmul: 5us\nadd: 5 us\nsoftmax: 0.01ms\nreduce_sum: 2us\n"
                     "embedding: 3us\n")
    expl = tmp_path / "e.yaml"
    expl.write_text("".join(f"{op}: 'fixed-cost: At N=128 the fixed cost of a call dominates.'\n"
                            for op in ("matmul", "skinny_matmul", "add", "softmax", "reduce_sum", "embedding")))
    bench, plot = tmp_path / "bench", tmp_path / "roof.png"
    res = run_drill("lab", *TINY, "--ops", "seed,embedding", "--predictions", str(preds),
                    "--explanations", str(expl), "--out", str(bench), "--plot", str(plot), "--json",
                    timeout=300)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    rec = out["record"]
    jsonschema.validate(rec, records.load_schema())
    assert records.load(out["path"]) == rec
    assert rec["platform"] == "cpu" and rec["graded"] == "learner" and rec["chip"] is None
    assert rec["constants"]["calibrated"]["peak_flops_per_s"] > 0  # forced on a CPU
    assert [r["op"] for r in rec["ops"]] == ["matmul", "skinny_matmul", "add", "softmax", "reduce_sum", "embedding"]
    for row in rec["ops"]:
        m = row["measured"]
        assert m["wall_min_s"] <= m["wall_median_s"] <= m["wall_max_s"]
        assert m["wall_samples"] == 9 and m["traces"] == 3  # three traces of 3 timed runs
        assert m["measured_from"] == "device" and m["device_runs"] == 9 and m["device_grouping"] == "step markers"
        assert m["device_p20_s"] <= m["device_median_s"] <= m["device_p80_s"] and m["measured_reason"] == ""
        assert row["predictions"]["learner"]["seconds"] > 0
        assert row["ratios"]["learner"] == pytest.approx(m["measured_s"] / row["predictions"]["learner"]["seconds"])
        assert row["xla_cost"] is not None
        ev = row["evidence"]  # the miss reasons' evidence on a CPU too
        assert ev["xla_flops"] > 0 and ev["xla_bytes"] > 0 and ev["fixed_cost_s"] >= 0
        assert ev["attained_bytes_per_s"] > 0 and ev["attained_flops_per_s"] > 0
        # bf16 on this jax's CPU backend: converts to f32 in the optimized HLO (never read off the platform)
        assert ev["emulated_dtype"] is True and "convert(s) to f32 in the optimized HLO" in ev["emulated_from"]
        assert "supported_reasons" not in ev and "findings" not in ev  # no answer key before the answer
        if row["verdict"] == "miss" and row["miss"].get("finding"):  # no reason can explain it: nothing judged
            assert row["miss"]["why"].startswith("unexplained-by-evidence: ") and row["miss"]["attempts"] == []
        elif row["verdict"] == "miss":
            miss = row["miss"]  # "N=128" is no corrected time: the sentence re-predicts nothing
            assert miss["text"] == "fixed-cost: At N=128 the fixed cost of a call dominates."
            assert miss["reasons"] == ["fixed-cost"]
            assert miss["accepted"] is False and "no corrected time" in miss["why"] and len(miss["attempts"]) == 1
            assert row["explanation"] is None
        else:
            assert row["miss"] is None
    assert rec["summary"]["unexplained"] == [r["op"] for r in rec["ops"] if r["verdict"] == "miss"
                                             and not r["miss"]["accepted"] and not r["miss"].get("finding")]
    assert rec["probes"]["fixed_cost_from"] == "device" and rec["run"]["number"] is None  # N=128: practice, no slot
    assert plot.read_bytes().startswith(b"\x89PNG")
    traces = list((bench / "traces").glob("*/matmul/trace-*/plugins/profile/*/*.xplane.pb.gz"))
    assert len(traces) == 3, "the traces are kept beside the record, compressed"
    assert not list((bench / "traces").rglob("*.xplane.pb")) and not list((bench / "traces").rglob("*.trace.json.gz"))
    verify = run_drill("gate", "--bench", str(bench), "--verify")
    assert verify.returncode == 0 and "every measured time agrees with its traces" in verify.stdout, verify.stdout
    assert "[1/" not in res.stderr and "ETA" not in res.stderr  # stderr is no terminal: no progress written
    read = rec["learner_predictions"]
    assert read["source"] == f"file {preds}" and read["file_sha256"] == hashlib.sha256(preds.read_bytes()).hexdigest()
    assert read["sha256"] == records.predictions_sha256(
        {r["op"]: r["predictions"]["learner"]["text"] for r in rec["ops"]})
    assert dt.datetime.fromisoformat(read["read_at"]) < dt.datetime.fromisoformat(rec["measurement_started_at"])

    gate = json.loads(run_drill("gate", "--bench", str(bench), "--json").stdout)
    assert gate["status"] == "practice"
    assert gate["rows"][0]["why_not"][0] == "CPU: not real hardware (the gate needs a TPU or GPU)"
    assert not gate["rows"][0]["counted"]


def test_records_go_to_the_learners_folder_and_the_gate_reads_them_by_default(tmp_path, learner_records):
    assert run_drill("gate", "--json").stdout and json.loads(run_drill("gate", "--json").stdout)["status"] == "pending"
    res = run_drill("lab", "--size", "64", "--reps", "1", "--ops", "add", "--json", timeout=300)
    assert res.returncode == 0, res.stderr
    path = json.loads(res.stdout)["path"]
    assert path.startswith(str(learner_records))
    gate = json.loads(run_drill("gate", "--json").stdout)
    assert gate["bench"] == str(learner_records) and [r["path"] for r in gate["rows"]] == [path]
    assert "no predictions of yours" in res.stderr


def test_text_run_prints_the_table_and_how_to_open_the_trace(tmp_path):
    res = run_drill("lab", *TINY, "--ops", "add,reduce_sum", "--out", str(tmp_path), timeout=300)
    assert res.returncode == 0, res.stderr
    assert "measured  datasheet" in res.stdout and "elementwise add" in res.stdout
    assert "record: " in res.stdout and "drill xprof " in res.stdout
    assert "CPU run: practice only" in res.stdout
    assert res.stdout.index("measured  datasheet") < res.stdout.index("CPU run: practice only")


def test_the_lab_imports_nothing_the_gpu_box_lacks(tmp_path):
    # The GPU box runs the lab from a checkout without the package's other dependencies: each of
    # them fails to import there (a shadow package), and the lab must still run to the end.
    shadow = tmp_path / "shadow"
    for name in ("genanki", "fsrs", "platformdirs", "jsonschema", "anki"):
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(f"raise ImportError('No module named {name}')\n")
    preds = tmp_path / "p.yaml"
    preds.write_text("add: 10us\n")
    code = (
        "import sys\n"
        "from drills.cli import main\n"
        f"try:\n    main(['lab', '--size', '64', '--reps', '2', '--ops', 'add', '--predictions', {str(preds)!r},"
        f" '--out', {str(tmp_path)!r}, '--json'])\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "bad = sorted(m for m in ('genanki', 'fsrs', 'platformdirs', 'jsonschema', 'drills.store.repository', 'anki')"
        " if m in sys.modules)\n"
        "print('IMPORTED', bad, file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(REPO)])}
    env.pop("DRILL_CACHE_DIR", None)
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=bound(300),
                         env=env)
    assert res.returncode == 0, res.stderr
    assert "IMPORTED []" in res.stderr


@pytest.fixture
def no_jax(tmp_path):
    """PYTHONPATH with a `jax` that fails to import, as on a machine without the lab extra."""
    shadow = tmp_path / "shadow"
    (shadow / "jax").mkdir(parents=True)
    (shadow / "jax" / "__init__.py").write_text("raise ImportError('No module named jax')\n")
    return {"PYTHONPATH": os.pathsep.join([str(shadow), str(REPO)])}


def test_without_jax_the_lab_says_which_extra_to_install(no_jax, tmp_path):
    res = run_drill("lab", "--out", str(tmp_path / "b"), env=no_jax)
    _one_line_error(res, "pip install 'rudrite-kernels[lab]'")
    assert not (tmp_path / "b").exists()


def test_without_jax_the_gate_and_progress_still_work(no_jax, tmp_path):
    res = run_drill("gate", "--bench", str(tmp_path), "--json", env=no_jax)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["status"] == "pending"
    res = run_drill("progress", "--store", str(tmp_path / "s.sqlite3"), "--bench", str(tmp_path), "--tick", "1",
                    env=no_jax)
    assert res.returncode == 0, res.stderr
    assert "Can you (1/7)" in res.stdout and "GATE 00" in res.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--ops", "conv2d"), "unknown op 'conv2d'"),
    (("--size", "8"), "needs N > 8"),
    (("--size", "400000"), "too large for matmul on this device"),
    (("--chip", "v9z"), "unknown chip 'v9z'"),
    (("--dtype", "int8"), "the lab times bf16 or f32"),
    (("--plot", "roof.jpg"), ".png or .svg"),
    (("--reps", "0"), "--reps must be at least 1"),
    (("--dtype", ""), "unknown dtype ''; the lab times bf16 or f32"),
    (("--collectives", "--sizes", "0"), "--sizes: each size must be a positive number of bytes"),
])
def test_bad_input_fails_before_anything_is_timed(tmp_path, args, fragment):
    out = tmp_path / "bench"
    res = run_drill("lab", "--out", str(out), *args, timeout=120)
    _one_line_error(res, fragment)
    assert not list(out.glob("*.json")) if out.exists() else True


def test_bad_predictions_and_unwritable_output(tmp_path):
    preds = tmp_path / "p.yaml"
    preds.write_text("matmul: 1ms\nconv: 2ms\n")
    _one_line_error(run_drill("lab", "--predictions", str(preds), "--out", str(tmp_path)), "unknown op 'conv'")
    preds.write_text("matmul: [oops\n")
    _one_line_error(run_drill("lab", "--predictions", str(preds), "--out", str(tmp_path)), "does not parse")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_line_error(run_drill("lab", *TINY, "--out", str(blocker / "bench")), "cannot write to")


@pytest.mark.parametrize("target", ["--out", "--trace-dir", "--plot"])
def test_a_read_only_target_is_refused_before_anything_is_measured(tmp_path, target):
    """A read-only folder (read-only for root too) is one line, exit 2, nothing measured."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    out = tmp_path / "out"
    args = {"--out": ("--out", str(ro)), "--trace-dir": ("--out", str(out), "--trace-dir", str(ro / "t")),
            "--plot": ("--out", str(out), "--plot", str(ro / "roof.png"))}[target]
    try:
        res = run_drill("lab", *TINY, *args, timeout=120)
        _one_line_error(res, "nothing measured")
        assert "probing" not in res.stdout  # no probe started
        assert list(ro.iterdir()) == [] and not list(out.rglob("*.json")) and not (out / "traces").exists()
    finally:
        ro.chmod(0o755)


def test_a_ledger_too_large_to_add_a_run_is_refused_before_anything_is_measured(tmp_path):
    """save_run reads the whole ledger after measuring: a ledger it could not read or add to is
    found before the first step, not after minutes of measuring."""
    from labs.records import folder as records

    out = tmp_path / "bench"
    out.mkdir()
    ledger = out / records.LEDGER_NAME
    ledger.write_bytes(b'{"stem":"x","state":"saved"}\n' * (records.LEDGER_MAX_BYTES // 29))
    res = run_drill("lab", *TINY, "--out", str(out), timeout=120)
    _one_line_error(res, "nothing measured: ledger:")
    assert "probing" not in res.stdout and not list(out.glob("lab-*.json"))


@pytest.mark.parametrize("link", ["ledger.jsonl", "traces"])
def test_a_symlinked_ledger_or_traces_folder_is_refused_before_anything_is_measured(tmp_path, link):
    """The lab writes only in its records folder: a ledger or traces/ that links out of it is one
    line, exit 2, before the first step, and the folder it points to is left as it was."""
    out, elsewhere = tmp_path / "bench", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "ledger.jsonl").write_bytes(b'{"stem":"x","state":"saved"}\n')
    (out / link).symlink_to(elsewhere / "ledger.jsonl" if link == "ledger.jsonl" else elsewhere)
    res = run_drill("lab", *TINY, "--out", str(out), timeout=120)
    _one_line_error(res, "nothing measured")
    assert "symbolic link" in res.stderr and "probing" not in res.stdout
    assert os.listdir(elsewhere) == ["ledger.jsonl"]
    assert (elsewhere / "ledger.jsonl").read_bytes() == b'{"stem":"x","state":"saved"}\n'
    assert not list(out.glob("lab-*.json"))


def test_a_ledger_with_a_byte_that_is_not_utf8_is_read_as_a_damaged_line_and_the_run_is_saved(tmp_path):
    from labs.records import folder as records

    out = tmp_path / "bench"
    out.mkdir()
    ledger = out / records.LEDGER_NAME
    bad = b'{"stem":"old","state":"saved","device_kind":"caf\xe9"}\n'
    ledger.write_bytes(bad)
    assert records.read_ledger(out) == [{"damaged": True}]
    assert records.check_ledger(out) == [{"damaged": True}]
    res = run_drill("lab", *TINY, "--out", str(out), timeout=300)
    assert res.returncode == 0, res.stderr
    assert len(list(out.glob("lab-*.json"))) == 1  # measured and saved
    data = ledger.read_bytes()
    assert data.startswith(bad) and [e.get("state") for e in records.read_ledger(out)] == [None, "pending", "saved"]
