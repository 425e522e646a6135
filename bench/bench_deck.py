"""Benchmark: our Anki exporter against bare genanki, equal work, interleaved in the same run.

The deck is `drill deck`'s default: the full course, one note per skill with K variants.
Computing the variants (drawing the problems, their answers and classic wrong answers:
``generator.export.variants.course_notes``) is the model's work, the same whatever the output
format: for the exporter-only ratio it is done once, before either side is timed (its time is
printed apart); the end-to-end ratio below times it too.

Ours: skill notes -> HTML fields and card data -> genanki notes -> .apkg (in-memory database,
deflated zip, atomic rename), i.e. everything ``drill deck`` does after computing the variants.
Bare genanki: the same field lists, prepared beforehand, written by genanki's own
``Package.write_to_file`` under a note type with as many fields, its zip compressed exactly as
ours (deflate, level 1: see ``generator/export/anki.py``), so both write the same notes into
files of about the same size. Runs alternate (ours, bare, bare, ours, ...) so a busy stretch of
the machine hits both; the ratio printed is the median of the per-pair ratios, next to the
ratio of the best times. Target: ours <= 1.5x bare.

Both sides get the classic wrong answers already computed (the variant data carries them), so the
exporter-only ratio compares writing with writing.

End to end (``drill deck`` against bare genanki writing the same fields and media): what
``drill deck`` runs after its imports (``generator.export.course_deck.write_course_deck``: the skills
drawn, their notes made and rendered, in as many worker processes as ``shares.workers_here()`` gives
on this machine, then the package written), timed as a new ``drill deck`` process runs it (the
registry, its per-process probe verdicts, the families' per-spec values and the miss cases'
explanations dropped before each run; the modules stay imported; the start-up cache in the user cache
folder kept, as it is for every run after the first since the code last changed: the skill index, the
probe verdicts and each skill's draw plan, ``generator.problems.drawplans``), interleaved with bare genanki in
the same way. Target: at most 3x. Bare genanki runs in one process; the same build in one process is
printed too, and the build with the start-up cache emptied before each run (a ``drill deck`` after an
install or an edit of the generator: the skills indexed, probed and searched) as the cold end to end.

    .venv/bin/python bench/bench_deck.py [--variants 16] [--repeat 5]
"""

import argparse
import contextlib
import os
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
from generator.export import anki, card, course_deck, shares  # noqa: E402
from generator.export.variants import DEFAULT_VARIANTS, course_notes as drawn_notes  # noqa: E402
from generator.model import catalogue, records  # noqa: E402
from generator.problems import families  # noqa: E402
from generator.io import startcache  # noqa: E402
from generator.problems.families import base as families_base  # noqa: E402
from generator.problems.families import miss_reason  # noqa: E402
from generator.problems.generate import registry  # noqa: E402

TARGET_RATIO = 1.5
END_TO_END_TARGET = 3.0


def course_notes(k: int):
    """The full course's skill notes, K variants each (what ``drill deck`` computes before exporting)."""
    return drawn_notes(registry(), card_rules(), max_variants=k)


def fresh_process_state() -> None:
    """Drop what one process keeps between draws (a new ``drill deck`` starts without it): the
    registry, the families' per-spec values, the miss cases' explanations, the record classes' fields."""
    registry.cache_clear()
    derived = getattr(families_base, "_DERIVED", None)
    if derived is not None:
        derived.clear()
    miss_reason.explanations.cache_clear()
    records._FIELDS.clear()


@contextlib.contextmanager
def cold_start_up_cache(folder: str):
    """The start-up cache moved to an empty ``folder`` (``$DRILL_CACHE_DIR``), its per-process checksums
    dropped, the catalogue and the specs parsed again: the registry builds its skill index, probes and
    plans as after an install (the modules stay imported)."""
    before = os.environ.get("DRILL_CACHE_DIR")
    os.environ["DRILL_CACHE_DIR"] = folder
    startcache.forget_digests()
    catalogue.load.cache_clear()
    families.forget()
    try:
        yield
    finally:
        if before is None:
            del os.environ["DRILL_CACHE_DIR"]
        else:
            os.environ["DRILL_CACHE_DIR"] = before
        startcache.forget_digests()


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
    with tempfile.TemporaryDirectory() as tmp, genanki_zip_like_ours():
        tempfile.tempdir = tmp  # genanki leaves its temp database behind; keep it in here
        ours_path, bare_path = os.path.join(tmp, "ours.apkg"), os.path.join(tmp, "bare.apkg")
        ours, bare = interleaved(lambda: anki.write_variant_deck(notes, ours_path),
                                 lambda: bare_genanki(fields, bare_path), args.repeat)
        workers = shares.workers_here()

        def end_to_end(workers: int = workers) -> None:
            fresh_process_state()
            course_deck.write_course_deck(registry(), card_rules(), ours_path, max_variants=args.variants,
                                          workers=workers)
        e2e, e2e_bare = interleaved(end_to_end, lambda: bare_genanki(fields, bare_path), args.repeat)
        one, one_bare = interleaved(lambda: end_to_end(1), lambda: bare_genanki(fields, bare_path), args.repeat)

        def cold_end_to_end() -> None:
            with tempfile.TemporaryDirectory(dir=tmp) as empty, cold_start_up_cache(empty):
                end_to_end()
        cold, cold_bare = interleaved(cold_end_to_end, lambda: bare_genanki(fields, bare_path), args.repeat)
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
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    e2e_ratio = line(f"end to end, as drill deck runs it ({workers} worker process{'es' if workers > 1 else ''} on "
                     f"{cpus} CPUs; first computing, in this process, {compute_s:.3f} s)", e2e, e2e_bare)
    line("end to end in one process", one, one_bare)
    line("cold end to end, as drill deck runs it (the start-up cache emptied before each build)", cold, cold_bare)
    print(f"end-to-end ratio = {e2e_ratio:.2f}x   (target <= {END_TO_END_TARGET}x: "
          f"{'met' if e2e_ratio <= END_TO_END_TARGET else 'MISSED'})")
    print(f"ratio ours / bare = {pair_ratio:.2f}x (median of pairs; best/best {min(ours) / min(bare):.2f}x)   "
          f"(target <= {TARGET_RATIO}x: {'met' if pair_ratio <= TARGET_RATIO else 'MISSED'})")


if __name__ == "__main__":
    main()
