"""A first fortnight of `drill quiz --chip v6e`: a simulated learner ticks nothing on day one (a tick
means recalled on a later day), reaches every "Can you" item the quiz can tick within the first week,
and `drill progress` names the command for the one it cannot.

The learner sits 20 minutes a day at 09:00 local time, runs `drill quiz --chip v6e` with the default
options, and answers every question right from the key, taking 40 s to answer and 20 s to read the
feedback (so the 60 s bound of item 2 holds); a quiz that finds nothing due is run again when its
next review falls inside the 20 minutes (FSRS's learning steps), else the day ends. Days are
simulated through the session's clock injection (``Session(now=..., clock=...)``), the same store
throughout, so FSRS, the day's new-skill limit and the checklist all see the simulated dates.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills import can_you_needs
from drills.cli import cli
from drills.progress import can_you
from drills.quiz.session import QuizOptions, Session, draw_problems, plan_session, select_skills, session_problems
from drills.quiz.terminal import QuizIO
from drills.store.repository import ReviewRecord, Store
from drills.store.clock import start_of_day
from generator.problems import families, generate
from generator.problems.problem import Problem
from tests.conftest import bound
from tests.drills.quizkit import DRILL, drill_env, planned_problems, right_answer

ANSWER_S, READ_S, SITTING_S, DAYS = 40.0, 20.0, 20 * 60.0, 14


class SimClock:
    """The simulated day: seconds used since the sitting began, as the session's monotonic clock and its now."""

    def __init__(self, start: datetime):
        self.start, self.used = start, 0.0

    def tick(self, seconds: float) -> None:
        self.used += seconds

    def monotonic(self) -> float:
        return self.used

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.used)


class Learner(QuizIO):
    """A script that answers each question right from its key, at the learner's pace."""

    def __init__(self, clock: SimClock):
        super().__init__(False, False, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
        self.clock, self.current, self.asked, self.lines = clock, None, [], []

    def say(self, line: str = "", fg: str | None = None) -> None:
        self.lines.append(line)

    def problem(self, index: int, total: int, title: str, problem: Problem) -> None:
        self.current = problem
        self.asked.append((title, problem))

    def ask(self, prompt: str) -> str:
        self.clock.tick(ANSWER_S)
        assert self.current is not None
        return right_answer(self.current)

    def result(self, problem, outcome, due, now) -> None:
        assert outcome.correct, (problem.id, outcome.feedback)
        self.clock.tick(READ_S)


def sit(store: Store, day_start: datetime, chips: tuple[str, ...]) -> Learner:
    """One day's 20-minute sitting of `drill quiz --chip ...`."""
    clock = SimClock(day_start)
    learner = Learner(clock)
    while clock.used < SITTING_S:
        asked = len(learner.asked)
        assert Session(store, QuizOptions(chips=chips), learner, clock=clock.monotonic, now=clock.now).run() == 0
        if len(learner.asked) == asked:  # nothing due: wait for the next review if it falls in the sitting
            next_due = store.next_due(clock.now())
            wait = (next_due - clock.now()).total_seconds() if next_due else SITTING_S
            if wait <= 0 or clock.used + wait + ANSWER_S + READ_S > SITTING_S:  # due, yet not in this quiz: off it
                break
            clock.tick(wait + 1)
    return learner


def can_you_day_one(fortnight: dict) -> list:
    """The items as `drill progress` showed them at the end of day one."""
    return fortnight["days"][0]["items"]


def quiz_tickable() -> set[int]:
    """The items some quiz answer can tick: every item whose rules are not a lab record's."""
    rules = families.mastery_rules()
    return {n for n, _, _ in generate.CAN_YOU if n in rules and not any(r.lab for r in rules[n])}


@pytest.fixture(scope="module")
def fortnight(tmp_path_factory) -> dict:
    """Fourteen simulated days of `drill quiz --chip v6e`: per day, the questions asked, what the quiz
    said, and the items ticked (number -> how) after the sitting."""
    path = tmp_path_factory.mktemp("fortnight") / "s.sqlite3"
    first = start_of_day(datetime(2026, 3, 2, 12, tzinfo=timezone.utc)) + timedelta(hours=9)
    days = []
    with Store.open(path) as store:
        for day in range(DAYS):
            learner = sit(store, first + timedelta(days=day), ("v6e",))
            items = {i.number: i for i in can_you(store, now=first + timedelta(days=day, minutes=30))}
            days.append({"asked": learner.asked, "lines": learner.lines, "items": list(items.values()),
                         "ticked": {n: i for n, i in items.items() if i.ticked}})
        reviews = store.reviews()
    return {"path": path, "days": days, "reviews": reviews}


def test_nothing_ticks_on_day_one_and_every_quiz_item_ticks_by_its_skills_within_the_first_week(fortnight) -> None:
    days = fortnight["days"]
    log = [(day, len(d["asked"]), sorted(d["ticked"])) for day, d in enumerate(days, 1)]
    print("day, questions asked, items ticked:", *log, sep="\n  ")
    tickable = quiz_tickable()
    assert tickable == {1, 2, 3, 4, 5, 7}  # item 6 asks for a lab record
    assert not days[0]["ticked"], log  # right answers on day one are learned, not yet recalled
    assert any(i.pending for i in can_you_day_one(fortnight))
    week = days[6]["ticked"]
    assert tickable <= set(week), log
    assert all(week[n].by_skills for n in tickable), {n: week[n] for n in tickable}
    last = days[-1]["ticked"]
    assert tickable <= set(last), log
    assert all(last[n].by_skills for n in tickable), {n: last[n] for n in tickable}  # not only the item's own card
    asked = [len(d["asked"]) for d in days]  # a 20-minute sitting at a minute a card, less the waits for due cards
    assert sum(asked) >= 8 * DAYS and max(asked) <= SITTING_S // (ANSWER_S + READ_S), log
    # item 3's 'what lives where' cards are among the first week's new cards
    first_week = {p.skill for d in days[:7] for _, p in d["asked"]}
    assert sum(s.startswith("vocabulary:where-") for s in first_week) >= 3
    assert 3 in days[6]["ticked"] and days[6]["ticked"][3].by_skills


def test_a_chip_quiz_adds_the_second_chip_an_item_needs_and_says_why(fortnight) -> None:
    days = fortnight["days"]
    other = [(day, title, p.skill) for day, d in enumerate(days, 1) for title, p in d["asked"]
             if p.family in ("ridge", "bound") and p.skill.split(":")[1] != "v6e"]
    assert other, "no ridge or bound question on a second chip"
    assert {s.split(":")[0] for _, _, s in other} == {"ridge", "bound"}
    first_day, title, skill = other[0]
    assert title.endswith(skill.split(":")[1])  # the header names the chip
    said = "\n".join(days[first_day - 1]["lines"])
    assert ("Also ridge on v5p, though --chip did not ask for it: 'Can you' item 1 still needs a 'ridge' answer "
            "right on 1 more chip (right so far on v6e).") in said
    recorded = {r["skill"]: r["chip"] for r in fortnight["reviews"]}
    assert recorded[skill] == skill.split(":")[1]  # recorded with its chip, so item 1 counts it
    # only once a v6e skill of the same kind was right, never before
    v6e_first = min(day for day, d in enumerate(days, 1) for _, p in d["asked"] if p.skill.startswith("ridge:v6e"))
    assert first_day > v6e_first or any(r["skill"].startswith("ridge:v6e") and r["correct"]
                                        for r in fortnight["reviews"] if r["id"] < min(
                                            x["id"] for x in fortnight["reviews"] if x["skill"] == skill))


def test_no_miss_reason_card_and_no_review_repeats_its_last_problem(fortnight) -> None:
    asked = [p for d in fortnight["days"] for _, p in d["asked"]]
    assert not [p.id for p in asked if p.family == "miss_reason"]
    previous: dict[str, str] = {}
    for row in fortnight["reviews"]:
        before = previous.get(row["skill"])
        if before is not None and generate.unseeded_id(before) == generate.unseeded_id(row["problem_id"]):
            rng = random.Random(0)
            draws = {generate.unseeded_id(generate.draw(row["skill"], rng).id) for _ in range(40)}
            assert len(draws) == 1, (row["skill"], "asked its last problem again, though it has others")
        previous[row["skill"]] = row["problem_id"]


def test_progress_names_the_command_for_the_item_no_quiz_answer_ticks(fortnight, tmp_path: Path) -> None:
    bench = tmp_path / "none"
    bench.mkdir()
    args = ["progress", "--store", str(fortnight["path"]), "--bench", str(bench)]
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    item6 = next(i for i in data["can_you"] if i["number"] == 6)
    assert not item6["ticked"] and item6["by_lab"] and item6["command"] == can_you_needs.LAB_COMMAND
    assert all(i["command"] == "" for i in data["can_you"] if i["ticked"])
    text = CliRunner().invoke(cli, args).output
    assert "ticks it: drill lab, then drill explain (no quiz answer ticks this item)" in text


def _review(skill: str, chip: str | None, correct: bool = True, seconds: float = 20.0,
            problem_id: str | None = None) -> ReviewRecord:
    return ReviewRecord(skill=skill, family=skill.split(":")[0], chip=chip, problem_id=problem_id or skill + ":p",
                        params={}, prompt="?", expected={"value": 1.0, "unit": ""}, given="1", given_value=1.0,
                        correct=correct, rating=3 if correct else 1, relative_error=0.0, seconds_taken=seconds)


def test_progress_says_what_a_one_chip_item_needs_and_which_command_ticks_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Store.open(path) as store:
        store.record_review(_review("ridge:v6e:bf16", "v6e"))
        store.record_review(_review("bound:v6e:add", "v6e", seconds=30))
        items = {i.number: i for i in can_you(store)}
    assert items[1].missing.endswith("still needs a 'ridge' answer right on 1 more chip (right so far on v6e)")
    assert items[2].missing.endswith("still needs a 'bound' answer right within 60 s on 1 more chip (right so far on v6e)")
    assert items[1].command == "drill quiz --family ridge --chip v5p"  # the nearest other chip in the catalogue
    assert items[2].command == "drill quiz --family bound --chip v5p"
    assert items[3].command == "drill quiz --family vocabulary" and items[3].missing.endswith(
        "still needs 3 more 'vocabulary' answers right on where-… cards, a different card each")
    assert items[4].missing.endswith("still needs a 'lattice' answer right on each of the f32 and bf16 cards")
    assert "still needs an 'interconnect' answer right on the link card" in items[7].missing
    assert items[7].command == "drill quiz --family interconnect; drill quiz --family collective"
    with Store.open(path) as store:  # the command's quiz, answered right, ticks the item once recalled a day later
        store.record_review(_review("ridge:v5p:bf16", "v5p"))
        items = {i.number: i for i in can_you(store)}
        assert not items[1].ticked and items[1].missing == "" and items[1].command == ""  # answered: pending
        assert dict(items[1].pending) == {s: "learned today: recall it on a later day to tick"
                                          for s in ("ridge:v5p:bf16", "ridge:v6e:bf16")}
        later = datetime.now(timezone.utc) + timedelta(days=1)
        for skill, chip in (("ridge:v6e:bf16", "v6e"), ("ridge:v5p:bf16", "v5p")):
            store.record_review(dataclasses.replace(_review(skill, chip), hints=0), now=later)
        items = {i.number: i for i in can_you(store, now=later + timedelta(minutes=1))}
    assert items[1].ticked and items[1].by_skills and items[1].command == "" and not items[1].pending


def test_a_v5e_quiz_never_plans_a_miss_reason_card_unless_asked_by_name(tmp_path: Path) -> None:
    """The miss_reason family is practice on a lab record's own device (a CPU, mostly): a chip filter leaves it out."""
    assert not [s for s in select_skills(QuizOptions(chips=("v5e",))) if s.family == "miss_reason"]
    assert select_skills(QuizOptions(chips=("v5e",), families=("miss_reason",)))
    with Store.open(tmp_path / "s.sqlite3") as store:
        options = QuizOptions(chips=("v5e",), count=500, new_per_day=500)
        plan = plan_session(store, select_skills(options), options, datetime.now(timezone.utc))
    assert len(plan.skill_ids) > 50 and not [s for s in plan.skill_ids if s.startswith("miss_reason:")]


def test_a_review_never_asks_its_skills_last_problem_where_it_has_another(tmp_path: Path) -> None:
    skill = next(s.id for s in generate.skills(["miss_reason"], None)
                 if len({generate.unseeded_id(generate.draw(s.id, random.Random(k)).id) for k in range(30)}) > 1)
    for seed in range(5):
        (first,) = draw_problems([skill], seed)  # what a session with this seed draws first
        with Store.open(tmp_path / f"s{seed}.sqlite3") as store:
            store.record_review(_review(skill, None, problem_id=first.id))
            options = QuizOptions(families=("miss_reason",), seed=seed, count=1)
            plan = plan_session(store, select_skills(options), options, datetime.now(timezone.utc) + timedelta(days=60))
            assert plan.skill_ids == (skill,)
            (again,) = session_problems(store, plan, seed)
        assert generate.unseeded_id(again.id) != generate.unseeded_id(first.id)
    one = "ridge:v6e:bf16"  # one problem only: asked again, as it is
    (only,) = draw_problems([one], 1)
    assert list(draw_problems([one], 1, {one: only.id}))[0].id.split("@")[0] == only.id.split("@")[0]


def _faketime() -> None:
    # .ci/run installs Debian's faketime; in CI its absence fails rather than skips.
    if shutil.which("faketime") is None:
        if os.environ.get("CI"):
            pytest.fail("faketime is not installed (.ci/run installs it)")
        pytest.skip("faketime is not installed; the injected-clock fortnight above covers the rule")


@pytest.mark.slow
def test_under_faketime_the_real_drill_adds_the_second_chip_on_day_two_and_ticks_item_one(tmp_path: Path) -> None:
    """`faketime DAY drill quiz --chip v6e` on three days, answered right from the key: the second day asks
    ridge on a second chip, and `drill progress` ticks item 1 from the skills once both were recalled on a
    later day (the third)."""
    _faketime()
    store = tmp_path / "s.sqlite3"
    env = {**drill_env(), "TZ": "UTC"}
    outputs = []
    for day in (2, 3, 4):
        now = datetime(2026, 3, day, 9, tzinfo=timezone.utc)
        answers = [right_answer(p) for p in planned_problems(store, QuizOptions(chips=("v6e",), seed=day), now)]
        run = subprocess.run(["faketime", now.strftime("%Y-%m-%d %H:%M:%S"), *DRILL, "quiz", "--chip", "v6e",
                              "--seed", str(day), "--store", str(store)], input="".join(a + "\n" for a in answers),
                             capture_output=True, text=True, env=env, timeout=bound(120))
        assert run.returncode == 0, run.stderr
        assert f"({len(answers)} right)" in run.stdout, run.stdout
        outputs.append(run.stdout)
    assert "Also ridge on v5p" not in outputs[0] and "Also ridge on v5p" in outputs[1]
    (tmp_path / "none").mkdir()
    progress = subprocess.run(["faketime", "2026-03-04 10:00:00", *DRILL, "progress", "--json", "--store", str(store),
                               "--bench", str(tmp_path / "none")], capture_output=True, text=True, env=env,
                              timeout=bound(120))
    item1 = next(i for i in json.loads(progress.stdout)["can_you"] if i["number"] == 1)
    assert item1["ticked"] and item1["by_skills"] and "ridge:v5p:bf16" in item1["evidence"]


def test_a_chip_without_an_items_family_gets_it_from_the_nearest_chip_that_has_it(tmp_path: Path) -> None:
    """No collective skill exists on a v3: item 7 then needs one from the nearest chip, at once; a v6e
    quiz, which has its own, draws none off the selection until a v6e one is right."""
    from drills.quiz.session import item_needs

    with Store.open(tmp_path / "s.sqlite3") as store:
        v3 = QuizOptions(chips=("v3",))
        wanted = item_needs(store, select_skills(v3), v3)
        v6e = QuizOptions(chips=("v6e",))
        own = item_needs(store, select_skills(v6e), v6e)
    assert not [s for s in select_skills(v3) if s.family == "collective"]
    collective = [s for s in wanted.new if s.family == "collective"]
    assert [s.chip for s in collective] == ["v4p"] and wanted.item_of[collective[0].id] == 7
    assert "collective" in wanted.gap_of[collective[0].id]
    assert not own.outside and all(s.chip in (None, "v6e") for s in own.new)
