"""Hostile input to `drill`: no traceback, no hang, nothing damaged. Special files, streams, locales and
signals go to real `drill` processes (``run``); input that is hostile only to drill's parsing and checks
(damaged stores and rows, huge numbers, non-numbers) runs `drill` in this process (``invoke``).

One test (or one parametrised test) per class of the issue:
1. the writer never replaces a device, a FIFO, a link or a read-only file, and keeps modes;
2. invalid UTF-8 on stdin in the quiz;
3. a damaged store or damaged rows; `drill stats` leaves a healthy store byte-identical;
4. special files (FIFO, devices) as store or records; `--store /dev/null`;
5. huge numbers on the command line;
6. output errors: stdout is /dev/full, a quiz whose stdout pipe closes;
7. hostile records (deep nesting, huge integers, non-UTF-8 names) in explain, gate and progress;
8. `drill lab --plot` to an unwritable place, `drill explain` in a read-only directory;
9. escaping in the Anki deck description and the roofline SVG;
10. `parse_choice` on values that are not text.

Every process runs with a timeout, ``bound()`` (a hang fails the test, it does not stall the suite).
Devices are scratch nodes made with mknod in a temporary folder, never the real /dev as
root: a regressed writer must not be able to replace the machine's /dev/null.
Permission tests hold as root too: the file policy treats a file or directory with
no write bit as read-only for everyone, root included.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from generator.model import answers
from drills.store.repository import ReviewRecord, Store
from tests.conftest import bound, invoke_drill
from tests.drills.quizkit import DRILL, drill_env
from tests.procs import reap

def run(args: list[str], *, stdin: bytes | str | None = None, env: dict | None = None,
        timeout: float | None = None, stdout=None) -> subprocess.CompletedProcess:
    """Run `drill` with ``args`` in a fresh process; a hang (blocking on a FIFO, reading /dev/zero) raises
    TimeoutExpired after ``bound(timeout)``."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(DRILL + args, input=data if data is not None else b"",
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env or drill_env(), timeout=bound(timeout or 60))
    proc.err = proc.stderr.decode("utf-8", "replace")  # type: ignore[attr-defined]  # the same, decoded stderr
    return proc


def invoke(args: list[str], *, stdin: str = "") -> subprocess.CompletedProcess:
    """`drill` with ``args`` in this process (``invoke_drill``), read like ``run``'s result (bytes, and ``err``).
    For input hostile to drill's parsing and checks, not to the process: no FIFO, device, closed or redirected
    stream, signal or locale (those use ``run``). An exception that escapes drill fails the test here as a
    traceback would in a process."""
    res = invoke_drill(*args, input=stdin, env={"DRILL_STORE": None})
    proc = subprocess.CompletedProcess(res.args, res.returncode, res.stdout.encode(), res.stderr.encode())
    proc.err = res.stderr  # type: ignore[attr-defined]  # the same attribute run's results have
    return proc


def strict_utf8_env() -> dict[str, str]:
    """A strict UTF-8 locale: Python's stdin/stdout then raise on bytes that are not UTF-8."""
    env = {k: v for k, v in drill_env().items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_CTYPE")}
    env["LC_ALL"] = "C.UTF-8"
    return env


def one_line_error(proc, code: int, *fragments: str) -> str:
    assert "Traceback" not in proc.err, proc.err
    lines = proc.err.strip().splitlines()
    assert proc.returncode == code, (proc.returncode, proc.err)
    assert len(lines) == 1, proc.err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def fingerprint(path: Path) -> tuple:
    """Type, mode, owner, device numbers and content hash: what 'unchanged' means here."""
    s = os.lstat(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(s.st_mode) else None
    return stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode), s.st_uid, s.st_rdev, digest


def listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def scratch_device(tmp_path: Path, name: str) -> Path:
    """A character device like /dev/<name> (null: 1,3; full: 1,7) made in ``tmp_path`` with mknod.

    The tests never point a possibly-broken writer at the real /dev as root: a
    regression would replace the machine's /dev/null. Where mknod is not
    permitted, a non-root user gets the real device (it can not rename over
    /dev entries); root without CAP_MKNOD skips.
    """
    minor = {"null": 3, "full": 7}[name]
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        return path
    except PermissionError:
        if os.geteuid() != 0:
            return Path("/dev") / name
        pytest.skip(f"mknod is not permitted here and we run as root: the scratch /dev/{name} can not be made, "
                    f"and pointing a writer under test at the real one could replace it")


def healthy_store(path: Path, reviews: int = 3) -> Path:
    with Store.open(path) as store:
        for i in range(reviews):
            store.record_review(ReviewRecord(
                skill=f"floor:v5e:case{i % 2}", family="floor", chip="v5e", problem_id=f"p{i}", params={"n": i},
                prompt="?", expected={"value": 1.0, "unit": "s"}, given="1s", given_value=1.0, correct=True,
                rating=3, relative_error=0.0, seconds_taken=2.0))
    return path


def failing_record(directory: Path) -> Path:
    """A valid lab record with two unexplained misses (made without jax by the synthetic helper)."""
    from labs.records import folder as records
    from tests.labs import synthetic

    rec = synthetic.record(directory, {"softmax": 3.0, "add": 2.5})
    return records.save(rec, directory / "bench", "lab-0.1-gpu-test")


# -- 1. the writer: never replace what is not a regular file we may write ----------------------


@pytest.mark.parametrize("name", ["null", "full"])
def test_export_never_replaces_a_device(tmp_path, name):
    device = scratch_device(tmp_path, name)
    before = fingerprint(device)
    proc = run(["export", "--format", "json", "--family", "ridge", "-o", str(device)])
    one_line_error(proc, 1, str(device), "character device", "refusing to replace it")
    assert fingerprint(device) == before and stat.S_ISCHR(os.lstat(device).st_mode)


def test_export_never_replaces_a_fifo_or_a_read_only_file_and_writes_through_a_link(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    proc = run(["export", "--format", "json", "--family", "ridge", "-o", str(fifo)])
    one_line_error(proc, 1, "FIFO", "refusing to replace it")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    ro = tmp_path / "ro.csv"
    ro.write_text("my notes\n")
    ro.chmod(0o444)  # read-only by mode: refused even as root
    before = fingerprint(ro)
    one_line_error(run(["export", "--format", "csv", "--family", "ridge", "-o", str(ro)]), 1, "read-only")
    assert fingerprint(ro) == before

    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(real.name)
    proc = run(["export", "--format", "csv", "--family", "ridge", "-o", str(link)])
    assert proc.returncode == 0, proc.err
    assert link.is_symlink() and os.readlink(link) == "real.csv"  # the link stays a link
    assert real.read_text().startswith("family,") and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert listing(tmp_path) == {"out.json", "ro.csv", "real.csv", "link.csv"}  # no temporary left


def test_explain_keeps_the_record_mode_and_owner_and_refuses_a_read_only_record(tmp_path):
    path = failing_record(tmp_path)
    why = tmp_path / "why.yaml"
    why.write_text("softmax: three passes over HBM.\nadd: it fused a convert.\n")
    path.chmod(0o644)
    if os.geteuid() == 0:
        os.chown(path, 12345, 12345)  # a record the user running drill does not own
    owner = (path.stat().st_uid, path.stat().st_gid)
    proc = run(["explain", str(path), "--explanations", str(why)])
    assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
    s = path.stat()
    assert stat.S_IMODE(s.st_mode) == 0o644 and (s.st_uid, s.st_gid) == owner  # not reset to 0600 / root
    assert "three passes" in path.read_text()

    second = failing_record(tmp_path / "again")
    second.chmod(0o444)
    before = fingerprint(second)
    one_line_error(run(["explain", str(second), "--explanations", str(why)]), 1, "read-only")
    assert fingerprint(second) == before


# -- 2. invalid UTF-8 on stdin ------------------------------------------------------------------


def test_undecodable_answer_is_refused_and_earlier_answers_stay_graded(tmp_path):
    store = tmp_path / "s.db"
    proc = run(["quiz", "--family", "floor", "--count", "2", "--new", "2", "--seed", "1", "--store", str(store)],
               stdin=b"1us\n1\xff\n", env=strict_utf8_env())
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
    assert "not valid text" in out and "End of input: 1 review saved" in out
    with Store.open(store) as s:
        assert [r["given"] for r in s.reviews()] == ["1us"]


# -- 3. a damaged store ---------------------------------------------------------------------------


def _damage(sql: str):
    def apply(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute(sql)
        conn.commit()
        conn.close()
    return apply


def _random_after_header(path: Path) -> None:
    head = path.read_bytes()[:100]
    path.write_bytes(head + random.Random(11).randbytes(8 * 4096))


DAMAGE = {
    "card not JSON": (_damage("UPDATE cards SET card = 'not json {'"), "card is not JSON"),
    "card without card_id": (_damage("UPDATE cards SET card = json_remove(card, '$.card_id')"), "no card_id"),
    "bad introduced_at": (_damage("UPDATE cards SET introduced_at = 'yesterday'"), "not ISO 8601"),
    "bad due": (_damage("UPDATE cards SET due = '2026-13-45'"), "not ISO 8601"),
    "header then random bytes": (_random_after_header, "not a usable drill store"),
}

# Damage in the review log: opening a store reads no history, so these are found by the
# full check, `drill store check` or `drill stats --check`, which names the row.
REVIEW_DAMAGE = {
    "bad reviewed_at": (_damage("UPDATE reviews SET reviewed_at = 'soon' WHERE id = 2"), "reviews row 2"),
    "naive reviewed_at": (_damage("UPDATE reviews SET reviewed_at = '2026-01-01T00:00:00'"), "no time zone"),
    "text that is not UTF-8": (_damage("UPDATE reviews SET family = CAST(X'FFFE' AS TEXT) WHERE id = 1"),
                               "reviews row 1"),
    "seconds_taken='x'": (_damage("UPDATE reviews SET seconds_taken = 'x' WHERE id = 1"), "reviews row 1"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", [["quiz", "--family", "floor", "--count", "1"], ["stats"], ["progress"]])
def test_damaged_store_is_one_line_and_byte_identical(tmp_path, damage, command):
    path = healthy_store(tmp_path / "drill.sqlite3")
    apply, reason = DAMAGE[damage]
    apply(path)
    before, names = fingerprint(path), listing(tmp_path)
    proc = invoke([command[0], "--store", str(path), *command[1:]], stdin="1us\n")
    one_line_error(proc, 1, str(path), reason)
    assert fingerprint(path) == before  # header counters included: nothing was written
    assert listing(tmp_path) == names  # no -wal, -shm or -journal left beside it


@pytest.mark.parametrize("damage", sorted(REVIEW_DAMAGE))
@pytest.mark.parametrize("command", [["store", "check"], ["stats", "--check"]])
def test_damaged_review_rows_are_named_by_the_full_check(tmp_path, damage, command):
    path = healthy_store(tmp_path / "drill.sqlite3")
    apply, reason = REVIEW_DAMAGE[damage]
    apply(path)
    before, names = fingerprint(path), listing(tmp_path)
    proc = invoke([*command, "--store", str(path)])
    one_line_error(proc, 1, str(path), reason)
    assert fingerprint(path) == before and listing(tmp_path) == names


def test_stats_and_progress_leave_a_healthy_store_byte_identical(tmp_path):
    path = healthy_store(tmp_path / "drill.sqlite3")
    (tmp_path / "empty-bench").mkdir()  # a --bench folder that does not exist is a usage error
    before, names = fingerprint(path), listing(tmp_path)
    for args in (["stats"], ["stats", "--json"], ["progress", "--bench", str(tmp_path / "empty-bench")]):
        proc = invoke([*args, "--store", str(path)])
        assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
        assert fingerprint(path) == before and listing(tmp_path) == names
    assert json.loads(invoke(["stats", "--json", "--store", str(path)]).stdout)["reviews"] == 3


# -- 4. special files -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["quiz", "--count", "1"], ["stats"], ["progress"]])
def test_fifo_as_store_is_refused_without_hanging(tmp_path, command):
    fifo = tmp_path / "store.fifo"
    os.mkfifo(fifo)
    proc = run([command[0], "--store", str(fifo), *command[1:]], stdin="q\n")
    one_line_error(proc, 1, "FIFO", "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and listing(tmp_path) == {"store.fifo"}


def test_dev_null_as_store_leaves_no_journal(tmp_path):
    null = scratch_device(tmp_path, "null")
    for command in (["stats"], ["quiz", "--count", "1"], ["progress"]):
        proc = run([command[0], "--store", str(null), *command[1:]], stdin="q\n")
        one_line_error(proc, 1, str(null), "character device")
    for suffix in ("-journal", "-wal", "-shm"):
        assert not os.path.exists(f"{null}{suffix}")
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_fifo_record_for_explain_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "lab-0.1-x.json"
    os.mkfifo(fifo)
    one_line_error(run(["explain", str(fifo)]), 2, "FIFO")


def test_fifo_as_explanations_or_spec_file_is_refused_without_hanging(tmp_path):
    record = failing_record(tmp_path)
    fifo = tmp_path / "why.yaml"
    os.mkfifo(fifo)
    one_line_error(run(["explain", str(record), "--explanations", str(fifo)]), 2, "FIFO")
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "generator" / "problems" / "specs", specs)
    (specs / "floor.yaml").unlink()
    os.mkfifo(specs / "floor.yaml")
    one_line_error(run(["export", "--format", "csv", "--specs", str(specs)]), 2, "FIFO")


@pytest.mark.parametrize("kind", ["fifo", "/dev/urandom", "/dev/zero"])
@pytest.mark.parametrize("command", ["gate", "progress"])
def test_special_lab_record_is_skipped_without_hanging(tmp_path, kind, command):
    bench = tmp_path / "bench"
    bench.mkdir()
    odd = bench / "lab-0.1-odd.json"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to(kind)
    args = [command, "--bench", str(bench), "--json"]
    if command == "progress":
        args += ["--store", str(tmp_path / "s.db")]
    proc = run(args)
    assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
    if command == "gate":
        skipped = json.loads(proc.stdout)["skipped"]
        assert [s["path"] for s in skipped] == [str(odd)] and "not a regular file" in skipped[0]["reason"]


# -- 5. huge numbers --------------------------------------------------------------------------------

HUGE = "9" * 400
TRANSFORMER = ["transformer", "--params", "7B", "--layers", "32", "--d-model", "4096", "--batch", "8",
               "--seq", "4096", "--chip", "v5e"]


def _with(args: list[str], option: str, value: str) -> list[str]:
    out = list(args)
    out[out.index(option) + 1] = value
    return out


@pytest.mark.parametrize("args", [
    ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", f"{HUGE},2048,2048"],
    ["roofline", "--chip", "v5e", "--op", "add", "--shape", "1" + "0" * 30 + ",2"],
    ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "4294967296,4294967296,4294967296"],
    ["roofline", "--chip", "v5e", "--op", "dot", "--shape", "9" * 5000],
    *[_with(TRANSFORMER, option, HUGE) for option in ("--params", "--layers", "--d-model", "--batch", "--seq")],
    _with(TRANSFORMER, "--params", "1e30"),
    [*TRANSFORMER, "--kv-d-model", HUGE],
    ["lab", "--size", HUGE],
    ["lab", "--reps", HUGE],
], ids=lambda a: " ".join(x if len(x) < 20 else f"<{len(x)} chars>" for x in a[:1] + a[-2:]))
def test_huge_numbers_are_one_line_usage_errors(args):
    proc = invoke(args)
    line = one_line_error(proc, 2)
    assert "Invalid value" in line or "out of range" in line or "limit" in line
    assert proc.stdout == b""


def test_bounds_are_stated_in_help():
    assert "2^32" in run(["roofline", "--help"]).stdout.decode()
    text = run(["transformer", "--help"]).stdout.decode()
    assert "1e16" in text and "10,000" in text and "2^20" in text and "2^24" in text
    text = run(["lab", "--help"]).stdout.decode()
    assert "1,048,576" in text and "10,000" in text


# -- 6. output errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["chips"], ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "2048,2048,2048"],
    ["export", "--format", "json", "--family", "ridge"], ["gate", "--bench", "{empty}"],
    ["stats", "--store", "{store}"],
])
def test_stdout_on_dev_full_is_one_line_exit_1(tmp_path, args):
    store = healthy_store(tmp_path / "s.db")
    (tmp_path / "empty").mkdir()  # a --bench folder that does not exist is a usage error
    args = [a.replace("{store}", str(store)).replace("{empty}", str(tmp_path / "empty")) for a in args]
    with open(scratch_device(tmp_path, "full"), "wb") as full:
        proc = run(args, stdout=full)
    one_line_error(proc, 1, "can not write the output", "No space left on device")


def test_quiz_whose_stdout_closes_exits_quietly_with_its_reviews_saved(tmp_path):
    store = tmp_path / "s.db"
    proc = subprocess.Popen(DRILL + ["quiz", "--family", "floor", "--count", "3", "--new", "3", "--seed", "2",
                                     "--store", str(store), "--json"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=drill_env())
    try:
        proc.stdin.write(b"1us\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())  # the first answer was graded and printed
        proc.stdout.close()  # the reader goes away: the next printed answer meets a closed pipe
        proc.stdin.write(b"2us\n3us\n")
        proc.stdin.close()
        code = proc.wait(bound())
        err = proc.stderr.read().decode()
    finally:
        reap(proc)
    assert first["given"] == "1us"
    # quiet, as on any closed pipe: the quiz's own text (on stderr with --json) and nothing else
    assert code == 141 and "Traceback" not in err and "error" not in err and "broken pipe" not in err, err
    with Store.open(store) as s:
        assert [r["given"] for r in s.reviews()][:2] == ["1us", "2us"]  # the unprinted answer was saved too


# -- 7. hostile records -------------------------------------------------------------------------------


def _hostile_records(bench: Path) -> dict[str, Path]:
    bench.mkdir(parents=True, exist_ok=True)
    deep = bench / "lab-0.1-deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    digits = bench / "lab-0.1-digits.json"
    digits.write_text('{"schema": "rudrite-kernels/lab-record", "schema_version": 1, "size": ' + "9" * 5000 + "}")
    return {"deep": deep, "digits": digits}


@pytest.mark.parametrize("which, reason", [("deep", "levels deep"), ("digits", "5000 digits")])
def test_explain_on_a_hostile_record_is_one_line(tmp_path, which, reason):
    path = _hostile_records(tmp_path / "bench")[which]
    before = fingerprint(path)
    one_line_error(run(["explain", str(path)]), 2, reason)
    assert fingerprint(path) == before


@pytest.mark.parametrize("command", ["gate", "progress"])
def test_bad_records_are_listed_as_skipped_beside_a_good_one(tmp_path, command):
    good = failing_record(tmp_path)
    bench = good.parent
    hostile = _hostile_records(bench)
    odd_name = bench / os.fsdecode(b"lab-0.1-\xff\xfe.json")  # a name that is not UTF-8
    odd_name.write_text("{ not json")
    base = [command, "--bench", str(bench)] + (["--store", str(tmp_path / "s.db")] if command == "progress" else [])
    proc = run(base, env=strict_utf8_env())  # text output on a strict UTF-8 stream
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
    skipped = [line for line in proc.err.splitlines() if line.startswith("drill: skipped ")]
    assert len(skipped) == 3, proc.err  # one line on stderr per file it cannot read
    for path in hostile.values():
        assert any(line.startswith(f"drill: skipped {path}: ") for line in skipped), proc.err
    assert any("lab-0.1-\\xff\\xfe.json" in line for line in skipped), proc.err  # shown escaped
    if command == "gate":
        assert "FAIL" in out.splitlines()[0]  # the good record is still judged
        data = json.loads(run([*base, "--json"], env=strict_utf8_env()).stdout)
        assert len(data["rows"]) == 1 and len(data["skipped"]) == 3
    else:
        assert "GATE 00: FAIL" in out


# -- 8. unwritable plot and read-only record directory -------------------------------------------------


def test_explain_in_a_read_only_directory_is_one_line(tmp_path):
    path = failing_record(tmp_path)
    why = tmp_path / "why.yaml"
    why.write_text("softmax: three passes over HBM.\n")
    before = fingerprint(path)
    names = listing(path.parent)
    path.parent.chmod(0o555)  # no write bit: refused even for root
    try:
        one_line_error(run(["explain", str(path), "--explanations", str(why)]), 1, "not writable")
        assert fingerprint(path) == before and listing(path.parent) == names
    finally:
        path.parent.chmod(0o755)


@pytest.mark.slow
def test_lab_plot_to_an_unwritable_place_is_refused_before_measuring(tmp_path):
    # the write target is checked before any long work starts, so nothing is measured
    # that cannot be saved (the old behaviour measured, then warned)
    import jax  # noqa: F401  (the test extra installs the lab extra: a missing jax fails here, never skips)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    bench = tmp_path / "bench"
    try:
        proc = run(["lab", "--size", "128", "--reps", "2", "--ops", "add", "--out", str(bench),
                    "--plot", str(locked / "roof.png")], timeout=300)
    finally:
        locked.chmod(0o755)
    line = one_line_error(proc, 2, "not writable")
    assert "nothing measured" in line
    assert not bench.exists() or not list(bench.glob("lab-*.json"))  # nothing measured, nothing saved
    assert list(locked.iterdir()) == []


# -- 9. escaping ------------------------------------------------------------------------------------------


def test_deck_description_is_escaped(tmp_path):

    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "generator" / "problems" / "specs", specs)
    bound = specs / "bound.yaml"
    bound.write_text(bound.read_text().replace("title: Compute- or memory-bound",
                                               "title: \"<script>alert(1)</script> & bound\""))
    out = tmp_path / "d.apkg"
    proc = run(["deck", "--family", "bound", "--chip", "v5e", "--specs", str(specs), "-o", str(out)])
    assert proc.returncode == 0, proc.err
    with zipfile.ZipFile(out) as z:
        (tmp_path / "c.db").write_bytes(z.read("collection.anki2"))
    conn = sqlite3.connect(tmp_path / "c.db")
    decks = json.loads(conn.execute("SELECT decks FROM col").fetchone()[0])
    conn.close()
    desc = next(d["desc"] for d in decks.values() if d["name"].endswith("::bound"))
    assert "<script>" not in desc and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; bound" in desc


def test_roofline_svg_escapes_the_chip_name():
    from generator.model import catalogue
    from generator.export.figures import roofline_svg

    chip = dataclasses.replace(catalogue.get("v5e"), display="AT&T <v5e>")
    root = ET.fromstring(roofline_svg(chip))  # malformed XML raises here
    texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "AT&T <v5e> bf16" in texts


# -- 10. parse_choice on values that are not text ----------------------------------------------------------


@pytest.mark.parametrize("value", [None, b"compute", ["compute"], 3, {"c": 1}])
def test_parse_choice_refuses_non_text(value):
    with pytest.raises(answers.AnswerError, match="must be text"):
        answers.parse_choice(value, ("compute", "memory"))


# == hostile input, second round ==============================================================
# One real-process test (or parametrised test) per class, each with a time bound and a damage check:
# 1. undo across two quiz processes; 2. the file policy (site targets, store side files, read-only
# stores, YAML alias bombs, endless input lines); 3. locks; 4. damaged rows when a card comes due;
# 5. closed standard streams, ASCII-only encodings, float limits, -o -; 6. the unclear messages.

import queue
import sys
import threading

from drills.store.repository import LOCK_TIMEOUT_S
from drills.quiz.session import QuizOptions
from tests.drills.quizkit import planned_problems, right_answer


class Quiz:
    """A `drill quiz` process driven line by line; its stdout lines are collected by a thread."""

    def __init__(self, args: list[str]):
        self.proc = subprocess.Popen(DRILL + ["quiz", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=drill_env(), text=True, bufsize=1)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, text: str, timeout: float | None = None) -> str:
        """Collect output until a line contains ``text``; the output since the last wait. Fails when no such
        line comes within ``bound(timeout)``."""
        timeout = bound(timeout or 60)
        deadline, chunk = time.monotonic() + timeout, []
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout} s; got: {''.join(chunk)}") from None
            chunk.append(line)
            self.seen.append(line)
            if text in line:
                return "".join(chunk)

    def finish(self) -> tuple[int, str]:
        self.proc.stdin.close()
        code = self.proc.wait(bound())
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.pump.join(bound())  # stdout at its end: closing it now leaves the pump no read to fail
        reap(self.proc)


@pytest.mark.slow
def test_undo_never_undoes_another_sessions_review_two_processes(tmp_path):
    """A answers skill X, B answers X, A types u: refused, nothing changed; B's own undo then works."""
    store = tmp_path / "s.db"
    args = ["--family", "ridge", "--chip", "v5e", "--count", "2", "--new", "2", "--seed", "3", "--store", str(store)]
    first, second = planned_problems(store, QuizOptions(families=("ridge",), chips=("v5e",), count=2,
                                                        new_per_day=2, seed=3))
    a, b = Quiz(args), Quiz(args)
    try:
        a.wait_for("[1/2]")
        b.wait_for("[1/2]")  # both planned before either answered: the same skill first
        a.send(right_answer(first))
        a.wait_for("[2/2]")
        with Store.open(store) as s:
            after_a = s.cards()[first.skill]
        b.send(right_answer(first))
        b.wait_for("[2/2]")
        with Store.open(store) as s:
            after_b = s.cards()[first.skill]
            log_before = s.reviews()
        assert after_b.reviews == 2 and after_b.card.to_dict() != after_a.card.to_dict()
        a.send("u")
        refused = a.wait_for("can not undo")
        assert "reviewed since" in refused and "nothing was changed" in refused
        with Store.open(store) as s:  # damage check: B's review and its effect on the schedule stand
            assert s.reviews() == log_before
            now = s.cards()[first.skill]
            assert now.card.to_dict() == after_b.card.to_dict() and now.reviews == 2
        b.send("u")  # B's review is the skill's latest: B may undo it, and is asked that question again
        again = b.wait_for("[1/2]")
        assert "undone" in again and first.prompt.splitlines()[0] in b.wait_for(first.prompt.splitlines()[0]) + again
        with Store.open(store) as s:
            restored = s.cards()[first.skill]
            assert restored.card.to_dict() == after_a.card.to_dict() and restored.reviews == after_a.reviews
            assert [r["session"] for r in s.reviews()] == [log_before[0]["session"]]
        a.send("q")
        b.send("q")
        (code_a, err_a), (code_b, err_b) = a.finish(), b.finish()
    finally:
        a.kill()
        b.kill()
    assert code_a == code_b == 0 and "Traceback" not in err_a + err_b, err_a + err_b


# -- 19.2 the file policy: site targets, store side files, read-only stores, bounded reads -------


def _site_target(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    out = tmp_path / "site"
    out.mkdir()
    target = out / ("index.html" if kind == "fifo index.html" else "site.js")
    if kind in ("fifo", "fifo index.html"):
        os.mkfifo(target)
    elif kind == "device":
        os.rename(scratch_device(tmp_path, "null"), target)
    elif kind == "read-only":
        target.write_text("// mine\n")
        target.chmod(0o444)
    return out, target


@pytest.mark.parametrize("kind", ["fifo", "device", "read-only", "fifo index.html"])
def test_site_never_replaces_or_blocks_on_what_is_not_its_regular_file(tmp_path, kind):
    out, target = _site_target(tmp_path, kind)
    before, names = fingerprint(target), listing(out)
    (tmp_path / "empty-bench").mkdir()  # a --bench folder that does not exist is a usage error
    proc = run(["site", "-o", str(out), "--bench", str(tmp_path / "empty-bench")])
    line = one_line_error(proc, 2, str(target))
    assert ("read-only" if kind == "read-only" else "not a regular file") in line
    assert fingerprint(target) == before and listing(out) == names  # nothing written, nothing replaced


def test_site_writes_through_a_link_and_keeps_it_a_link(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    real = tmp_path / "shared.css"
    real.write_text("old\n")
    real.chmod(0o640)
    (out / "site.css").symlink_to(real)
    (tmp_path / "empty-bench").mkdir()  # a --bench folder that does not exist is a usage error
    proc = run(["site", "-o", str(out), "--bench", str(tmp_path / "empty-bench")])
    assert proc.returncode == 0, proc.err
    assert (out / "site.css").is_symlink() and real.read_text() != "old\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert listing(out) == {"index.html", "site.js", "site.css"}


@pytest.mark.parametrize("sub", ["site", "a/b/site"])
def test_site_in_a_read_only_folder_creates_no_sub_folder_even_for_root(tmp_path, sub):
    """`drill site -o RO/site` with RO at 0555: root could write there; the tool does not."""
    ro = tmp_path / "RO"
    ro.mkdir()
    (tmp_path / "empty-bench").mkdir()
    ro.chmod(0o555)
    try:
        proc = run(["site", "-o", str(ro / sub), "--bench", str(tmp_path / "empty-bench")])
        one_line_error(proc, 2, str(ro), "not writable", "0555", "nothing was created")
        assert listing(ro) == set() and proc.stdout == b""
    finally:
        ro.chmod(0o755)


def test_folder_policy_helpers_hold_for_root_too(tmp_path):
    from generator.io import safeio

    ro, rw = tmp_path / "RO", tmp_path / "RW"
    ro.mkdir(mode=0o755)
    rw.mkdir()
    ro.chmod(0o555)
    try:
        assert safeio.writable_dir(rw) and not safeio.writable_dir(ro) and not safeio.writable_dir(tmp_path / "no")
        with pytest.raises(safeio.RefusedTarget, match="0555"):
            safeio.make_dirs(ro / "sub" / "new")
        assert listing(ro) == set()
        assert safeio.check_creatable_dir(ro) == []  # it exists: nothing to create, nothing refused
        assert safeio.check_creatable_dir(rw / "x" / "y") == [rw / "x", rw / "x" / "y"]
        assert safeio.make_dirs(rw / "x" / "y") == rw / "x" / "y" and (rw / "x" / "y").is_dir()
        (rw / "file").write_text("")
        with pytest.raises(safeio.SafeIOError, match="not a directory"):
            safeio.make_dirs(rw / "file" / "sub")
    finally:
        ro.chmod(0o755)


SIDES = ["-wal fifo", "-wal device", "-journal fifo", "-shm directory", "-wal symlink"]


def _side_file(store: Path, kind: str) -> Path:
    suffix, what = kind.split()
    side = Path(f"{store}{suffix}")
    if what == "fifo":
        os.mkfifo(side)
    elif what == "device":
        os.rename(scratch_device(store.parent, "null"), side)
    elif what == "directory":
        side.mkdir()
    else:
        side.symlink_to(store.parent / "elsewhere")
    return side


@pytest.mark.parametrize("kind", SIDES)
@pytest.mark.parametrize("command", [["quiz", "--count", "1"], ["stats"], ["progress"]])
def test_store_side_files_that_are_not_regular_are_refused_untouched(tmp_path, kind, command):
    store = healthy_store(tmp_path / "drill.sqlite3")
    side = _side_file(store, kind)
    before, side_before, names = fingerprint(store), fingerprint(side), listing(tmp_path)
    proc = run([command[0], "--store", str(store), *command[1:]], stdin="1\n")
    line = one_line_error(proc, 1, str(side), "not a regular file", "untouched")
    assert "Move it aside" not in line  # a FIFO -journal never hangs (run's bound)
    assert fingerprint(side) == side_before and fingerprint(store) == before and listing(tmp_path) == names
    assert b"[1/" not in proc.stdout  # refused before any question


def test_read_only_store_is_refused_before_the_first_question_even_for_root(tmp_path):
    store = healthy_store(tmp_path / "drill.sqlite3")
    store.chmod(0o444)
    before, names = fingerprint(store), listing(tmp_path)
    proc = run(["quiz", "--store", str(store), "--count", "1"], stdin="1\n")
    one_line_error(proc, 1, str(store), "read-only", "0444")
    assert b"[1/" not in proc.stdout
    assert fingerprint(store) == before and listing(tmp_path) == names  # no -wal or -shm left behind
    stats = run(["stats", "--store", str(store)])  # a read is still allowed, and writes nothing
    assert stats.returncode == 0 and listing(tmp_path) == names and fingerprint(store) == before


# The "billion laughs": nine lines, 9^9 strings once every alias is expanded.
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("option", ["--predictions", "--explanations"])
def test_yaml_alias_bomb_fails_fast_without_expanding(tmp_path, option):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert len(bomb.read_bytes()) < 420  # the 409-byte class
    before = fingerprint(bomb)
    proc = run(["lab", option, str(bomb)])
    line = one_line_error(proc, 2, str(bomb), "aliases expand")
    assert "lol" not in line and len(line) < 400  # the error never shows the input
    assert fingerprint(bomb) == before


def test_quiz_input_line_without_a_newline_is_bounded(tmp_path):
    store = tmp_path / "s.db"
    (first, _) = planned_problems(store, QuizOptions(families=("floor",), count=2, new_per_day=2, seed=1))
    endless = (right_answer(first) + "\n").encode() + b"9" * (8 << 20)  # 8 MiB and no newline
    proc = run(["quiz", "--family", "floor", "--count", "2", "--new", "2", "--seed", "1", "--store", str(store)],
               stdin=endless)
    out = proc.stdout.decode()
    assert proc.returncode == 2 and "Traceback" not in proc.err, proc.err
    assert "longer than 4096 characters" in out and "1 review saved" in out
    with Store.open(store) as s:  # the answer before the endless line is kept
        assert [r["given"] for r in s.reviews()] == [right_answer(first)]


# -- 19.3 locks ----------------------------------------------------------------------------------

HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "locking_mode":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
if sys.argv[2] == "locking_mode":
    conn.execute("COMMIT")  # the exclusive lock stays with the connection
print("locked", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["begin_exclusive", "locking_mode"])
def test_locked_store_is_refused_with_the_wait_and_the_holder(tmp_path, how):
    store = healthy_store(tmp_path / "drill.sqlite3")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store), how], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        proc = run(["quiz", "--store", str(store), "--count", "1"], stdin="1\n", timeout=LOCK_TIMEOUT_S + 60)
        line = one_line_error(proc, 1, str(store), "is in use by another process", f"(PID {holder.pid})",
                              f"waited {LOCK_TIMEOUT_S:g} s")
        assert "Move it aside" not in line and b"[1/" not in proc.stdout
    finally:
        reap(holder)
    with Store.open(store, readonly=True) as s:  # damage check: the store is whole and unchanged
        assert s.count_reviews() == 3
    assert "5 s" in run(["quiz", "--help"]).stdout.decode()


# -- 19.4 damaged rows, found when a card comes due or at open time -------------------------------

ROWS = {
    "reviews='x'": "UPDATE cards SET reviews = 'x'",
    "step='x'": "UPDATE cards SET card = json_set(card, '$.step', 'x')",
    "stability -5": "UPDATE cards SET card = json_set(card, '$.stability', -5)",
    "stability NaN": "UPDATE cards SET card = replace(card, json_extract(card, '$.stability'), 'NaN')",
    "stability inf": "UPDATE cards SET card = replace(card, json_extract(card, '$.stability'), 'Infinity')",
    "stability 0": "UPDATE cards SET card = json_set(card, '$.stability', 0)",
    "step null in state 3": "UPDATE cards SET card = json_set(card, '$.state', 3, '$.step', NULL)",
}


@pytest.mark.parametrize("damage", sorted(ROWS))
@pytest.mark.parametrize("command", ["quiz", "progress"])
def test_damaged_rows_are_one_line_and_untouched(tmp_path, damage, command):
    store = healthy_store(tmp_path / "drill.sqlite3")
    conn = sqlite3.connect(store)
    conn.execute("UPDATE cards SET due = '2000-01-01T00:00:00.000000+00:00'")  # every card due now
    conn.execute(ROWS[damage])
    conn.commit()
    conn.close()
    before, names = fingerprint(store), listing(tmp_path)
    proc = invoke([command, "--store", str(store), *(["--family", "floor"] if command == "quiz" else [])],
                  stdin="1us\n1us\n")
    one_line_error(proc, 1, str(store), "not a usable drill store", "row")
    assert fingerprint(store) == before and listing(tmp_path) == names


# -- 19.5 closed streams, ASCII-only encodings, float limits, -o - -------------------------------

ROOF = ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "4096,4096,4096"]


def _shell(command: str, *, env: dict | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, env=env or drill_env(),
                          timeout=bound())
    proc.err = proc.stderr.decode("utf-8", "replace")  # type: ignore[attr-defined]  # the same, decoded stderr
    return proc


def test_closed_standard_streams_are_no_traceback(tmp_path):
    drill = " ".join(DRILL)
    store = healthy_store(tmp_path / "s.db")
    before = fingerprint(store)
    for verb in (" ".join(ROOF), "chips", "misconceptions", f"stats --store {store}"):
        proc = _shell(f"{drill} {verb} >&-")
        one_line_error(proc, 1, "standard output is closed")
    proc = _shell(f"{drill} quiz --store {store} --family floor <&-")  # a closed stdin is an empty one
    assert proc.returncode == 0 and "Traceback" not in proc.err and b"End of input: 0 reviews saved" in proc.stdout
    proc = _shell(f"{drill} quiz --store {store} --family floor >&- 2>&-; echo rc=$?")
    assert proc.stdout.strip() == b"rc=1" and proc.stderr == b""
    proc = _shell(f"{drill} {' '.join(ROOF)} 2>&-")
    assert proc.returncode == 0 and b"floor latency" in proc.stdout
    assert fingerprint(store) == before


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_ascii_only_encodings_print_ascii_spellings(tmp_path, encoding):
    env = {**drill_env(), "PYTHONIOENCODING": encoding}
    for args, stdin in ((ROOF, ""), (["misconceptions"], ""),
                        (["quiz", "--store", str(tmp_path / "s.db"), "--family", "floor", "--count", "1"], "1ms\n")):
        proc = run(args, env=env, stdin=stdin)
        assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
        proc.stdout.decode(encoding)  # what was printed is valid in that encoding
        if encoding == "ascii":
            assert proc.stdout.isascii()
    out = run(ROOF, env={**drill_env(), "PYTHONIOENCODING": "ascii"}).stdout.decode()
    assert "698 us" in out and " - " in out or "698 us" in out
    with Store.open(tmp_path / "s.db", readonly=True) as s:
        assert s.count_reviews() == 1  # the quiz's answer was saved despite the encoding


def test_numbers_at_the_float_limits_format_and_serialise_as_json():
    proc = run([*ROOF[:-2], "--shape", "8,8,8", "--link-bytes-per-s", "1e308"])
    assert proc.returncode == 0 and "Traceback" not in proc.err and b"inf" in proc.stdout, proc.err

    def strict(text: str):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))

    data = strict(run([*ROOF[:-2], "--shape", "8,8,8", "--link-bytes-per-s", "1e-300", "--json"]).stdout)
    assert data["ridge_flops_per_byte"] is None and data["non_finite"] == ["ridge_flops_per_byte"]
    assert "non_finite" in run(["roofline", "--help"]).stdout.decode().replace("\n", " ")


def test_export_dash_is_stdout_and_an_empty_name_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # restored after the test: the worker runs other tests after this one
    proc = run(["export", "--format", "csv", "--family", "ridge", "--chip", "v5e", "-o", "-"])
    assert proc.returncode == 0 and proc.stdout.startswith(b"family,") and listing(tmp_path) == set()
    one_line_error(run(["export", "--format", "csv", "-o", ""]), 2, "needs a file name")
    assert listing(tmp_path) == set()


# -- 19.6 the unclear messages ------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["quiz", "--help"], ["chips"],
                                  ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "2048,2048,2048"]])
def test_output_into_a_closed_pipe_exits_141_quietly(args):
    """`drill roofline ... | head`: like other Unix tools, no message, status 141."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before drill writes a byte: every write is EPIPE
    try:
        proc = run(args, stdout=write_end)
    finally:
        os.close(write_end)
    assert proc.returncode == 141 and proc.err == "", (proc.returncode, proc.err)


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "inf", "-inf", "1e400"])
def test_check_seconds_that_are_not_a_number_are_refused(value):
    proc = invoke(["check", "--problem-id", "pod:v5e:flops:16x16", "--answer", "5.1e16 FLOP/s", "--seconds", value])
    one_line_error(proc, 2, "--seconds")
    assert proc.stdout == b""


def test_check_seconds_minus_zero_is_zero_seconds():
    proc = invoke(["check", "--problem-id", "pod:v5e:flops:16x16", "--answer", "5.1e16 FLOP/s", "--seconds", "-0",
                   "--json"])
    assert proc.returncode == 0, proc.err
    assert json.loads(proc.stdout)["status"] == "graded"


def test_stats_on_a_path_with_no_store_says_so_and_creates_nothing(tmp_path):
    missing = tmp_path / "typo" / "drill.sqlite3"
    proc = invoke(["stats", "--store", str(missing)])
    one_line_error(proc, 1, f"no store at {missing}", "nothing was created")
    assert not (tmp_path / "typo").exists() and listing(tmp_path) == set()


def test_non_utf8_names_print_as_byte_escapes(tmp_path):
    odd = os.fsdecode(bytes(tmp_path) + b"/\xff.db")
    proc = run(["stats", "--store", odd], env=strict_utf8_env())
    line = one_line_error(proc, 1, "\\xff.db")
    assert "\\udcff" not in line and "\udcff" not in line
    proc = run(["quiz", "--store", odd, "--count", "1"], stdin="q\n", env=strict_utf8_env())
    assert proc.returncode == 0 and b"\\xff.db" in proc.stdout and b"udcff" not in proc.stdout, proc.err
    assert json.loads(run(["stats", "--json", "--store", odd]).stdout)["store"].endswith("\\xff.db")
