"""The problem generator: skills from the drill specs, seeded draws, whole problem sets.

The public API the quiz and the lab use: ``FAMILY_NAMES``, ``skills``, ``draw``, ``generate``,
``problem``, ``grading_bands`` and ``CAN_YOU``.
Details: docs/internals.md.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, replace
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from generator.model import catalogue
from generator.problems import families
from generator.io import startcache
from generator.problems import families as families_mod  # ``skills`` takes a parameter named families
from generator.errors import DrillError, UsageError
from generator.problems.families import FAMILIES, mistakes
from generator.problems.families.base import Skill
from generator.problems.families.can_you import CanYouCheck, CanYouItem, can_you_items
from generator.problems.problem import Problem
from generator.problems.specs import FamilySpec, GradingBands, SpecError, load_dir
from generator.model.units import fmt

if TYPE_CHECKING:  # annotations only: the wrong answers are imported where distances are needed
    from generator.problems.misconceptions import WrongAnswer

__all__ = ["FAMILY_NAMES", "Skill", "GradingBands", "UnknownFamilyError", "UnknownSkillError", "UnknownProblemError",
           "problem", "TooManyProblemsError", "SpecError",
           "MAX_PROBLEMS", "skills", "draw", "generate", "grading_bands", "registry", "CAN_YOU"]

MAX_PROBLEMS = 1_000_000  # one request may not ask for more (skills x count)
# A drawn problem's id ends in "@" + its draw seed (8 hex digits): the seed of the Random its
# parameters were drawn from, so the id alone rebuilds the problem with one draw, no search.
SEED_MARK = "@"
_SEED = re.compile(r"^[0-9a-f]{8}$")
# A caller's report of work done: (items done, items in all), e.g. a progress bar's.
OnItem = Callable[[int, int], None]
# Consecutive repeated draws (a problem or a numeric answer already kept) after which a skill is taken to
# have no more distinct problems.
_PATIENCE = 24


class UnknownFamilyError(DrillError, ValueError):
    """A family name that is not one of FAMILY_NAMES; the message names the known families."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"unknown family '{name}'; known families: {', '.join(FAMILIES)}")


class BadCountError(UsageError, ValueError):
    """A count of problems below 1."""


class TooManyProblemsError(DrillError, ValueError):
    """A request for more than MAX_PROBLEMS problems (skills x count)."""


class UnknownProblemError(DrillError, ValueError):
    """A problem id that no skill's draws produce."""


class UnknownSkillError(DrillError, ValueError):
    """A skill id that no family declares."""

    def __init__(self, skill_id: str):
        self.skill_id = skill_id
        super().__init__(f"unknown skill '{skill_id}' (skill ids look like 'bound:v5e:matmul_skinny'; "
                         f"see generator.problems.generate.skills())")


def normalize_family(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    if key not in FAMILIES:
        raise UnknownFamilyError(name)
    return key


class DefaultSpecs(Mapping[str, FamilySpec]):
    """family -> FamilySpec for the default specs: ``generator.problems.families.spec``, each validated on
    first use, so a quiz validates the specs of the families it draws and imports no other module."""

    def __getitem__(self, family: str) -> FamilySpec:
        validated: FamilySpec = families.spec(family)
        return validated

    def __iter__(self) -> Iterator[str]:
        return iter(families.found())

    def __len__(self) -> int:
        return len(families.found())


def index_inputs() -> list[Path]:
    """What the skill index is built from: every file of ``generator/`` but the exporters (the code,
    the catalogue, the family modules, their data and their specs) and of any extra family package."""
    here = Path(__file__).resolve().parents[1]  # generator/
    own = [p for p in startcache.files_under(here) if p.relative_to(here).parts[0] != "export"]
    return own + [p for p in families.source_files() if here not in p.parents]


class Registry:
    """The specs of one directory, their skills, and the problems they make.

    For the default specs the skill index comes from ``generator.io.startcache`` when an entry built
    from today's files is there (this class's own YAML path built it, and checked the "Can you"
    cards and unique ids before it was written); otherwise every family is asked for its skills.
    """

    def __init__(self, specs_dir: str | None = None):
        self.catalogue = catalogue.load()
        self._teachable_cache: dict[str, bool] = {}
        self.specs: Mapping[str, FamilySpec]
        if specs_dir is None:
            self.specs = DefaultSpecs()
            rows = startcache.cached("skills", index_inputs(), lambda: [s.to_dict() for s in self._index()])
            self._set_skills([Skill.from_dict(row) for row in rows])
        else:
            self.specs = load_dir(specs_dir, FAMILIES)
            self._index()

    def _index(self) -> list[Skill]:
        """Every family's skills, in course order, with unique ids and the "Can you" cards checked."""
        self._set_skills([skill for name, family in FAMILIES.items()
                          for skill in family.skills(self.specs[name], self.catalogue)])
        self._check_can_you()
        return self.all_skills

    def _set_skills(self, skills: list[Skill]) -> None:
        self.all_skills = skills
        self.by_id: dict[str, Skill] = {}
        for skill in self.all_skills:
            if skill.id in self.by_id:
                self.specs[skill.family].fail(("params",), f"two skills share the id '{skill.id}'")
            self.by_id[skill.id] = skill

    def _check_can_you(self) -> None:
        """Solve each "Can you" card once now, so a bad ``check`` fails at load with its line."""
        spec = self.specs["vocabulary"]
        for item in can_you_items(spec):
            try:
                self.resolve(item["check"], item["n"])
            except (LookupError, ValueError, TypeError) as exc:
                spec.fail((*item["at"], "check"), f"can not build this check: {exc}")

    # --- selection ---------------------------------------------------------------
    def skills(self, families: list[str] | None = None, chips: list[str] | None = None) -> list[Skill]:
        """The skills of ``families`` (default all) on ``chips`` (default all; a skill without a chip is
        kept, except a family of practice on the lab's own device, ``DEVICE_PRACTICE``, which a chip
        filter leaves out unless the family is asked for by name)."""
        wanted = None if not families else {normalize_family(f) for f in families}
        names = None if not chips else {self.catalogue.get(c).name for c in chips}
        device_practice = frozenset() if (names is None or wanted is not None) else families_mod.device_practice()
        return [s for s in self.all_skills
                if (wanted is None or s.family in wanted) and (names is None or s.chip is None or s.chip in names)
                and s.family not in device_practice]

    def skill(self, skill_id: str) -> Skill:
        try:
            return self.by_id[skill_id]
        except KeyError:
            raise UnknownSkillError(skill_id) from None

    # --- problems ----------------------------------------------------------------
    def solve(self, skill: Skill, params: dict[str, Any]) -> Problem:
        family = FAMILIES[skill.family]
        extra = {"resolve": self.resolve} if getattr(family, "NEEDS_RESOLVE", False) else {}
        solved: Problem = family.solve(self.specs[skill.family], self.catalogue, skill, params, **extra)
        return solved

    def draw(self, skill_id: str, rng: random.Random) -> Problem:
        return self._seeded(self.skill(skill_id), rng.getrandbits(32))[0]

    def _teachable(self, skill: Skill, teaches: dict[str, float], memo: _Memo | None = None) -> bool:
        """Whether any draw of ``skill`` meets its family's fair-draw rule, from a fixed probe of
        ``_FAIR_TRIES`` draws (deterministic per skill, so a seed always rebuilds the same problem);
        a skill with none (an add's floor, where T_math is negligible) is drawn once, not redrawn."""
        known = self._teachable_cache.get(skill.id)
        if known is None:
            known = self._teachable_cache[skill.id] = self._probe(skill, teaches, memo)
        return known

    def _probe(self, skill: Skill, teaches: dict[str, float], memo: _Memo | None = None) -> bool:
        family, spec = FAMILIES[skill.family], self.specs[skill.family]
        rng = random.Random(f"probe:{skill.id}")
        return any(_fair(teaches, self._solved(skill, family.draw_params(spec, self.catalogue, skill, rng), memo,
                                               teaches)[1])
                   for _ in range(_PROBE_DRAWS))

    def _load_probes(self, chosen: list[Skill], memos: dict[str, _Memo]) -> None:
        """The probe verdicts (``_teachable``) of the ``chosen`` skills, from ``generator.io.startcache``
        for the default specs: a verdict is a function of the generator's files alone (the probe's
        draws are seeded by the skill id), so it is kept with the skill index, under the same key.
        An entry holds the skills probed so far (by any selection): the skills it lacks are probed
        here and the entry is rewritten with them. A probe's solved params go into the skill's memo,
        for its draws to use."""
        taught = {s.id: (s, teaches) for s in chosen
                  if (teaches := getattr(FAMILIES[s.family], "TEACHES", None) or {}) and s.id not in self._teachable_cache}
        if not taught or not isinstance(self.specs, DefaultSpecs):
            return

        def probe(ids: Iterable[str]) -> dict[str, bool]:
            return {sid: self._probe(taught[sid][0], taught[sid][1], memos.get(sid)) for sid in ids}
        inputs = index_inputs()
        table = startcache.cached("probes", inputs, lambda: probe(taught))
        if not (isinstance(table, dict) and all(type(v) is bool for v in table.values())):
            table = {}  # not the shape this writes: probe every skill, as without a cache
        missing = [sid for sid in taught if sid not in table]
        if missing:
            table = {**table, **probe(missing)}
            startcache.replace("probes", inputs, table)
        self._teachable_cache.update((sid, table[sid]) for sid in taught)

    def _solved(self, skill: Skill, params: dict[str, Any], memo: _Memo | None,
                teaches: dict[str, float] | None = None) -> _Solved:
        """The problem of ``params`` and its named mistakes' distances (``_distances``), or with
        ``teaches`` None in their place when a taught mistake lands too near the key (an unfair draw:
        the rest are not priced; ask again without ``teaches`` for them all).

        ``memo`` (one skill's, within one ``generate``) keeps them by ``repr(params)``: a family's
        ``solve`` is a function of the skill and its params alone (``problem(id)`` rebuilds a problem
        from them), so params drawn again, by another seed, another fair-draw try or the probe, give
        the same problem, and it is solved once. Params that are not plain data (text, numbers,
        lists, tuples, dicts of them), whose repr might not tell two apart, are solved every time.
        """
        key = repr(params) if memo is not None and _plain(params) else None
        hit = memo.get(key) if key is not None and memo is not None else None
        if hit is not None and (hit[1] is not None or teaches is not None):
            return hit  # an unfair draw stays unfair: its verdict needs no more
        p = hit[0] if hit is not None else self.solve(skill, params)
        solved = (p, _distances(p, teaches))
        if key is not None and memo is not None:
            memo[key] = solved
        return solved

    def _seeded(self, skill: Skill, seed: int | str, memo: _Memo | None = None
                ) -> tuple[Problem, str, list[tuple[WrongAnswer, float]]]:
        """The problem drawn from the draw seed ``seed``, its params' repr and its named mistakes'
        distances (``_distances``); its id ends in ``@seed``.

        Every family draws only from the ``rng`` it is given, so ``Random(f"{skill}@{seed}")``
        rebuilds the same parameters, and ``problem(id)`` needs one draw, not a search.
        ``memo``: see ``_solved``.
        """
        token = seed if isinstance(seed, str) else f"{seed:08x}"
        p, drawn, found = self._fair_draw(skill, token, memo)
        return _finished(p, found, token), drawn, found

    def _fair_draw(self, skill: Skill, token: str, memo: _Memo | None
                   ) -> tuple[Problem, str, list[tuple[WrongAnswer, float]]]:
        """``_seeded``'s draw before its id takes the seed and its solution the notes (``_finished``):
        the problem under its unseeded id, its params' repr and its named mistakes' distances."""
        family = FAMILIES[skill.family]
        rng = random.Random(f"{skill.id}{SEED_MARK}{token}")
        teaches = getattr(family, "TEACHES", None) or {}
        tries = _FAIR_TRIES if teaches and self._teachable(skill, teaches, memo) else 1
        for _ in range(tries):  # fair draws: redraw (same rng) while a taught mistake lands near the key
            params = family.draw_params(self.specs[skill.family], self.catalogue, skill, rng)
            p, found = self._solved(skill, params, memo, teaches if tries > 1 else None)
            if _fair(teaches, found):
                break
        if found is None:  # every try unfair: the last is kept, and its solution needs every distance
            p, found = self._solved(skill, params, memo)
        assert found is not None  # without ``teaches``, ``_solved`` prices every mistake
        return p, repr(params), found

    def resolve(self, check: CanYouCheck, n: int = 0) -> Problem:
        """The problem a "Can you" card asks: ``check`` = family, chip, variant, fixed params."""
        family = normalize_family(check["family"])
        chip = check.get("chip")
        chip = self.catalogue.get(chip).name if chip else None
        sid = f"{family}:{chip}:{check['variant']}" if chip else f"{family}:{check['variant']}"
        skill = self.skill(sid)
        fam = FAMILIES[family]
        rng = random.Random(f"can-you-{n}")
        params = {**fam.draw_params(self.specs[family], self.catalogue, skill, rng), **check.get("params", {})}
        return self.solve(skill, params)

    def problem(self, problem_id: str, max_draws: int = 20000, patience: int = 500) -> Problem:
        """The problem with this id (the ids ``drill export`` prints), rebuilt.

        A problem id is its skill id, the drawn parameters (``ops.key`` and kin) and
        ``@`` + the draw seed: the seed rebuilds the parameters in one draw and the
        rest of the id must then match (deterministic, no search). An id without a
        seed (written before seeds, or a "Can you" card's) is found the old way:
        drawing the skill until the id comes up, within ``max_draws``.
        """
        if not isinstance(problem_id, str) or len(problem_id) > 300:
            raise UnknownProblemError("a problem id is a line of text such as 'floor:v5e:add:4096x4096-bf16@0a1b2c3d'")
        base = unseeded_id(problem_id)
        token = problem_id[len(base) + 1:]
        candidates = [sid for sid in self.by_id if base == sid or base.startswith(sid + ":")]
        if not candidates:
            raise UnknownProblemError(f"unknown problem id '{problem_id}': no skill starts it "
                                      f"(see `drill export` for ids)")
        skill = self.by_id[max(candidates, key=len)]
        if token:
            found = self._seeded(skill, token)[0]
            if found.id == problem_id:
                return found
            raise UnknownProblemError(f"unknown problem id '{problem_id}': the draw seed {token} of skill "
                                      f"'{skill.id}' gives '{found.id}'")
        family, spec = FAMILIES[skill.family], self.specs[skill.family]
        rng = random.Random(f"problem-id:{problem_id}")
        seen: set[str] = set()
        stale = 0
        for _ in range(max_draws):
            params = family.draw_params(spec, self.catalogue, skill, rng)
            drawn = repr(params)
            if drawn in seen:
                stale += 1
                if stale >= patience:
                    break
                continue
            seen.add(drawn)
            stale = 0
            found = self.solve(skill, params)
            if found.id == problem_id:
                return found
        raise UnknownProblemError(f"unknown problem id '{problem_id}': skill '{skill.id}' draws no such problem")

    def generate(self, families: list[str] | None = None, chips: list[str] | None = None, count: int | None = None,
                 seed: int = 0, on_item: OnItem | None = None,
                 measured: dict[str, list[tuple[WrongAnswer, float]]] | None = None) -> list[Problem]:
        """Up to ``count`` distinct problems per skill (``_search``: distinct numeric answers too);
        ``on_item(done, total)`` after each skill, if given.
        ``measured``, if given, is filled with each problem's named mistakes' distances (problem id ->
        ``_distances``), which the fair draws worked out (``mistakes.wrong_answers`` can read them)."""
        draws = self.start_draws(self.skills(families, chips), count, seed)
        return self.draw_skills(draws, draws.skills, on_item, measured)

    def start_draws(self, chosen: list[Skill], count: int | None, seed: int) -> Draws:
        """What drawing ``count`` problems of each ``chosen`` skill needs before the first draw: the
        request checked and the skills' probe verdicts. ``draw_skills`` then draws any of the skills."""
        count = 1 if count is None else int(count)
        if count < 1:
            raise BadCountError(f"count must be at least 1, got {count}")
        if len(chosen) * count > MAX_PROBLEMS:
            raise TooManyProblemsError(
                f"{len(chosen)} skills x {count} = {len(chosen) * count} problems is more than {MAX_PROBLEMS}; "
                f"lower the count or select fewer families or chips")
        draws = Draws(list(chosen), count, seed, {skill.id: {} for skill in chosen})
        self._load_probes(chosen, draws.memos)
        return draws

    def draw_skills(self, draws: Draws, skills: Iterable[Skill], on_item: OnItem | None = None,
                    measured: dict[str, list[tuple[WrongAnswer, float]]] | None = None) -> list[Problem]:
        """The problems of ``skills`` (some or all of ``draws.skills``, in the order given), each skill's
        searched for (``_search``). ``on_item``, ``measured``: as ``generate``'s."""
        listed = list(skills)
        out: list[Problem] = []
        for done, skill in enumerate(listed, 1):
            for token, drawn_problem, found in self._search(skill, draws.seed, draws.count,
                                                            draws.memos.pop(skill.id, {})):
                p = _finished(drawn_problem, found, token)  # what ``_seeded`` gives for this seed
                out.append(p)
                if measured is not None:
                    measured[p.id] = found
            if on_item is not None:
                on_item(done, len(listed))
        return out

    def _search(self, skill: Skill, seed: int, count: int, memo: _Memo
                ) -> Iterator[tuple[str, Problem, list[tuple[WrongAnswer, float]]]]:
        """Up to ``count`` distinct fair draws of ``skill`` from ``Random(f"{seed}:{skill.id}")``, no two
        with the same numeric answer (``answer_key``): (seed token, problem, its named mistakes'
        distances) each, until ``_PATIENCE`` draws in a row repeat a problem or an answer already kept."""
        rng = random.Random(f"{seed}:{skill.id}")
        seen_params: set[str] = set()
        seen: set[str] = set()
        answered: set[str] = set()
        repeats = 0
        while len(seen) < count and repeats < _PATIENCE:
            token = f"{rng.getrandbits(32):08x}"
            drawn_problem, drawn, found = self._fair_draw(skill, token, memo)
            base = drawn_problem.id  # unseeded: the same problem under another seed is a repeat
            answer = answer_key(drawn_problem)
            if drawn in seen_params or base in seen or answer in answered:
                repeats += 1
                continue
            seen_params.add(drawn)
            repeats = 0
            seen.add(base)
            if answer is not None:
                answered.add(answer)
            yield token, drawn_problem, found

    def can_you(self) -> tuple[tuple[int, str, str], ...]:
        return tuple((c["n"], c["text"], f"vocabulary:can-you-{c['n']}") for c in self.can_you_items())

    def can_you_items(self) -> list[CanYouItem]:
        """The "Can you" items of the vocabulary spec, in order."""
        return can_you_items(self.specs["vocabulary"])


_FAIR_TRIES = 24  # draws tried for a fair one; a skill with none keeps the last and its solution says why


_PROBE_DRAWS = 48  # draws of the fixed probe that decides whether a skill can be drawn fair at all


# a problem and its named mistakes' distances (None: an unfair draw, not priced in full: ``Registry._solved``)
_Solved = tuple[Problem, list[tuple["WrongAnswer", float]] | None]
_Memo = dict[str, _Solved]  # one skill's solved params, by their repr (``Registry._solved``)


@dataclass
class Draws:
    """One request's draws (``Registry.start_draws``): its skills, count and seed, and each skill's solved
    params (``_Memo``) for its search."""

    skills: list[Skill]
    count: int
    seed: int
    memos: dict[str, _Memo]


_PLAIN_LEAVES = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> bool:
    """Text, numbers, None, and lists, tuples and dicts (text keys) of them: what repr spells in full.
    Exact types: a subclass may print itself as its base does."""
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind in _PLAIN_LEAVES:
            continue
        if kind is list or kind is tuple:
            pending.extend(item)
        elif kind is dict:
            if not all(type(k) is str for k in item):
                return False
            pending.extend(item.values())
        else:
            return False
    return True


def _distances(p: Problem, teaches: dict[str, float] | None = None) -> list[tuple[WrongAnswer, float]] | None:
    """(named mistake, relative distance from the key) for a numeric problem; empty for a choice.
    With ``teaches``: None at the first taught mistake that breaks the fair-draw rule (``_fair``),
    the mistakes after it not priced."""
    if p.answer.is_choice:
        return []

    measured = []
    for w, d in mistakes.iter_distances(p):
        if teaches and _too_near(teaches, w, d):
            return None
        measured.append((w, d))
    return measured


ANSWER_FIGURES = 3  # significant figures at which two numeric answers of one skill's problem set must differ


def answer_key(p: Problem) -> str | None:
    """A numeric answer as ``ANSWER_FIGURES`` significant figures and its unit ("1.25e+00 FLOP/byte"): two
    problems of one skill's set never share it, so each asks for a different number. None for a choice
    (a verdict has only its few choices to give)."""
    a = p.answer
    return None if a.is_choice else f"{a.number:.{ANSWER_FIGURES - 1}e} {a.unit}"


def _fair(teaches: dict[str, float], found: list[tuple[WrongAnswer, float]] | None) -> bool:
    """The family's fair-draw rule (``TEACHES``: mistake id -> least relative miss): each mistake the
    family teaches gives an answer at least that far from the key. A mistake that does not move the
    answer at all (the output write of a compute-bound floor) is no slip. ``found`` None: a draw
    ``_distances`` already found unfair."""
    return found is not None and not any(_too_near(teaches, w, d) for w, d in found)


def _too_near(teaches: dict[str, float], w: WrongAnswer, d: float) -> bool:
    """A taught mistake whose answer moved (more than 1e-9) but lands within its least miss of the key."""
    least = teaches.get(w.misconception.id)
    return least is not None and 1e-9 < d <= least


def _finished(p: Problem, found: list[tuple[WrongAnswer, float]], token: str) -> Problem:
    """A fair draw as it is handed out: the inside-tolerance notes added, ``@token`` ending its id."""
    p = _with_inside_notes(p, found)
    return replace(p, id=f"{p.id}{SEED_MARK}{token}")


def _with_inside_notes(p: Problem, found: list[tuple[WrongAnswer, float]]) -> Problem:
    """Where a named mistake lands within the tolerance anyway, the worked solution says so."""

    notes, seen = [], set()
    for w, d in found:
        mid = w.misconception.id
        if 1e-9 < d <= p.tolerance and mid not in seen:
            seen.add(mid)
            notes.append(f"note: here the classic mistake '{mid}' ({w.misconception.name}) gives "
                         f"{fmt(float(w.value), p.answer.unit)}, only {d:.1%} from the key, inside the "
                         f"{p.tolerance:.0%} tolerance: that answer is graded right, though the method is not")
    return replace(p, solution=p.solution + tuple(notes)) if notes else p


def unseeded_id(problem_id: str) -> str:
    """The id without its draw seed: the same problem drawn under two seeds has one unseeded id."""
    base, mark, token = problem_id.rpartition(SEED_MARK)
    return base if mark and _SEED.match(token) else problem_id


@functools.lru_cache(maxsize=4)
def registry(specs_dir: str | None = None) -> Registry:
    """The registry for a spec directory (default: each family's own spec), built once per process."""
    return Registry(specs_dir)


def skills(families: list[str] | None = None, chips: list[str] | None = None, *,
           specs_dir: str | None = None) -> list[Skill]:
    """Skills of the given families (default all) over the given chips (default all)."""
    return registry(specs_dir).skills(families, chips)


def draw(skill_id: str, rng: random.Random, *, specs_dir: str | None = None) -> Problem:
    """A fresh problem for ``skill_id``, its numbers drawn from ``rng``."""
    return registry(specs_dir).draw(skill_id, rng)


def generate(families: list[str] | None = None, chips: list[str] | None = None, count: int | None = None,
             seed: int = 0, *, specs_dir: str | None = None, on_item: OnItem | None = None,
             measured: dict[str, list[tuple[WrongAnswer, float]]] | None = None) -> list[Problem]:
    """Up to ``count`` (default 1) distinct problems per skill; same seed, same problems.
    ``on_item(done, total)`` is called after each skill's problems are drawn (default: nothing);
    ``measured``: see ``Registry.generate``."""
    return registry(specs_dir).generate(families, chips, count, seed, on_item, measured)


def problem(problem_id: str, *, specs_dir: str | None = None) -> Problem:
    """The problem with this id, rebuilt (``UnknownProblemError`` when no skill draws it)."""
    return registry(specs_dir).problem(problem_id)


def grading_bands(family: str, *, specs_dir: str | None = None) -> GradingBands:
    """The family's grading bands (tolerance, Easy band and time, Hard factor) from its spec."""
    return registry(specs_dir).specs[normalize_family(family)].grading


def __getattr__(name: str) -> Any:
    # CAN_YOU is read from the vocabulary spec on first use, so importing this module never
    # parses YAML (and a broken spec surfaces as a SpecError where it is handled, not at import).
    if name == "CAN_YOU":
        return registry().can_you()
    if name == "FAMILY_NAMES":  # derived from the modules found, never a second list
        return tuple(FAMILIES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
