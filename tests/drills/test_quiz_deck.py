"""`--chip` and `--family` are a deck: the day's new-skill limit counts per selection, due skills off the
selection are not asked (but for the one second-chip draw an item makes, which says so), and the
`[n]ew skills` offer when nothing is due says how far past the day's limit it goes."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

from drills.quiz.session import QuizOptions, Session, plan_session, select_skills, session_problems
from drills.quiz.terminal import QuizIO
from drills.store.repository import ReviewRecord, Store
from generator.problems.problem import Problem
from tests.drills.quizkit import right_answer

DAY = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def _answer(store: Store, problem: Problem, chip: str | None, correct: bool, now: datetime) -> None:
    store.record_review(ReviewRecord(
        skill=problem.skill, family=problem.family, chip=chip, problem_id=problem.id, params={}, prompt="?",
        expected={}, given="x", given_value=None, correct=correct, rating=3 if correct else 1, relative_error=None,
        seconds_taken=30.0, hints=0), now=now)


def _session(store: Store, options: QuizOptions, now: datetime, wrong: int = 0) -> list[str]:
    """A session as the quiz plans it, answered (the first ``wrong`` answers wrong); the skills asked."""
    skills = select_skills(options)
    chips = {s.id: s.chip for s in skills}
    plan = plan_session(store, skills, options, now)
    for i, problem in enumerate(session_problems(store, plan, 1)):
        _answer(store, problem, chips.get(problem.skill, problem.skill.split(":")[1]), i >= wrong, now)
    return list(plan.skill_ids)


def test_a_v6e_quiz_after_a_v5e_one_the_same_day_introduces_v6e_skills_and_asks_no_v5e_skill(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite3") as store:
        asked = _session(store, QuizOptions(chips=("v5e",), count=5), DAY, wrong=2)
        assert len(asked) == 5 and any(":v5e:" in s for s in asked[:2])  # two v5e answers wrong: due in minutes
        later = DAY + timedelta(minutes=30)
        assert [s for s, _ in store.due_skills(later) if ":v5e:" in s]
        options = QuizOptions(chips=("v6e",))
        plan = plan_session(store, select_skills(options), options, later)
    assert not [s for s in plan.skill_ids if ":v5e:" in s], plan  # due, but off the selection
    v6e_new = [s for s in plan.skill_ids[plan.due:] if ":v6e:" in s]
    assert plan.new >= 3 and len(v6e_new) >= 3, plan  # the v5e session did not spend the v6e selection's limit
    assert plan.new_today == len({s for s in asked if ":" not in s or s.count(":") < 2})  # shared (chipless) only


class _Terminal(QuizIO):
    """An interactive terminal whose learner types the given lines, then answers right."""

    def __init__(self, lines: list[str]):
        super().__init__(True, False, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
        self.lines, self.said, self.asked, self.current = list(lines), [], [], None

    def say(self, line: str = "", fg: str | None = None) -> None:
        self.said.append(line)

    def problem(self, index: int, total: int, title: str, problem: Problem) -> None:
        self.current = problem
        self.asked.append(problem.skill)

    def ask(self, prompt: str) -> str:
        self.said.append(prompt)
        if self.lines:
            return self.lines.pop(0)
        assert self.current is not None
        return right_answer(self.current)


def test_the_new_skills_offer_says_how_far_past_todays_limit_it_goes(tmp_path: Path) -> None:
    options = QuizOptions(families=("ridge",), count=5, new_per_day=5)
    with Store.open(tmp_path / "s.sqlite3") as store:
        first = _Terminal([])
        assert Session(store, options, first, now=lambda: DAY).run() == 0
        assert len(first.asked) == 5  # the day's five
        later = DAY + timedelta(hours=6)  # the learning steps are done: nothing is due, the day's limit is spent
        assert not store.due_skills(later)
        second = _Terminal(["n"])
        assert Session(store, options, second, now=lambda: later).run() == 0
    offer = next(line for line in second.said if line.startswith("[c]ram, [n]ew skills"))
    assert offer == "[c]ram, [n]ew skills (5 more beyond today's 5), or [q]uit? "
    assert "Starting 5 new skills: 5 more beyond today's 5 (started today in this selection: 5)." in second.said
    assert len(second.asked) == 5 and not set(second.asked) & set(first.asked)
