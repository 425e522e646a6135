"""Helpers for quiz tests: the problems a seeded quiz will ask, and answers to them.

A quiz's plan depends only on the store, the options and the day; its problems
only on the plan and the seed. So a test opens the same store, plans the same
session with the quiz's own functions, and knows the answers before it starts
the real process.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from drills.quiz.session import QuizOptions, plan_session, select_skills, session_problems
from drills.store.repository import Store
from generator.problems.problem import Problem

DRILL = [str(Path(sys.executable).with_name("drill"))]


def drill_env() -> dict[str, str]:
    """The environment for a real `drill` process: no inherited store, UTF-8 I/O."""
    env = {k: v for k, v in os.environ.items() if k != "DRILL_STORE"}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def planned_problems(store_path: Path, options: QuizOptions, now: datetime | None = None) -> list[Problem]:
    """The problems ``drill quiz`` with these options will ask, in order, against this store now."""
    with Store.open(store_path) as store:
        skills = select_skills(options)
        plan = plan_session(store, skills, options, now or datetime.now(timezone.utc))
        return list(session_problems(store, plan, options.seed))


def with_unit(value: float, unit: str) -> str:
    """A number with its base unit, as a learner could type it (``8.72e-05 s``; a count bare)."""
    return f"{value!r} {unit}" if unit else repr(value)


def right_answer(problem: Problem) -> str:
    """The exact answer in the answer's base unit, or the choice."""
    if problem.answer.is_choice:
        return str(problem.answer.choice)
    return with_unit(problem.answer.number, problem.answer.unit)


def wrong_answer(problem: Problem) -> str:
    """An answer graded Again: another choice, or the value times 10 (outside every band)."""
    if problem.answer.is_choice:
        return next(c for c in problem.answer.choices if c != problem.answer.choice)
    return with_unit(problem.answer.number * 10, problem.answer.unit)


def script(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)
