"""The quiz session: plan which skills to review, draw a fresh problem for each, grade, record.

Reading and grading an answer live in ``drills.quiz.assess``, talking to the terminal in
``drills.quiz.terminal``; each graded answer is recorded before the next question.
Details: docs/internals.md.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from drills import can_you_needs, mastery
from drills.quiz import assess as module, grading
from drills.quiz.terminal import MAX_LINE_CHARS, EndOfInput, InputTooLong, QuizIO, until
from drills.store.repository import ReviewRecord, Store, UndoRefused
from drills.store.clock import behind_warning, iso, local_date, parse_iso, utc_now
from drills.store.clock import start_of_day as _start_of_day
from generator.problems import families as families_mod, generate
from generator.problems.problem import Problem

if TYPE_CHECKING:
    from drills.quiz import assess


class _Assess(Protocol):
    """What the quiz uses of ``drills.quiz.assess`` (the module itself satisfies it)."""

    GRADED: str

    def assess(self, problem: Problem, text: str, bands: grading.Bands, seconds_taken: float | None = None,
               hints: int = 0, bare_unit: str | None = None) -> assess.Outcome: ...

    def expected_text(self, problem: Problem) -> str: ...


def _assess() -> _Assess:
    """``drills.quiz.assess`` (and with it the misconception catalogue and the answer grammar), imported
    when the first answer is read, not before the first question: the quiz's first prompt waits
    for nothing it does not show."""

    return module

DEFAULT_COUNT = 10
DEFAULT_NEW_PER_DAY = 5
SEEN_SOLUTION_HINTS = 2  # a right answer after the worked solution is capped as two hints cap it: Hard
REDRAW_TRIES = 20  # draws tried for new numbers after an undo
FRESH_TRIES = 8  # draws tried for a problem other than the skill's last (the generator's patience for a repeat)


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
    new_left_out: int = 0  # unstarted skills the day's new-skill limit kept out of this session
    new_today: int = 0  # skills already started today, before this session
    for_items: tuple[tuple[str, int], ...] = ()  # (skill, "Can you" item) drawn because the item needs it
    outside: tuple[str, ...] = ()  # skills off the --chip selection, asked because an item needs them
    gap_of: tuple[tuple[str, str], ...] = ()  # (outside skill drawn new, what its item still needs)
    recall: tuple[str, ...] = ()  # pending skills asked again before they are due, so an item can tick


def select_skills(options: QuizOptions) -> list[generate.Skill]:
    """The skills the options select (``UnknownFamilyError`` / ``UnknownChipError`` for bad names)."""
    return generate.skills(list(options.families) if options.families else None,
                           list(options.chips) if options.chips else None)


def teaching_order(skills: list[generate.Skill]) -> list[generate.Skill]:
    """The generator's order, interleaved: the chips in turn (skills without a chip as one more),
    and on each chip the families in turn, so a session mixes methods and every chip asked for."""
    by_chip: dict[str | None, dict[str, list[generate.Skill]]] = defaultdict(lambda: defaultdict(list))
    for skill in skills:
        by_chip[skill.chip][skill.family].append(skill)
    chip_queues = []
    for turn, families in enumerate(by_chip.values()):
        queues = list(families.values())
        start = turn % len(queues)  # each chip starts at another family, so neighbours differ in both
        chip_queues.append(_round_robin(queues[start:] + queues[:start]))
    return _round_robin(chip_queues)


def _round_robin(queues: list[list[generate.Skill]]) -> list[generate.Skill]:
    """One from each queue in turn until all are empty."""
    queues = [list(q) for q in queues]
    ordered: list[generate.Skill] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def start_of_day(now: datetime) -> datetime:
    """Midnight of ``now``'s calendar day in the local time zone (any ``$TZ``, ``UTC-24`` included)."""
    return _start_of_day(now)


def plan_session(store: Store, skills: list[generate.Skill], options: QuizOptions,
                 now: datetime, extra_new: int = 0) -> Plan:
    """Which skills this session reviews, in order. ``extra_new`` lifts today's new-skill limit.

    Due skills first (the selection's, and those off it that an item needs, see ``item_needs``),
    then new ones: every other new skill is one a "Can you" item not yet ticked still needs
    (``drills.can_you_needs``), the rest in teaching order, so the first week's new skills reach
    every item the quiz can tick."""
    if options.cram:
        ids = [s.id for s in skills]
        random.Random(options.seed).shuffle(ids)
        cycled = [ids[i % len(ids)] for i in range(options.count)] if ids else []
        return Plan(tuple(cycled), 0, 0, True)
    selected = {s.id for s in skills}
    known = store.skills_seen()
    ordered = teaching_order(skills)
    wanted = item_needs(store, skills, options, known, ordered, now)
    due = [skill for skill, _ in store.due_skills(now) if skill in selected or skill in wanted.outside]
    recall = [skill for skill in wanted.recall if skill not in due]
    new_today = new_started_today(store, skills, wanted, now)
    budget = max(0, options.new_per_day - new_today) + extra_new
    unstarted = _alternate([s.id for s in wanted.new], [s.id for s in ordered if s.id not in known])
    new = unstarted[:budget]
    chosen = (due + recall + new)[: options.count]
    n_due = min(len(due) + len(recall), len(chosen))
    room = max(0, options.count - len(chosen))
    return Plan(tuple(chosen), n_due, len(chosen) - n_due, False, min(room, len(unstarted) - len(new)), new_today,
                tuple((s, wanted.item_of[s]) for s in chosen if s in wanted.item_of),
                tuple(s for s in chosen if s not in selected),
                tuple((s, wanted.gap_of[s]) for s in chosen if s in wanted.gap_of),
                tuple(s for s in chosen if s in recall))


def new_started_today(store: Store, skills: list[generate.Skill], wanted: can_you_needs.Needs,
                      now: datetime) -> int:
    """Skills of this selection (and the ones off it that its items need) started today: the day's
    new-skill limit counts per selection, as Anki's counts per deck."""
    mine = {s.id for s in skills} | set(wanted.outside) | {s.id for s in wanted.new}
    return len(store.introduced_skills_since(start_of_day(now)) & mine)


def item_needs(store: Store, skills: list[generate.Skill], options: QuizOptions,
               known: set[str] | None = None, ordered: list[generate.Skill] | None = None,
               now: datetime | None = None) -> can_you_needs.Needs:
    """What the "Can you" items not yet ticked need from this selection (``can_you_needs.needs``):
    with ``--chip``, a rule asking for more chips than were chosen also gets the nearest other chip's
    skill once one of its skills is right. ``known``: the skills started; ``ordered``: ``skills`` in
    teaching order (both computed here when not given)."""
    rules = _mastery_rules()
    last = store.last_reviews()
    now = now or store.store_time()
    found = mastery.standings(store, now, last)
    ticked = can_you_needs.ticked_items(rules, generate.CAN_YOU, mastery.ticking_rows(last, found), store.ticks())
    chips = tuple(dict.fromkeys(s.chip for s in skills if s.chip)) if options.chips else None
    families = tuple(dict.fromkeys(s.family for s in skills)) if options.families else None
    wanted = can_you_needs.needs(rules, ticked, last, store.skills_seen() if known is None else known,
                                 ordered or teaching_order(skills), chips, families, _every_chip)
    return dataclasses.replace(wanted, recall=_recall_checks(rules, ticked, found, last, skills, wanted, now))


def _recall_checks(rules: dict[int, list[Any]], ticked: set[int], found: dict[str, Any],
                   last: dict[str, dict[str, Any]], skills: list[generate.Skill], wanted: can_you_needs.Needs,
                   now: datetime) -> tuple[str, ...]:
    """Pending skills (right, not yet recalled on a later day: ``drills.mastery``) that an item not
    yet ticked counts, first right on an earlier day and not reviewed today: asked again before
    they are due, so a learner quizzing daily can tick every quiz item within the first week."""
    today = local_date(now)
    mine = {s.id for s in skills} | set(wanted.outside)
    cards = {number: card for number, _, card in generate.CAN_YOU}
    open_rules = [(number, rule) for number, item in rules.items() if number not in ticked for rule in item]
    out = []
    for skill, standing in sorted(found.items(), key=lambda kv: str(last[kv[0]]["reviewed_at"])):
        if not standing.pending or skill not in mine or standing.learned_on is None or standing.learned_on >= today:
            continue
        if local_date(parse_iso(str(last[skill]["reviewed_at"]))) >= today:
            continue
        if any(can_you_needs.counts(rule, skill) for _, rule in open_rules) or any(
                cards[n] == skill for n in rules if n not in ticked and n in cards):
            out.append(skill)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _mastery_rules() -> dict[int, list[Any]]:
    """The families' "Can you" rules (``generator.problems.families.mastery_rules``), read once a process."""

    return families_mod.mastery_rules()


@functools.lru_cache(maxsize=16)
def _every_chip(families: tuple[str, ...]) -> list[generate.Skill]:
    """Every skill of these families on every chip, in the generator's order (fixed for a process)."""
    return generate.skills(list(families), None)


def _alternate(first: list[str], second: list[str]) -> list[str]:
    """One of ``first``, one of ``second``, in turn (each id once) until both are used."""
    out: list[str] = []
    taken: set[str] = set()
    queues = [list(first), list(second)]
    while any(queues):
        for queue in queues:
            while queue and queue[0] in taken:
                queue.pop(0)
            if queue:
                taken.add(queue[0])
                out.append(queue.pop(0))
    return out


def draw_problems(skill_ids: tuple[str, ...] | list[str], seed: int | None,
                  last_problem: dict[str, str] | None = None) -> Iterator[Problem]:
    """A fresh problem for each skill, in order, from one ``random.Random(seed)``. ``last_problem``
    (skill -> the problem id its last review asked) is never asked again where the skill has another
    problem: up to ``FRESH_TRIES`` draws look for one, so a review shows new numbers or another case."""
    rng = random.Random(seed)
    for skill_id in skill_ids:
        problem = generate.draw(skill_id, rng)
        before = (last_problem or {}).get(skill_id)
        for _ in range(FRESH_TRIES if before else 0):
            if generate.unseeded_id(problem.id) != generate.unseeded_id(before or ""):
                break
            problem = generate.draw(skill_id, rng)
        yield problem


def session_problems(store: Store, plan: Plan, seed: int | None) -> Iterator[Problem]:
    """The problems a session asks for ``plan``: ``draw_problems`` avoiding each skill's last problem."""
    last = {skill: str(row["problem_id"]) for skill, row in store.last_reviews().items() if skill in plan.skill_ids}
    return draw_problems(plan.skill_ids, seed, last)


def hints(problem: Problem) -> list[str]:
    """Up to three progressive hints: the formula; the constants with their sources; the first worked step."""
    formula = problem.hint or problem.solution[0]
    cited = [step for step in problem.solution if "[" in step or step.startswith("constants")]
    steps = [formula]
    if cited:
        steps.append("constants: " + " | ".join(step.split(":", 1)[1].strip() if step.startswith("constants")
                                                else step for step in cited))
    first = next((step for step in problem.solution if step not in cited and step != formula), None)
    if first:
        steps.append("first step: " + first)
    return steps[: grading.MAX_HINTS]


class Session:
    """One run of ``drill quiz``. ``run()`` returns the exit status."""

    def __init__(self, store: Store, options: QuizOptions, io: QuizIO,
                 clock: Callable[[], float] = time.monotonic, now: Callable[[], datetime] = utc_now):
        self.store, self.options, self.io, self.clock, self.now = store, options, io, clock, now
        self.session_id = uuid.uuid4().hex
        self.scheduler = store.scheduler()  # fitted parameters once `drill fsrs-fit` kept some
        self.skills = {s.id: s for s in select_skills(options)}
        self.right = 0
        # (review id, question number, problem, correct) of this session's graded answers, for undo
        self.graded: list[tuple[int, int, Problem, bool]] = []
        self.last: Problem | None = None  # the last answered (graded or skipped) question, for ``w``
        self.solution_seen: set[str] = set()  # problem ids whose worked solution was shown
        # New numbers for a question asked again after an undo: its own stream, so a seed still
        # rebuilds the planned problems.
        self.redraw = random.Random(None if options.seed is None else f"undo:{options.seed}")

    def run(self) -> int:
        if not self.skills:
            self.io.say("No skills match the chosen --family/--chip.")
            return 2
        try:
            self._run_on_store_time()
            planned = plan_session(self.store, list(self.skills.values()), self.options, self.now())
            plan = planned if planned.skill_ids else self._nothing_due()
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
        except InputTooLong:
            self.io.say(f"Stopped: an input line is longer than {MAX_LINE_CHARS} characters; "
                        f"{self._saved_text()}.")
            return 2
        except _Quit:
            self.io.say(f"Stopped: {self._saved_text()}.")
            return 0
        self._summary()
        return 0

    def _run_on_store_time(self) -> None:
        """A clock behind the newest review (``drills.store.clock``): say so, and run this session on
        the store's time (the newest review's, advancing with the session's own clock) so skills are
        scheduled from the newest review. Nothing in the store is written."""
        clock = self.now()
        count, latest = self.store.future_reviews(clock)
        if not count:
            return
        self.io.say(behind_warning(count, latest, clock) or "")
        ahead = self.store.store_time(clock) - clock
        base = self.now
        self.now = lambda: base() + ahead

    def _nothing_due(self) -> Plan | None:
        next_due = self.store.next_due(self.now())
        when = f"; next review {until(next_due, self.now())}" if next_due else ""
        self.io.say(f"Nothing is due now{when}.")
        offer = ("Practise anyway without touching the schedule: drill quiz --cram; "
                 "or start new skills beyond today's limit: drill quiz --new N.")
        if not self.io.interactive:
            self.io.say(offer)
            return None
        skills = list(self.skills.values())
        beyond = plan_session(self.store, skills, self.options, self.now(), extra_new=self.options.count)
        limit = self.options.new_per_day
        more = (f" ({beyond.new} more beyond today's {limit})" if beyond.new else "")
        choice = self.io.ask(f"[c]ram, [n]ew skills{more}, or [q]uit? ").strip().lower()
        if choice.startswith("c"):
            self.options = dataclasses.replace(self.options, cram=True)
            return plan_session(self.store, skills, self.options, self.now())
        if choice.startswith("n"):
            if beyond.skill_ids:
                self.io.say(f"Starting {beyond.new} new skill{'s' if beyond.new != 1 else ''}: {beyond.new} more "
                            f"beyond today's {limit} (started today in this selection: {beyond.new_today}).")
                return beyond
            self.io.say("Every selected skill has been started already; try --cram.")
        return None

    def _ask_all(self, plan: Plan) -> None:
        total = len(plan.skill_ids)
        for skill_id in plan.outside:  # off the --chip selection: a "Can you" item needs its chip
            self.skills.setdefault(skill_id, generate.registry().skill(skill_id))
        recall = f", {len(plan.recall)} recall" if plan.recall else ""
        label = "cram, schedule untouched" if plan.cram else f"{plan.due - len(plan.recall)} due{recall}, {plan.new} new"
        self.io.say(f"Quiz: {total} problem{'s' if total != 1 else ''} ({label}). ? hint, s skip, u undo, "
                    f"w worked solution of the last answer, q quit.")
        for line in self._why_lines(plan):
            self.io.say(line)
        for index, problem in enumerate(session_problems(self.store, plan, self.options.seed), start=1):
            self._ask(index, total, problem)

    def _why_lines(self, plan: Plan) -> list[str]:
        """Why the session is shorter than ``--count``, and why it asks what the checklist needs."""
        lines = []
        if plan.new_left_out:
            limit, count = self.options.new_per_day, self.options.count
            started = plan.new_today + plan.new
            lines.append(f"{total_text(len(plan.skill_ids))}, not the --count of {count}: nothing else is due, and at "
                         f"most {limit} new skill{'s' if limit != 1 else ''} start each day (--new {limit}; {started} "
                         f"today, counting this quiz's). To start {plan.new_left_out} more now: "
                         f"drill quiz --new {started + plan.new_left_out}.")
        if plan.recall:
            n = len(plan.recall)
            lines.append(f"{n} skill{'s' if n != 1 else ''} learned on an earlier day {'come' if n != 1 else 'comes'} "
                         "back before due: a 'Can you' tick needs a recall on a later day, with no hint.")
        items = sorted({item for _, item in plan.for_items})
        if items:
            lines.append(f"New skills that 'Can you' item{'s' if len(items) > 1 else ''} "
                         f"{', '.join(map(str, items))} still need{'s' if len(items) == 1 else ''} come first "
                         "(drill progress lists what each item needs).")
        gaps = dict(plan.gap_of)
        for skill_id in plan.outside:
            skill, item = self.skills[skill_id], dict(plan.for_items).get(skill_id)
            why = f"still needs {gaps[skill_id]}" if skill_id in gaps else "counts it"
            lines.append(f"Also {skill.family.replace('_', ' ')} on {skill.chip}, though --chip did not ask for it: "
                         f"'Can you' item {item} {why}.")
        return lines

    def _ask(self, index: int, total: int, problem: Problem, cap_hints: int = 0) -> None:
        """Ask one question until it is graded, skipped or the quiz ends. ``cap_hints`` caps the
        rating as that many hints would (a question asked again with the numbers whose worked
        solution was shown)."""
        skill = self.skills.get(problem.skill)
        self.io.problem(index, total, self._header(skill, problem), problem)
        started, shown = self.clock(), 0
        steps = hints(problem)
        bands = generate.grading_bands(problem.family)
        while True:
            text = self.io.ask("answer> ").strip()
            if not text:
                continue
            command = text.lower()
            if command == "?":
                if shown < len(steps):
                    shown += 1
                    cap = grading.hint_cap(max(shown, cap_hints)).name
                    self.io.say(f"hint {shown}/{len(steps)}: {steps[shown - 1]}  (best rating now: {cap})")
                else:
                    self.io.say("no more hints: s shows the answer and the worked solution.")
                continue
            if command == "s":
                self._skip(problem)
                return
            if command == "w":
                if self._worked() and self.last is not None and self.last.skill == problem.skill:
                    cap_hints = max(cap_hints, SEEN_SOLUTION_HINTS)  # the method of this very skill was shown
                continue
            if command == "u":
                undone = self._undo()
                if undone is not None:  # ask the undone skill again, then come back to this one
                    self._ask(undone[0], total, undone[1], undone[2])
                    self.io.problem(index, total, self._header(skill, problem), problem)
                    started = self.clock()
                continue
            if command == "q":
                raise _Quit
            seconds = self.clock() - started
            outcome = _assess().assess(problem, text, bands, seconds, max(shown, cap_hints))
            if outcome.status != _assess().GRADED:
                self.io.say(f"{outcome.feedback} Try again.")
                continue
            self._record(index, problem, skill, outcome, seconds, max(shown, cap_hints))
            return

    def _worked(self) -> bool:
        """``w``: the worked solution of the last answered question; False when there is none yet."""
        if self.last is None:
            self.io.say("no answered question yet in this session: w shows the worked solution of the last one.")
            return False
        self.io.say(f"the last question ({self.last.id}):")
        self.io.solution(self.last)
        self.solution_seen.add(self.last.id)
        return True

    @staticmethod
    def _header(skill: Any, problem: Problem) -> str:
        """The question's header: its family and chip, never text that could contain the answer."""
        chip = f" · {skill.chip}" if skill and skill.chip else ""
        return f"{problem.family.replace('_', ' ')}{chip}"

    def _skip(self, problem: Problem) -> None:
        if self.options.cram:
            fate = "nothing recorded; cram leaves the schedule alone"
        elif problem.skill in self.store.skills_seen():
            fate = "nothing recorded; the skill keeps its schedule and stays due, so it comes back next session"
        else:
            fate = "nothing recorded; the skill stays new and will be offered again"
        self.io.say(f"skipped ({fate}). The answer: {_assess().expected_text(problem)}")
        self.io.solution(problem)
        self.solution_seen.add(problem.id)
        self.last = problem

    def _undo(self) -> tuple[int, Problem, int] | None:
        """Undo this session's last grade; (question number, the skill drawn again with new numbers,
        the hints its rating is capped as), or None.

        Asking the same numbers again would grade an answer copied from the worked solution as
        recall ("grade laundry"); where the skill draws no other numbers, a right answer after the
        solution was shown is rated at most Hard."""
        if not self.graded:
            self.io.say("nothing to undo in this session.")
            return None
        review_id, index, problem, correct = self.graded[-1]
        try:
            gone = not self.store.undo_review(review_id)
        except UndoRefused as exc:  # another session reviewed the skill since: its review stands
            self.io.say(str(exc))
            return None
        self.graded.pop()
        self.last = self.graded[-1][2] if self.graded else None  # ``w`` never shows the undone question's key
        if gone:
            self.io.say("that grade was already gone from the store.")
            return None
        self.right -= correct
        again = self._new_numbers(problem)
        if again is None:
            cap = SEEN_SOLUTION_HINTS if problem.id in self.solution_seen else 0
            self.io.say(f"undone: the last grade ({problem.id}) is removed and its skill's schedule restored. "
                        f"This skill has no other numbers, so it is asked again as it was"
                        f"{'; after its worked solution, a right answer is rated at most Hard' if cap else ''}.")
            return index, problem, cap
        self.io.say(f"undone: the last grade ({problem.id}) is removed and its skill's schedule restored. "
                    "Answer that skill again, with new numbers.")
        return index, again, 0

    def _new_numbers(self, problem: Problem) -> Problem | None:
        """The same skill drawn with numbers other than ``problem``'s, or None if none turn up."""
        for _ in range(REDRAW_TRIES):
            again = generate.draw(problem.skill, self.redraw)
            if again.id != problem.id and again.prompt != problem.prompt:
                return again
        return None

    def _record(self, index: int, problem: Problem, skill: Any, outcome: assess.Outcome, seconds: float,
                hints_taken: int = 0) -> None:
        verdict = outcome.grade
        assert verdict is not None
        value = outcome.given_value
        record = ReviewRecord(
            skill=problem.skill, family=problem.family, chip=skill.chip if skill else None,
            problem_id=problem.id, params=problem.params, prompt=problem.prompt,
            expected=problem.answer.to_dict(), given=outcome.given,
            given_value=None if problem.answer.is_choice else float(value),  # type: ignore[arg-type]  # a numeric answer's given_value is the float assess parsed
            correct=verdict.correct, rating=int(verdict.rating), relative_error=verdict.relative_error,
            seconds_taken=round(seconds, 3), cram=self.options.cram, session=self.session_id, hints=hints_taken)
        card = self.store.record_review(record, self.scheduler, now=self.now)  # read under the write lock
        review_id = self.store.last_review_id(self.session_id)
        if review_id is not None:
            self.graded.append((review_id, index, problem, verdict.correct))
        self.right += verdict.correct
        self.last = problem
        if verdict.rating.name in ("Again", "Hard"):  # quiz_io.result shows the worked solution then
            self.solution_seen.add(problem.id)
        self.io.result(problem, outcome, card.due if card else None, self.now())
        self.io.emit({
            "skill": problem.skill, "family": problem.family, "chip": record.chip,
            "problem_id": problem.id, "prompt": problem.prompt,
            "expected": problem.answer.choice if problem.answer.is_choice else problem.answer.value,
            "unit": problem.answer.unit, "given": outcome.given, "given_value": record.given_value,
            "status": outcome.status, "correct": verdict.correct, "rating": verdict.rating.name,
            "relative_error": verdict.relative_error,
            "misconception": outcome.misconception.misconception.id if outcome.misconception else None,
            "seconds_taken": record.seconds_taken,
            "cram": self.options.cram, "next_due": iso(card.due) if card else None,
        })

    def _saved_text(self) -> str:
        saved = self.store.count_reviews(self.session_id)
        return f"{saved} review{'s' if saved != 1 else ''} saved to {self.store.path}"

    def _summary(self) -> None:
        saved = self.store.count_reviews(self.session_id)
        due_today = len(self.store.due_skills(start_of_day(self.now()) + timedelta(days=1), now=self.now()))
        next_due = self.store.next_due(self.now())
        self.io.say(f"Done: {saved} review{'s' if saved != 1 else ''} saved ({self.right} right) to {self.store.path}.")
        if next_due and not self.options.cram:
            self.io.say(f"Next review {until(next_due, self.now())}; {due_today} due by the end of today.")


def total_text(count: int) -> str:
    return f"{count} problem{'s' if count != 1 else ''}"


class _Quit(Exception):
    """The learner typed q."""

