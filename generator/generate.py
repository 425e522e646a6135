"""The problem generator: skills from the drill specs, seeded draws, whole problem sets.

Public API (the quiz and the lab code against these names):

- ``FAMILY_NAMES``: the Stage 0 families, in course order (the last five go beyond one chip).
- ``skills(families, chips)``: what a learner is trained on (``Skill``).
- ``draw(skill_id, rng)``: a fresh problem for one skill, its numbers drawn from ``rng``.
- ``generate(families, chips, count, seed)``: ``count`` distinct problems *per skill*
  (fewer where a skill has fewer distinct draws, e.g. a chip's ridge), deterministic
  for a seed; each skill draws from its own ``Random(f"{seed}:{skill.id}")`` so a
  skill's problems do not change when other families or chips are selected.
- ``problem(problem_id)``: the problem with that id (as ``drill export`` prints it), rebuilt.
- ``grading_bands(family)``: the family's ``GradingBands`` from its spec.
- ``CAN_YOU``: the seed's seven "Can you" items as ``(n, text, skill_id)``.

Chip-independent skills (lattice, vocabulary) have ``chip=None`` and are kept
by any chip filter. Every answer is computed by ``generator.costs`` /
``generator.roofline`` / ``generator.transformer`` from catalogue figures.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from generator import catalogue
from generator.families import FAMILIES
from generator.families.base import Skill
from generator.problem import Problem
from generator.specs import FamilySpec, GradingBands, SpecError, load_dir

__all__ = ["FAMILY_NAMES", "Skill", "GradingBands", "UnknownFamilyError", "UnknownSkillError", "UnknownProblemError",
           "problem", "TooManyProblemsError", "SpecError",
           "MAX_PROBLEMS", "skills", "draw", "generate", "grading_bands", "registry", "CAN_YOU"]

FAMILY_NAMES: tuple[str, ...] = ("ridge", "intensity", "bound", "floor", "critical_batch", "lattice", "vmem_fit",
                                 "transformer_step", "interconnect", "vocabulary",
                                 "pod", "collective", "transfer", "host_link", "sharded_matmul", "miss_reason")
assert tuple(FAMILIES) == FAMILY_NAMES, "the registry and FAMILY_NAMES must agree"

MAX_PROBLEMS = 1_000_000  # one request may not ask for more (skills x count)
_PATIENCE = 8  # consecutive repeated draws after which a skill is taken to have no more distinct problems


class UnknownFamilyError(ValueError):
    """A family name that is not one of FAMILY_NAMES; the message names the known families."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"unknown family '{name}'; known families: {', '.join(FAMILY_NAMES)}")


class TooManyProblemsError(ValueError):
    """A request for more than MAX_PROBLEMS problems (skills x count)."""


class UnknownProblemError(ValueError):
    """A problem id that no skill's draws produce."""


class UnknownSkillError(ValueError):
    """A skill id that no family declares."""

    def __init__(self, skill_id: str):
        self.skill_id = skill_id
        super().__init__(f"unknown skill '{skill_id}' (skill ids look like 'bound:v5e:matmul_skinny'; "
                         f"see generator.generate.skills())")


def normalize_family(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    if key not in FAMILIES:
        raise UnknownFamilyError(name)
    return key


class Registry:
    """The specs of one directory, their skills, and the problems they make."""

    def __init__(self, specs_dir: str | None = None):
        self.catalogue = catalogue.load()
        self.specs: dict[str, FamilySpec] = load_dir(specs_dir, FAMILIES)
        self.all_skills: list[Skill] = []
        for name, family in FAMILIES.items():
            self.all_skills.extend(family.skills(self.specs[name], self.catalogue))
        self.by_id: dict[str, Skill] = {}
        for skill in self.all_skills:
            if skill.id in self.by_id:
                self.specs[skill.family].fail(("params",), f"two skills share the id '{skill.id}'")
            self.by_id[skill.id] = skill
        self._check_can_you()

    def _check_can_you(self) -> None:
        """Solve each "Can you" card once now, so a bad ``check`` fails at load with its line."""
        spec = self.specs["vocabulary"]
        for item in spec.params["can_you"]:
            try:
                self.resolve(item["check"], item["n"])
            except (LookupError, ValueError, TypeError) as exc:
                spec.fail((*item["at"], "check"), f"can not build this check: {exc}")

    # --- selection ---------------------------------------------------------------
    def skills(self, families: list[str] | None = None, chips: list[str] | None = None) -> list[Skill]:
        wanted = None if not families else {normalize_family(f) for f in families}
        names = None if not chips else {self.catalogue.get(c).name for c in chips}
        return [s for s in self.all_skills
                if (wanted is None or s.family in wanted) and (names is None or s.chip is None or s.chip in names)]

    def skill(self, skill_id: str) -> Skill:
        try:
            return self.by_id[skill_id]
        except KeyError:
            raise UnknownSkillError(skill_id) from None

    # --- problems ----------------------------------------------------------------
    def solve(self, skill: Skill, params: dict[str, Any]) -> Problem:
        family = FAMILIES[skill.family]
        extra = {"resolve": self.resolve} if getattr(family, "NEEDS_RESOLVE", False) else {}
        return family.solve(self.specs[skill.family], self.catalogue, skill, params, **extra)

    def draw(self, skill_id: str, rng: random.Random) -> Problem:
        skill = self.skill(skill_id)
        family = FAMILIES[skill.family]
        return self.solve(skill, family.draw_params(self.specs[skill.family], self.catalogue, skill, rng))

    def resolve(self, check: dict[str, Any], n: int = 0) -> Problem:
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
        """The problem with this id (the ids ``drill export`` prints), rebuilt from its skill's draws.

        A problem id is its skill id plus the drawn parameters (``ops.key`` and
        kin); every family draws from finite choice lists, so drawing the skill
        until the id comes up (or ``patience`` draws in a row bring nothing new)
        finds it without a per-family inverse of the key. Deterministic.
        """
        if not isinstance(problem_id, str) or len(problem_id) > 300:
            raise UnknownProblemError("a problem id is a line of text such as 'floor:v5e:add:4096x4096-bf16'")
        candidates = [sid for sid in self.by_id if problem_id == sid or problem_id.startswith(sid + ":")]
        if not candidates:
            raise UnknownProblemError(f"unknown problem id '{problem_id}': no skill starts it "
                                      f"(see `drill export` for ids)")
        skill = self.by_id[max(candidates, key=len)]
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

    def generate(self, families=None, chips=None, count: int | None = None, seed: int = 0) -> list[Problem]:
        count = 1 if count is None else int(count)
        if count < 1:
            raise ValueError(f"count must be at least 1, got {count}")
        chosen = self.skills(families, chips)
        if len(chosen) * count > MAX_PROBLEMS:
            raise TooManyProblemsError(
                f"{len(chosen)} skills x {count} = {len(chosen) * count} problems is more than {MAX_PROBLEMS}; "
                f"lower the count or select fewer families or chips")
        out: list[Problem] = []
        for skill in chosen:
            family, spec = FAMILIES[skill.family], self.specs[skill.family]
            rng = random.Random(f"{seed}:{skill.id}")
            seen_params: set[str] = set()
            seen: set[str] = set()
            repeats = 0
            while len(seen) < count and repeats < _PATIENCE:
                params = family.draw_params(spec, self.catalogue, skill, rng)
                drawn = repr(params)  # same params, same problem: skip solving it again
                if drawn in seen_params:
                    repeats += 1
                    continue
                seen_params.add(drawn)
                p = self.solve(skill, params)
                if p.id in seen:
                    repeats += 1
                    continue
                repeats = 0
                seen.add(p.id)
                out.append(p)
        return out

    def can_you(self) -> tuple[tuple[int, str, str], ...]:
        return tuple((c["n"], c["text"], f"vocabulary:can-you-{c['n']}")
                     for c in self.specs["vocabulary"].params["can_you"])


@functools.lru_cache(maxsize=4)
def registry(specs_dir: str | None = None) -> Registry:
    """The registry for a spec directory (default ``drills/specs``), built once per process."""
    return Registry(specs_dir)


def skills(families: list[str] | None = None, chips: list[str] | None = None, *,
           specs_dir: str | None = None) -> list[Skill]:
    """Skills of the given families (default all) over the given chips (default all)."""
    return registry(specs_dir).skills(families, chips)


def draw(skill_id: str, rng: random.Random, *, specs_dir: str | None = None) -> Problem:
    """A fresh problem for ``skill_id``, its numbers drawn from ``rng``."""
    return registry(specs_dir).draw(skill_id, rng)


def generate(families: list[str] | None = None, chips: list[str] | None = None, count: int | None = None,
             seed: int = 0, *, specs_dir: str | None = None) -> list[Problem]:
    """Up to ``count`` (default 1) distinct problems per skill; same seed, same problems."""
    return registry(specs_dir).generate(families, chips, count, seed)


def problem(problem_id: str, *, specs_dir: str | None = None) -> Problem:
    """The problem with this id, rebuilt (``UnknownProblemError`` when no skill draws it)."""
    return registry(specs_dir).problem(problem_id)


def grading_bands(family: str, *, specs_dir: str | None = None) -> GradingBands:
    """The family's grading bands (tolerance, Easy band and time, Hard factor) from its spec."""
    return registry(specs_dir).specs[normalize_family(family)].grading


def __getattr__(name: str):
    # CAN_YOU is read from the vocabulary spec on first use, so importing this module never
    # parses YAML (and a broken spec surfaces as a SpecError where it is handled, not at import).
    if name == "CAN_YOU":
        return registry().can_you()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
