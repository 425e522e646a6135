"""`drill xprof`'s logdir: one record's traces only, never a user's file written over, and the temporary
layout named, reused for the same record and pruned (``labs.measure.xprof_logdir``)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from drills.cli import cli
from labs.records import folder as records
from labs.measure import xprof_logdir
from tests.labs import synthetic


@pytest.fixture
def two_records(tmp_path):
    bench = tmp_path / "bench"
    first = records.save_run(synthetic.record(tmp_path), bench, "lab-0.1-gpu")
    second = records.save_run(synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00"), bench,
                              "lab-0.1-gpu-b")
    assert first != second
    return bench, first, second


def xprof(bench, record, *more):
    return CliRunner().invoke(cli, ["xprof", record.name, "--bench", str(bench), *more])


def profile_runs(logdir):
    return sorted(p.name for p in (logdir / "plugins" / "profile").iterdir())


def test_a_second_record_is_refused_in_a_logdir_holding_the_first(two_records, tmp_path):
    """``xprof rec1 --logdir xl; xprof rec2 --logdir xl`` mixed 69 new and 12 stale traces into one XProf run."""
    bench, first, second = two_records
    logdir = tmp_path / "xl"
    res = xprof(bench, first, "--logdir", str(logdir))
    assert res.exit_code == 0, res.output
    before = {p: p.read_bytes() for p in logdir.rglob("*") if p.is_file()}
    res = xprof(bench, second, "--logdir", str(logdir))
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert f"holds the traces of {first.name}" in res.output and "name another folder" in res.output
    assert {p: p.read_bytes() for p in logdir.rglob("*") if p.is_file()} == before
    again = xprof(bench, first, "--logdir", str(logdir))  # the same record: its own layout, done again
    assert again.exit_code == 0, again.output
    assert {p: p.read_bytes() for p in logdir.rglob("*") if p.is_file()} == before


def test_a_folder_the_tool_did_not_make_is_refused_and_a_users_file_is_never_replaced(two_records, tmp_path):
    bench, first, _ = two_records
    mine = tmp_path / "mine"
    (mine / "plugins" / "profile" / "add-trace-1").mkdir(parents=True)
    users = mine / "plugins" / "profile" / "add-trace-1" / "host.xplane.pb"
    users.write_bytes(b"my own trace")
    res = xprof(bench, first, "--logdir", str(mine))
    assert res.exit_code == 1 and "is not empty and drill xprof did not make it" in res.output, res.output
    assert users.read_bytes() == b"my own trace" and sorted(mine.rglob("*"))[-1] == users
    # a user's file put into the tool's own layout, at a trace's path it did not list, is not written over
    fresh = tmp_path / "fresh"
    assert xprof(bench, first, "--logdir", str(fresh)).exit_code == 0
    mark = json.loads((fresh / xprof_logdir.MARK).read_text())
    listed = fresh / mark["files"][0]
    mark["files"] = mark["files"][1:]
    (fresh / xprof_logdir.MARK).write_text(json.dumps(mark))
    listed.write_bytes(b"now the user's")
    res = xprof(bench, first, "--logdir", str(fresh))
    assert res.exit_code == 1 and "refusing to write over it" in res.output, res.output
    assert listed.read_bytes() == b"now the user's"


def test_an_empty_or_new_logdir_is_used(two_records, tmp_path):
    bench, first, _ = two_records
    empty = tmp_path / "empty"
    empty.mkdir()
    for logdir in (empty, tmp_path / "new" / "deeper"):
        res = xprof(bench, first, "--logdir", str(logdir))
        assert res.exit_code == 0, res.output
        assert len(profile_runs(logdir)) == 36 and (logdir / xprof_logdir.MARK).is_file()
        assert res.output.splitlines()[0] == f"36 trace(s) of {first.name} laid out in {logdir}"


def test_without_logdir_the_layout_is_named_reused_and_pruned(two_records, tmp_path, monkeypatch):
    bench, first, second = two_records
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    res = xprof(bench, first)
    assert res.exit_code == 0, res.output
    parent = tmp_path / "tmp" / f"drill-xprof-{os.geteuid()}"
    (folder,) = parent.iterdir()
    assert res.output.splitlines()[0] == f"36 trace(s) of {first.name} laid out in {folder}"
    assert "rm -r" in res.output and res.output.splitlines()[-1] == f"xprof --logdir={folder} --port=6006"
    assert oct(parent.stat().st_mode & 0o777) == oct(0o700)
    stamp = {p: p.stat().st_mtime_ns for p in folder.rglob("*.pb")}
    again = xprof(bench, first)
    assert again.exit_code == 0 and "(reused)" in again.output.splitlines()[0], again.output
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*.pb")} == stamp  # nothing written again
    assert list(parent.iterdir()) == [folder]
    assert xprof(bench, second).exit_code == 0 and len(list(parent.iterdir())) == 2
    monkeypatch.setattr(xprof_logdir, "XPROF_KEEP", 1)
    assert xprof(bench, first).exit_code == 0
    assert list(parent.iterdir()) == [folder]  # only the newest record's layout kept


def test_a_shared_temporary_parent_is_refused(two_records, tmp_path, monkeypatch):
    bench, first, _ = two_records
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    parent = tmp_path / f"drill-xprof-{os.geteuid()}"
    parent.mkdir()
    os.chmod(parent, 0o777)
    res = xprof(bench, first)
    assert res.exit_code == 1 and "is not a private folder" in res.output and "--logdir" in res.output, res.output
    assert list(parent.iterdir()) == []
