"""Benchmark: `drill deck` against bare genanki writing the same fields and media, interleaved in one run.

The deck is `drill deck`'s default: the full course, one note per skill with K variants.

- Exporter alone: our exporter (skill notes -> HTML fields and card data -> genanki notes -> .apkg: in-memory
  database, deflated zip, atomic rename) against genanki's own ``Package.write_to_file`` writing the same
  field lists under a note type with as many fields, its zip compressed exactly as ours (deflate, level 1:
  see ``generator/export/anki.py``). The variants are computed once, before either side is timed.
  Target: at most 1.5x.
- End to end, as a user runs it: a new ``drill deck -o FILE`` process (imports, draws, notes, rendering,
  the package) against a new Python process that imports genanki and writes the same fields (read from a
  JSON file) with the same compression. Target: at most 8x. The same build in this process
  (``course_deck.write_course_deck``, the modules already imported) is printed beside it.
Runs alternate (ours, bare, bare, ours, ...) so a busy stretch of the machine hits both; each ratio is the
median of the per-pair ratios, next to the ratio of the best times.

    .venv/bin/python bench/bench_deck.py [--variants 16] [--repeat 5]
"""

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import statistics
import sys
import tempfile
import time
import types
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import genanki  # noqa: E402
import genanki.package  # noqa: E402

from drills.cmd_generate import card_rules  # noqa: E402
from generator.export import anki, card, course_deck  # noqa: E402
from generator.export.variants import DEFAULT_VARIANTS, course_notes as drawn_notes  # noqa: E402
from generator.problems.families import base as families_base  # noqa: E402
from generator.problems.families import miss_reason  # noqa: E402
from generator.problems.generate import registry  # noqa: E402

TARGET_RATIO = 1.5
END_TO_END_TARGET = 8.0


def course_notes(k: int):
    """The full course's skill notes, K variants each (what ``drill deck`` computes before exporting)."""
    return drawn_notes(registry(), card_rules(), max_variants=k)


def fresh_process_state() -> None:
    """Drop what one process keeps between draws (a new ``drill deck`` starts without it): the
    registry, the families' per-spec values, the miss cases' explanations."""
    registry.cache_clear()
    derived = getattr(families_base, "_DERIVED", None)
    if derived is not None:
        derived.clear()
    miss_reason.explanations.cache_clear()


def bare_genanki(fields: list[list[str]], path: str) -> None:
    model = genanki.Model(1_600_000_001, "bare", fields=[{"name": f} for f in card.FIELDS],
                          templates=[{"name": "c", "qfmt": "{{Front}}", "afmt": "{{FrontSide}}<hr>{{Back}}"}])
    deck = genanki.Deck(1_600_000_002, "bare")
    for f in fields:
        deck.add_note(genanki.Note(model=model, fields=f))
    genanki.Package(deck).write_to_file(path)


# Our exporter's zip settings (generator/export/anki.py writes the package with these).
ZIP_COMPRESSION, ZIP_LEVEL = zipfile.ZIP_DEFLATED, 1


@contextlib.contextmanager
def genanki_zip_like_ours():
    """genanki's Package.write_to_file opens a plain (stored) zip; give it ours instead."""
    def deflated(file, mode="r", *args, **kwargs):
        kwargs.setdefault("compression", ZIP_COMPRESSION)
        kwargs.setdefault("compresslevel", ZIP_LEVEL)
        return zipfile.ZipFile(file, mode, *args, **kwargs)
    real = genanki.package.zipfile
    genanki.package.zipfile = types.SimpleNamespace(ZipFile=deflated)
    try:
        yield
    finally:
        genanki.package.zipfile = real


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(ours_fn, bare_fn, repeat: int) -> tuple[list[float], list[float]]:
    """``repeat`` pairs, the order flipping every pair; one untimed warm-up of each first."""
    ours_fn(), bare_fn()
    ours, bare = [], []
    for i in range(repeat):
        if i % 2 == 0:
            ours.append(timed(ours_fn))
            bare.append(timed(bare_fn))
        else:
            bare.append(timed(bare_fn))
            ours.append(timed(ours_fn))
    return ours, bare


# A bare genanki process: the fields from a JSON file, written as ``bare_genanki`` writes them (same zip).
BARE_PROCESS = """
import json, sys, types, zipfile
import genanki, genanki.package
fields, names, path = json.load(open(sys.argv[1]))
def deflated(file, mode="r", *args, **kwargs):
    kwargs.setdefault("compression", zipfile.ZIP_DEFLATED)
    kwargs.setdefault("compresslevel", 1)
    return zipfile.ZipFile(file, mode, *args, **kwargs)
genanki.package.zipfile = types.SimpleNamespace(ZipFile=deflated)
model = genanki.Model(1_600_000_001, "bare", fields=[{"name": f} for f in names],
                      templates=[{"name": "c", "qfmt": "{{Front}}", "afmt": "{{FrontSide}}<hr>{{Back}}"}])
deck = genanki.Deck(1_600_000_002, "bare")
for f in fields:
    deck.add_note(genanki.Note(model=model, fields=f))
genanki.Package(deck).write_to_file(path)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=DEFAULT_VARIANTS, help="K, variants per note")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    t0 = time.perf_counter()
    notes = course_notes(args.variants)
    compute_s = time.perf_counter() - t0
    figures = anki.Figures()
    fields = [anki.variant_fields(n, figures) for n in notes]  # same notes, same sizes as ours
    size = sum(len(x) for f in fields for x in f)
    variants = sum(len(n.variants) for n in notes)
    drill = [sys.executable, "-m", "drills.cli"] if not shutil.which("drill") else [shutil.which("drill")]
    with tempfile.TemporaryDirectory() as tmp, genanki_zip_like_ours():
        tempfile.tempdir = tmp  # genanki leaves its temp database behind; keep it in here
        ours_path, bare_path = os.path.join(tmp, "ours.apkg"), os.path.join(tmp, "bare.apkg")
        ours, bare = interleaved(lambda: anki.write_variant_deck(notes, ours_path),
                                 lambda: bare_genanki(fields, bare_path), args.repeat)

        def in_process() -> None:
            fresh_process_state()
            course_deck.write_course_deck(registry(), card_rules(), ours_path, max_variants=args.variants)
        one, one_bare = interleaved(in_process, lambda: bare_genanki(fields, bare_path), args.repeat)
        job = os.path.join(tmp, "bare.json")
        with open(job, "w", encoding="utf-8") as out:
            json.dump([fields, list(card.FIELDS), bare_path], out)
        env = {**os.environ, "TMPDIR": tmp}
        user = lambda: subprocess.run([*drill, "deck", "--variants", str(args.variants), "-o", ours_path],  # noqa: E731
                                      check=True, env=env, capture_output=True)
        bare_user = lambda: subprocess.run([sys.executable, "-c", BARE_PROCESS, job], check=True, env=env)  # noqa: E731
        e2e, e2e_bare = interleaved(user, bare_user, args.repeat)
        ours_size, bare_size = os.path.getsize(ours_path), os.path.getsize(bare_path)
        with zipfile.ZipFile(bare_path) as z:
            assert all(i.compress_type == ZIP_COMPRESSION for i in z.infolist()), "the baseline must deflate too"
        tempfile.tempdir = None
    pair_ratio = statistics.median(o / b for o, b in zip(ours, bare))
    print(f"notes: {len(notes)} (one per skill), variants: {variants} (K={args.variants})  "
          f"field text: {size / 1e6:.1f} MB  ({args.repeat} interleaved pairs; both zips deflate level {ZIP_LEVEL})")
    print(f"computing the variants (before both sides, once): {compute_s:.3f} s")
    print(f"ours (drill deck exporter): median {statistics.median(ours):.3f} s  best {min(ours):.3f} s  "
          f"file {ours_size / 1e6:.2f} MB")
    print(f"bare genanki             : median {statistics.median(bare):.3f} s  best {min(bare):.3f} s  "
          f"file {bare_size / 1e6:.2f} MB")

    def line(label: str, ours_s: list[float], bare_s: list[float]) -> float:
        ratio = statistics.median(o / b for o, b in zip(ours_s, bare_s))
        print(f"{label}: median {statistics.median(ours_s):.3f} s  best {min(ours_s):.3f} s;  bare genanki median "
              f"{statistics.median(bare_s):.3f} s;  ratio {ratio:.2f}x (median of pairs; best/best "
              f"{min(ours_s) / min(bare_s):.2f}x)")
        return ratio
    e2e_ratio = line("end to end, as a user runs it (a new `drill deck` process against a new genanki process)",
                     e2e, e2e_bare)
    line("end to end in this process (modules imported)", one, one_bare)
    print(f"end-to-end ratio = {e2e_ratio:.2f}x   (target <= {END_TO_END_TARGET}x: "
          f"{'met' if e2e_ratio <= END_TO_END_TARGET else 'MISSED'})")
    print(f"ratio ours / bare = {pair_ratio:.2f}x (median of pairs; best/best {min(ours) / min(bare):.2f}x)   "
          f"(target <= {TARGET_RATIO}x: {'met' if pair_ratio <= TARGET_RATIO else 'MISSED'})")


if __name__ == "__main__":
    main()
