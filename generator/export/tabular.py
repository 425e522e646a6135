"""Problems as plain data: JSON (a list of ``Problem.to_dict()``) and CSV (one row per problem).

For other SRS tools and for scripts. ``answer_value`` is the exact value in base
SI units (seconds, bytes, FLOPs, FLOPs/byte, FLOP/s) with ``answer_unit``, for
machines; ``answer_display`` is the same value as every screen shows it
(``generator.model.units.fmt``: ``87.2 µs``), for people; a choice is in ``answer_choice``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable

from generator.problems.problem import Problem
from generator.model.units import fmt

FORMATS = ("csv", "json")
CSV_COLUMNS = ("family", "skill", "id", "prompt", "answer_value", "answer_unit", "answer_display", "answer_choice",
               "answer_choices", "tolerance", "hint", "solution", "tags", "params")


def to_json(problems: Iterable[Problem]) -> str:
    """A JSON list, one object per problem: family, skill, id, params, prompt, answer, tolerance, solution ..."""
    return json.dumps([{**p.to_dict(), "answer_value": _value(p), "answer_display": display(p)} for p in problems],
                      indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _value(p: Problem) -> float | None:
    return None if p.answer.is_choice else p.answer.number


def display(p: Problem) -> str:
    """The answer as people read it: the choice, or the value through the one formatter."""
    a = p.answer
    return a.picked if a.is_choice else fmt(a.number, a.unit)


def csv_row(p: Problem) -> list[str]:
    a = p.answer
    return [p.family, p.skill, p.id, p.prompt,
            "" if a.is_choice else repr(a.number), "" if a.is_choice else a.unit, display(p),
            a.picked if a.is_choice else "", "|".join(a.choices), repr(p.tolerance), p.hint,
            "\n".join(p.solution), " ".join(p.tags), json.dumps(p.params, ensure_ascii=False, sort_keys=True)]


def to_csv(problems: Iterable[Problem]) -> str:
    """CSV with a header row; multi-line cells (the solution) are quoted; choices joined by '|'."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for p in problems:
        writer.writerow(csv_row(p))
    return out.getvalue()


def render(problems: Iterable[Problem], fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format '{fmt}'; accepted: {', '.join(FORMATS)}")
    return to_csv(problems) if fmt == "csv" else to_json(problems)
