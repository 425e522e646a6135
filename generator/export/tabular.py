"""Problems as plain data: JSON (a list of ``Problem.to_dict()``) and CSV (one row per problem).

For other SRS tools and for scripts. Answers are in base SI units (seconds,
bytes, FLOPs, FLOPs/byte, FLOP/s) with their unit, or a choice.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable

from generator.problem import Problem

FORMATS = ("csv", "json")
CSV_COLUMNS = ("family", "skill", "id", "prompt", "answer_value", "answer_unit", "answer_choice",
               "answer_choices", "tolerance", "hint", "solution", "tags", "params")


def to_json(problems: Iterable[Problem]) -> str:
    """A JSON list, one object per problem: family, skill, id, params, prompt, answer, tolerance, solution ..."""
    return json.dumps([p.to_dict() for p in problems], indent=1, ensure_ascii=False) + "\n"


def csv_row(p: Problem) -> list:
    a = p.answer
    return [p.family, p.skill, p.id, p.prompt,
            "" if a.is_choice else repr(float(a.value)), "" if a.is_choice else a.unit,
            a.choice if a.is_choice else "", "|".join(a.choices), repr(p.tolerance), p.hint,
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
