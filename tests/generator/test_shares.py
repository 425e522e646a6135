"""generator.export.shares and generator.export.course_deck: work split across forked processes.

Every fork runs in a fresh `python` child: a test worker has threads of its own (pytest-xdist's), and
forking a threaded process is what ``shares.workers_here`` refuses. The children report JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from generator.export import shares
from tests.conftest import bound

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, tmp_path: Path) -> dict:
    """Run ``code`` in a fresh interpreter (the start-up cache in ``tmp_path``); what it printed, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "DRILL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=bound(300), env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_shares_give_one_process_results_and_redo_a_failed_share(tmp_path):
    out = _python('''
        import json, os
        from generator.export import shares
        parent = os.getpid()
        def square(items, on_done):
            out = []
            for x in items:
                out.append((x, x * x, os.getpid() == parent))
                on_done()
            return out
        def fails_in_a_child(items, on_done):
            if os.getpid() != parent and 5 in items:
                raise RuntimeError("a child's failure")
            return square(items, on_done)
        def dies_in_a_child(items, on_done):
            if os.getpid() != parent and 4 in items:
                os._exit(3)
            return square(items, on_done)
        def dies_midway(items, on_done):  # reports some items done, then dies: the count must not go back
            out = []
            for x in items:
                if os.getpid() != parent and x == 10:
                    os._exit(3)
                out.append((x, x * x, os.getpid() == parent))
                on_done()
            return out
        def sends_garbage(items, on_done):
            if os.getpid() != parent and 8 in items:
                return lambda: None  # not JSON data
            return square(items, on_done)
        report = {"workers_here": shares.workers_here()}
        for name, work in [("ok", square), ("raises", fails_in_a_child), ("dies", dies_in_a_child),
                           ("midway", dies_midway), ("garbage", sends_garbage)]:
            seen = []
            parts = shares.in_shares(list(range(20)), work, 3, lambda done, total: seen.append((done, total)))
            report[name] = {"parts": parts, "last": seen[-1], "monotone": seen == sorted(seen)}
        real_fork = os.fork
        forks = []
        def no_fork():
            forks.append(1)
            if len(forks) == 2:
                raise OSError(11, "Resource temporarily unavailable")
            return real_fork()
        os.fork = no_fork  # the second fork fails: its share is worked here
        parts = shares.in_shares(list(range(20)), square, 3)
        os.fork = real_fork
        report["no_fork"] = {"parts": parts, "forks": len(forks)}
        try:
            shares.in_shares(list(range(6)), lambda items, on_done: 1 / 0, 2)
        except ZeroDivisionError:
            report["everywhere"] = "ZeroDivisionError"
        print(json.dumps(report))
    ''', tmp_path)
    assert out["workers_here"] >= 1
    want = [[[x, x * x] for x in range(20)[i::3]] for i in range(3)]
    for name in ("ok", "raises", "dies", "midway", "garbage"):
        parts = out[name]["parts"]
        assert [[row[:2] for row in part] for part in parts] == want, name
        assert out[name]["last"] == [20, 20] and out[name]["monotone"], name
    # The shares after the first ran in children, but a failed one was worked again here.
    assert not any(here for part in out["ok"]["parts"][1:] for _, _, here in part)
    assert all(here for part in out["ok"]["parts"][:1] for _, _, here in part)
    assert all(here for _, _, here in out["raises"]["parts"][2])  # 5 is in share 2: redone here
    assert not any(here for _, _, here in out["raises"]["parts"][1])
    assert all(here for _, _, here in out["dies"]["parts"][1])  # 4 is in share 1
    assert not any(here for _, _, here in out["dies"]["parts"][2])
    assert all(here for _, _, here in out["garbage"]["parts"][2])  # 8 is in share 2
    assert all(here for _, _, here in out["midway"]["parts"][1])  # 10 is in share 1, after 1, 4 and 7
    assert [[row[:2] for row in part] for part in out["no_fork"]["parts"]] == want and out["no_fork"]["forks"] == 2
    no_fork = out["no_fork"]["parts"]
    assert all(here for _, _, here in no_fork[2]) and not any(here for _, _, here in no_fork[1])
    assert out["everywhere"] == "ZeroDivisionError"  # a share that fails everywhere fails as in one process


def test_the_deck_is_the_same_file_content_whatever_the_workers(tmp_path):
    out = _python('''
        import hashlib, json, sqlite3, tempfile, zipfile
        from drills.cmd_generate import card_rules
        from generator.problems import generate
        from generator.export import anki, course_deck
        from generator.export.variants import course_notes

        FAMILIES = ["floor", "intensity", "transformer_step", "collective", "miss_reason", "ridge"]
        CHIPS, K = ["v5e", "h100"], 3

        def digest(path):
            with zipfile.ZipFile(path) as z:
                files = {n: z.read(n) for n in z.namelist()}
            with tempfile.NamedTemporaryFile(suffix=".anki2") as db:
                db.write(files.pop("collection.anki2")); db.flush()
                conn = sqlite3.connect(db.name)
                rows = conn.execute("select guid, flds, tags, mid from notes order by id").fetchall()
                decks = conn.execute("select decks from col").fetchall()
                conn.close()
            media_names = json.loads(files.pop("media"))
            media = sorted((media_names[k], v) for k, v in files.items())
            names = sorted(d["name"] for d in json.loads(decks[0][0]).values())
            return hashlib.sha256(repr((rows, media, names)).encode()).hexdigest()

        reg = generate.Registry()
        anki.write_variant_deck(course_notes(reg, card_rules(), FAMILIES, CHIPS, K, 4), "serial.apkg")
        report = {"serial": digest("serial.apkg")}
        for workers in (1, 2, 3):
            seen = []
            made = course_deck.write_course_deck(generate.Registry(), card_rules(), f"w{workers}.apkg", FAMILIES, CHIPS,
                                                 K, 4, workers=workers, on_built=lambda d, t: seen.append((d, t)))
            report[str(workers)] = {"digest": digest(f"w{workers}.apkg"), "notes": made.notes, "last": seen[-1]}
        report["skills"] = len(reg.skills(FAMILIES, CHIPS))
        print(json.dumps(report))
    ''', tmp_path)
    for workers in ("1", "2", "3"):
        assert out[workers]["digest"] == out["serial"], workers
        assert out[workers]["notes"] == out["skills"] and out[workers]["last"] == [out["skills"], out["skills"]]


def test_no_fork_where_it_is_not_safe(monkeypatch):
    """More than one thread, or jax loaded: one share, worked here (no child is made)."""
    monkeypatch.setattr(shares.os, "fork", lambda: (_ for _ in ()).throw(AssertionError("forked")))
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert shares.workers_here() == 1
        assert shares._os_threads() >= 2  # as the OS counts them, which also sees a library's native threads
    finally:
        stop.set()
        helper.join()
    monkeypatch.setitem(sys.modules, "jax", object())
    assert shares.workers_here() == 1
    assert shares.in_shares([1, 2, 3], lambda items, on_done: sum(items), 1) == [6]
    assert shares.in_shares([4], lambda items, on_done: sum(items), 4) == [4]  # one item: one share
