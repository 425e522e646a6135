"""Drill specs: the YAML files under ``generator/problems/specs/`` that declare each problem family.

Each spec is parsed with the safe loader and validated; a bad spec raises ``SpecError``, one
line: ``file:line: where: what is wrong``.
Details: docs/internals.md.
"""

from __future__ import annotations

import dataclasses
import math
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Any, Mapping, NoReturn, Protocol

from generator.model import catalogue
from generator.io import safeio
from generator.errors import DrillError
from generator.model.units import normalize_dtype

if TYPE_CHECKING:
    import yaml

# PyYAML is imported where a spec file is parsed, not with this module: the quiz validates its
# one family's spec from the start-up cache (generator.problems.families.spec) and never needs it.

SPECS_DIR = Path(__file__).resolve().parent / "specs"  # the built-in families' specs

KeyPath = tuple[str | int, ...]  # a key path inside a spec document: ("params", "cases", "add", "dims")

TOP_LEVEL_KEYS = {"family", "title", "summary", "chips", "tolerance", "grading", "prompts", "hints", "params"}
GRADING_KEYS = {"easy_rel", "easy_seconds", "hard_seconds"}


class SpecError(DrillError, ValueError):
    """A drill spec that can not be used; the message is ``file:line: where: what``."""


@dataclass(frozen=True)
class GradingBands:
    """How an answer is graded, per family (the quiz maps these to FSRS ratings).

    Relative errors are |given - expected| / |expected| (dimensionless).
    """

    good_rel: float  # relative error counted right (Good): the family's tolerance
    easy_rel: float  # tight band: right within this AND quick -> Easy
    easy_seconds: float  # "quickly": answered within this many seconds
    hard_seconds: float  # a right answer slower than this many seconds -> Hard

    def to_dict(self) -> dict[str, float]:
        return {"good_rel": self.good_rel, "easy_rel": self.easy_rel,
                "easy_seconds": self.easy_seconds, "hard_seconds": self.hard_seconds}


@dataclass(frozen=True)
class FamilySpec:
    """One validated spec file."""

    family: str
    title: str
    summary: str
    path: str
    chips: tuple[str, ...]  # canonical catalogue names, in catalogue order
    tolerance: float
    grading: GradingBands
    prompts: dict[str, str]
    hints: dict[str, str]
    params: dict[str, Any]
    lines: dict[KeyPath, int] = field(default_factory=dict, repr=False, compare=False)

    def fail(self, where: KeyPath, message: str) -> NoReturn:
        """Raise a SpecError pointing at ``where`` (the nearest line known)."""
        raise SpecError(_located(self.path, self.lines, where, message))


def _located(path: str, lines: dict[KeyPath, int], where: KeyPath, message: str) -> str:
    probe = tuple(where)
    while probe and probe not in lines:
        probe = probe[:-1]
    line = lines.get(probe, 1)
    dotted = ".".join(str(p) for p in where) or "(top level)"
    return f"{path}:{line}: {dotted}: {message}"


# --- reading ------------------------------------------------------------------

MAX_NODES = 100_000  # a spec is a few hundred nodes; refuse anything absurd before walking it


def _index_lines(root: yaml.Node, lines: dict[KeyPath, int], path: str) -> None:
    """Record the line of every value by key path; refuse duplicate keys (YAML keeps the last silently).

    Each node is visited once, so aliases (``*name``) can not blow the walk up or loop it.
    """
    import yaml  # start-up: PyYAML loads only where YAML text is parsed

    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, KeyPath]] = [(root, ())]
    while stack:
        node, where = stack.pop()
        lines.setdefault(where, node.start_mark.line + 1)
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if len(seen_nodes) > MAX_NODES:
            raise SpecError(f"{path}:{node.start_mark.line + 1}: more than {MAX_NODES} YAML nodes; not a drill spec")
        if isinstance(node, yaml.MappingNode):
            keys: dict[Any, int] = {}
            for key_node, value_node in node.value:
                key = key_node.value
                if key in keys:
                    raise SpecError(f"{path}:{key_node.start_mark.line + 1}: duplicate key '{key}' "
                                    f"(first on line {keys[key]})")
                keys[key] = key_node.start_mark.line + 1
                stack.append((value_node, (*where, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*where, i)) for i, item in enumerate(node.value))


def read_document(path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """Parse one YAML file with the safe loader; return the data and a key-path -> line map."""
    import yaml  # start-up: PyYAML loads only where YAML text is parsed

    try:
        text = safeio.read_text_bounded(path, 1 << 20)  # a regular file, at most 1 MiB
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}:1: can not read: {exc}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SpecError(f"{path}:1: the file is empty")
        lines: dict[KeyPath, int] = {}
        _index_lines(node, lines, str(path))
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise SpecError(f"{path}:{line}: invalid YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}:1: invalid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()
    return data, lines


# --- checking helpers (used by the families for their own params) -------------

class Checker:
    """Typed getters that fail with the file and line of the offending value."""

    def __init__(self, path: str, lines: dict[KeyPath, int]):
        self.path, self.lines = path, lines

    def fail(self, where: KeyPath, message: str) -> NoReturn:
        raise SpecError(_located(self.path, self.lines, where, message))

    def mapping(self, value: Any, where: KeyPath, *, required: AbstractSet[str] = frozenset(),
                allowed: AbstractSet[str] | None = None) -> dict[Any, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected a mapping, got {_kind(value)}")
        missing = sorted(set(required) - set(value))
        if missing:
            self.fail(where, f"missing key(s): {', '.join(missing)}")
        if allowed is not None:
            unknown = sorted(str(k) for k in set(value) - set(allowed))
            if unknown:
                self.fail((*where, unknown[0]), f"unknown key '{unknown[0]}'; allowed: {', '.join(sorted(allowed))}")
        return value

    def text(self, value: Any, where: KeyPath) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(where, f"expected non-empty text, got {_kind(value)}")
        return value

    def number(self, value: Any, where: KeyPath, *, low: float | None = None, high: float | None = None,
               low_open: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(where, f"expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            self.fail(where, f"expected a finite number, got {value}")
        if low is not None and (value < low or (low_open and value == low)):
            self.fail(where, f"must be {'>' if low_open else '>='} {low}, got {value}")
        if high is not None and value > high:
            self.fail(where, f"must be <= {high}, got {value}")
        return float(value)

    def integer(self, value: Any, where: KeyPath, *, low: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {_kind(value)}")
        if value < low:
            self.fail(where, f"must be >= {low}, got {value}")
        return value

    def int_list(self, value: Any, where: KeyPath, *, low: int = 1) -> tuple[int, ...]:
        if not isinstance(value, list) or not value:
            self.fail(where, f"expected a non-empty list of integers, got {_kind(value)}")
        return tuple(self.integer(v, (*where, i), low=low) for i, v in enumerate(value))

    def text_list(self, value: Any, where: KeyPath) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            self.fail(where, f"expected a non-empty list of text, got {_kind(value)}")
        return tuple(self.text(v, (*where, i)) for i, v in enumerate(value))

    def dtype_list(self, value: Any, where: KeyPath) -> list[str]:
        """A non-empty list of dtype names, each normalized (``bfloat16`` -> ``bf16``)."""

        dtypes = []
        for i, name in enumerate(self.text_list(value, where)):
            try:
                dtypes.append(normalize_dtype(name))
            except ValueError as exc:
                self.fail((*where, i), str(exc))
        return dtypes

    def one_of(self, value: Any, where: KeyPath, options: tuple[str, ...] | list[str]) -> str:
        if value not in options:
            self.fail(where, f"'{value}' is not one of: {', '.join(options)}")
        return str(value)

    def template(self, value: Any, where: KeyPath, fields: set[str]) -> str:
        """A text with ``{name}`` placeholders, each one of ``fields`` (no attribute or index access)."""
        text = self.text(value, where)
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            self.fail(where, f"bad template: {exc} (write a literal brace as '{{{{' or '}}}}')")
        for _, name, spec, conversion in parsed:
            if name is None:
                continue
            if name not in fields:
                allowed = ", ".join("{" + f + "}" for f in sorted(fields)) or "none"
                self.fail(where, f"unknown placeholder '{{{name}}}'; allowed here: {allowed}")
            if spec or conversion:
                self.fail(where, f"placeholder '{{{name}}}' may not carry a format spec or conversion")
        return text


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"text '{value}'" if len(value) < 40 else "text"
    return type(value).__name__


# --- the generic part of every spec -------------------------------------------

def _chips(check: Checker, raw: Any, where: KeyPath) -> tuple[str, ...]:
    cat = catalogue.load()
    if raw in ("all", "tpu", "gpu"):
        return tuple(c.name for c in cat.chips if raw == "all" or c.kind == raw)
    if not isinstance(raw, list) or not raw:
        check.fail(where, "expected 'all', 'tpu', 'gpu' or a list of chip names")
    names = []
    for i, name in enumerate(raw):
        try:
            names.append(cat.get(str(name)).name)
        except catalogue.UnknownChipError as exc:
            check.fail((*where, i), str(exc))
    order = {n: i for i, n in enumerate(cat.names())}
    return tuple(sorted(set(names), key=order.__getitem__))


class FamilyRules(Protocol):
    """What a family module tells the loader: its templates' placeholders and its params check."""

    PROMPTS: dict[str, set[str]]  # template name -> allowed placeholders

    def check_params(self, spec: FamilySpec, check: Checker) -> dict[str, Any]: ...


def parse_spec(data: Any, lines: dict[KeyPath, int], path: str,
               families: Mapping[str, FamilyRules]) -> FamilySpec:
    """Validate one spec document: the generic keys here, then the family's own ``params``."""
    check = Checker(path, lines)
    data = check.mapping(data, (), required={"family", "title", "chips", "tolerance", "grading", "prompts",
                                             "hints", "params"}, allowed=TOP_LEVEL_KEYS)
    family = check.text(data["family"], ("family",))
    if family not in families:
        check.fail(("family",), f"unknown family '{family}'; known families: {', '.join(families)}")
    rules = families[family]
    fields = rules.PROMPTS
    tolerance = check.number(data["tolerance"], ("tolerance",), low=0.0, high=1.0)
    g = check.mapping(data["grading"], ("grading",), required=GRADING_KEYS, allowed=GRADING_KEYS)
    easy_rel = check.number(g["easy_rel"], ("grading", "easy_rel"), low=0.0, high=1.0)
    if easy_rel > tolerance:
        check.fail(("grading", "easy_rel"), f"the Easy band ({easy_rel}) must not be wider than tolerance ({tolerance})")
    bands = GradingBands(
        good_rel=tolerance, easy_rel=easy_rel,
        easy_seconds=check.number(g["easy_seconds"], ("grading", "easy_seconds"), low=0.0, low_open=True),
        hard_seconds=check.number(g["hard_seconds"], ("grading", "hard_seconds"), low=0.0, low_open=True))
    if bands.hard_seconds < bands.easy_seconds:
        check.fail(("grading", "hard_seconds"), f"hard_seconds ({bands.hard_seconds}) must not be below "
                                                f"easy_seconds ({bands.easy_seconds})")
    templates = {}
    for section in ("prompts", "hints"):
        raw = check.mapping(data[section], (section,), required=set(fields), allowed=set(fields))
        templates[section] = {k: check.template(raw[k], (section, k), fields[k]) for k in fields}
    spec = FamilySpec(
        family=family, title=check.text(data["title"], ("title",)),
        summary=str(data.get("summary", "")).strip(), path=path,
        chips=_chips(check, data["chips"], ("chips",)), tolerance=tolerance, grading=bands,
        prompts=templates["prompts"], hints=templates["hints"],
        params=check.mapping(data["params"], ("params",)), lines=lines)
    return dataclasses.replace(spec, params=rules.check_params(spec, check))


def load_dir(directory: str | Path | None, families: Mapping[str, FamilyRules]) -> dict[str, FamilySpec]:
    """Every ``*.yaml`` in ``directory`` (default: generator/problems/specs), one per family, all present."""
    root = Path(directory) if directory is not None else SPECS_DIR
    if not root.is_dir():
        raise SpecError(f"{root}:1: drill spec directory not found")
    specs: dict[str, FamilySpec] = {}
    for path in sorted(root.glob("*.yaml")):
        data, lines = read_document(path)
        spec = parse_spec(data, lines, str(path), families)
        if spec.family in specs:
            spec.fail(("family",), f"family '{spec.family}' is already declared in {specs[spec.family].path}")
        specs[spec.family] = spec
    missing = [f for f in families if f not in specs]
    if missing:
        raise SpecError(f"{root}:1: no spec for famil{'y' if len(missing) == 1 else 'ies'}: {', '.join(missing)}")
    return specs
