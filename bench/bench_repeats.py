"""Benchmark: how often a variant card shows the same problem at two consecutive reviews, per rule
and client, studied in the same run through Anki's own scheduler.

The deck is `drill deck`'s default (the full course, one note per skill, K variants each). Every
card gets ``--reviews`` answers (Again/Hard/Good/Easy in realistic proportions, see
bench/anki_schedule.py) under SM-2's default options, then under FSRS; every rule is read off the
same reviews. Rules (``generator.export.rotation``): the review count (desktop Anki's reviewer
serves it; no storage needed), the day rule on Anki's day for three client memories (storage:
localStorage kept; session: one sitting only, as desktop Anki's off-the-record profile when the
learner quits daily; none), the day rule on the calendar day (session), and the old
(day + offset) mod K. Targets: review count 0, storage <= 1/(4K), session <= 1/K. Then, per rule, how
often two consecutive reviews of a numeric note ask for the same answer (to 3 significant figures, the
same problem included): target <= 1% with storage kept.

    .venv/bin/python bench/bench_repeats.py [--variants K] [--reviews 10]
"""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner  # noqa: E402

from drills.cli import cli  # noqa: E402
from bench import anki_schedule  # noqa: E402
from bench.anki_schedule import print_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=None, help="K (default: drill deck's)")
    parser.add_argument("--reviews", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        argv = ["deck", "-o", str(root / "deck.apkg")] + (["--variants", str(args.variants)] if args.variants else [])
        result = CliRunner().invoke(cli, argv, catch_exceptions=False)
        print(result.output.splitlines()[0])
        for name, fsrs in (("SM-2", False), ("FSRS", True)):
            studied = anki_schedule.review_days(root / "deck.apkg", root, fsrs, args.reviews)
            tab = anki_schedule.table(studied)
            print_table(name, tab)
            anki_schedule.print_answer_table(name, anki_schedule.answer_table(studied))
            for rule in next(iter(tab.values())):
                a = sum(row[rule][0] for row in tab.values())
                b = sum(row[rule][1] for row in tab.values())
                print(f"  all K: {rule:<26} {a:>5}/{b:<5} = {a / b:.3f}")
            old = sum(r["old (day+offset) mod K"][0] for r in tab.values())
            new = sum(r["day, session"][0] for r in tab.values())
            print(f"  ratio day rule (session) / old = {new / old:.3f}")


if __name__ == "__main__":
    main()
