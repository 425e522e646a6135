"""generator.io.safeio: the one policy for files at the boundary (regular files only, bounded, atomic)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.io import safeio
from tests.conftest import finishes


def _snapshot(path: Path) -> tuple:
    s = os.lstat(path)
    return stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode), s.st_uid, s.st_rdev


# -- reading -------------------------------------------------------------------------


def test_reads_a_regular_file_within_the_limit(tmp_path):
    f = tmp_path / "a.json"
    f.write_bytes(b'{"a": [1, 2, {"b": 3}]}')
    assert safeio.read_json_bounded(f, 100, 3) == {"a": [1, 2, {"b": 3}]}
    with pytest.raises(safeio.SafeIOError, match="limit is 10"):
        safeio.read_bytes_bounded(f, 10)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(safeio.SafeIOError, match="FIFO"):
        finishes(lambda: safeio.read_bytes_bounded(fifo, 100))  # opening a FIFO with no writer blocks
    with pytest.raises(safeio.SafeIOError, match="FIFO"):
        safeio.read_head(fifo, 16)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_and_links_to_them_are_refused(tmp_path, device):
    link = tmp_path / "lab-x.json"
    link.symlink_to(device)
    with pytest.raises(safeio.SafeIOError, match="character device"):
        safeio.read_json_bounded(link)
    with pytest.raises(safeio.SafeIOError, match="a directory"):
        safeio.read_bytes_bounded(tmp_path)


def test_deep_nesting_and_huge_integers_are_clean_errors(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(safeio.SafeIOError, match="nested more than 64 levels deep"):
        safeio.read_json_bounded(deep, max_depth=64)
    huge = tmp_path / "huge.json"
    huge.write_text('{"size": ' + "9" * 5000 + "}")
    with pytest.raises(safeio.SafeIOError, match="5000 digits"):
        safeio.read_json_bounded(huge)
    text = tmp_path / "latin1.json"
    text.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(safeio.SafeIOError, match="not UTF-8"):
        safeio.read_json_bounded(text)


def test_an_integer_over_forty_digits_is_refused_and_forty_is_read():
    assert safeio.loads_bounded('{"n": ' + "9" * 40 + "}") == {"n": int("9" * 40)}
    assert safeio.loads_bounded("-" + "1" * 40) == -int("1" * 40)
    for text in ("1" * 41, "-" + "1" * 41, "[" + "7" * 41 + "]"):
        with pytest.raises(safeio.SafeIOError, match="an integer of 41 digits"):
            safeio.loads_bounded(text)


def test_check_regular_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "plain").write_text("x")
    assert stat.S_ISREG(safeio.check_regular(tmp_path / "plain").st_mode)
    for path, kind in ((tmp_path, "a directory"), (fifo, r"a FIFO \(named pipe\)"),
                       ("/dev/null", "a character device")):
        with pytest.raises(safeio.SafeIOError, match=f"is {kind}, not a regular file"):
            safeio.check_regular(path)


def test_read_entry_refuses_a_file_with_a_second_name(tmp_path):
    (tmp_path / "own.txt").write_text("own")
    dir_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert safeio.read_entry_bounded(dir_fd, "own.txt") == b"own"
        os.link(tmp_path / "own.txt", tmp_path / "second.txt")  # two links: either name may be changed elsewhere
        for name in ("own.txt", "second.txt"):
            with pytest.raises(safeio.SafeIOError, match="has 2 links"):
                safeio.read_entry_bounded(dir_fd, name)
        os.unlink(tmp_path / "second.txt")
        assert safeio.read_entry_bounded(dir_fd, "own.txt") == b"own"
    finally:
        os.close(dir_fd)


@settings(max_examples=60)
@given(st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=20))
def test_depth_scan_matches_the_parsed_value(value):
    """Invariant: the bracket scan's depth is the parsed value's nesting, strings with brackets included."""
    def depth(v) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    text = json.dumps(value)
    assert safeio.json_depth(text) == depth(value)
    assert not safeio.deeper_than(text, depth(value)) and safeio.deeper_than(text, depth(value) - 1) == (depth(value) > 0)
    assert safeio.loads_bounded(text, max_depth=depth(value)) == value
    if depth(value):
        with pytest.raises(safeio.SafeIOError, match="levels deep"):
            safeio.loads_bounded(text, max_depth=depth(value) - 1)


def test_display_path_survives_a_name_that_is_not_utf8():
    name = os.fsdecode(b"lab-\xff.json")
    shown = safeio.display_path(name)
    assert shown == "lab-\\xff.json"
    shown.encode("utf-8")  # printable on a strict UTF-8 stream


# -- writing -------------------------------------------------------------------------


def test_writes_a_new_file_with_the_umask_mode(tmp_path):
    out = safeio.write_text(tmp_path / "new.txt", "hello\n")
    mask = os.umask(0)
    os.umask(mask)
    assert out.read_text() == "hello\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]


def test_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    f = tmp_path / "record.json"
    f.write_text("old")
    f.chmod(0o640)
    safeio.write_text(f, "new")
    assert f.read_text() == "new" and stat.S_IMODE(f.stat().st_mode) == 0o640


def test_a_file_of_another_user_keeps_its_owner_or_is_refused(tmp_path):
    f = tmp_path / "theirs.json"
    f.write_text("theirs")
    f.chmod(0o664)
    if os.geteuid() == 0:  # root can set the owner back: replaced, owner and mode kept
        os.chown(f, 12345, 12345)
        safeio.write_text(f, "explained")
        s = f.stat()
        assert (f.read_text(), s.st_uid, s.st_gid, stat.S_IMODE(s.st_mode)) == ("explained", 12345, 12345, 0o664)
    else:  # a user can not create another user's file here; the check is on st_uid
        assert f.stat().st_uid == os.geteuid()
        safeio.write_text(f, "mine")
        assert f.read_text() == "mine"


def test_read_only_by_mode_is_refused_even_for_root(tmp_path):
    f = tmp_path / "ro.json"
    f.write_text("keep")
    f.chmod(0o444)
    before = _snapshot(f)
    with pytest.raises(safeio.RefusedTarget, match="read-only"):
        safeio.write_text(f, "overwrite")
    assert f.read_text() == "keep" and _snapshot(f) == before
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "r.json").write_text("keep")
    locked.chmod(0o555)
    try:
        with pytest.raises(safeio.RefusedTarget, match="not writable"):
            safeio.write_text(locked / "r.json", "overwrite")
        assert (locked / "r.json").read_text() == "keep"
        assert sorted(p.name for p in locked.iterdir()) == ["r.json"]
    finally:
        locked.chmod(0o755)


def test_a_fifo_is_never_replaced(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo, 0o644)
    before = _snapshot(fifo)
    with pytest.raises(safeio.RefusedTarget, match="FIFO"):
        finishes(lambda: safeio.write_text(fifo, "data"))  # opening the FIFO to write would block for ever
    assert _snapshot(fifo) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_character_device_is_never_replaced(tmp_path):
    dev = tmp_path / "scratch-null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod is not permitted here (no CAP_MKNOD): the scratch character device "
                    "case can not be set up; /dev/null and /dev/full are covered in tests/test_hostile.py")
    before = _snapshot(dev)
    with pytest.raises(safeio.RefusedTarget, match="character device"):
        safeio.write_text(dev, "data")
    assert _snapshot(dev) == before and stat.S_ISCHR(os.lstat(dev).st_mode)
    with pytest.raises(safeio.SafeIOError, match="character device"):
        safeio.read_bytes_bounded(dev)


def test_a_symlink_stays_a_link_and_its_target_is_replaced(tmp_path):
    target = tmp_path / "real.csv"
    target.write_text("old")
    target.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(target.name)
    safeio.write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == "real.csv"
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_link_to_nothing_is_refused_and_no_file_appears_where_it_points(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere" / "new.csv")
    with pytest.raises(safeio.RefusedTarget, match="symbolic link to nothing"):
        safeio.write_text(link, "data")
    assert link.is_symlink() and os.listdir(tmp_path / "elsewhere") == []


def test_a_write_inside_a_folder_never_goes_through_a_link(tmp_path):
    folder, elsewhere = tmp_path / "records", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "r.json").write_text("old")
    (folder / "r.json").symlink_to(elsewhere / "r.json")
    (folder / "sub").symlink_to(elsewhere)
    for path in (folder / "r.json", folder / "sub" / "new.json", tmp_path / "outside.json"):
        with pytest.raises(safeio.RefusedTarget) as exc:
            safeio.write_text(path, "new", inside=folder)
        assert "\n" not in str(exc.value)
    assert sorted(os.listdir(elsewhere)) == ["r.json"] and (elsewhere / "r.json").read_text() == "old"
    assert not (tmp_path / "outside.json").exists()
    safeio.write_text(folder / "ok.json", "new", inside=folder)
    assert (folder / "ok.json").read_text() == "new"


def test_a_directory_or_missing_parent_is_a_plain_error(tmp_path):
    with pytest.raises(safeio.SafeIOError, match="is a directory"):
        safeio.write_text(tmp_path, "x")
    with pytest.raises(safeio.SafeIOError, match="does not exist"):
        safeio.write_text(tmp_path / "no" / "x", "x")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_whole(tmp_path):
    f = tmp_path / "deck.apkg"
    f.write_bytes(b"previous")

    def explode(tmp: str) -> None:
        Path(tmp).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(safeio.SafeIOError, match="No space left"):
        safeio.atomic_write(f, explode)
    assert f.read_bytes() == b"previous" and sorted(p.name for p in tmp_path.iterdir()) == ["deck.apkg"]


def test_fmt_and_json_at_the_float_limits() -> None:
    """Numbers past the float range format (no exception) and serialise as standard JSON."""
    import json
    import math

    from generator.model.units import fmt, json_ready, sci

    for value in (math.inf, -math.inf, math.nan, 1e308 * 10):
        for unit in ("s", "FLOP/byte", "", "B/s"):
            assert isinstance(fmt(value, unit), str)
        assert sci(value) in ("inf", "-inf", "nan")
    assert fmt(1e-300, "s").endswith("ps") and fmt(8.72e-5, "s") == "87.2 µs"  # unchanged inside the range
    assert sci(1.97e14) == "1.97e14" and fmt(682.666, "FLOP/byte") == "682.7 FLOPs/byte"
    ready = json_ready({"a": math.inf, "b": [1.0, math.nan], "c": {"d": -math.inf}, "e": 2})
    assert json.loads(json.dumps(ready, allow_nan=False)) == {
        "a": None, "b": [1.0, None], "c": {"d": None}, "e": 2, "non_finite": ["a", "b[1]", "c.d"]}
    assert "non_finite" not in json_ready({"a": 1.0})


def test_yaml_alias_bounds() -> None:
    import pytest

    from generator.io.yamlio import YAMLBoundError, safe_load

    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    with pytest.raises(YAMLBoundError) as caught:
        finishes(lambda: safe_load(bomb))  # expanding every alias would not finish
    assert "lol" not in str(caught.value)
    with pytest.raises(YAMLBoundError, match="refers to the node that contains it"):
        safe_load("a: &x [1, *x]")
    assert safe_load("base: &b {peak: 1}\nv5e: *b\nv6e: *b\n") == {"base": {"peak": 1}, "v5e": {"peak": 1},
                                                                    "v6e": {"peak": 1}}


@pytest.mark.parametrize("existing", [False, True])
def test_the_atomic_write_is_durable_in_order(tmp_path, monkeypatch, existing):
    """The file's bytes are synced, then it is renamed over the target, then its folder is synced (the
    rename itself is on disk): a crash leaves the old file or the whole new one, never an empty one."""
    target = tmp_path / "ledger.jsonl"
    if existing:
        target.write_bytes(b"old\n")
    events: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        st_ = os.fstat(fd)
        kind = "folder" if stat.S_ISDIR(st_.st_mode) else "file"
        size = st_.st_size if kind == "file" else None
        events.append(("fsync", kind, (st_.st_dev, st_.st_ino), size))
        return real_fsync(fd)

    def replace(src, dst, **kwargs):
        st_ = os.lstat(src)
        events.append(("replace", Path(src).parent, Path(dst), (st_.st_dev, st_.st_ino)))
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    safeio.write_bytes(target, b"new content\n")
    assert target.read_bytes() == b"new content\n"
    assert [e[:2] for e in events] == [("fsync", "file"), ("replace", tmp_path), ("fsync", "folder")], events
    synced_file, renamed, synced_folder = events
    assert synced_file[3] == len(b"new content\n")  # the whole content, before the rename
    assert synced_file[2] == renamed[3] == (target.stat().st_dev, target.stat().st_ino)  # the very file renamed
    assert renamed[2] == target
    assert synced_folder[2] == (tmp_path.stat().st_dev, tmp_path.stat().st_ino)  # the folder that holds it
