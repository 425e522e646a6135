"""Family 10 [vocabulary]: the working vocabulary, what lives where, and the seven "Can you" items.

Multiple-choice cards whose figures come from the catalogue, each cited; a "Can you" card asks
a real problem of another family.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import replace
from typing import Any, Callable, Iterable, Iterator, TypedDict, cast

from generator.model import catalogue, costs
from generator.model.catalogue import Catalogue, Figure, Source
from generator.problems.families.base import Mastery, Skill, make_skill, problem
from generator.problems.families.ops import OP_LABELS, describe
from generator.problems.families import mistakes, slips
from generator.problems.families.can_you import CanYouCheck, CanYouItem, can_you_items
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec, KeyPath
from generator.model.units import normalize_dtype, sci, si

NAME = "vocabulary"
ORDER = 100  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_110  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 3: what shows it (drill progress)
MASTERY = {3: Mastery("three 'what lives where' cards right (VMEM, HBM, SMEM)", variant="where-", min_skills=3)}
PROMPTS = {"term": {"definition"}, "where": {"item"}, "can_you": {"n", "text", "question"},
           "miss": {"op", "assumed", "actual"}}
NEEDS_RESOLVE = True  # can-you cards solve a problem of another family
KEYS = {"example_chip", "megacore", "sources", "terms", "where_choices", "where", "misses", "can_you"}


class VocabularyDraw(TypedDict, total=False):
    """A drawn card: a term, where or miss card by its variant (``card``), or a "Can you" item by number."""

    card: str
    can_you: int


class CardParams(TypedDict):
    """A term or where card's params: its variant (``term-NAME``, ``where-NAME``)."""

    card: str


class MissCardParams(CardParams):
    """A miss card's params: its variant (``miss-NAME``) and the op, shape and dtype (the one moved) it asks about."""

    op: str
    shape: list[int]
    dtype: str


class CanYouParams(TypedDict):
    """What a "Can you" card adds to the params of the problem it asks: the item's number and that problem's skill
    (whose family's params the rest are)."""

    can_you: int
    check_skill: str


def params_of(problem: Problem) -> CardParams | MissCardParams:
    """The params of a term, where or miss card (``can_you_params_of`` for a "Can you" card)."""
    return cast("CardParams | MissCardParams", problem.params)


def can_you_params_of(problem: Problem) -> CanYouParams:
    """The item and skill of a "Can you" card; the rest of its params are those of the problem it asks."""
    return cast(CanYouParams, problem.params)


def _fact_fields(cat: Catalogue, example: catalogue.Chip, megacore: tuple[str, ...]) -> dict[str, tuple[str, list[Figure | None]]]:
    """Placeholder -> (text, figures it uses): every figure a definition may quote."""
    shapes: dict[str, list[tuple[catalogue.Chip, Figure]]] = {}
    for chip in cat.chips:
        fig = chip.figure("mxu_shape")
        if fig is not None:
            shapes.setdefault("x".join(map(str, fig.value)), []).append((chip, fig))
    vmem = [(c, vmem_fig) for c in cat.chips if (vmem_fig := c.figure("vmem_bytes")) is not None]
    single = [(c, c.figure("tensorcores_per_chip")) for c in cat.chips if c.value("tensorcores_per_chip") == 1]
    mega = [(cat.get(n), cat.get(n).figure("tensorcores_per_chip")) for n in megacore]
    f = cat.facts
    ex = example
    lattice = {k: f[f"tiling_lattice_{k}"] for k in ("32bit", "bf16", "int8")}
    return {
        "mxu_shapes": ("; ".join(f"{shape} on {', '.join(c.name for c, _ in pairs)}" for shape, pairs in shapes.items()),
                       [fig for pairs in shapes.values() for _, fig in pairs]),
        "mxu_rate": (f"one bf16[8,128] @ bf16[128,128] every {f['mxu_cycles_per_8x128x128'].value} cycles per unit",
                     [f["mxu_cycles_per_8x128x128"]]),
        "vmem_size": (", ".join(f"{int(fig.value) / 2**20:.0f} MiB on {c.display}" for c, fig in vmem),
                      [fig for _, fig in vmem]),
        "vmem_bandwidth": (f"about {f['vmem_to_mxu_over_hbm_bandwidth'].value}x", [f["vmem_to_mxu_over_hbm_bandwidth"]]),
        "hbm_example": (f"{si(ex.hbm_bytes, 'B')} at {sci(ex.hbm_bytes_per_s)} B/s on {ex.display}",
                        [ex.figures["hbm_bytes"], ex.figures["hbm_bytes_per_s"]]),
        "ici_example": (f"{sci(float(ex.value('ici_bytes_per_s_one_way')))} B/s per link one way on {ex.display}, "
                        f"a {ex.value('ici_torus_dims')}D torus", [ex.figure("ici_bytes_per_s_one_way"),
                                                                  ex.figure("ici_torus_dims")]),
        "dcn_example": (f"{sci(float(ex.value('dcn_bytes_per_s')))} B/s of egress per {ex.display} chip",
                        [ex.figure("dcn_bytes_per_s")]),
        **{f"lattice_{k}": (f"({v.value[0]}, {v.value[1]})", [v]) for k, v in lattice.items()},
        "megacore_chips": (_and(c.display for c, _ in mega), [fig for _, fig in mega]),
        "single_core_chips": (_and(c.display for c, _ in single) + (" have" if len(single) > 1 else " has"),
                              [fig for _, fig in single]),
    }


def _and(names_in: Iterable[str]) -> str:
    """``a, b and c``."""
    names = list(names_in)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    cat = catalogue.load()
    p = check.mapping(spec.params, ("params",), required=KEYS, allowed=KEYS)
    try:
        example = cat.get(str(p["example_chip"]))
        megacore = tuple(cat.get(str(n)).name for n in check.text_list(p["megacore"], ("params", "megacore")))
    except catalogue.UnknownChipError as exc:
        check.fail(("params",), str(exc))
    for name in megacore:
        if cat.get(name).value("tensorcores_per_chip") != 2:
            check.fail(("params", "megacore"), f"{name} does not have two TensorCores in the catalogue")
    sources = dict(cat.sources)
    for key, raw in check.mapping(p["sources"], ("params", "sources")).items():
        at: KeyPath = ("params", "sources", key)
        raw = check.mapping(raw, at, required={"title", "url", "retrieved"}, allowed={"title", "url", "retrieved"})
        sources[key] = Source(key, check.text(raw["title"], (*at, "title")), check.text(raw["url"], (*at, "url")),
                              str(raw["retrieved"]))
    facts = _fact_fields(cat, example, megacore)

    def render(text_at: KeyPath, source_at: KeyPath, text: Any, source: Any) -> tuple[str, tuple[str, ...]]:
        template = check.template(text, text_at, set(facts))
        check.one_of(source, source_at, list(sources))
        used = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        cites = {sources[source].cite()} | {fig.source.cite() for n in used for fig in facts[n][1] if fig}
        return template.format(**{n: facts[n][0] for n in used}), tuple(sorted(cites))

    def entries(key: str, required: set[str], allowed: set[str]) -> Iterator[tuple[KeyPath, dict[Any, Any]]]:
        if not isinstance(p[key], list) or not p[key]:
            check.fail(("params", key), "expected a non-empty list")
        for i, raw in enumerate(p[key]):
            yield (("params", key, i), check.mapping(raw, ("params", key, i), required=required, allowed=allowed))

    terms: list[dict[str, Any]] = []
    for at, raw in entries("terms", {"name", "term", "definition", "source"}, {"name", "term", "definition", "source"}):
        text, cites = render((*at, "definition"), (*at, "source"), raw["definition"], raw["source"])
        term = str(raw["term"])
        if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE):
            check.fail((*at, "definition"), f"the definition gives its own answer away: it contains '{term}'")
        terms.append({"name": check.text(raw["name"], (*at, "name")), "term": check.text(raw["term"], (*at, "term")),
                      "definition": text, "cites": cites})
    where_choices = check.text_list(p["where_choices"], ("params", "where_choices"))
    where: list[dict[str, Any]] = []
    for at, raw in entries("where", {"name", "item", "answer", "why", "source"},
                           {"name", "item", "answer", "why", "source"}):
        why, cites = render((*at, "why"), (*at, "source"), raw["why"], raw["source"])
        where.append({"name": check.text(raw["name"], (*at, "name")), "item": check.text(raw["item"], (*at, "item")),
                      "answer": check.one_of(raw["answer"], (*at, "answer"), where_choices), "why": why,
                      "cites": cites})
    misses: list[dict[str, Any]] = []
    for at, raw in entries("misses", {"name", "op", "shape", "assumed", "actual", "why"},
                           {"name", "op", "shape", "assumed", "actual", "why"}):
        try:
            op = costs.normalize_op(str(raw["op"]))
            shape = check.int_list(raw["shape"], (*at, "shape"))
            assumed, actual = normalize_dtype(str(raw["assumed"])), normalize_dtype(str(raw["actual"]))
            costs.cost(op, shape, assumed)
        except (costs.CostError, ValueError) as exc:
            check.fail(at, str(exc))
        misses.append({"name": check.text(raw["name"], (*at, "name")), "op": op, "shape": shape,
                       "assumed": assumed, "actual": actual, "why": check.text(raw["why"], (*at, "why"))})
    can_you: list[CanYouItem] = []
    for at, raw in entries("can_you", {"n", "text", "check"}, {"n", "text", "check"}):
        c = check.mapping(raw["check"], (*at, "check"), required={"family", "variant"},
                          allowed={"family", "chip", "variant", "params"})
        can_you.append({"n": check.integer(raw["n"], (*at, "n")), "text": check.text(raw["text"], (*at, "text")),
                        "check": {"family": str(c["family"]), "chip": c.get("chip"), "variant": str(c["variant"]),
                                  "params": dict(c.get("params") or {})}, "at": at})
    numbers = [c["n"] for c in can_you]
    if numbers != list(range(1, len(numbers) + 1)):
        check.fail(("params", "can_you"), f"items must be numbered 1..{len(numbers)} in order, got {numbers}")
    names = [x["name"] for x in terms + where + misses]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        check.fail(("params",), f"duplicate card name(s): {', '.join(dup)}")
    return {"terms": terms, "where": where, "where_choices": where_choices, "misses": misses, "can_you": can_you,
            "example_chip": example.name}


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: the easily swapped neighbour term; a Can-you card's are those its skill's own
    card names (the same problem, solved by its own family)."""
    if "check_skill" in problem.params:
        family = can_you_params_of(problem)["check_skill"].split(":", 1)[0]
        params = {k: v for k, v in problem.params.items() if k not in ("can_you", "check_skill")}
        yield from mistakes.found(replace(problem, family=family, params=params), cat)
        return
    yield from slips.term_confusions(problem)


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    p = spec.params
    # The header must not name the term it asks for: number the cards instead.
    out = [make_skill(NAME, None, f"term-{t['name']}",
                      f"vocabulary: name the term from its definition (card {i} of {len(p['terms'])})",
                      ("kind::concept",))
           for i, t in enumerate(p["terms"], 1)]
    out += [make_skill(NAME, None, f"where-{w['name']}", f"what lives where: {w['item']}", ("kind::concept",))
            for w in p["where"]]
    out += [make_skill(NAME, None, f"miss-{m['name']}", f"explain a miss: {m['assumed']} counted, {m['actual']} moved",
                       ("kind::concept",)) for m in p["misses"]]
    out += [make_skill(NAME, None, f"can-you-{c['n']}", f"Can you {c['n']}: {c['text']}", ("kind::can-you",))
            for c in can_you_items(spec)]
    return out


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> VocabularyDraw:
    kind, _, name = skill.variant.partition("-")
    if kind == "can":
        return {"can_you": int(name.removeprefix("you-"))}
    return {"card": skill.variant}


def _find(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(x for x in items if x["name"] == name)


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: VocabularyDraw,
          resolve: Callable[[CanYouCheck, int], Problem] | None = None) -> Problem:
    p = spec.params
    if "can_you" in params:
        item = can_you_items(spec)[params["can_you"] - 1]
        if resolve is None:
            raise ValueError("a can-you card needs the registry to solve its check")
        inner = resolve(item["check"], item["n"])
        fields = {"n": str(item["n"]), "text": item["text"], "question": inner.prompt}
        asked: CanYouParams = {"can_you": item["n"], "check_skill": inner.skill}
        return replace(inner, family=NAME, skill=skill.id, id=f"{skill.id}:{inner.id}",
                       prompt=spec.prompts["can_you"].format(**fields), tags=skill.tags + inner.tags[2:],
                       solution=(f"Can you: {item['text']}", *inner.solution),
                       params={**inner.params, **asked},
                       hint=inner.hint or spec.hints["can_you"].format(**fields))
    kind, _, name = params["card"].partition("-")
    if kind == "term":
        t = _find(p["terms"], name)
        fields = {"definition": t["definition"]}
        terms = tuple(x["term"] for x in p["terms"])
        return problem(spec, skill, "", spec.prompts["term"].format(**fields), Answer(choice=t["term"], choices=terms),
                       [f"{t['term']}: {t['definition']}", *(f"[{c}]" for c in t["cites"])], dict(params),
                       spec.hints["term"].format(**fields))
    if kind == "where":
        w = _find(p["where"], name)
        fields = {"item": w["item"]}
        return problem(spec, skill, "", spec.prompts["where"].format(**fields),
                       Answer(choice=w["answer"], choices=p["where_choices"]),
                       [f"{w['answer']}: {w['why']}", *(f"[{c}]" for c in w["cites"])], dict(params),
                       spec.hints["where"].format(**fields))
    m = _find(p["misses"], name)
    assumed, actual = costs.cost(m["op"], m["shape"], m["assumed"]), costs.cost(m["op"], m["shape"], m["actual"])
    ratio = actual.bytes / assumed.bytes
    fields = {"op": f"{OP_LABELS[m['op']]} {describe(assumed)}", "assumed": m["assumed"], "actual": m["actual"]}
    steps = [f"bytes counted ({m['assumed']}) = {assumed.bytes_formula} = {assumed.bytes_working} = {sci(assumed.bytes)}",
             f"bytes moved ({m['actual']}) = {actual.bytes_working} = {sci(actual.bytes)}",
             f"T_comms = bytes / bandwidth, so it grows by {sci(actual.bytes)} / {sci(assumed.bytes)} = {ratio:g}x",
             m["why"]]
    miss: MissCardParams = {"card": params["card"], "op": m["op"], "shape": list(m["shape"]), "dtype": m["actual"]}
    return problem(spec, skill, "", spec.prompts["miss"].format(**fields), Answer(value=ratio, unit=""), steps,
                   dict(miss), spec.hints["miss"].format(**fields))

