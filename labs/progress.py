"""The chapter checklist behind ``drill progress``: "Can you" items, labs done, streak, gate.

Pure Python (no jax). Sources:
- the seven "Can you" items: ``generator.generate.CAN_YOU`` ((n, text, skill_id));
- an item is ticked by the quiz when the last answer on its card (its skill_id)
  was right, or by hand (``drill progress --tick N``), both kept in the quiz store;
- labs done: the learner's lab records (``labs.records.default_dir()``, or a folder
  given): a record that counts toward GATE 00: done; records, none counted: practice;
- the streak: ``drills.stats.compute_stats(store)["streak_days"]``;
- the gate: ``labs.gate.evaluate(bench)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labs import gate as lab_gate

LAB_TITLE = "LAB·0.1 Rooflines by hand"


class ProgressError(ValueError):
    pass


@dataclass(frozen=True)
class CanYou:
    number: int
    text: str
    skill_id: str
    by_quiz: bool
    by_hand: bool
    reviews: int
    correct: int

    @property
    def ticked(self) -> bool:
        return self.by_quiz or self.by_hand

    def to_dict(self) -> dict:
        return {"number": self.number, "text": self.text, "skill_id": self.skill_id, "ticked": self.ticked,
                "by_quiz": self.by_quiz, "by_hand": self.by_hand, "reviews": self.reviews,
                "correct": self.correct}


def can_you_items():
    from generator.generate import CAN_YOU
    return list(CAN_YOU)


def check_item(number: int) -> int:
    known = [n for n, _, _ in can_you_items()]
    if number not in known:
        raise ProgressError(f"no 'Can you' item {number}; items are {known[0]}..{known[-1]}")
    return number


def can_you(store) -> list[CanYou]:
    summary = store.skill_summary()
    hand = store.ticks()
    out = []
    for number, text, skill_id in can_you_items():
        s = summary.get(skill_id, {})
        out.append(CanYou(number, text, skill_id, bool(s.get("last_correct")), number in hand,
                          int(s.get("reviews", 0)), int(s.get("correct", 0))))
    return out


def lab_status(result: lab_gate.GateResult) -> dict:
    counted = [r for r in result.rows if r.counted]
    if counted:
        status = "done"
        where = sorted({r.device_kind for r in counted})
    elif result.rows:
        status, where = "practice", sorted({r.device_kind for r in result.rows})
    else:
        status, where = "not run", []
    return {"lab": LAB_TITLE, "status": status, "records": len(result.rows), "devices": where}


def checklist(store, bench_dir: Path | None = None) -> dict:
    from drills.stats import compute_stats

    items = can_you(store)
    result = lab_gate.evaluate(bench_dir)
    return {
        "can_you": [i.to_dict() for i in items],
        "can_you_ticked": sum(i.ticked for i in items),
        "can_you_total": len(items),
        "labs": [lab_status(result)],
        "streak_days": compute_stats(store)["streak_days"],
        "gate": {"gate": lab_gate.GATE, "criterion": lab_gate.CRITERION, "status": result.status},
        "store": str(store.path),
        "bench": result.bench,
    }


_GATE_TEXT = {"pass": "PASS", "fail": "FAIL", "practice": "OPEN (CPU practice only)",
              "pending": "OPEN (measured half pending)"}


def format_lines(data: dict) -> list[str]:
    lines = [f"Can you ({data['can_you_ticked']}/{data['can_you_total']})"]
    for item in data["can_you"]:
        why = []
        if item["by_quiz"]:
            why.append("quiz: last answer right")
        if item["by_hand"]:
            why.append("ticked by hand")
        if not why and item["reviews"]:
            why.append(f"quiz: {item['correct']}/{item['reviews']} right, last one wrong")
        mark = "x" if item["ticked"] else " "
        lines.append(f"  [{mark}] {item['number']}. {item['text']}" + (f"  ({'; '.join(why)})" if why else ""))
    lines.append("")
    lines.append("Labs")
    marks = {"done": "x", "practice": "~", "not run": " "}
    for lab in data["labs"]:
        detail = {"done": f"done on {', '.join(lab['devices'])}",
                  "practice": f"practised on {', '.join(lab['devices'])} (no record counts yet: see drill gate)",
                  "not run": "not run yet: drill lab"}[lab["status"]]
        lines.append(f"  [{marks[lab['status']]}] {lab['lab']}: {detail} ({lab['records']} record(s))")
    lines.append("")
    days = data["streak_days"]
    lines.append(f"Streak: {days} day{'s' if days != 1 else ''} in a row with a quiz review")
    lines.append(f"{data['gate']['gate']}: {_GATE_TEXT[data['gate']['status']]} — {data['gate']['criterion']}")
    return lines
