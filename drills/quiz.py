"""The quiz session: plan which skills to review, draw a fresh problem for each, grade, record.

Plan: skills due now come first, most overdue first; then new skills, at most
``new_per_day`` introduced per calendar day, in teaching order (the generator's
order, taking families in turn); at most ``count`` problems. ``cram`` practises
a seeded shuffle of the selected skills and leaves the schedule alone.

Each answered problem is graded (``drills.grading``), recorded and scheduled
in its own transaction (``drills.store``) before the next question, so Ctrl-C
(exit 130), end of input (exit 0) or a kill loses nothing answered. Skipped
problems are not recorded. Reading answers is ``drills.quiz_io``'s job.
"""

from __future__ import annotations

import dataclasses
import random
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Iterator

from fsrs import Rating, Scheduler

from drills import answers, grading
from drills.quiz_io import EndOfInput, QuizIO, until
from drills.store import ReviewRecord, Store, iso, utc_now
from generator import generate
from generator.problem import Problem

DEFAULT_COUNT = 10
DEFAULT_NEW_PER_DAY = 5


@dataclass(frozen=True)
class QuizOptions:
    families: tuple[str, ...] | None = None
    chips: tuple[str, ...] | None = None
    count: int = DEFAULT_COUNT
    new_per_day: int = DEFAULT_NEW_PER_DAY
    cram: bool = False
    seed: int | None = None


@dataclass(frozen=True)
class Plan:
    skill_ids: tuple[str, ...]
    due: int  # how many of them were due
    new: int  # how many are new skills
    cram: bool


def select_skills(options: QuizOptions) -> list[generate.Skill]:
    """The skills the options select (``UnknownFamilyError`` / ``UnknownChipError`` for bad names)."""
    return generate.skills(list(options.families) if options.families else None,
                           list(options.chips) if options.chips else None)


def teaching_order(skills: list[generate.Skill]) -> list[generate.Skill]:
    """The generator's order, taking one skill from each family in turn so a session mixes methods."""
    by_family: dict[str, list[generate.Skill]] = defaultdict(list)
    for skill in skills:
        by_family[skill.family].append(skill)
    queues = list(by_family.values())
    ordered: list[generate.Skill] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def start_of_day(now: datetime) -> datetime:
    """Midnight of ``now``'s calendar day in the local time zone."""
    local = now.astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def plan_session(store: Store, skills: list[generate.Skill], options: QuizOptions,
                 now: datetime, extra_new: int = 0) -> Plan:
    """Which skills this session reviews, in order. ``extra_new`` lifts today's new-skill limit."""
    if options.cram:
        ids = [s.id for s in skills]
        random.Random(options.seed).shuffle(ids)
        cycled = [ids[i % len(ids)] for i in range(options.count)] if ids else []
        return Plan(tuple(cycled), 0, 0, True)
    selected = {s.id for s in skills}
    due = [skill for skill, _ in store.due_skills(now) if skill in selected]
    known = set(store.cards())
    budget = max(0, options.new_per_day - store.introduced_since(start_of_day(now))) + extra_new
    new = [s.id for s in teaching_order(skills) if s.id not in known][:budget]
    chosen = (due + new)[: options.count]
    n_due = min(len(due), len(chosen))
    return Plan(tuple(chosen), n_due, len(chosen) - n_due, False)


def draw_problems(skill_ids: tuple[str, ...] | list[str], seed: int | None) -> Iterator[Problem]:
    """A fresh problem for each skill, in order, from one ``random.Random(seed)``."""
    rng = random.Random(seed)
    for skill_id in skill_ids:
        yield generate.draw(skill_id, rng)


def parse_for(problem: Problem, text: str) -> float | str:
    """The learner's answer as the problem's kind: a choice, or a number in the answer's unit."""
    if problem.answer.is_choice:
        return answers.parse_choice(text, problem.answer.choices)
    return answers.parse_number(text, problem.answer.unit)


class Session:
    """One run of ``drill quiz``. ``run()`` returns the exit status."""

    def __init__(self, store: Store, options: QuizOptions, io: QuizIO,
                 clock: Callable[[], float] = time.monotonic, now: Callable[[], datetime] = utc_now):
        self.store, self.options, self.io, self.clock, self.now = store, options, io, clock, now
        self.session_id = uuid.uuid4().hex
        self.scheduler = Scheduler()
        self.skills = {s.id: s for s in select_skills(options)}
        self.right = 0

    def run(self) -> int:
        if not self.skills:
            self.io.say("No skills match the chosen --family/--chip.")
            return 2
        try:
            plan = plan_session(self.store, list(self.skills.values()), self.options, self.now())
            if not plan.skill_ids:
                plan = self._nothing_due()
                if plan is None:
                    return 0
            self._ask_all(plan)
        except KeyboardInterrupt:
            self.io.end_prompt_line()
            self.io.say(f"Interrupted: {self._saved_text()}.")
            return 130
        except EndOfInput:
            self.io.end_prompt_line()
            self.io.say(f"End of input: {self._saved_text()}.")
            return 0
        except _Quit:
            self.io.say(f"Stopped: {self._saved_text()}.")
            return 0
        self._summary()
        return 0

    def _nothing_due(self) -> Plan | None:
        next_due = self.store.next_due()
        when = f"; next review {until(next_due, self.now())}" if next_due else ""
        self.io.say(f"Nothing is due now{when}.")
        offer = ("Practise anyway without touching the schedule: drill quiz --cram; "
                 "or start new skills beyond today's limit: drill quiz --new N.")
        if not self.io.interactive:
            self.io.say(offer)
            return None
        choice = self.io.ask("[c]ram, [n]ew skills, or [q]uit? ").strip().lower()
        skills = list(self.skills.values())
        if choice.startswith("c"):
            self.options = dataclasses.replace(self.options, cram=True)
            return plan_session(self.store, skills, self.options, self.now())
        if choice.startswith("n"):
            plan = plan_session(self.store, skills, self.options, self.now(), extra_new=self.options.count)
            if plan.skill_ids:
                return plan
            self.io.say("Every selected skill has been started already; try --cram.")
        return None

    def _ask_all(self, plan: Plan) -> None:
        total = len(plan.skill_ids)
        label = "cram, schedule untouched" if plan.cram else f"{plan.due} due, {plan.new} new"
        self.io.say(f"Quiz: {total} problem{'s' if total != 1 else ''} ({label}). ? hint, s skip, q quit.")
        for index, problem in enumerate(draw_problems(plan.skill_ids, self.options.seed), start=1):
            self._ask(index, total, problem)

    def _ask(self, index: int, total: int, problem: Problem) -> None:
        skill = self.skills.get(problem.skill)
        self.io.problem(index, total, skill.description if skill else problem.skill, problem)
        started, hinted = self.clock(), False
        while True:
            text = self.io.ask("answer> ").strip()
            if not text:
                continue
            command = text.lower()
            if command == "?":
                self.io.say(f"hint: {problem.hint or problem.solution[0]}")
                hinted = True
                continue
            if command == "s":
                self.io.say("skipped (not recorded; the skill stays due).")
                return
            if command == "q":
                raise _Quit
            try:
                value = parse_for(problem, text)
            except answers.WrongDimensionError as exc:
                self.io.say(f"not graded: {exc}. Try again.")
                continue
            except answers.AnswerError as exc:
                self.io.say(f"can not read that: {exc}. Try again (? hint, s skip, q quit).")
                continue
            self._record(problem, skill, text, value, self.clock() - started, hinted)
            return

    def _record(self, problem: Problem, skill: Any, text: str, value: float | str, seconds: float,
                hinted: bool) -> None:
        bands = generate.grading_bands(problem.family)
        verdict = grading.grade(problem, value, bands, seconds, hinted)
        record = ReviewRecord(
            skill=problem.skill, family=problem.family, chip=skill.chip if skill else None,
            problem_id=problem.id, params=problem.params, prompt=problem.prompt,
            expected=problem.answer.to_dict(), given=text,
            given_value=None if problem.answer.is_choice else float(value),
            correct=verdict.correct, rating=int(verdict.rating), relative_error=verdict.relative_error,
            seconds_taken=round(seconds, 3), cram=self.options.cram, session=self.session_id)
        card = self.store.record_review(record, self.scheduler)
        self.right += verdict.correct
        self.io.result(problem, value, verdict, card.due if card else None, self.now())
        self.io.emit({
            "skill": problem.skill, "family": problem.family, "chip": record.chip,
            "problem_id": problem.id, "prompt": problem.prompt,
            "expected": problem.answer.choice if problem.answer.is_choice else problem.answer.value,
            "unit": problem.answer.unit, "given": text, "given_value": record.given_value,
            "correct": verdict.correct, "rating": verdict.rating.name,
            "relative_error": verdict.relative_error, "seconds_taken": record.seconds_taken,
            "cram": self.options.cram, "next_due": iso(card.due) if card else None,
        })

    def _saved_text(self) -> str:
        saved = self.store.count_reviews(self.session_id)
        return f"{saved} review{'s' if saved != 1 else ''} saved to {self.store.path}"

    def _summary(self) -> None:
        saved = self.store.count_reviews(self.session_id)
        due_today = len(self.store.due_skills(start_of_day(self.now()) + timedelta(days=1)))
        next_due = self.store.next_due()
        self.io.say(f"Done: {saved} review{'s' if saved != 1 else ''} saved ({self.right} right) to {self.store.path}.")
        if next_due and not self.options.cram:
            self.io.say(f"Next review {until(next_due, self.now())}; {due_today} due by the end of today.")


class _Quit(Exception):
    """The learner typed q."""


def rating_word(rating: Rating) -> str:
    return {Rating.Again: "wrong", Rating.Hard: "right, loosely", Rating.Good: "right",
            Rating.Easy: "right, quick"}[rating]

