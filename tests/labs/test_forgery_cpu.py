"""The forgeries, made from a record the real CPU lab writes: none counts, and each
`why_not` names the rule that stops it (real jax: slow)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from labs.gate import verdict as gate
from labs.records import folder as records
from labs.measure.ops import SEED_OPS
from tests.conftest import run_drill
from tests.labs import synthetic

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("forgery")
    preds = root / "p.yaml"
    preds.write_text("".join(f"{op}: 10us\n" for op in SEED_OPS))
    res = run_drill("lab", "--size", "256", "--reps", "3", "--out", str(root / "a"), "--json",
                    "--predictions", str(preds), timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return root / "a", Path(json.loads(res.stdout)["path"])


def _copy(tmp_path: Path, cpu_run) -> tuple[Path, Path]:
    folder, path = cpu_run
    dest = tmp_path / "copy"
    shutil.copytree(folder, dest)
    return dest, dest / path.name


def _as_h200(rec: dict) -> None:
    """The first try: platform, device_kind and chip an H200's, predictions rewritten to the
    measured times with their SHA-256."""
    rec.update(platform="gpu", device_kind="NVIDIA H200", chip="h200")
    for row in rec["ops"]:
        seconds = row["measured"]["measured_s"]
        row["predictions"]["learner"] = {"seconds": seconds, "text": f"{seconds!r}s"}
    rec["learner_predictions"]["sha256"] = records.predictions_sha256(
        {row["op"]: row["predictions"]["learner"]["text"] for row in rec["ops"]})


def _edit(path: Path, change) -> None:
    rec = json.loads(path.read_text())
    change(rec)
    path.write_text(json.dumps(rec, indent=2) + "\n")


def _edit_ledger(folder: Path, change) -> None:
    ledger = folder / records.LEDGER_NAME
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    for entry in lines:
        change(entry)
    ledger.write_text("".join(json.dumps(e) + "\n" for e in lines))


def _why(folder: Path, path: Path) -> list[str]:
    result = gate.evaluate(folder)
    (row,) = [r for r in result.rows if Path(r.path).name == path.name]
    assert not row.counted and result.status != "pass"
    return row.why_not


def _names(why: list[str], *rules: str) -> None:
    for rule in rules:
        assert any(w.startswith(rule) for w in why), (rule, why)


def test_the_lab_writes_a_record_whose_ledger_vouches_for_it(cpu_run):
    folder, path = cpu_run
    why = _why(folder, path)
    assert not any(w.startswith(("ledger:", "traces:", "probes:", "evidence:", "schema:", "device planes:"))
                   for w in why), why  # only CPU, N and the predictions' misses stop it
    _names(why, "CPU: not real hardware", "size: N=256 is practice")


def test_h200_edit_with_the_sha_rewritten_and_the_ledger_left_alone(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, _as_h200)
    why = _why(folder, path)
    _names(why, "ledger: platform is 'gpu' in the record but 'cpu'", "ledger: device_kind", "ledger: chip",
           "ledger: the record's SHA-256", "device planes: platform 'gpu'", "datasheet: device_kind 'NVIDIA H200'",
           "attained: the probe's", "probes: the calibration was made on 'cpu (calibrated)'")


def test_h200_edit_with_the_ledger_edited_to_match(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, _as_h200)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    _edit_ledger(folder, lambda e: e.update(platform="gpu", device_kind="NVIDIA H200", chip="h200",
                                            sha256=digest if e["sha256"] else None))
    why = _why(folder, path)
    assert not any(w.startswith("ledger:") for w in why), why  # the ledger agrees now; the physics does not
    _names(why, "device planes: platform 'gpu' but the traces hold no /device:GPU plane", "datasheet:", "attained:")


def test_schema_lowered_and_the_noisy_ops_runs_deleted(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)

    def second_try(rec):
        _as_h200(rec)
        rec["schema_version"] = 2
        for row in rec["ops"]:
            row["measured"].pop("device_runs_s", None)
            row["measured"]["noisy"] = False
    _edit(path, second_try)
    why = _why(folder, path)
    _names(why, "schema: version 2 is older than 4", "device planes:", "datasheet:", "attained:")


def test_probes_fixed_cost_edited(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)

    def fixed(rec):
        rec["probes"]["fixed_cost_by_op"]["matmul"]["fixed_cost_s"] = 8e-05
    _edit(path, fixed)
    why = _why(folder, path)
    _names(why, "probes: fixed cost matmul: fixed_cost_s 8e-05 s is not its device time less its work",
           "evidence: matmul: evidence.fixed_cost_s", "ledger: the record's SHA-256")


def test_probes_edited_with_their_measurement_too(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)

    def both(rec):
        entry = rec["probes"]["fixed_cost_by_op"]["matmul"]
        entry["fixed_cost_s"] = 8e-05
        entry["device_s"] = entry["work_floor_s"] + 8e-05
        entry["measurement"]["measured_s"] = entry["measurement"]["device_median_s"] = entry["device_s"]
        rec["probes"]["fixed_cost_s"] = min(e["fixed_cost_s"] for e in rec["probes"]["fixed_cost_by_op"].values())
        for row in rec["ops"]:
            if row["op"] == "matmul":
                row["evidence"]["fixed_cost_s"] = 8e-05
    _edit(path, both)
    why = _why(folder, path)
    _names(why, "traces: fixed cost matmul: median")


def test_the_ledger_edited_alone(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    _edit_ledger(folder, lambda e: e.update(chip="h200"))
    _names(_why(folder, path), "ledger: chip is None in the record but 'h200'")
    folder, path = _copy(tmp_path / "again", cpu_run)
    _edit_ledger(folder, lambda e: e.update(sha256="0" * 64 if e["sha256"] else None))
    _names(_why(folder, path), "ledger: the record's SHA-256")


def test_gate_verify_agrees_with_the_lab_and_names_a_forged_time(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    res = run_drill("gate", "--verify", "--bench", str(folder))
    assert res.returncode == 0 and "every measured time agrees" in res.stdout, res.stdout
    _edit(path, lambda rec: rec["ops"][0]["measured"].update(measured_s=rec["ops"][0]["measured"]["measured_s"] / 3))
    _names(_why(folder, path), f"traces: {json.loads(path.read_text())['ops'][0]['op']}: ")


# ----------------------------------------------------------------- red team (task F)

def _ledger_agrees(folder: Path, path: Path) -> None:
    """The ledger rewritten to vouch for the edited record: identity and SHA-256."""
    rec = json.loads(path.read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    stem = path.stem
    _edit_ledger(folder, lambda e: e.update(platform=rec["platform"], device_kind=rec["device_kind"],
                                            chip=rec["chip"], size=rec["size"],
                                            started_at=rec["measurement_started_at"],
                                            sha256=digest if e["sha256"] else None)
                 if e["stem"] == stem else None)


def test_a_size_written_as_a_float_still_meets_the_datasheet_floor(tmp_path, cpu_run):
    # N=8192 makes the CPU's N=256 times faster than an H200 can run; "size": 8192.0 is an integer
    # to the schema, and must not switch the floor rule off.
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, lambda rec: (_as_h200(rec), rec.update(size=8192.0)))
    _ledger_agrees(folder, path)
    _names(_why(folder, path), "datasheet floor: matmul measured")


def _second_run(folder: Path, path: Path, device_kind: str) -> Path:
    """A copy of the record as a later run on ``device_kind``, with its own ledger lines."""
    later = path.with_name(path.stem + "-2.json")
    rec = json.loads(path.read_text())
    rec["device_kind"] = device_kind
    rec["run"]["stem"] = later.stem
    rec["measurement_started_at"] = rec["measurement_started_at"].replace("+00:00", "1+00:00")
    later.write_text(json.dumps(rec, indent=2) + "\n")
    ledger = folder / records.LEDGER_NAME
    lines = [json.loads(line) for line in ledger.read_text().splitlines() if json.loads(line)["stem"] == path.stem]
    digest = hashlib.sha256(later.read_bytes()).hexdigest()
    with ledger.open("a") as fh:
        for e in lines:
            fh.write(json.dumps(dict(e, stem=later.stem, device_kind=device_kind,
                                     started_at=rec["measurement_started_at"],
                                     sha256=digest if e["sha256"] else None)) + "\n")
    return later


@pytest.mark.parametrize("spelling", ["nvidia h200", "NVIDIA  H200 ", "NVIDIA H200 NVL"])
def test_a_device_kind_spelled_another_way_is_no_fresh_first_run(tmp_path, cpu_run, spelling):
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, lambda rec: (_as_h200(rec), rec.update(size=4096)))
    _ledger_agrees(folder, path)
    later = _second_run(folder, path, spelling)
    why = _why(folder, later)
    assert any("not your first run" in w or "earlier run(s)" in w for w in why), why


def test_a_device_kind_with_lookalike_letters_is_refused(tmp_path, cpu_run):
    # Cyrillic "Н" (U+041D): no catalogued chip, so no physics, yet it prints as an H200.
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, lambda rec: (_as_h200(rec), rec.update(size=4096, device_kind="NVIDIA \u041d200", chip=None)))
    _ledger_agrees(folder, path)
    _names(_why(folder, path), "device_kind 'NVIDIA \\u041d200'")


def _borrow_probe_traces(rec: dict, op: str = "matmul") -> None:
    """The op's measurement replaced by its fixed-cost probe's (the same XLA module at the probe's
    small size): the times re-derive from those traces."""
    probe = rec["probes"]["fixed_cost_by_op"][op]["measurement"]
    for row in rec["ops"]:
        if row["op"] == op:
            row["measured"].update({k: v for k, v in probe.items() if k in row["measured"]})


def test_an_op_timed_from_its_probes_traces_is_refused(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, _borrow_probe_traces)
    why = _why(folder, path)
    assert any(w.startswith("traces: matmul and fixed cost matmul cite the same traces") for w in why), why


def test_a_second_row_for_one_op_is_refused(tmp_path, cpu_run):
    folder, path = _copy(tmp_path, cpu_run)
    _edit(path, lambda rec: rec["ops"].append(json.loads(json.dumps(rec["ops"][0]))))
    _names(_why(folder, path), f"ops: {json.loads(path.read_text())['ops'][0]['op']} has 2 rows")


def test_a_measurement_with_more_trace_folders_than_the_lab_writes_is_refused_unread(tmp_path, cpu_run):
    # Each trace is parsed under its own bound; the number of trace folders must be bounded too,
    # or a thousand 16 KiB bombs make one --verify run for minutes.
    folder, path = _copy(tmp_path, cpu_run)
    rec = json.loads(path.read_text())
    root = folder / rec["ops"][0]["measured"]["trace_dir"]
    for k in range(4, 4 + 30):
        shutil.copytree(root / "trace-1", root / f"trace-{k}")
    _names(_why(folder, path), f"traces: {rec['ops'][0]['op']}: cannot re-derive: 33 trace folders")


def test_the_real_records_traces_name_their_own_module_and_lie_in_their_windows(cpu_run):
    """The genuine CPU record: every measurement keeps its window, and no trace rule refuses it."""
    folder, path = cpu_run
    rec = json.loads(path.read_text())
    assert all(isinstance(r["measured"]["traced_from_unix_ns"], int) for r in rec["ops"])
    (row,) = gate.evaluate(folder).rows
    assert not [w for w in row.why_not if w.startswith(("traces:", "trace times:"))], row.why_not


def test_an_op_given_copies_of_its_probes_real_traces_never_counts(tmp_path, cpu_run):
    """The relabelling attack's swap on real traces: the matmul timed from its N=128 probe's traces,
    copied into the matmul's own folder, the numbers set to match through drill's own update."""
    folder, path = _copy(tmp_path, cpu_run)
    rec = json.loads(path.read_text())
    probe = rec["probes"]["fixed_cost_by_op"]["matmul"]["measurement"]
    (row,) = [r for r in rec["ops"] if r["op"] == "matmul"]
    shutil.rmtree(folder / row["measured"]["trace_dir"])
    shutil.copytree(folder / probe["trace_dir"], folder / row["measured"]["trace_dir"])

    def borrow(r):
        (m,) = [o["measured"] for o in r["ops"] if o["op"] == "matmul"]
        m.update({k: v for k, v in probe.items() if k in m and k != "trace_dir"})
    records.update(path, synthetic.json_edit(borrow))
    (gated,) = gate.evaluate(folder).rows
    assert any(w.startswith("traces: matmul: cannot re-derive: trace-1: its jit_lab_matmul ran program") and
               "compiled for bf16[128,128], bf16[128,128], not this measurement's bf16[256,256], bf16[256,256]" in w
               for w in gated.why_not), gated.why_not
    assert any(w.startswith("trace times: matmul: its traces were taken before the measurement began")
               for w in gated.why_not), gated.why_not
