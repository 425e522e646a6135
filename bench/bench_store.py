"""The store's cost against its history: `drill quiz` to its first problem and `drill stats`, on stores of
0, 10^4, 10^5 and 10^6 reviews, as ratios to the empty store, in one run, interleaved (target <= 1.3x at 10^6).

Each store is built once, fast: every review row by one ``executemany`` in one transaction into a
version-2 store without its indexes, which are then built once and the store migrated to the current
version (its indexes, the ``tallies`` filled from the log and their triggers), and a card for every skill of the catalogue (a learner of that many reviews has seen
them all; a third of them due now). Reviews are 500 a day, going back from now, so a store of 10^6
reviews holds about five and a half years; each row has a prompt, JSON parameters and key, and the
card before it, like the quiz's own rows (about 1 KB a row with its indexes). Then, in each round, every
store in turn (the order rotated each round, so load drifts hit all alike): ``drill quiz --store S``
with piped stdin, timed from process start to the first problem header ``[1/N]`` (stdin is then
closed: the quiz records nothing), and ``drill stats --store S`` to its exit. The medians are
compared with the empty store's, measured in the same rounds.

    python bench/bench_store.py [--rounds 7] [--sizes 0,10000,100000,1000000] [--json]

Bytecode caches are written to a temporary directory (warmed by one untimed run of each command), as
in ``bench/bench_startup.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

TARGET_RATIO = 1.3  # at 10^6 reviews, at most 1.3x the empty store
FIRST_PROMPT = re.compile(r"^\[1/\d+\] ")
REVIEWS_PER_DAY = 500
DEFAULT_SIZES = (0, 10_000, 100_000, 1_000_000)


def drill_command() -> list[str]:
    script = Path(sys.executable).with_name("drill")
    if script.exists():
        return [str(script)]
    found = shutil.which("drill")
    return [found] if found else [sys.executable, "-c", "from drills.cli import main; main()"]


def build_store(path: Path, reviews: int, now: datetime) -> float:
    """A store of ``reviews`` review rows (and, if any, a card per skill); the seconds it took."""
    from fsrs import Card, Rating, Scheduler  # start-up: only this benchmark step needs it

    from drills.store.repository import Store, iso  # start-up: only this benchmark step needs it
    from generator.problems import generate  # start-up: only this benchmark step needs it

    from drills.store import schema as store_schema  # start-up: only this benchmark step needs it

    started = time.perf_counter()
    if not reviews:
        Store.open(path).close()  # the current schema, indexes and triggers
        return time.perf_counter() - started
    # Fast and honest: a version-2 store without its two indexes is filled, then the indexes are put
    # back and the store is migrated to the current version, as any old store is (indexes built once,
    # tallies filled from the log by the step itself), instead of updating them row by row.
    conn = sqlite3.connect(path, isolation_level=None)
    store_schema.migrate(conn, target=2)
    conn.execute("DROP INDEX reviews_by_time")
    conn.execute("DROP INDEX reviews_by_skill")
    skills = generate.skills()
    rng = random.Random(25)
    scheduler = Scheduler(enable_fuzzing=False)
    cards = []
    for index, skill in enumerate(skills):
        card, _ = scheduler.review_card(Card(card_id=index + 1, due=now - timedelta(days=40)), Rating.Good,
                                        review_datetime=now - timedelta(days=40))
        card, _ = scheduler.review_card(card, Rating.Good, review_datetime=now - timedelta(days=30))
        card.due = now - timedelta(hours=1) if index % 3 == 0 else now + timedelta(days=1 + index % 20)
        cards.append((skill.id, json.dumps(card.to_dict()), iso(card.due), int(card.state), 40,
                      iso(now - timedelta(days=40)), iso(now - timedelta(days=30))))
    card_before = cards[0][1]
    problems = [generate.draw(skill.id, random.Random(k)) for k, skill in enumerate(skills[:50])]
    texts = [(p.prompt, json.dumps(p.params, sort_keys=True, default=str), json.dumps(p.answer.to_dict(),
              sort_keys=True)) for p in problems]
    step = timedelta(days=1) / REVIEWS_PER_DAY
    oldest = now - step * reviews

    later = timedelta(days=3)
    oldest = oldest.astimezone(timezone.utc)

    def rows():
        for i in range(reviews):
            skill = skills[i % len(skills)]
            prompt, params, expected = texts[i % len(texts)]
            correct = rng.random() < 0.8
            at = oldest + step * i  # isoformat of a UTC time is iso()'s format, several times faster
            yield (f"session-{i // 20}", at.isoformat(timespec="microseconds"), skill.id, skill.family,
                   skill.chip, f"{skill.id}@{i:08x}", params, prompt, expected, "87.2us", 8.72e-5, int(correct),
                   3 if correct else 1, 0.01, 12.5, int(i % 10 == 0), 2 if i % 4 else 1,
                   (at + later).isoformat(timespec="microseconds"), card_before)

    conn.execute("PRAGMA synchronous = OFF")  # building the fixture, not timing it
    conn.execute("PRAGMA cache_size = -200000")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO cards (skill, card, due, state, reviews, introduced_at, updated_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", cards)
    conn.executemany(
        "INSERT INTO reviews (session, reviewed_at, skill, family, chip, problem_id, params, prompt, expected, "
        "given, given_value, correct, rating, relative_error, seconds_taken, cram, state_before, due_after, "
        "card_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
    conn.execute("COMMIT")
    store_schema.MIGRATIONS[1](conn)  # version 1's indexes again (IF NOT EXISTS: the tables stay)
    store_schema.migrate(conn)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    Store.open(path, readonly=True).close()  # it is a healthy store at the current version
    return time.perf_counter() - started


def time_first_prompt(drill: list[str], store: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(drill + ["quiz", "--store", str(store), "--seed", "1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdin is not None
    elapsed = None
    for line in proc.stdout:
        if FIRST_PROMPT.match(line):
            elapsed = time.perf_counter() - start
            break
    proc.stdin.close()  # end of input: the quiz saves nothing and exits 0
    proc.stdout.read()
    err = proc.stderr.read() if proc.stderr else ""
    code = proc.wait()
    if elapsed is None or code != 0:
        raise SystemExit(f"drill quiz on {store.name} did not print a first problem (exit {code}): {err.strip()}")
    return elapsed


def time_stats(drill: list[str], store: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(drill + ["stats", "--store", str(store)], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"drill stats on {store.name} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="measurements of each command on each store")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="review counts, the first the baseline (default 0,10000,100000,1000000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the built stores in this folder and reuse them on the next run (they are "
                             "rebuilt when the schema version changes); default: a temporary folder")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]

    drill = drill_command()
    now = datetime.now(timezone.utc)
    quiz: dict[int, list[float]] = {n: [] for n in sizes}
    stats: dict[int, list[float]] = {n: [] for n in sizes}
    built: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("DRILL_STORE", "PYTHONDONTWRITEBYTECODE")}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        from drills.store.repository import SCHEMA_VERSION  # start-up: only this benchmark step needs it

        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        stores = {n: folder / f"reviews-{n}-v{SCHEMA_VERSION}.sqlite3" for n in sizes}
        for n, path in stores.items():
            if path.exists() and args.cache:
                built[n] = {"build_s": 0.0, "file_mb": round(path.stat().st_size / 1e6, 1)}
                print(f"reused {n:>9,} reviews ({built[n]['file_mb']:.0f} MB)", file=sys.stderr)
                continue
            seconds = build_store(path, n, now)
            built[n] = {"build_s": round(seconds, 2), "file_mb": round(path.stat().st_size / 1e6, 1)}
            print(f"built {n:>9,} reviews in {seconds:6.1f} s ({built[n]['file_mb']:.0f} MB)", file=sys.stderr)
        time_first_prompt(drill, stores[sizes[0]], env)  # warm the bytecode and file caches
        time_stats(drill, stores[sizes[0]], env)
        for round_number in range(args.rounds):
            turn = sizes[round_number % len(sizes):] + sizes[:round_number % len(sizes)]
            for n in turn:
                quiz[n].append(time_first_prompt(drill, stores[n], env))
                stats[n].append(time_stats(drill, stores[n], env))

    base_quiz, base_stats = statistics.median(quiz[sizes[0]]), statistics.median(stats[sizes[0]])
    table = []
    for n in sizes:
        q, s = statistics.median(quiz[n]), statistics.median(stats[n])
        table.append({"reviews": n, **built[n], "quiz_first_prompt_ms": round(q * 1e3, 1),
                      "quiz_ratio": round(q / base_quiz, 2), "stats_ms": round(s * 1e3, 1),
                      "stats_ratio": round(s / base_stats, 2)})
    last = table[-1]
    within = last["quiz_ratio"] <= TARGET_RATIO and last["stats_ratio"] <= TARGET_RATIO
    if args.json:
        print(json.dumps({"rounds": args.rounds, "target_ratio": TARGET_RATIO, "stores": table,
                          "within_target": within}, indent=2))
        return
    print(f"{'reviews':>9}  {'file':>7}  {'quiz first prompt':>22}  {'drill stats':>20}")
    for row in table:
        print(f"{row['reviews']:>9,}  {row['file_mb']:>5.0f}MB  {row['quiz_first_prompt_ms']:>9.1f} ms "
              f"{row['quiz_ratio']:>6.2f}x     {row['stats_ms']:>8.1f} ms {row['stats_ratio']:>6.2f}x")
    print(f"at {last['reviews']:,} reviews: quiz {last['quiz_ratio']:.2f}x, stats {last['stats_ratio']:.2f}x the "
          f"empty store (target <= {TARGET_RATIO:g}x): {'ok' if within else 'OVER TARGET'}   "
          f"[{args.rounds} rounds, interleaved, medians]")


if __name__ == "__main__":
    main()
