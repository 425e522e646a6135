"""The Problem: one drawn question with its computed answer and worked solution.

A problem's ``skill`` names what the learner is trained on (family + chip + op
or variant), independent of the random numbers; its ``id`` is the skill plus
the drawn parameters, so the same draw always has the same id (Anki GUIDs and
quiz review logs use it). The quiz schedules skills and draws a fresh problem
for each review.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Answer:
    """Either a number in base SI units (``value`` + ``unit``) or one of ``choices``.

    Units are base SI: "s", "B" (bytes), "FLOP", "FLOP/byte", "FLOP/s", "B/s",
    or "" for plain counts (a batch size, a number of hops).
    """

    value: float | None = None
    unit: str = ""
    choice: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def is_choice(self) -> bool:
        return self.choice is not None

    @property
    def number(self) -> float:
        """The numeric key in base SI units (``unit``); a ValueError for a choice, which has no number."""
        if self.value is None:
            raise ValueError(f"the answer is the choice {self.choice!r}, not a number")
        return float(self.value)

    @property
    def picked(self) -> str:
        """The right choice; a ValueError for a numeric answer, which has none."""
        if self.choice is None:
            raise ValueError(f"the answer is the number {self.value!r}, not a choice")
        return self.choice

    def to_dict(self) -> dict[str, Any]:
        if self.is_choice:
            return {"choice": self.choice, "choices": list(self.choices)}
        return {"value": self.value, "unit": self.unit}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Answer":
        if data.get("choice") is not None:
            return cls(choice=str(data["choice"]), choices=tuple(data.get("choices", ())))
        return cls(value=float(data["value"]), unit=str(data.get("unit", "")))


@dataclass(frozen=True)
class Problem:
    family: str
    skill: str
    id: str
    prompt: str
    answer: Answer
    tolerance: float  # relative error accepted as right (0 for choices)
    solution: tuple[str, ...]  # worked steps, each naming its constants and their source
    tags: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    hint: str = ""  # the first step of the method, shown on "?"
    # Answers worked with another published figure for a quantity the prompt states (another edition
    # of the book): each {"value": float, "note": str}; graded right with the note, never a mistake.
    also_right: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["answer"] = self.answer.to_dict()
        out["solution"] = list(self.solution)
        out["tags"] = list(self.tags)
        out["also_right"] = [dict(a) for a in self.also_right]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Problem":
        return cls(
            family=data["family"], skill=data["skill"], id=data["id"], prompt=data["prompt"],
            answer=Answer.from_dict(data["answer"]), tolerance=float(data["tolerance"]),
            solution=tuple(data["solution"]), tags=tuple(data.get("tags", ())),
            params=dict(data.get("params", {})), hint=data.get("hint", ""),
            also_right=tuple({"value": float(a["value"]), "note": str(a.get("note", ""))}
                             for a in data.get("also_right", ())),
        )
