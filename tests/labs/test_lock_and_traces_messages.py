"""Plain one-line messages for a records folder whose ``.lock`` or ``traces/`` is a symbolic link: the
line names the link and what it stands in for, never ELOOP's bare "Too many levels of symbolic links"
nor "only a regular file" for a folder; nothing is written through the link."""

from __future__ import annotations

import os

import pytest

from labs.records import folder as records
from labs.session import LabUsageError, check_targets
from tests.conftest import invoke_drill
from tests.labs import synthetic


def _saved(tmp_path):
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 2.5})
    return records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-test")


@pytest.mark.parametrize("dangling", [False, True])
def test_explain_names_a_linked_lock_in_one_line_and_writes_nothing(tmp_path, dangling):
    path = _saved(tmp_path)
    outside = tmp_path / "outside-lock"
    if not dangling:
        outside.write_text("theirs")
    lock = path.parent / records.LOCK_NAME
    lock.unlink()
    lock.symlink_to(outside)
    before = path.read_bytes()
    why = tmp_path / "why.yaml"
    why.write_text("add: overhead\n")
    res = invoke_drill("explain", str(path), "--explanations", str(why))
    assert res.returncode == 1 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert f"{records.LOCK_NAME} is a symbolic link" in lines[0] and "remove the link" in lines[0]
    assert "Too many levels" not in lines[0]
    assert path.read_bytes() == before
    assert (outside.read_text() == "theirs") if not dangling else not os.path.lexists(outside)


def test_the_lab_refuses_a_linked_lock_before_measuring(tmp_path):
    """Saving takes the folder's lock: a linked ``.lock`` found only then would lose the measured run."""
    out = tmp_path / "out"
    out.mkdir()
    (out / records.LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LabUsageError, match=r"^nothing measured: .*\.lock is a symbolic link") as exc:
        check_targets(out, None, None)
    assert "\n" not in str(exc.value)
    os.unlink(out / records.LOCK_NAME)
    os.mkfifo(out / records.LOCK_NAME)  # a scratch FIFO, never the machine's own nodes
    with pytest.raises(LabUsageError, match=r"\.lock is not a regular file"):
        check_targets(out, None, None)
    os.unlink(out / records.LOCK_NAME)
    check_targets(out, None, None)  # no lock yet: the save makes it


def test_a_linked_traces_folder_is_called_a_folder(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "traces").symlink_to(elsewhere)
    with pytest.raises(LabUsageError) as before_measuring:
        check_targets(out, None, None)
    with pytest.raises(records.RecordError) as preparing:
        records.prepare_output(out, "lab-y", True)
    for exc in (before_measuring, preparing):
        text = str(exc.value)
        assert "traces is a symbolic link in place of a folder" in text and "regular file" not in text, text
        assert "\n" not in text
    assert os.listdir(elsewhere) == []
    # a record file that is a link keeps the file's wording
    (out / "lab-z.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(records.RecordError, match="lab-z.json is a symbolic link; only a regular file"):
        records.check_own_file(out / "lab-z.json", out)
