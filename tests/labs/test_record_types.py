"""The typed record (labs.records.types): validated on load with field paths, round-trips exactly,
and declares the same fields as labs/records/record.schema.json."""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.records import types as rt
from labs.records import folder as records
from tests.labs import synthetic
from tests.labs.record_schema import add_unknown_keys_and_shuffle, json_objects, walk

REPO = Path(__file__).resolve().parents[2]
STORED = sorted([*REPO.glob("bench/lab-*.json"), *REPO.glob("tests/**/lab-*.json")])


def _lab_written(tmp_path: Path) -> list[dict]:
    """Records the lab's own assembly writes: GPU and CPU, explained and refused misses, saved."""
    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    made = [synthetic.record(tmp_path / "a", {"softmax": 3.0}, explanations={"softmax": "exp is slow"}),
            synthetic.record(tmp_path / "b", dev=cpu, calibrate=synthetic.calibration(4e11, 4e10), size=256),
            synthetic.record(tmp_path / "c", mine=False, wall_ops=("add",), noisy_ops=("softmax",))]
    path = records.save_run(copy.deepcopy(made[0]), tmp_path / "bench", "lab-0.1-gpu")
    return [*made, json.loads(path.read_text(encoding="utf-8"))]


def _same_bytes(d: dict) -> None:
    again = rt.LabRecord.from_dict(d).to_dict()
    assert again == d and records.record_text(again) == records.record_text(d)


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name)
def test_every_stored_record_round_trips_to_the_same_bytes(path):
    data = path.read_bytes()
    record = json.loads(data)
    again = rt.LabRecord.from_dict(record).to_dict()
    assert json.dumps(again) == json.dumps(record)  # same keys, same order, same numbers
    if data.decode() == records.record_text(record):  # written by the lab: the SHA-256 cannot change
        assert records.sha256_bytes(records.record_text(again).encode()) == records.sha256_bytes(data)


def test_every_record_the_lab_writes_round_trips(tmp_path):
    for record in _lab_written(tmp_path):
        _same_bytes(record)
        assert rt.LabRecord.from_dict(record).ops[0].measured.measured_s == record["ops"][0]["measured"]["measured_s"]


@settings(max_examples=60)
@given(data=st.data())
def test_undeclared_keys_and_any_key_order_survive(data):
    record = json.loads(STORED[-1].read_text(encoding="utf-8"))
    add_unknown_keys_and_shuffle(data, json_objects(record))
    _same_bytes(record)


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["ops"][2]["measured"].__setitem__("measured_s", "fast"),
     "$.ops[2].measured.measured_s: expected number, got str"),
    (lambda r: r["ops"][0]["measured"].pop("measured_s"), "$.ops[0].measured: missing required key 'measured_s'"),
    (lambda r: r.__setitem__("ops", 5), "$.ops: expected array, got int"),
    (lambda r: r["ops"][1]["miss"].pop("attempts"), "$.ops[1].miss: missing required key 'attempts'"),  # version 4
    (lambda r: r["ops"][0].__setitem__("verdict", "maybe"), "$.ops[0].verdict: 'maybe' is not one of"),
    (lambda r: r["probes"].__setitem__("noisy", [1]), "$.probes.noisy[0]: expected string, got int"),
])
def test_from_dict_names_the_field_path(mutate, message):
    record = json.loads(STORED[-1].read_text(encoding="utf-8"))
    assert record["schema_version"] == records.SCHEMA_VERSION
    mutate(record)
    with pytest.raises(records.RecordError) as err:
        rt.LabRecord.from_dict(record)
    assert message in str(err.value)


def test_a_version_1_record_needs_none_of_the_later_keys():
    record = json.loads((REPO / "bench/lab-0.1-gpu-nvidia-h200-n4096-20261129T225015Z.json").read_text())
    typed = rt.LabRecord.from_dict(record)
    assert typed.schema_version == 1 and typed.probes is None and typed.ops[0].miss is None
    assert not typed.has("probes") and "probes" not in typed.to_dict()


# ----------------------------------------------------------------- the types and the schema agree

def test_the_types_declare_exactly_the_schema_fields():
    found: list[tuple[str, str, int | None]] = []
    walk(rt.LabRecord, records.load_schema(), "$", found)
    # The keys a later version requires are records.py's lists, no more, no fewer.
    expected = ({("$", k, 2) for k in records.V2_REQUIRED} | {("$", k, 3) for k in records.V3_REQUIRED}
                | {("$.ops[]", k, 3) for k in records.V3_OP_REQUIRED}
                | {("$.ops[].measured", k, 2) for k in records.V2_MEASURED_REQUIRED}
                | {("$.ops[].measured", k, 3) for k in records.V3_MEASURED_REQUIRED}
                | {("$.ops[].miss", k, 4) for k in records.V4_MISS_REQUIRED})
    assert set(found) == expected
    assert list(typing.get_args(typing.get_type_hints(rt.LabRecord)["schema_version"])) == \
        list(records.SUPPORTED_VERSIONS)


# ----------------------------------------------------------------- a malformed record is one line

def _folder_with_two_bad(tmp_path: Path) -> Path:
    """One good record (two misses, one left to explain), one with ``"ops": 5``, one not JSON."""
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 2.5})
    good = records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-good")
    bad = json.loads(good.read_text(encoding="utf-8"))
    bad["ops"] = 5
    (good.parent / "lab-0.1-ops5.json").write_text(json.dumps(bad), encoding="utf-8")
    (good.parent / "lab-0.1-notjson.json").write_text("{ not json", encoding="utf-8")
    return good.parent


@pytest.mark.parametrize("args, code", [
    (["gate"], 0), (["gate", "--verify"], 0), (["progress"], 0), (["xprof"], 0),
    (["explain", "--explanations", "WHY"], 0), (["site", "--records", "BENCH", "-o", "OUT"], 0)])
def test_every_folder_command_says_one_line_per_bad_record_and_reads_the_rest(tmp_path, monkeypatch, args, code):
    from click.testing import CliRunner

    from drills.cli import cli

    bench = _folder_with_two_bad(tmp_path)
    (tmp_path / "why.yaml").write_text("add: x\n", encoding="utf-8")
    monkeypatch.setenv("DRILL_STORE", str(tmp_path / "store.sqlite3"))
    swap = {"WHY": str(tmp_path / "why.yaml"), "BENCH": str(bench), "OUT": str(tmp_path / "site")}
    argv = [swap.get(a, a) for a in args]
    if args[0] != "site":
        argv += ["--bench", str(bench)]
    res = CliRunner().invoke(cli, argv)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    assert "Traceback" not in res.output and res.exit_code == code, res.output
    err = res.stderr.splitlines()
    (ops5,) = [l for l in err if "lab-0.1-ops5.json" in l]
    (notjson,) = [l for l in err if "lab-0.1-notjson.json" in l]
    assert ops5.startswith("drill: skipped ") and "$.ops: expected array, got int" in ops5
    assert "is not JSON" in notjson
    assert "lab-0.1-ops5.json" not in res.stdout and "lab-0.1-notjson.json" not in res.stdout
    if args[0] == "gate" and len(args) == 1:
        assert "lab-0.1-gpu-good.json" in res.stdout  # the good record is still judged
    if args[0] == "explain":
        assert "miss(es) explained" in res.stdout


def test_replace_writes_a_key_the_stored_object_lacked_after_its_stored_keys():
    stored = rt.Miss.from_dict({"op": "add", "reasons": [], "text": "", "accepted": False, "why": "w"}, "$", 3)
    changed = stored.replace(finding="no derivation reaches measured", why="found")
    assert list(changed.to_dict()) == ["op", "reasons", "text", "accepted", "why", "finding"]
    assert changed.to_dict()["finding"] == "no derivation reaches measured" and changed.why == "found"
    assert "finding" not in stored.to_dict() and stored.why == "w"  # a new object; the old one is as it was


def test_the_pipeline_passes_a_typed_record_and_never_edits_one_in_place(tmp_path):
    """``runner.assemble`` returns a LabRecord; judging a miss returns a new record, with the attempt and
    the summary, and the one judged is unchanged; what is written is the record's own JSON."""
    from generator import explain as mr
    from labs import runner

    cpu = synthetic.device("cpu", "cpu", 8e9, 32 * 2**20)
    rec = rt.LabRecord.from_dict(synthetic.record(tmp_path, {"add": 3.0}, dev=cpu,
                                                  calibrate=synthetic.calibration(4e11, 4e10), size=512))
    before = rec.to_dict()
    judged = runner.record_judgement(rec, "add", mr.judge("overhead", records.op_evidence(rec, "add")))
    assert isinstance(judged, rt.LabRecord) and rec.to_dict() == before
    (attempt,) = judged.op("add").miss.attempts
    assert attempt.verdict == "refused" and judged.summary.unexplained == ("add",)
    path = records.save_run(judged, tmp_path / "bench", "lab-0.1-cpu")
    stored = records.load_typed(path)[0]
    assert stored.op("add").miss.attempts == (attempt,) and stored.run is not None and judged.run is None
