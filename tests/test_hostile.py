"""Hostile input with real `drill` processes (issue 11): no traceback, bounded time, nothing damaged.

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

Every process runs with a timeout (a hang fails the test, it does not stall the suite).
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

from generator import answers
from drills.store import ReviewRecord, Store
from tests.drills.quizkit import DRILL, drill_env

BOUND = 10  # seconds: a hang (blocking on a FIFO, reading /dev/zero) fails long before this


def run(args: list[str], *, stdin: bytes | str | None = None, env: dict | None = None,
        timeout: float = BOUND, stdout=None) -> subprocess.CompletedProcess:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    started = time.monotonic()
    proc = subprocess.run(DRILL + args, input=data if data is not None else b"",
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env or drill_env(), timeout=timeout)
    proc.elapsed = time.monotonic() - started  # type: ignore[attr-defined]
    proc.err = proc.stderr.decode("utf-8", "replace")  # type: ignore[attr-defined]
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
    from labs import records
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
    assert proc.elapsed < BOUND and stat.S_ISFIFO(os.lstat(fifo).st_mode)

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
    "bad reviewed_at": (_damage("UPDATE reviews SET reviewed_at = 'soon' WHERE id = 2"), "reviews row 2"),
    "naive reviewed_at": (_damage("UPDATE reviews SET reviewed_at = '2026-01-01T00:00:00'"), "no time zone"),
    "text that is not UTF-8": (_damage("UPDATE reviews SET family = CAST(X'FFFE' AS TEXT) WHERE id = 1"),
                               "decode"),
    "header then random bytes": (_random_after_header, "not a usable drill store"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", [["quiz", "--family", "floor", "--count", "1"], ["stats"], ["progress"]])
def test_damaged_store_is_one_line_and_byte_identical(tmp_path, damage, command):
    path = healthy_store(tmp_path / "drill.sqlite3")
    apply, reason = DAMAGE[damage]
    apply(path)
    before, names = fingerprint(path), listing(tmp_path)
    proc = run([command[0], "--store", str(path), *command[1:]], stdin="1us\n")
    one_line_error(proc, 1, str(path), reason)
    assert fingerprint(path) == before  # header counters included: nothing was written
    assert listing(tmp_path) == names  # no -wal, -shm or -journal left beside it


def test_stats_and_progress_leave_a_healthy_store_byte_identical(tmp_path):
    path = healthy_store(tmp_path / "drill.sqlite3")
    (tmp_path / "no-records").mkdir()  # an empty records folder (a missing one is a usage error)
    before, names = fingerprint(path), listing(tmp_path)
    for args in (["stats"], ["stats", "--json"], ["progress", "--bench", str(tmp_path / "no-records")]):
        proc = run([*args, "--store", str(path)])
        assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
        assert fingerprint(path) == before and listing(tmp_path) == names
    assert json.loads(run(["stats", "--json", "--store", str(path)]).stdout)["reviews"] == 3


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
    shutil.copytree(Path(__file__).resolve().parents[1] / "drills" / "specs", specs)
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
    assert proc.elapsed < BOUND
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
    proc = run(args)
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
    (tmp_path / "empty").mkdir()  # a --bench folder that does not exist is a usage error (issue 18)
    args = [a.replace("{store}", str(store)).replace("{empty}", str(tmp_path / "empty")) for a in args]
    with open(scratch_device(tmp_path, "full"), "wb") as full:
        proc = run(args, stdout=full)
    one_line_error(proc, 1, "can not write the output", "No space left on device")


def test_quiz_whose_stdout_closes_says_its_reviews_are_saved(tmp_path):
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
        code = proc.wait(BOUND)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert first["given"] == "1us"
    assert code == 141 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "drill quiz: error: output closed (broken pipe); every answered review is saved"
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
    if command == "gate":
        assert "FAIL" in out.splitlines()[0]  # the good record is still judged
        for path in hostile.values():
            assert f"[skipped] {path}" in out
        assert "lab-0.1-\\xff\\xfe.json" in out
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
def test_lab_plot_to_an_unwritable_place_warns_and_still_reports(tmp_path):
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
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "Traceback" not in proc.err, proc.err
    warnings = [line for line in proc.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "not writable" in warnings[0]
    assert "record: " in out and list(bench.glob("lab-*.json"))  # saved, and the report printed
    assert list(locked.iterdir()) == []


# -- 9. escaping ------------------------------------------------------------------------------------------


def test_deck_description_is_escaped(tmp_path):

    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "drills" / "specs", specs)
    bound = specs / "bound.yaml"
    bound.write_text(bound.read_text().replace("title: Compute- or memory-bound",
                                               "title: \"<script>alert(1)</script> & bound\""))
    out = tmp_path / "d.apkg"
    proc = run(["deck", "--family", "bound", "--chip", "v5e", "--specs", str(specs), "-o", str(out)], timeout=60)
    assert proc.returncode == 0, proc.err
    with zipfile.ZipFile(out) as z:
        (tmp_path / "c.db").write_bytes(z.read("collection.anki2"))
    conn = sqlite3.connect(tmp_path / "c.db")
    decks = json.loads(conn.execute("SELECT decks FROM col").fetchone()[0])
    conn.close()
    desc = next(d["desc"] for d in decks.values() if d["name"].endswith("::bound"))
    assert "<script>" not in desc and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; bound" in desc


def test_roofline_svg_escapes_the_chip_name():
    from generator import catalogue
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
