"""The records folder as a small database: the lock, the pending/saved ledger lines, kills at
every file step, bounded trace reading, and one bad file never stopping the others."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills.cli import cli
from generator.model.units import fmt
from labs.gate import verdict as gate
from labs.records import folder as records
from tests.conftest import bound
from tests.labs import synthetic

FORK = multiprocessing.get_context("fork")


def _record_with_two_misses(tmp_path: Path) -> Path:
    rec = synthetic.record(tmp_path, {"softmax": 3.0, "add": 2.5})
    return records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-test")


def _explain_one(path: str, why_file: str, start) -> None:
    start.wait()
    res = CliRunner().invoke(cli, ["explain", path, "--explanations", why_file])
    os._exit(0 if res.exit_code == 0 else 1)


@pytest.mark.parametrize("attempt", range(6))
def test_two_explains_at_once_keep_both_explanations(tmp_path, attempt):
    path = _record_with_two_misses(tmp_path)
    from generator import explain as miss_reasons

    rec = records.load(path)
    files = []
    for op in ("add", "softmax"):  # a corrected estimate the record's own numbers reproduce
        ev = records.op_evidence(rec, op)
        corrected_us = miss_reasons.corrected_time(ev, ["below-peak-bandwidth"]) * 1e6
        text = (f"below-peak-bandwidth: {op} moves {fmt(ev.model_bytes, 'B')} / the copy probe's "
                f"{fmt(ev.attained_bytes_per_s, 'B/s')} = {corrected_us:.4g} us")
        f = tmp_path / f"{op}.yaml"
        f.write_text(f"{op}: {json.dumps(text)}\n")
        files.append(str(f))
    assert _race(_explain_one, [(str(path), f) for f in files]) == [0, 0]
    rec = records.load(path)
    assert {r["op"] for r in rec["ops"] if (r.get("miss") or {}).get("accepted")} == {"add", "softmax"}
    row = gate.evaluate(tmp_path / "bench").rows[0]
    assert row.counted and row.explained == ["add", "softmax"], row.why_not  # the ledger vouches for the result
    assert not list((tmp_path / "bench").glob(".*.tmp"))


def _race(target, arguments: list[tuple]) -> list[int | None]:
    """Fork one process per argument tuple, release them together (``target``'s last argument is the
    start event it waits on), and give their exit codes (None: still running after ``bound()``)."""
    start = FORK.Event()
    procs = [FORK.Process(target=target, args=(*args, start)) for args in arguments]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(bound())
    return [p.exitcode for p in procs]


def _save_one(rec: dict, bench: str, start) -> None:
    start.wait()
    records.save_run(rec, Path(bench), "lab-0.1-gpu-same")
    os._exit(0)


@pytest.mark.parametrize("attempt", range(6))
def test_two_saves_at_once_keep_both_records_and_both_ledger_lines(tmp_path, attempt):
    first = synthetic.record(tmp_path, started_at="2026-11-29T12:00:00+00:00")
    second = synthetic.record(tmp_path, started_at="2026-11-29T12:00:01+00:00")
    bench = tmp_path / "bench"
    assert _race(_save_one, [(r, str(bench)) for r in (first, second)]) == [0, 0]
    saved = sorted(bench.glob("lab-*.json"))
    assert [p.name for p in saved] == ["lab-0.1-gpu-same-2.json", "lab-0.1-gpu-same.json"]
    ledger = records.read_ledger(bench)
    assert sorted(e["state"] for e in ledger) == ["pending", "pending", "saved", "saved"]
    assert {e["stem"] for e in ledger} == {p.stem for p in saved}
    rows = gate.evaluate(bench).rows
    # Neither is "copied in or renamed": one is the first run, the other its practice.
    assert not any("copied in" in w for r in rows for w in r.why_not)
    assert sorted(r.counted for r in rows) == [False, True]
    assert not list(bench.glob(".*.tmp"))


def _kill_at(step: int, after: bool, rec: dict, bench: str) -> None:
    """Save, SIGKILLing this process at the ``step``-th rename (before or ``after`` it)."""
    real = os.replace
    count = [0]

    def replace(src, dst):
        count[0] += 1
        if count[0] == step and not after:
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)
        if count[0] == step and after:
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    records.save_run(rec, Path(bench), "lab-0.1-gpu-killed")
    os._exit(0)


def _every_command_reads(bench: Path) -> None:
    for args in (["gate", "--bench", str(bench)], ["gate", "--verify", "--bench", str(bench)],
                 ["gate", "--json", "--bench", str(bench)]):
        res = CliRunner().invoke(cli, args)
        assert res.exception is None or isinstance(res.exception, SystemExit), (args, res.output)
        assert "Traceback" not in res.output


# The three renames of a save: the pending ledger line, the record, the saved ledger line.
@pytest.mark.parametrize("step,after", [(1, False), (1, True), (2, False), (2, True), (3, False), (3, True)])
def test_a_kill_at_each_file_step_leaves_a_folder_every_command_reads(tmp_path, step, after):
    bench = tmp_path / "bench"
    killed = synthetic.record(tmp_path, started_at="2026-11-29T12:00:00+00:00")
    p = FORK.Process(target=_kill_at, args=(step, after, killed, str(bench)))
    p.start()
    p.join(bound())
    assert p.exitcode == -signal.SIGKILL
    _every_command_reads(bench)
    took_slot = step > 1 or after  # its pending line reached the ledger
    result = gate.evaluate(bench)
    complete = step == 3 and after
    if (step, after) >= (2, True) and not complete:
        (row,) = result.rows  # the record is there, but no line vouches for it
        assert not row.counted and any("interrupted before its save completed" in w for w in row.why_not)
    # The next save sees the interrupted run: it took the slot, and no temporary file is left.
    later = synthetic.record(tmp_path, started_at="2026-11-29T13:00:00+00:00")
    path = records.save_run(later, bench, "lab-0.1-gpu-next")
    assert not list(bench.glob(".*.tmp"))
    assert records.load(path)["run"]["number"] == (2 if took_slot else 1)
    row = next(r for r in gate.evaluate(bench).rows if r.path.endswith("lab-0.1-gpu-next.json"))
    assert row.counted == (not took_slot), row.why_not
    if took_slot and not complete and not (step, after) >= (2, True):
        assert any("never saved" in w for w in row.why_not), row.why_not


def _bomb(path: Path) -> None:
    """A 16 KiB gzip of 8 million empty XEvents in one line of one plane."""
    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | 0x80 if n else b)
            if not n:
                return bytes(out)
    events = b"\x22\x00" * 8_000_000
    line = b"\x1a" + varint(len(events)) + events
    data = gzip.compress(b"\x0a" + varint(len(line)) + line, 9)
    assert len(data) <= 16 * 1024
    path.write_bytes(data)


def _trace_file(bench: Path, op: str) -> Path:
    (found,) = [p for p in bench.glob(f"traces/*/{op}/trace-1/plugins/profile/*/*.xplane.pb.gz")]
    return found


def test_a_trace_bomb_is_refused_in_bounded_memory(tmp_path):
    path = _record_with_two_misses(tmp_path)
    bench = path.parent
    _bomb(_trace_file(bench, "matmul"))
    # Peak memory from VmHWM: ru_maxrss survives exec, so it would report pytest's own peak.
    code = ("import re, json; from labs.gate import verify; "
            f"r = verify.verify_folder({str(bench)!r}); "
            "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
            "print(json.dumps([hwm, [c.why for c in r.disagreements]]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=bound())
    assert out.returncode == 0, out.stderr
    maxrss_kib, why = json.loads(out.stdout)
    assert maxrss_kib < 200 * 1024, maxrss_kib
    assert len(why) == 1 and "refused" in why[0] and "\n" not in why[0]
    row = gate.evaluate(bench).rows[0]
    assert not row.counted and any(w.startswith("traces: matmul:") and "refused" in w for w in row.why_not)


def test_a_trace_that_is_not_gzip_and_a_record_with_ops_5_are_one_line_each(tmp_path):
    path = _record_with_two_misses(tmp_path)
    bench = path.parent
    _trace_file(bench, "add").write_bytes(b"not gzip at all")
    bad = json.loads(path.read_text())
    bad["ops"] = 5
    (bench / "lab-0.1-bad.json").write_text(json.dumps(bad))
    for args in (["gate"], ["gate", "--verify"], ["gate", "--verify", "--json"],
                 ["explain", "--explanations", str(tmp_path / "none.yaml")]):
        (tmp_path / "none.yaml").write_text("add: x\n")
        res = CliRunner().invoke(cli, [*args, "--bench", str(bench)])
        text = res.output  # stdout and stderr together
        assert "Traceback" not in text and not isinstance(res.exception, (TypeError, KeyError)), (args, text)
        lines = [l for l in text.splitlines() if "lab-0.1-bad.json" in l]
        if args[-1] != "--json":
            assert len(lines) == 1 and "$.ops: expected array" in lines[0], (args, text)
    res = CliRunner().invoke(cli, ["gate", "--verify", "--bench", str(bench)])
    (line,) = [l for l in res.output.splitlines() if "add:" in l]
    assert "not a gzip-compressed trace" in line and res.exit_code == 1
    row = gate.evaluate(bench).rows[0]  # the good record is still judged
    assert row.path.endswith("lab-0.1-gpu-test.json") and any(w.startswith("traces: add:") for w in row.why_not)


def test_verify_json_is_standard_json(tmp_path):
    path = _record_with_two_misses(tmp_path)
    rec = json.loads(path.read_text())
    rec["ops"][0]["measured"]["device_median_s"] = 1e309  # inf when parsed
    path.write_text(json.dumps(rec).replace("Infinity", "1e309"))
    res = CliRunner().invoke(cli, ["gate", "--verify", "--json", "--bench", str(path.parent)])
    json.loads(res.output, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_attempts_are_append_only_and_the_ledger_counts_the_refused_ones(tmp_path):
    path = _record_with_two_misses(tmp_path)
    res = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(_why(tmp_path, "add: overhead\n"))])
    assert res.exit_code == 0 and "add: refused" in res.output, res.output
    ledger = records.read_ledger(path.parent)
    assert ledger[-1]["state"] == "rewritten" and ledger[-1]["refused_attempts"] == {"add": 1}
    before = path.read_bytes()

    def drop(rec):  # erase the refused attempt: the trail a guess leaves
        next(r for r in rec["ops"] if r["op"] == "add")["miss"]["attempts"] = []

    def reword(rec):
        next(r for r in rec["ops"] if r["op"] == "add")["miss"]["attempts"][0]["text"] = "below-peak-bandwidth: ..."

    for change in (drop, reword):
        with pytest.raises(records.RecordError, match="append-only"):
            records.update(path, synthetic.json_edit(change))
        assert path.read_bytes() == before  # refused before anything is written
    rec = records.load(path)
    next(r for r in rec["ops"] if r["op"] == "add")["miss"]["attempts"] = []
    with pytest.raises(records.RecordError, match="append-only"):
        records.rewrite(rec, path)
    assert path.read_bytes() == before and len(records.read_ledger(path.parent)) == len(ledger)

    def append(rec):  # a new attempt after the kept ones is allowed
        attempts = next(r for r in rec["ops"] if r["op"] == "add")["miss"]["attempts"]
        attempts.append(dict(attempts[0], text="x"))

    records.update(path, synthetic.json_edit(append))
    assert records.read_ledger(path.parent)[-1]["refused_attempts"] == {"add": 2}


def _why(tmp_path, text):
    f = tmp_path / "why.yaml"
    f.write_text(text)
    return f


def test_a_held_folder_lock_is_reported_with_its_pid_and_a_non_zero_exit(tmp_path, monkeypatch):
    """An explain suspended with Ctrl-Z holds .lock: gate and progress say who holds it, exit 1,
    instead of a "pending" gate with no rows and exit 0."""
    import subprocess
    import sys

    from tests.conftest import invoke_drill
    from tests.labs import synthetic

    bench = tmp_path / "bench"
    records.save_run(synthetic.record(tmp_path), bench, "lab-0.1-gpu")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(120)", str(bench / records.LOCK_NAME)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(records, "LOCK_WAIT_S", 0.2)
        for args in (["gate", "--json"], ["gate"], ["progress", "--store", str(tmp_path / "s.db")]):
            res = invoke_drill(*args, "--bench", str(bench))
            assert res.returncode == 1 and "Traceback" not in res.stderr, (args, res.stderr)
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and "is locked by another drill command" in lines[0], lines
            assert f"(PID {holder.pid})" in lines[0] and '"status": "pending"' not in res.stdout
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert invoke_drill("gate", "--bench", str(bench)).returncode == 0
