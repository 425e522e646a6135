"""The named wrong answers of any problem: its family's hook, checked against the key.

A family module names the mistakes that apply to its problems (``generator.problems.families.base``
lists the hooks): ``wrong_answers(problem, cat)``; or ``misconceptions(spec, cat, params) ->
{id: value}`` (``every``: also those it drops for landing within its tolerance), with
``gb_gib_moves(cat, params)`` when a GB/GiB slip moves the answer; or, for a choice family,
``wrong_choices(spec, cat, params) -> [(id, choice, step)]``. This module finds the hook through
the family registry and hands the answers to ``generator.problems.misconceptions``, which names them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from generator.model import catalogue as catalogue_mod
from generator.problems import families, misconceptions
from generator.model.catalogue import Catalogue
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import GIB_PER_GB, WrongAnswer
from generator.problems.problem import Problem
from generator.model.units import fmt


def found(problem: Problem, cat: Catalogue, every: bool = False) -> Iterator[WrongAnswer]:
    """Every wrong answer the problem's family module names, before any is checked against the key.

    A two-way choice (a verdict, yes or no) has no numeric slip to name: where the family gives no single
    mistake for the other choice, it is the one ``wrong-verdict``, whose step is the solution's line that
    decides the verdict."""
    hooked = _hooked(problem, cat, every)
    if not problem.answer.is_choice or len(problem.answer.choices) != 2:
        yield from hooked  # one at a time: a fair draw's check may stop at the first unfair one
        return
    named = list(hooked)
    other = next(c for c in problem.answer.choices if c != problem.answer.choice)
    flipped = [w for w in named if w.value == other]
    if len({w.misconception.id for w in flipped}) == 1:
        yield from named
        return
    yield from (w for w in named if w.value != other)
    yield wrong("wrong-verdict", other, f"the right verdict follows from: {deciding_step(problem)}")


def deciding_step(problem: Problem) -> str:
    """The solution's line that decides a verdict: the last one with a comparison or an arrow (else its last)."""
    marks = ("->", ">=", "<=", " < ", " > ")
    lines = [s for s in problem.solution if any(m in s for m in marks)]
    return (lines or list(problem.solution) or [str(problem.answer.choice)])[-1]


def _hooked(problem: Problem, cat: Catalogue, every: bool) -> Iterator[WrongAnswer]:
    module = families.FAMILIES.get(problem.family)
    direct = getattr(module, "wrong_answers", None)
    if direct is not None:
        yield from direct(problem, cat)
        return
    choices = getattr(module, "wrong_choices", None)
    if choices is not None:  # a choice family names each wrong choice's flaw: [(id, choice, step)]
        for mid, choice, step in choices(families.spec(problem.family), cat, problem.params):
            yield wrong(mid, choice, step)
        return
    hook = getattr(module, "misconceptions", None)
    if hook is None:
        return
    spec = families.spec(problem.family)
    if every:
        spec = dataclasses.replace(spec, tolerance=0.0)
    for name, value in hook(spec, cat, problem.params).items():
        mid = name.split("/")[0]  # "gb-gib/" : a second direction of the same mistake
        if mid in misconceptions.BY_ID:
            shown = fmt(float(value), problem.answer.unit)
            yield wrong(mid, float(value), f"{misconceptions.find(mid).name} gives {shown}")
    if not problem.answer.is_choice and problem.answer.unit in slips.PREFIXED_UNITS:
        yield from slips.unit_slips(problem)  # a time or a size written with its SI prefix one step off
    moves = getattr(module, "gb_gib_moves", None)
    if not problem.answer.is_choice and moves is not None and moves(cat, problem.params):
        # a bandwidth (or a size) in GB taken as GiB, or the reverse: the answer off by 1.0737 either way
        key = problem.answer.number
        for factor, how in ((GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s"),
                            (1 / GIB_PER_GB, "a bandwidth in GB/s taken as GiB/s")):
            yield wrong("gb-gib", key * factor, f"{how}: x{factor:.4f}")


def wrong_answers(problem: Problem, cat: Catalogue | None = None,
                  measured: list[tuple[WrongAnswer, float]] | None = None) -> list[WrongAnswer]:
    """Every named wrong answer to ``problem`` that differs from its key (may be empty).

    ``measured``: this problem's ``distances``, already worked out (the fair draw's check). They are
    read instead of asking the family again where they hold the same answers (``_measured_suffice``)."""
    if measured is not None and _measured_suffice(problem):
        return misconceptions.outside_key_measured(problem, measured)
    return misconceptions.outside_key(problem, found(problem, cat or catalogue_mod.load()))


def _measured_suffice(problem: Problem) -> bool:
    """``distances`` hold every wrong answer ``found`` names for ``problem`` outside its tolerance (see
    ``wrong_answers``): a numeric problem whose family names its wrong answers itself, or whose
    ``misconceptions`` hook drops only the answers within the tolerance (``DROPS_ONLY_WITHIN_TOLERANCE``)."""
    if problem.answer.is_choice:
        return False
    module = families.FAMILIES.get(problem.family)
    return getattr(module, "wrong_answers", None) is not None or getattr(module, "DROPS_ONLY_WITHIN_TOLERANCE", False)


def distances(problem: Problem, cat: Catalogue | None = None) -> list[tuple[WrongAnswer, float]]:
    """Every named numeric mistake with its relative distance from the key, none filtered out
    (the fair-draw rule and the solution's notes read this). Choices: empty."""
    return list(iter_distances(problem, cat))


def iter_distances(problem: Problem, cat: Catalogue | None = None) -> Iterator[tuple[WrongAnswer, float]]:
    """``distances`` one at a time, each mistake priced as it is asked for: a check that stops early
    (a fair draw's, at its first unfair mistake) prices no more."""
    if problem.answer.is_choice:
        return iter(())
    return misconceptions.iter_distances(problem, found(problem, cat or catalogue_mod.load(), every=True))


def inside_tolerance(problem: Problem, cat: Catalogue | None = None) -> list[tuple[WrongAnswer, float]]:
    """Named mistakes whose answer differs from the key yet lands within the problem's tolerance,
    with their relative distance from the key: graded right although the method is wrong.
    (Choices: none; a mistake that gives the same choice can not be told apart.)"""
    return misconceptions.inside_tolerance(problem, distances(problem, cat))


def diagnose_all(problem: Problem, given: float | str, cat: Catalogue | None = None) -> list[WrongAnswer]:
    """``misconceptions.diagnose_all`` over this problem's named wrong answers."""
    return misconceptions.diagnose_all(problem, given, wrong_answers(problem, cat))


def diagnose(problem: Problem, given: float | str, cat: Catalogue | None = None) -> WrongAnswer | None:
    """The first misconception a wrong answer matches, or None."""
    found_all = diagnose_all(problem, given, cat)
    return found_all[0] if found_all else None
