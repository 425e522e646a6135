"""The collectives lab's typed record (labs.collectives.record): validated on load with field paths,
round-trips exactly, declares the same fields as labs/collectives/collectives.schema.json, and is what
`drill lab --collectives` reports from."""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.collectives import record as rec
from labs.records import types as rt
from labs.records import folder as records
from tests.labs import collectives_synthetic as synthetic
from tests.labs.record_schema import add_unknown_keys_and_shuffle, json_objects, walk

# No collectives record is published in bench/ or kept in tests/ yet (none has run on a multi-chip
# accelerator); the records checked here are the lab's own (``collectives_synthetic``), and the slow
# end-to-end tests in test_collectives_lab.py load the ones a real run writes.


def _lab_written(tmp_path: Path) -> list[dict]:
    """Records the lab's own assembly writes: a v5e with datasheet figures (a 2-D mesh, traced), a CPU with
    none (wall clock only, every row predicted by the learner), and one saved and read back."""
    made = [synthetic.record(tmp_path / "a", mesh="4x4", sizes=(64e3, 1e6), learner="some"),
            synthetic.record(tmp_path / "b", device=synthetic.cpu(), trace=False, device_time=False, learner="all"),
            synthetic.record(tmp_path / "c", device=synthetic.cpu(4), process_count=2)]
    path = rec.save(copy.deepcopy(made[0]), tmp_path / "bench", "collectives-0.1-tpu")
    return [*made, json.loads(path.read_text(encoding="utf-8"))]


def _same_bytes(d: dict) -> None:
    again = rec.CollectivesRecord.from_dict(d).to_dict()
    assert again == d and records.record_text(again) == records.record_text(d)


def test_the_fixtures_cover_what_the_record_can_hold(tmp_path):
    a, b, c, _ = _lab_written(tmp_path)
    assert a["constants"]["datasheet"] is not None and b["constants"]["datasheet"] is None
    assert a["graded"] == "datasheet" and b["graded"] == "learner" and c["graded"] == "calibrated"
    assert a["rows"][0]["predictions"]["learner"] is not None and a["rows"][-1]["predictions"]["learner"] is None
    assert a["rows"][0]["measured"]["measured_from"] == "device" and b["rows"][0]["measured"]["measured_from"] == "wall"
    assert "t_math_s" in a["rows"][-1]["predictions"]["datasheet"] and a["mesh"]["shape"] == [4, 4]


def test_every_record_the_lab_writes_validates_and_round_trips(tmp_path):
    for record in _lab_written(tmp_path):
        typed = rec.parse(record)  # the schema and the types
        _same_bytes(record)
        assert typed.rows[0].measured.measured_s == record["rows"][0]["measured"]["measured_s"]
        assert typed.row("sharded_matmul").predictions.calibrated.seconds == \
            record["rows"][-1]["predictions"]["calibrated"]["seconds"]
        # version 1 reads the measurement keys LAB·0.1 added later as optional: the lab writes them all
        assert all(typed.rows[0].measured.has(f.name) for f in rt._fields(rt.CallMeasured))


def test_a_saved_record_loads_validated(tmp_path):
    path = rec.save(synthetic.record(tmp_path, trace=False), tmp_path / "bench", "collectives-0.1-x")
    assert rec.load(path).to_dict() == json.loads(path.read_text(encoding="utf-8"))
    bad = json.loads(path.read_text(encoding="utf-8"))
    bad["rows"][1]["measured"]["measured_s"] = "fast"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(records.RecordError, match=r"\$\.rows\[1\]\.measured\.measured_s: expected number"):
        rec.load(path)


def test_save_refuses_a_bad_record_and_writes_nothing(tmp_path):
    record = synthetic.record(tmp_path, trace=False)
    record["rows"][0]["verdict"] = "maybe"
    with pytest.raises(records.RecordError, match=r"\$\.rows\[0\]\.verdict: 'maybe' is not one of"):
        rec.save(record, tmp_path / "bench", "collectives-0.1-x")
    assert not list((tmp_path / "bench").glob("*.json")) if (tmp_path / "bench").exists() else True


@settings(max_examples=40)
@given(data=st.data())
def test_undeclared_keys_and_any_key_order_survive(tmp_path_factory, data):
    record = synthetic.record(tmp_path_factory.mktemp("keys"), trace=False, sizes=(64e3, 1e6))
    add_unknown_keys_and_shuffle(data, json_objects(record))
    _same_bytes(record)


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["rows"][2]["measured"].__setitem__("measured_s", "fast"),
     "$.rows[2].measured.measured_s: expected number, got str"),
    (lambda r: r["rows"][0]["measured"].pop("measured_s"), "$.rows[0].measured: missing required key 'measured_s'"),
    (lambda r: r.__setitem__("rows", 5), "$.rows: expected array, got int"),
    (lambda r: r["rows"][0].__setitem__("op", "broadcast"), "$.rows[0].op: 'broadcast' is not one of"),
    (lambda r: r["constants"]["calibrated"].pop("fitted_on"),
     "$.constants.calibrated: missing required key 'fitted_on'"),
    (lambda r: r["rows"][1]["predictions"]["datasheet"].__setitem__("bound", "memory"),
     "$.rows[1].predictions.datasheet.bound: 'memory' is not one of"),
    (lambda r: r["mesh"]["shape"].__setitem__(0, "4"), "$.mesh.shape[0]: expected integer, got str"),
])
def test_from_dict_names_the_field_path(tmp_path, mutate, message):
    record = synthetic.record(tmp_path, trace=False)
    mutate(record)
    with pytest.raises(records.RecordError) as typed:
        rec.CollectivesRecord.from_dict(record)
    assert message in str(typed.value)
    with pytest.raises(records.RecordError) as parsed:  # the schema's checker says the same
        rec.parse(record)
    assert message.split(":")[0] in str(parsed.value)


@pytest.mark.parametrize("schema, version, message", [
    ("rudrite-kernels/lab-record", 1, "not a collectives record"), (rec.SCHEMA_NAME, 2, "unknown schema version 2")])
def test_another_schema_or_version_is_refused(tmp_path, schema, version, message):
    record = synthetic.record(tmp_path, trace=False)
    record.update(schema=schema, schema_version=version)
    with pytest.raises(records.RecordError, match=message):
        rec.parse(record)


def test_the_types_declare_exactly_the_schema_fields():
    found: list[tuple[str, str, int | None]] = []
    walk(rec.CollectivesRecord, rec.load_schema(), "$", found)
    # The only keys a later version requires are those of the measurement shared with LAB·0.1 (read as
    # optional at version 1), no more, no fewer.
    later = {(f.name, rt.required_since(f)) for f in rt._fields(rt.CallMeasured) if rt.required_since(f) not in (None, 1)}
    assert set(found) == {("$.rows[].measured", name, v) for name, v in later}
    assert list(typing.get_args(typing.get_type_hints(rec.CollectivesRecord)["schema_version"])) == \
        list(rec.SUPPORTED_VERSIONS) == [rec.SCHEMA_VERSION]
    assert rec.CallMeasured in rt.parts(rec.CollectivesRecord) and rt.Ratios in rt.parts(rec.CollectivesRecord)


def test_report_lines_read_the_typed_record(tmp_path):
    typed = rec.parse(synthetic.record(tmp_path, device=synthetic.cpu(), trace=False, learner="some"))
    lines = rec.report_lines(typed)
    assert lines[0].startswith("LAB·coll collectives on a device mesh: 8 x cpu (cpu), mesh 8 ('x',), bf16, practice")
    assert "fitted on all_gather@16kB, all_gather@1MB" in lines[1]
    rows = [line for line in lines if line.startswith(("all_", "reduce_", "sharded_"))]
    assert len(rows) == len(typed.rows) == 13
    for line, row in zip(rows, typed.rows):
        assert line.startswith(row.id) and line.endswith(row.verdict)
        assert line.count(f"{'-':>10}") == (1 if row.predictions.learner else 2)  # no datasheet on a CPU
    assert lines[-1] == f"note: {typed.constants.datasheet_note}"


def _fake_lab(monkeypatch, broken: bool = False) -> None:
    """`drill lab --collectives` on 8 stand-in CPU devices: the run's measurements are the synthetic ones
    (``labs.collectives.lab.assemble`` over them, as ``collectives_run.run`` does); everything else is the CLI's."""
    from labs.collectives import lab
    from labs.collectives import run as collectives_run
    from labs.measure import device

    monkeypatch.setattr(device, "detect", lambda: synthetic.cpu())
    monkeypatch.setattr(collectives_run, "separate_process_traces", lambda plan: None)
    monkeypatch.setattr(collectives_run, "is_first_process", lambda: True)

    def run(plan, learner, progress):
        measured = {r.id: synthetic.measurement(1e-5 + r.bytes / 1e10, None) for r in plan.rows}
        record = lab.assemble(plan, measured, synthetic.measurement(1e-4, None), learner, 1)
        if broken:
            record["rows"][3]["measured"]["measured_from"] = "guess"
        return record
    monkeypatch.setattr(collectives_run, "run", run)


def test_drill_lab_collectives_reports_and_saves_the_typed_record(tmp_path, monkeypatch):
    from tests.conftest import invoke_drill

    _fake_lab(monkeypatch)
    res = invoke_drill("lab", "--collectives", "--sizes", "16kB,64kB", "--out", str(tmp_path / "rec"))
    assert res.returncode == 0, res.stderr
    (path,) = (tmp_path / "rec").glob("collectives-0.1-cpu-cpu-d8-*.json")
    typed = rec.load(path)
    assert res.stdout.splitlines()[:-1][-len(rec.report_lines(typed)):] == rec.report_lines(typed)
    assert res.stdout.splitlines()[-1] == f"record: {path}" and len(typed.rows) == 9


def test_drill_lab_collectives_refuses_a_record_that_breaks_the_schema_in_one_line(tmp_path, monkeypatch):
    from tests.conftest import invoke_drill

    _fake_lab(monkeypatch, broken=True)
    res = invoke_drill("lab", "--collectives", "--sizes", "16kB,64kB", "--out", str(tmp_path / "rec"), "--json")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == \
        "drill: error: $.rows[3].measured.measured_from: 'guess' is not one of ['device', 'wall']"
    assert not list((tmp_path / "rec").glob("*.json"))
