"""Does `drill fsrs-fit` fit the learner? Simulated learners whose true FSRS parameters are not the
defaults, scored on held-out reviews: the fitted parameters must predict better for every one.

Each learner studies for ``DAYS`` days at 09:00 local time: every skill due is reviewed, and
``NEW_PER_DAY`` new ones start. The schedule is the quiz's (FSRS's default parameters, no learning
steps, so each review is a day or more after the one before); whether a review is recalled is drawn
from the learner's *true* memory (``py-fsrs`` with the learner's own parameters): right is Good
(Hard or Easy one time in ten each), wrong is Again. The histories then go through
``drills.fsrs_fit.fit`` exactly as the store's do: the time-ordered 80/20 split, fsrs-rs's fit on
the first part, log loss and RMSE(bins) of the defaults and of the fit on the rest.

    python bench/bench_fsrs_fit.py [--seeds 5] [--days 60]

Prints one line per learner and exits 1 if the fit's held-out log loss is not lower for every one.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsrs import Card, Rating, Scheduler  # noqa: E402

from drills import fsrs_fit  # noqa: E402

DAYS = 60
NEW_PER_DAY = 3  # about 1,000 reviews in 60 days
START = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)


def true_parameters(seed: int) -> tuple[float, ...]:
    """A learner unlike the average one: initial stabilities, the stability gain after a recall and
    the forgetting curve's decay moved off the defaults (within FSRS's bounds), per seed."""
    rng = random.Random(seed)
    w = list(fsrs_fit.DEFAULT_PARAMETERS)
    slow = rng.uniform(0.15, 0.3)  # this learner's memories start weaker
    for i in range(4):
        w[i] = max(0.01, w[i] * slow)
    w[8] = w[8] * rng.uniform(0.5, 0.7)  # and grow less at each recall
    w[20] = rng.uniform(0.4, 0.7)  # a different forgetting curve's shape
    return tuple(w)


def simulate(seed: int, days: int = DAYS, new_per_day: int = NEW_PER_DAY) -> list[list[tuple[datetime, int]]]:
    """One learner's review histories (per skill: (time, rating)), scheduled with the defaults."""
    rng = random.Random(seed)
    truth = Scheduler(parameters=true_parameters(seed), learning_steps=(), relearning_steps=(),
                      enable_fuzzing=False)
    quiz = Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    cards: list[tuple[Card, Card, list[tuple[datetime, int]]]] = []  # (schedule's card, true memory, history)
    for day in range(days):
        now = START + timedelta(days=day)
        for _ in range(new_per_day):
            k = len(cards)
            cards.append((Card(card_id=k + 1, due=now), Card(card_id=k + 1, due=now), []))
        for i, (scheduled, memory, history) in enumerate(cards):
            if scheduled.due > now + timedelta(hours=12):
                continue
            moment = now + timedelta(minutes=i % 600 / 10)
            recalled = not history or rng.random() < truth.get_card_retrievability(memory, moment)
            if not history:  # a first answer: how well it was learned
                rating = rng.choice([Rating.Again, Rating.Hard, Rating.Good, Rating.Good, Rating.Easy])
            elif recalled:
                rating = rng.choices([Rating.Hard, Rating.Good, Rating.Easy], [1, 8, 1])[0]
            else:
                rating = Rating.Again
            scheduled, _ = quiz.review_card(scheduled, rating, moment)
            memory, _ = truth.review_card(memory, rating, moment)
            history.append((moment, int(rating)))
            cards[i] = (scheduled, memory, history)
    return [history for _, _, history in cards if history]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--days", type=int, default=DAYS)
    args = parser.parse_args(argv)
    worse = 0
    print(f"{'seed':>4} {'reviews':>7} {'held out':>8} {'log loss default':>16} {'fitted':>7} "
          f"{'RMSE(bins) default':>18} {'fitted':>7} {'fit s':>6}")
    for seed in range(args.seeds):
        histories = simulate(seed, args.days)
        started = time.perf_counter()
        result = fsrs_fit.fit(histories)
        took = time.perf_counter() - started
        if result.default is None or result.fitted is None:
            print(f"{seed:>4} {result.reviews:>7}: no fit ({result.more_needed} more training reviews needed)")
            worse += 1
            continue
        better = result.fitted.log_loss < result.default.log_loss
        worse += not better
        print(f"{seed:>4} {result.reviews:>7} {result.held_out:>8} {result.default.log_loss:>16.4f} "
              f"{result.fitted.log_loss:>7.4f} {result.default.rmse_bins:>18.4f} {result.fitted.rmse_bins:>7.4f} "
              f"{took:>6.2f}{'' if better else '  FITTED NOT BETTER'}")
    print("fitted lower held-out log loss for every learner" if not worse else
          f"{worse} learner(s) where the fit did not predict better")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
