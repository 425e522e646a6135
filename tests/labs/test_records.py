"""Records: schema, the hand-written checker (against the real jsonschema library), load and save."""

import copy
import json

import jsonschema
import pytest

from labs.records import folder as records
from tests.labs import synthetic


def _jsonschema_errors(record):
    validator = jsonschema.Draft202012Validator(records.load_schema())
    return sorted(e.message for e in validator.iter_errors(record))


@pytest.fixture
def gpu_record(tmp_path):
    return synthetic.record(tmp_path, {"softmax": 3.0}, explanations={"softmax": "exp is slow"},
                            calibrate=synthetic.calibration(7e14, 4.3e12))


@pytest.fixture
def cpu_record(tmp_path):
    return synthetic.record(tmp_path, dev=synthetic.device("cpu", "cpu", 8e9, 32 * 2**20),
                            calibrate=synthetic.calibration(4e11, 4e10), size=256, ops=("matmul", "add"))


def test_the_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(records.load_schema())


def test_assembled_records_validate_with_both_checkers(gpu_record, cpu_record):
    for rec in (gpu_record, cpu_record):
        records.validate(rec)
        assert _jsonschema_errors(rec) == []
        # what goes to disk is JSON: the round trip validates too
        records.validate(json.loads(json.dumps(rec)))


@pytest.mark.parametrize("mutate, fragment", [
    (lambda r: r.pop("ops"), "missing required key 'ops'"),
    (lambda r: r.__setitem__("platform", "fpga"), "is not one of"),
    (lambda r: r.__setitem__("size", "4096"), "expected integer"),
    (lambda r: r["ops"][0]["measured"].__setitem__("measured_s", None), "expected number"),
    (lambda r: r["ops"][0].__setitem__("verdict", "maybe"), "is not one of"),
    (lambda r: r["ops"][0]["predictions"].pop("learner"), "missing required key 'learner'"),
    (lambda r: r["ops"].append("not an op"), "expected object"),
    (lambda r: r["summary"].__setitem__("criterion_met", 1), "expected boolean"),
])
def test_the_hand_checker_rejects_what_jsonschema_rejects(gpu_record, mutate, fragment):
    broken = copy.deepcopy(gpu_record)
    mutate(broken)
    with pytest.raises(records.RecordError) as err:
        records.validate(broken)
    assert fragment in str(err.value)
    assert _jsonschema_errors(broken), "jsonschema should reject it too"


def test_checker_types_follow_json_schema():
    assert records.schema_errors(True, {"type": "integer"})  # a bool is not an integer
    assert records.schema_errors(True, {"type": "number"})
    assert not records.schema_errors(3.0, {"type": "integer"})  # 3.0 is an integer in JSON Schema
    assert records.schema_errors(3.5, {"type": "integer"})
    assert not records.schema_errors(None, {"type": ["number", "null"]})
    assert records.schema_errors([1, "x"], {"type": "array", "items": {"type": "integer"}}) == [
        "$[1]: expected integer, got str"]


def test_unknown_schema_and_version_are_named(gpu_record):
    other = dict(gpu_record, schema="someone-else/record")
    with pytest.raises(records.RecordError, match="unknown schema 'someone-else/record'"):
        records.validate(other)
    newer = dict(gpu_record, schema_version=99)
    with pytest.raises(records.RecordError, match="unknown schema version 99"):
        records.validate(newer)


def test_save_then_load_round_trips_and_leaves_no_temporary_file(tmp_path, gpu_record):
    path = records.save(gpu_record, tmp_path / "out", "lab-0.1-test")
    stored = records.load(path)  # as given, with the ledger's run entry the save set
    assert stored["run"]["stem"] == "lab-0.1-test" and {**stored, "run": None} == gpu_record
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [records.LOCK_NAME, "lab-0.1-test.json", records.LEDGER_NAME]
    pending, saved = records.read_ledger(tmp_path / "out")  # the pending line first, then the saved one
    assert pending["state"] == "pending" and pending["sha256"] is None and saved["state"] == "saved"
    assert saved["sha256"] == records.sha256_bytes(path.read_bytes())
    assert {k: saved[k] for k, _ in records.LEDGER_FIELDS} == {k: stored[r] for k, r in records.LEDGER_FIELDS}
    assert pending["stem"] == saved["stem"] == "lab-0.1-test"
    assert stored["run"] == {**stored["run"], "number": 1, "earlier": []}
    again = records.save(dict(gpu_record), tmp_path / "out", "lab-0.1-test")  # never replaced: a -2, a 2nd run
    assert again.name == "lab-0.1-test-2.json" and records.load(again)["run"]["earlier"] == ["lab-0.1-test"]


def test_save_refuses_an_invalid_record_and_writes_nothing(tmp_path, gpu_record):
    broken = dict(gpu_record)
    broken.pop("summary")
    with pytest.raises(records.RecordError):
        records.save(broken, tmp_path / "out", "lab-0.1-bad")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_scan_reports_unreadable_records_instead_of_raising(tmp_path, gpu_record):
    bench = tmp_path / "bench"
    records.save(gpu_record, bench, "lab-0.1-good")
    (bench / "lab-0.1-truncated.json").write_text('{"schema": "rudrite-kernels/lab-record", ')
    (bench / "lab-0.1-list.json").write_text("[1, 2]")
    (bench / "lab-0.1-binary.json").write_bytes(b"\xff\xfe\x00junk")
    (bench / "notes.json").write_text("{}")  # not a lab record name: ignored
    found = {p.path.name: p for p in records.scan(bench)}
    assert set(found) == {"lab-0.1-good.json", "lab-0.1-truncated.json", "lab-0.1-list.json",
                          "lab-0.1-binary.json"}
    assert found["lab-0.1-good.json"].record is not None
    assert "not JSON" in found["lab-0.1-truncated.json"].error
    assert "not a JSON object" in found["lab-0.1-list.json"].error
    assert found["lab-0.1-binary.json"].record is None


def test_record_stem_is_a_safe_file_name():
    stem = records.record_stem("gpu", "NVIDIA H200 / rev:2", 8192, "20261129T120000Z")
    assert stem == "lab-0.1-gpu-nvidia-h200-rev-2-n8192-20261129T120000Z"


def test_check_writable_fails_on_a_path_below_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(records.RecordError, match="cannot write to"):
        records.check_writable(blocker / "sub")


def test_save_never_replaces_an_existing_record(tmp_path, gpu_record, cpu_record):
    first = records.save(gpu_record, tmp_path, "lab-0.1-same")
    second = records.save(cpu_record, tmp_path, "lab-0.1-same")
    assert first.name == "lab-0.1-same.json" and second.name == "lab-0.1-same-2.json"
    assert {**records.load(first), "run": None} == gpu_record and {**records.load(second), "run": None} == cpu_record


def test_free_stem_skips_names_taken_by_a_record_or_a_trace_folder(tmp_path):
    assert records.free_stem(tmp_path, "lab-x") == "lab-x"
    (tmp_path / "lab-x.json").write_text("{}")
    (tmp_path / "traces" / "lab-x-2").mkdir(parents=True)
    assert records.free_stem(tmp_path, "lab-x") == "lab-x-3"


def test_two_plans_in_the_same_second_get_different_names(tmp_path):
    a = synthetic.plan(tmp_path)
    b = synthetic.plan(tmp_path)
    assert a.stem != b.stem and a.trace_dir != b.trace_dir


def test_a_ledger_line_that_is_not_utf8_is_a_damaged_line_and_saving_keeps_it(tmp_path):
    from tests.labs import synthetic

    out = tmp_path / "bench"
    out.mkdir()
    ledger = out / records.LEDGER_NAME
    bad = b'{"stem":"old","state":"saved","device_kind":"caf\xe9"}\n'
    ledger.write_bytes(b'{"stem":"a","state":"saved"}\n' + bad)
    assert records.read_ledger(out) == [{"stem": "a", "state": "saved"}, {"damaged": True}]
    records.save_run(synthetic.record(tmp_path), out, "lab-0.1-gpu")  # nothing measured is lost
    assert ledger.read_bytes().startswith(b'{"stem":"a","state":"saved"}\n' + bad)
    assert [e.get("state") for e in records.read_ledger(out)] == ["saved", None, "pending", "saved"]


def test_check_ledger_refuses_a_ledger_with_no_room_for_a_run(tmp_path):
    ledger = tmp_path / records.LEDGER_NAME
    line = b'{"pad":"' + b"x" * 4087 + b'"}\n'  # 4 KiB lines: the size, without a million lines to parse
    ledger.write_bytes(line * ((records.LEDGER_MAX_BYTES - records.LEDGER_HEADROOM_BYTES) // len(line) + 1))
    with pytest.raises(records.RecordError, match="too near the 4,194,304 a ledger may hold"):
        records.check_ledger(tmp_path)
    ledger.write_bytes(b"{}\n" * 10)
    assert records.check_ledger(tmp_path) == [{}] * 10


def _tree(folder):
    """Every path under ``folder`` -> its bytes (a link: where it points; a folder: None)."""
    import os

    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = (("link", os.readlink(p)) if p.is_symlink()
                                           else None if p.is_dir() else p.read_bytes())
    return out


def test_a_symlinked_record_or_ledger_is_refused_and_nothing_is_written_through_it(tmp_path, gpu_record):
    """The folder's files are written only in the folder: a record or a ledger that is a link
    (to a file elsewhere, or to nothing) is refused in one line, and nothing on either side changes."""
    import os

    out, elsewhere = tmp_path / "mine", tmp_path / "elsewhere"
    saved = records.save_run(copy.deepcopy(gpu_record), tmp_path / "real", "lab-0.1-gpu")
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / saved.name).write_bytes(saved.read_bytes())
    (elsewhere / records.LEDGER_NAME).write_bytes((saved.parent / records.LEDGER_NAME).read_bytes())
    (out / saved.name).symlink_to(elsewhere / saved.name)
    before = _tree(tmp_path)

    def unchanged():  # the lock file a refused write may have created aside
        assert {k: v for k, v in _tree(tmp_path).items() if k != "mine/.lock"} == before

    for call in (lambda: records.update(out / saved.name, synthetic.json_edit(lambda r: r.update(practice=True))),
                 lambda: records.rewrite(copy.deepcopy(gpu_record), out / saved.name)):
        with pytest.raises(records.RecordError, match="is a symbolic link") as exc:
            call()
        assert "\n" not in str(exc.value)
        unchanged()

    os.unlink(out / saved.name)
    (out / records.LEDGER_NAME).symlink_to(elsewhere / records.LEDGER_NAME)
    before = _tree(tmp_path)
    with pytest.raises(records.RecordError, match="is a symbolic link"):  # before measuring: refused
        records.check_ledger(out)
    unchanged()
    # a ledger that became a link during the run: the measured run is saved in the folder, unvouched,
    # and nothing is written through the link
    path = records.save_run(copy.deepcopy(gpu_record), out, "lab-0.1-gpu")
    assert path.parent == out and not path.is_symlink() and records.load(path)["run"] is None
    assert {k: v for k, v in _tree(tmp_path).items() if k not in ("mine/.lock", f"mine/{path.name}")} == before

    os.unlink(path)
    os.unlink(out / records.LEDGER_NAME)
    (out / records.LEDGER_NAME).symlink_to(elsewhere / "gone.jsonl")  # a link to nothing
    (out / "lab-0.1-gpu.json").symlink_to(elsewhere / "gone.json")
    path = records.save_run(copy.deepcopy(gpu_record), out, "lab-0.1-gpu")
    assert path.name == "lab-0.1-gpu-2.json" and not path.is_symlink()
    assert not (elsewhere / "gone.jsonl").exists() and not (elsewhere / "gone.json").exists()


def test_a_dangling_link_takes_its_name_and_a_linked_traces_folder_is_refused(tmp_path):
    import os

    (tmp_path / "lab-x.json").symlink_to(tmp_path / "nowhere.json")
    assert records.free_stem(tmp_path, "lab-x") == "lab-x-2"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "traces").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(records.RecordError, match="traces is a symbolic link"):
        records.prepare_output(tmp_path, "lab-y", True)
    assert os.listdir(tmp_path / "elsewhere") == []


def test_the_lab_refuses_a_linked_ledger_or_traces_folder_before_measuring(tmp_path):
    """What `drill lab` checks before its first step (labs.session.check_targets): one line each."""
    from labs.session import LabUsageError, check_targets

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / records.LEDGER_NAME).write_text("")
    for name, to in (("traces", tmp_path / "elsewhere"), (records.LEDGER_NAME, tmp_path / "elsewhere" / "gone"),
                     (records.LEDGER_NAME, tmp_path / "elsewhere" / records.LEDGER_NAME)):
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        out.mkdir()
        (out / name).symlink_to(to)
        with pytest.raises(LabUsageError, match="^nothing measured: .*symbolic link") as exc:
            check_targets(out, None, None)
        assert "\n" not in str(exc.value)
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == [records.LEDGER_NAME]


def test_a_record_with_a_key_given_twice_is_refused(tmp_path, gpu_record):
    """``json`` keeps the last of two ``"size"`` keys silently; a record is refused instead, as a
    prediction file with a key given twice is."""
    text = records.record_text(gpu_record)
    good = tmp_path / "lab-good.json"
    good.write_text(text, encoding="utf-8")
    records.load_typed(good)
    twice = tmp_path / "lab-twice.json"
    twice.write_text(text.replace('"size": ', '"size": 1024,\n  "size": ', 1), encoding="utf-8")
    assert twice.read_text(encoding="utf-8").count('"size": ') == text.count('"size": ') + 1
    for reader in (records.load_typed, records.load):
        with pytest.raises(records.RecordError, match="the key \"size\" is given twice"):
            reader(twice)
    nested = tmp_path / "lab-nested.json"
    nested.write_text(text.replace('"measured_s": ', '"measured_s": 1.0, "measured_s": ', 1), encoding="utf-8")
    with pytest.raises(records.RecordError, match="the key \"measured_s\" is given twice"):
        records.load_typed(nested)


def test_a_lock_made_a_link_during_the_run_never_loses_the_run(tmp_path, gpu_record, capfd):
    """``.lock`` was a regular file when the lab checked it (``check_lock``) and became a symbolic link
    while it measured: the record is saved all the same, unvouched, the link and what it points at are
    left as they are, and one line names the lock."""
    import os

    out = tmp_path / "race"
    out.mkdir()
    records.check_lock(out)  # what the run checked before measuring
    target = tmp_path / "elsewhere"
    target.write_bytes(b"theirs")
    os.symlink(target, out / records.LOCK_NAME)
    path = records.save_run(copy.deepcopy(gpu_record), out, "lab-0.1-gpu")
    saved = records.load(path)
    assert saved["run"] is None and saved["ops"] == gpu_record["ops"]
    assert os.readlink(out / records.LOCK_NAME) == str(target) and target.read_bytes() == b"theirs"
    assert not (out / records.LEDGER_NAME).exists()
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and f"the record is saved as {path}" in err and records.LOCK_NAME in err, err
    assert "symbolic link" in err and "the gate will not count it" in err, err


def test_a_ledger_that_grew_past_its_limit_during_the_run_never_loses_the_run(tmp_path, gpu_record, capfd):
    """Another lab or explain appended to the same folder's ledger while this run measured, past
    ``LEDGER_MAX_BYTES``: the record is saved all the same, unvouched (the gate never counts it), the
    ledger is left as it is, and one line names the ledger's problem."""
    from labs.gate import verdict as gate

    out = tmp_path / "race"
    out.mkdir()
    ledger = out / records.LEDGER_NAME
    ledger.write_bytes(b'{"stem":"x","state":"saved"}\n')
    records.check_ledger(out)  # what the run checked before measuring: room for its lines
    line = b'{"stem":"x","pad":"' + b"a" * 1000 + b'"}\n'
    grown = ledger.read_bytes() + line * 4300  # the 4,300 lines: 4.4 MB
    ledger.write_bytes(grown)
    assert len(grown) > records.LEDGER_MAX_BYTES
    path = records.save_run(copy.deepcopy(gpu_record), out, "lab-0.1-gpu")
    saved = records.load(path)
    assert saved["run"] is None and saved["ops"] == gpu_record["ops"]
    assert ledger.read_bytes() == grown
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and f"the record is saved as {path}" in err, err
    assert f"{len(grown):,}" in err and "4,194,304" in err, err
    assert "the gate will not count it" in err and f"move {ledger} aside" in err
    ledger.unlink()  # moved aside, as the line says: the record is still never counted (no line vouches)
    (row,) = gate.evaluate(out).rows
    assert not row.counted
