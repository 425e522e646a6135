"""Study a deck through Anki's own scheduler, as a learner would, and count repeated problems.

``review_days`` imports a package into a scratch collection (the ``anki`` package, SM-2 default
options or FSRS, daily limits lifted), then gives every card ``reviews`` answers with ratings drawn
in realistic proportions (``RATINGS``), each at the time the scheduler asks for it: after an answer
the card is moved to "due now" and its last review back by the interval Anki chose, so the next
answer is scheduled as if that interval had passed (SM-2 reads the interval, FSRS the elapsed
time). Each review takes the card from Anki's own queue (``get_queued_cards``, one card unsuspended
at a time), as the reviewer does, with the scheduling context the reviewer serves the card (its
``seed``: the review count the card's script reads on desktop). The result is each note's review
times on a simulated clock (the learner in UTC, Anki's day starting at ``rotation.ROLLOVER_HOUR``)
and seeds, from which ``repeats`` counts consecutive reviews that showed the same variant under a
rule.

Used by tests/generator/test_anki_repeats.py and bench/bench_repeats.py.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest  # noqa: I001
from anki.cards import Card  # (after anki.collection: anki's own import order)
from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition
from anki.scheduler_pb2 import CardAnswer

from generator.export import rotation
from generator.problems.generate import ANSWER_FIGURES

IF_NEWER = ImportAnkiPackageUpdateCondition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER
# The options Anki's import dialog defaults to: update notes and note types "if newer".
OPTIONS = ImportAnkiPackageOptions(merge_notetypes=False, update_notes=IF_NEWER, update_notetypes=IF_NEWER,
                                   with_scheduling=False, with_deck_configs=False)


def import_package(col: Collection, path: Path) -> object:
    """Import ``path`` into ``col`` as Anki's import dialog does by default; the import's log."""
    return col.import_anki_package(ImportAnkiPackageRequest(package_path=str(path), options=OPTIONS)).log

# Again / Hard / Good / Easy: a learner who passes about 85% of reviews (Anki's default desired
# retention is 90%), with Hard and Easy used sparingly.
RATINGS = ((CardAnswer.AGAIN, 0.12), (CardAnswer.HARD, 0.10), (CardAnswer.GOOD, 0.68), (CardAnswer.EASY, 0.10))
STUDY_HOURS = (7, 23)  # a review day's reviews fall between these local hours
DAY_S = 86_400
START_S = 1_773_100_800  # 2026-03-10 00:00 UTC, the simulated first day


@dataclass(frozen=True)
class NoteReviews:
    skill: str
    k: int
    seed: int
    offset: int  # the old rule's
    times_s: tuple[float, ...]  # the simulated clock at each review's front
    counts: tuple[int, ...]  # Anki's scheduling seed at each review (card id term + review count)
    answers: tuple[str | None, ...] = ()  # each variant's numeric answer to 3 significant figures (None: a choice)


def _import(col: Collection, package: Path) -> None:
    import_package(col, package)


def review_days(package: Path, scratch: Path, fsrs: bool, reviews: int = 10, seed: int = 24) -> list[NoteReviews]:
    """Every note of ``package`` studied ``reviews`` times through Anki's scheduler (see the module docstring)."""
    where = scratch / ("fsrs" if fsrs else "sm2")
    where.mkdir(parents=True, exist_ok=True)
    col = Collection(str(where / "collection.anki2"))
    rng = random.Random(seed)
    out = []
    try:
        _import(col, package)
        col.set_config("fsrs", fsrs)
        for conf in col.decks.all_config():  # one learner, one card at a time: no daily limit applies
            conf["new"]["perDay"] = conf["rev"]["perDay"] = 9999  # the most Anki accepts
            col.decks.update_config(conf)
        col.sched.suspend_cards(col.find_cards(""))
        ratings, weights = zip(*RATINGS)
        for nid in col.find_notes(""):
            note = col.get_note(nid)
            data = json.loads(note["Data"])
            card_id = note.card_ids()[0]
            col.sched.unsuspend_cards([card_id])
            col.decks.select(col.get_card(card_id).did)  # the reviewer studies the selected deck
            now_s = START_S + rng.uniform(*STUDY_HOURS) * 3600
            times, counts = [], []
            for _ in range(reviews):
                queued = col.sched.get_queued_cards(fetch_limit=1).cards
                if not queued or queued[0].card.id != card_id:
                    c = col.get_card(card_id)
                    raise RuntimeError(f"Anki's queue does not offer card {card_id} when it is due "
                                       f"(queue {c.queue}, type {c.type}, due {c.due}, today {col.sched.today}, "
                                       f"offered {[q.card.id for q in queued]})")
                times.append(now_s)
                counts.append(queued[0].context.seed)
                card = col.get_card(card_id)
                card.start_timer()
                rating = rng.choices(ratings, weights)[0]
                col.sched.answer_card(col.sched.build_answer(card=card, states=queued[0].states, rating=rating))
                card = col.get_card(card_id)
                if card.queue == 1:  # intraday learning: due is a timestamp
                    wait_s = max(card.due - _wall_s(), 60)
                    now_s += wait_s + rng.uniform(5, 60)
                else:  # a day interval (review or day learning): due is a day number
                    days = max(card.due - col.sched.today, 1)
                    wait_s = days * DAY_S
                    day = (now_s - rotation.ROLLOVER_MS / 1000) // DAY_S + days  # Anki's day, then its clock
                    now_s = day * DAY_S + rng.uniform(*STUDY_HOURS) * 3600
                _travel(col, card, wait_s)
            col.sched.suspend_cards([card_id])
            k = len(data["v"])
            out.append(NoteReviews(data["skill"], k, rotation.note_seed(data["skill"]),
                                   _old_offset(data["skill"], k), tuple(times), tuple(counts),
                                   tuple(_answer(v) for v in data["v"])))
    finally:
        col.close()
    return out


def _answer(variant: dict) -> str | None:
    """A variant's answer as the card's data holds it, to 3 significant figures with its unit (None: a choice),
    as ``generator.problems.generate.answer_key`` writes it."""
    return None if "c" in variant else f"{float(variant['k']):.{ANSWER_FIGURES - 1}e} {variant['bu']}"


def _wall_s() -> int:
    return int(time.time())


def _old_offset(skill: str, k: int) -> int:
    return int(hashlib.sha256(skill.encode()).hexdigest()[:8], 16) % k


def _travel(col: Collection, card: Card, wait_s: float) -> None:
    """As if ``wait_s`` had passed: the card due now, its last review ``wait_s`` ago."""
    if card.queue == 1:
        card.due = _wall_s()
    elif card.queue in (2, 3):
        card.due = col.sched.today
    if card.last_review_time is not None:
        card.last_review_time = int(card.last_review_time - wait_s)
    col.update_card(card)


def _day(t_s: float) -> int:
    return rotation.anki_day(t_s * 1000, 0)


# A memory model: whether the card still knows the variant of the note's last review, given the gap.
MEMORIES: dict[str, Callable[[float], bool]] = {
    "storage": lambda gap_s: True,  # localStorage: kept across sessions
    "session": lambda gap_s: gap_s < 6 * 3600,  # the page only (desktop's webview, window.name): one sitting
    "none": lambda gap_s: False,
}


def _calendar_day(t_s: float) -> int:
    return int(t_s // DAY_S)


def day_rule_picks(n: NoteReviews, memory: Callable[[float], bool], day: Callable[[float], int] = _day) -> list[int]:
    """The variants shown by the day rule (``rotation.pick``), on Anki's day (or ``day``), with a client memory."""
    picks: list[int] = []
    for j, t in enumerate(n.times_s):
        last = picks[-1] if picks and memory(t - n.times_s[j - 1]) else None
        picks.append(rotation.pick(n.seed, day(t), n.k, last))
    return picks


def count_rule_picks(n: NoteReviews) -> list[int]:
    """The variants shown by the review-count rule (``rotation.count_pick``): no memory needed."""
    return [rotation.count_pick(n.seed, c, n.k) for c in n.counts]


def old_rule_picks(n: NoteReviews) -> list[int]:
    return [rotation.old_pick(n.offset, int(t // DAY_S), n.k) for t in n.times_s]


def repeats(picks: list[int]) -> tuple[int, int]:
    """(consecutive pairs showing the same variant, consecutive pairs)."""
    return sum(a == b for a, b in zip(picks, picks[1:])), max(len(picks) - 1, 0)


COUNT_RULE = "review count"
MIDNIGHT_RULE = "day from midnight, session"  # the day rule on the calendar day, for comparison


def table(notes: list[NoteReviews]) -> dict[int, dict[str, tuple[int, int]]]:
    """K -> rule -> (repeated pairs, pairs), for notes with K >= 2."""
    out: dict[int, dict[str, tuple[int, int]]] = {}
    for n in notes:
        if n.k < 2:
            continue
        row = out.setdefault(n.k, {})
        rules = {"old (day+offset) mod K": old_rule_picks(n), COUNT_RULE: count_rule_picks(n)}
        rules.update({f"day, {m}": day_rule_picks(n, f) for m, f in MEMORIES.items()})
        rules[MIDNIGHT_RULE] = day_rule_picks(n, MEMORIES["session"], _calendar_day)
        for name, picks in rules.items():
            r, p = repeats(picks)
            a, b = row.get(name, (0, 0))
            row[name] = (a + r, b + p)
    return out


def same_answers(n: NoteReviews, picks: list[int]) -> tuple[int, int]:
    """(consecutive pairs whose variants ask for the same numeric answer, the same variant included, pairs)."""
    keys = [n.answers[i] for i in picks]
    return sum(a == b for a, b in zip(keys, keys[1:])), max(len(picks) - 1, 0)


def answer_table(notes: list[NoteReviews]) -> dict[str, tuple[int, int]]:
    """rule -> (consecutive reviews asking for the same numeric answer, pairs), pooled over the numeric
    notes with K >= 2: new numbers with the answer of the review before teach nothing new."""
    out: dict[str, tuple[int, int]] = {}
    for n in notes:
        if n.k < 2 or not n.answers or n.answers[0] is None:
            continue
        rules = {COUNT_RULE: count_rule_picks(n), **{f"day, {m}": day_rule_picks(n, f) for m, f in MEMORIES.items()},
                 "old (day+offset) mod K": old_rule_picks(n)}
        for name, picks in rules.items():
            r, p = same_answers(n, picks)
            a, b = out.get(name, (0, 0))
            out[name] = (a + r, b + p)
    return out


def print_answer_table(name: str, tab: dict[str, tuple[int, int]]) -> None:
    print(f"\n{name}: consecutive reviews asking for the same numeric answer (3 significant figures) / pairs")
    for rule, (a, b) in tab.items():
        print(f"  {rule:<26} {a:>5}/{b:<5} = {a / b if b else 0:.3f}")


def print_table(name: str, tab: dict) -> None:
    """Print ``table``'s result: per K, the repeated consecutive reviews over the pairs, per rule."""
    rules = list(next(iter(tab.values())))
    print(f"\n{name}: repeated consecutive reviews / pairs, per K (notes with K >= 2)")
    print("K   " + "".join(f"{r:>30}" for r in rules))
    for k in sorted(tab):
        print(f"{k:<4}" + "".join(f"{a:>8}/{b:<6} {a / b if b else 0:6.3f}      " for a, b in (tab[k][r] for r in rules)))
