"""Study the whole variant deck through Anki's own scheduler and count repeated problems.

Every note of `drill deck`'s default deck gets 10 reviews (Again/Hard/Good/Easy in the proportions of
``anki_schedule.RATINGS``), each taken from Anki's queue with the scheduling context Anki's reviewer
serves, under SM-2's default options and under FSRS; the rules the card follows
(``generator.export.rotation``) then say which variant each review showed: the review-count rule
(desktop Anki, no storage) and the day rule on Anki's day with the three memories a client may have
(``anki_schedule.MEMORIES``). Printed: the repeat rate of consecutive reviews per K, next to the old
(day + offset) mod K rule's. Targets: the review count never repeats; with storage at most 1/(4K); with
the memory of one sitting ("session") at most 1/K. With no memory at all a same-day relearning step
shows the day's variant again: printed, not claimed. Same answers: two consecutive reviews of a numeric
note that ask for the same number (3 significant figures, the same problem included) at most 1% with
storage kept, and never under the review count.
"""

import pytest
from click.testing import CliRunner

from drills.cli import cli
from bench import anki_schedule
from bench.anki_schedule import print_table

pytestmark = pytest.mark.slow

MIN_PAIRS = 300  # a K with fewer consecutive pairs is printed but too small a sample to hold to a bound


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    root = tmp_path_factory.mktemp("repeats")
    path = root / "deck.apkg"
    result = CliRunner().invoke(cli, ["deck", "-o", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = {}
    for name, fsrs in (("SM-2", False), ("FSRS", True)):
        notes = anki_schedule.review_days(path, root, fsrs)
        out[name] = anki_schedule.table(notes)
        out[f"{name} answers"] = anki_schedule.answer_table(notes)
    return out


@pytest.mark.parametrize("scheduler", ["SM-2", "FSRS"])
def test_consecutive_reviews_rarely_repeat(studied, scheduler):
    tab = studied[scheduler]
    print_table(scheduler, tab)
    pairs = sum(row["day, storage"][1] for row in tab.values())
    assert pairs >= 3000, pairs  # the whole deck was studied, 10 reviews a card
    for k, row in tab.items():
        assert row[anki_schedule.COUNT_RULE][0] == 0, (k, row)  # desktop: no storage needed
        assert row["day, storage"][0] <= row["day, storage"][1] / (4 * k), (k, row)
        repeated, n = row["day, session"]
        if n >= MIN_PAIRS:
            assert repeated <= n / k, (k, row)
    # Pooled over every K: the new rule beats the old one with any memory, and never loses without.
    def pooled(rule):
        return sum(row[rule][0] for row in tab.values()) / sum(row[rule][1] for row in tab.values())
    assert pooled("day, session") < pooled("old (day+offset) mod K") / 3
    assert pooled("day, none") <= pooled("old (day+offset) mod K") * 1.1


@pytest.mark.parametrize("scheduler", ["SM-2", "FSRS"])
def test_consecutive_reviews_rarely_ask_for_the_same_answer(studied, scheduler):
    tab = studied[f"{scheduler} answers"]
    anki_schedule.print_answer_table(scheduler, tab)
    same, pairs = tab["day, storage"]
    assert pairs >= 2000, pairs  # the numeric notes' consecutive reviews
    assert same <= 0.01 * pairs, tab
    assert tab[anki_schedule.COUNT_RULE][0] == 0, tab
