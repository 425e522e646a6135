"""Benchmark: our Anki exporter against bare genanki, same 10,000 notes, same run.

Ours: Problems -> HTML fields -> genanki notes -> .apkg (in-memory database, deflated zip,
atomic rename), i.e. everything ``drill deck`` does after generating.
Bare genanki: the same 10,000 field lists, prepared beforehand, written by genanki's own
``Package.write_to_file``. Prints both times (best of N) and the ratio; target: ours <= 1.5x.

    .venv/bin/python bench/bench_deck.py [--notes 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import genanki  # noqa: E402

from generator.export import anki  # noqa: E402
from generator.generate import generate  # noqa: E402

TARGET_RATIO = 1.5


def problems(n: int):
    out, seed = [], 0
    while len(out) < n:
        seen = {p.id for p in out}
        out += [p for p in generate(count=50, seed=seed) if p.id not in seen]
        seed += 1
    return out[:n]


def bare_genanki(fields: list[list[str]], path: str) -> None:
    model = genanki.Model(1_600_000_001, "bare", fields=[{"name": f} for f in anki.FIELDS],
                          templates=[{"name": "c", "qfmt": "{{Prompt}}", "afmt": "{{FrontSide}}<hr>{{Answer}}"}])
    deck = genanki.Deck(1_600_000_002, "bare")
    for f in fields:
        deck.add_note(genanki.Note(model=model, fields=f))
    genanki.Package(deck).write_to_file(path)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ps = problems(args.notes)
    figures = anki._Figures()
    fields = [anki.note_fields(p, figures.for_problem(p)) for p in ps]  # same sizes as ours
    size = sum(len(x) for f in fields for x in f)
    with tempfile.TemporaryDirectory() as tmp:
        tempfile.tempdir = tmp  # genanki leaves its temp database behind; keep it in here
        ours = best(lambda: anki.write_deck(ps, os.path.join(tmp, "ours.apkg")), args.repeat)
        bare = best(lambda: bare_genanki(fields, os.path.join(tmp, "bare.apkg")), args.repeat)
        ours_size = os.path.getsize(os.path.join(tmp, "ours.apkg"))
        bare_size = os.path.getsize(os.path.join(tmp, "bare.apkg"))
        tempfile.tempdir = None
    ratio = ours / bare
    print(f"notes: {len(ps)}  field text: {size / 1e6:.1f} MB  (best of {args.repeat})")
    print(f"ours (drill deck exporter): {ours:.3f} s   {len(ps) / ours:,.0f} notes/s   file {ours_size / 1e6:.2f} MB")
    print(f"bare genanki             : {bare:.3f} s   {len(ps) / bare:,.0f} notes/s   file {bare_size / 1e6:.2f} MB")
    print(f"ratio ours / bare = {ratio:.2f}x   (target <= {TARGET_RATIO}x: {'met' if ratio <= TARGET_RATIO else 'MISSED'})")


if __name__ == "__main__":
    main()
