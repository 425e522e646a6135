"""What each "Can you" item still needs from the quiz, said in the quiz's own words, and which skills give it.

``standing`` counts a rule's skills, ``needs`` the skills the quiz draws first, and ``command``
the command that ticks an item. Pure functions over the store's last reviews.
Details: docs/internals.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from generator.problems.families.base import Mastery, Skill
from generator.problems.families.ops import with_article

LAB_COMMAND = "drill lab, then drill explain"
Row = Mapping[str, Any]  # a review row of the store (``Store.last_reviews``): correct, chip, seconds_taken, ...


@dataclass(frozen=True)
class RuleStanding:
    """How far one rule is: the skills it counts (skill -> chip) and what is still short."""

    rule: Mastery
    right: dict[str, str | None]
    chips_short: int
    skills_short: int
    words_missing: tuple[str, ...]

    @property
    def done(self) -> bool:
        return not (self.chips_short or self.skills_short or self.words_missing)

    @property
    def chips(self) -> list[str]:
        return sorted({c for c in self.right.values() if c})

    def gaps(self) -> list[str]:
        """What is still short, in the quiz's words: its questions are headed by the family
        (``ridge · v6e``) and graded right or wrong."""

        family = " or ".join(f"'{f.replace('_', ' ')}'" for f in self.rule.families)
        one = f"{with_article(self.rule.families[0]).split(' ', 1)[0]} {family}"  # "an 'interconnect'"
        right = "right" + (f" within {self.rule.within_seconds:g} s" if self.rule.within_seconds is not None else "")
        out = []
        if self.chips_short:
            so_far = f" (right so far on {', '.join(self.chips)})" if self.chips else ""
            out.append(f"{one} answer {right} on {self.chips_short} more chip"
                       f"{'s' if self.chips_short != 1 else ''}{so_far}")
        words = [w.strip(":") for w in self.words_missing]
        if words:
            out.append(f"{one} answer {right} on " + (f"the {words[0]} card" if len(words) == 1 else
                                                      f"each of the {' and '.join(words)} cards"))
        extra = self.skills_short - max(len(words), self.chips_short)  # each chip or word is a skill too
        if extra > 0:
            cards = f" on {self.rule.variant}… cards" if self.rule.variant else ""
            out.append(f"{one} answer {right}{cards}" if extra == 1 else
                       f"{extra} more {family} answers {right}{cards}, a different card each")
        return out

    def missing(self) -> str:
        """``rule.what; still needs ...``, or "" when the rule holds."""
        return "" if self.done else f"{self.rule.what}; still needs {'; '.join(self.gaps())}"


def counts(rule: Mastery, skill_id: str) -> bool:
    """Whether ``rule`` counts this skill at all (its family and variant prefix), right or not."""
    family, _, rest = skill_id.partition(":")
    return not rule.lab and family in rule.families and rest.split(":")[-1].startswith(rule.variant)


def standing(rule: Mastery, last: Mapping[str, Row]) -> RuleStanding:
    """The rule against ``last`` (skill -> its last review row: ``correct``, ``chip``, ``seconds_taken``)."""
    right: dict[str, str | None] = {}
    for skill, row in last.items():
        if not counts(rule, skill) or not row["correct"]:
            continue
        seconds = row.get("seconds_taken")
        if rule.within_seconds is not None and (seconds is None or seconds > rule.within_seconds):
            continue
        right[skill] = row.get("chip")
    return _standing(rule, right)


def _standing(rule: Mastery, right: Mapping[str, str | None]) -> RuleStanding:
    chips = {c for c in right.values() if c}
    return RuleStanding(rule, dict(right), max(0, rule.min_chips - len(chips)), max(0, rule.min_skills - len(right)),
                        tuple(w for w in rule.must_include if not any(w in s for s in right)))


def _closes(found: RuleStanding, skill: Skill) -> int:
    """How well ``skill`` closes a gap of ``found``: 3 a missing word, 2 a new chip, 1 a skill short, 0 none."""
    if skill.id in found.right or not counts(found.rule, skill.id):
        return 0
    if any(word in skill.id for word in found.words_missing):
        return 3
    if found.chips_short and skill.chip and skill.chip not in found.right.values():
        return 2
    if found.skills_short and not found.chips_short and not found.words_missing:
        return 1
    return 0


def close_gaps(found: RuleStanding, candidates: list[Skill], started: set[str]) -> tuple[list[Skill], list[Skill]]:
    """(to draw, on their way): the candidates that, answered right, close ``found``'s gaps, chosen
    greedily (``_closes``, the best rank first; in a rank, a started skill first, then teaching order)."""
    to_draw: list[Skill] = []
    on_way: list[Skill] = []
    right = dict(found.right)
    current = found
    counted = [s for s in candidates if counts(found.rule, s.id)]
    while not current.done:
        ranked = [(_closes(current, s), s.id in started, -i, s) for i, s in enumerate(counted)]
        best = max(ranked, key=lambda r: r[:3], default=None)
        if best is None or not best[0]:
            break
        pick = best[3]
        (on_way if pick.id in started else to_draw).append(pick)
        right[pick.id] = pick.chip
        current = _standing(found.rule, right)
    return to_draw, on_way


def nearest_chips(chip_order: list[str], selected: Iterable[str]) -> list[str]:
    """The chips not selected, nearest in ``chip_order`` (the catalogue's) to the first selected
    one first, the earlier of two equally near first."""
    chosen = [c for c in selected if c in chip_order]
    if not chosen:
        return list(chip_order)
    home = chip_order.index(chosen[0])
    return sorted((c for c in chip_order if c not in chosen), key=lambda c: (abs(chip_order.index(c) - home),
                                                                         chip_order.index(c)))


@dataclass(frozen=True)
class Needs:
    """What the unticked items ask of this quiz: skills to draw as new (in item order, each once),
    skills outside the ``--chip`` selection to review when due, and the item each of them serves."""

    new: tuple[Skill, ...] = ()
    outside: frozenset[str] = frozenset()
    item_of: Mapping[str, int] = field(default_factory=dict)
    gap_of: Mapping[str, str] = field(default_factory=dict)  # an outside skill drawn new -> the gap it closes
    recall: tuple[str, ...] = ()  # pending skills asked again on a later day (``drills.quiz.session.item_needs``)


def ticked_items(rules: Mapping[int, list[Mastery]], can_you: Iterable[tuple[int, str, str]],
                 last: Mapping[str, Row], hand: set[int]) -> set[int]:
    """The items ticked as ``drill progress`` ticks them, lab records aside: every rule holds, or the
    item's own "Can you" card was right at its last review, or ticked by hand. A lab item (shown
    by a lab record alone) is ticked here only by hand: the quiz has nothing to draw for it."""
    out = set()
    for number, _, card in can_you:
        item_rules = rules.get(number, [])
        lab = any(rule.lab for rule in item_rules)
        by_skills = bool(item_rules) and not lab and all(standing(rule, last).done for rule in item_rules)
        by_card = not lab and bool(last.get(card, {}).get("correct"))
        if by_skills or by_card or number in hand:
            out.add(number)
    return out


def needs(rules: Mapping[int, list[Mastery]], ticked: set[int], last: Mapping[str, Row],
          started: set[str], selected: list[Skill], chips: tuple[str, ...] | None,
          families: tuple[str, ...] | None, others: Callable[[tuple[str, ...]], list[Skill]]) -> Needs:
    """The skills the items not in ``ticked`` need from a quiz over ``selected`` (teaching order).

    ``chips`` / ``families``: the quiz's ``--chip`` / ``--family`` (None: all); ``others(families)``:
    every skill of those families on every chip, in the generator's order, for a rule the selection
    cannot satisfy (more chips than it has, or none of its skills; asked only then). Such a rule's
    started skills on the chips that serve it (``_serving``) are reviewed with the selection, ticked
    or not, so a skill the quiz once drew for an item keeps its schedule. Off the selection, a skill
    is drawn only once one of the rule's selected skills is right (the first chip learned), or when
    the selection has none of them."""
    new: list[Skill] = []
    outside: set[str] = set()
    item_of: dict[str, int] = {}
    gap_of: dict[str, str] = {}
    for number, item_rules in rules.items():
        for rule in item_rules:
            if rule.lab or (families and not set(rule.families) & set(families)):
                continue
            own = [s for s in selected if counts(rule, s.id)]
            pool = _serving(rule, others, own, chips, started) if chips else []
            found = standing(rule, last)
            if number in ticked:
                continue
            # The second chip's draw: only once a selected skill of the rule is right (or the
            # selection has none); then its started skills come with the selection until the item ticks.
            opened = not own or any(s.id in found.right for s in own)
            coming = [s for s in pool if s.id in started] if opened else []
            outside |= {s.id for s in coming}
            item_of.update({s.id: number for s in coming if s.id not in item_of})
            if found.done:
                continue
            draw, on_way = close_gaps(found, selected, started)
            if pool and opened:
                after = _standing(rule, {**found.right, **{s.id: s.chip for s in draw + on_way}})
                more, _ = close_gaps(after, pool, started)
                draw += more
                outside |= {s.id for s in more}
                gap_of.update({s.id: "; ".join(after.gaps()) for s in more})
            for skill in draw:
                if skill.id not in item_of:
                    item_of[skill.id] = number
                    new.append(skill)
    return Needs(tuple(new), frozenset(outside), item_of, gap_of)


def _serving(rule: Mastery, others: Callable[[tuple[str, ...]], list[Skill]], own: list[Skill],
             chips: tuple[str, ...], started: set[str]) -> list[Skill]:
    """The rule's skills off the selection (``own``: the selection's skills it counts), on the chips
    it needs beyond it: as many chips as the selection is short of ``min_chips`` (one, when the
    selection has none of its skills), those with a started skill first, then the nearest in the
    catalogue's order; on each chip, the variants of the selection's started skills first. Empty
    when the selection has chips enough."""
    short = rule.min_chips - len({s.chip for s in own if s.chip}) if own else max(1, rule.min_chips)
    if short <= 0:
        return []
    every = [s for s in others(rule.families) if counts(rule, s.id) and s.chip]
    order = nearest_chips(list(dict.fromkeys(s.chip for s in every if s.chip)), chips)
    begun = {s.chip for s in every if s.id in started and s.chip in order}
    serving = sorted(order, key=lambda c: (c not in begun, order.index(c)))[:short]
    variants = {s.variant for s in own if s.id in started}
    pool = [s for s in every if s.chip in serving]
    return sorted(pool, key=lambda s: (serving.index(s.chip or ""), s.variant not in variants))


def command(rules: list[Mastery], last: Mapping[str, Row], others: Callable[[tuple[str, ...]], list[Skill]]) -> str:
    """The command that ticks an item: the lab's for a lab item; else, for each rule still short, the
    quiz over its family (on the nearest chip not yet right, where it needs another chip)."""
    if any(rule.lab for rule in rules):
        return LAB_COMMAND
    parts = []
    for rule in rules:
        found = standing(rule, last)
        if found.done:
            continue
        words = " ".join(f"--family {f}" for f in rule.families)
        if found.chips_short and found.chips:
            every = others(rule.families)
            order = list(dict.fromkeys(s.chip for s in every if s.chip))
            nearest = nearest_chips(order, found.chips)
            parts.append(f"drill quiz {words} --chip {nearest[0]}" if nearest else f"drill quiz {words}")
        else:
            parts.append(f"drill quiz {words}")
    return "; ".join(parts)
