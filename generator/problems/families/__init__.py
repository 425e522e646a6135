"""The problem families, found rather than listed: a family is one module and one spec.

``FAMILIES`` maps a family's name to its module, imported the first time it is looked up.
To add a family, add its module here and its spec, ``generator/problems/specs/NAME.yaml``.
Details: docs/internals.md.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import os
import pkgutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from importlib.machinery import PathFinder
from typing import Any, NamedTuple

from generator.errors import DrillError
from generator.io import startcache
from generator.problems import specs
from generator.problems.families import base

EXTRA_PACKAGES_ENV = "DRILL_FAMILY_PACKAGES"


class Found(NamedTuple):
    """Where one family lives: its module's import name and its spec file."""

    module: str
    spec: Path


class FamilyPackageError(DrillError, ImportError):
    """A name in ``$DRILL_FAMILY_PACKAGES`` that is not a family package; the message is one line (a
    usage error: exit 2)."""

    exit_code = 2


def package_dirs() -> list[tuple[str, Path]]:
    """(import name, folder) of each family package: this one, then those in ``$DRILL_FAMILY_PACKAGES``.

    Each name is checked on the file system before anything of it runs: it must be an importable
    package (not a plain module such as ``this``) with an ``__init__.py``, and define a family (a
    module with a spec of its name in the ``specs`` folder next to it). Only then is it imported.
    Anything else is ``FamilyPackageError`` naming the variable and the name."""
    out = [(__name__, Path(__file__).resolve().parent)]
    for name in (n.strip() for n in os.environ.get(EXTRA_PACKAGES_ENV, "").split(",")):
        if name:
            folder = _package_folder(name)
            try:
                importlib.import_module(name)
            except Exception as exc:  # its own code failed: still one line naming the variable
                raise FamilyPackageError(f"${EXTRA_PACKAGES_ENV}: importing {name} failed: "
                                         f"{' '.join(str(exc).split()) or type(exc).__name__}") from None
            out.append((name, folder))
    return out


def _package_folder(name: str) -> Path:
    """The folder of the family package ``name``, found without importing it (FamilyPackageError)."""

    where = f"${EXTRA_PACKAGES_ENV}: {ascii(name)}"
    if not all(part.isidentifier() for part in name.split(".")):
        raise FamilyPackageError(f"{where} is not a package name (dotted Python identifiers, comma-separated)")
    search: list[str] | None = None
    folder = None
    for part in name.split("."):
        spec = PathFinder.find_spec(part, search)
        if spec is None:
            raise FamilyPackageError(f"{where}: no such package is importable")
        if spec.submodule_search_locations is None:
            raise FamilyPackageError(f"{where} is a module, not a family package (a folder with __init__.py)")
        if spec.origin is None or not spec.origin.endswith("__init__.py"):
            raise FamilyPackageError(f"{where} has no __init__.py; a family package needs one")
        folder = Path(spec.origin).resolve().parent
        search = [str(folder)]
    assert folder is not None
    specs = specs_dir(folder)
    if not any(not info.ispkg and (specs / f"{info.name}.yaml").is_file()
               for info in pkgutil.iter_modules([str(folder)])):
        raise FamilyPackageError(f"{where} defines no family (no module of it has a spec in "
                                 f"{specs.parent.name}/{specs.name})")
    return folder


def specs_dir(package_dir: Path) -> Path:
    """The folder of a family package's specs: ``specs`` next to it (generator/problems/families -> generator/problems/specs)."""
    return package_dir.parent / "specs"


@functools.lru_cache(maxsize=1)
def found() -> dict[str, Found]:
    """name -> where it lives, for every family of every family package (nothing imported)."""
    out: dict[str, Found] = {}
    for package, folder in package_dirs():
        specs = specs_dir(folder)
        for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda i: i.name):
            spec = specs / f"{info.name}.yaml"
            if info.ispkg or not spec.is_file():
                continue
            if info.name in out:
                raise FamilyPackageError(f"${EXTRA_PACKAGES_ENV}: family '{info.name}' is in two packages: "
                                         f"{out[info.name].module} and {package}.{info.name}")
            out[info.name] = Found(f"{package}.{info.name}", spec)
    return out


def forget() -> None:
    """Find the families again (after ``$DRILL_FAMILY_PACKAGES`` changed: tests)."""
    found.cache_clear()
    names.cache_clear()
    device_practice.cache_clear()
    _documents.cache_clear()
    _specs.clear()
    _modules.clear()


def module(name: str) -> ModuleType:
    where = found().get(name)
    if where is None:
        raise KeyError(name)
    known = _modules.get(name)
    if known is not None and sys.modules.get(where.module) is known:  # checked already, still the one imported
        return known
    mod = importlib.import_module(where.module)
    if getattr(mod, "NAME", None) != name:
        raise ImportError(f"{mod.__name__} declares NAME = {getattr(mod, 'NAME', None)!r}; it must be {name!r}")
    _modules[name] = mod
    return mod


_modules: dict[str, ModuleType] = {}  # name -> its module, once ``module`` has checked its NAME


@functools.lru_cache(maxsize=1)
def names() -> tuple[str, ...]:
    """Every family in course order (``ORDER``, then name). Reading ``ORDER`` imports every family
    module, so the order is kept in ``generator.io.startcache``, keyed by the families' files."""

    def build() -> list[str]:
        return sorted(found(), key=lambda n: (module(n).ORDER, n))

    order = startcache.cached("families", source_files(), build)
    if not isinstance(order, list) or sorted(order) != sorted(found()):  # a hand-edited entry
        order = build()
    return tuple(order)


@functools.lru_cache(maxsize=1)
def device_practice() -> frozenset[str]:
    """The families of practice on the lab's own device (``DEVICE_PRACTICE`` in their modules), which a
    chip filter leaves out. Kept in ``generator.io.startcache`` like ``names``: reading the flag imports
    every family module."""

    def build() -> list[str]:
        return sorted(n for n in found() if getattr(module(n), "DEVICE_PRACTICE", False))

    flagged = startcache.cached("device_practice", source_files(), build)
    if not isinstance(flagged, list) or not set(flagged) <= set(found()):  # a hand-edited entry
        flagged = build()
    return frozenset(flagged)


def spec_files() -> list[Path]:
    """Each family's spec, in name order."""
    return [f.spec for _, f in sorted(found().items())]


def source_files() -> list[Path]:
    """What the families are made of: every file of every family package and of its specs folder
    (their modules and any data they read, e.g. ``families/data/*.json``), for cache keys."""

    out: list[Path] = []
    for _, folder in package_dirs():
        out += startcache.files_under(folder) + startcache.files_under(specs_dir(folder))
    return out


def deck_id(name: str) -> int:
    """The family's Anki deck id (``DECK_ID`` in its module)."""
    return int(module(name).DECK_ID)


def mastery_rules() -> dict[int, list[Any]]:
    """The "Can you" item number -> the ``base.Mastery`` rules the families declare for it (``MASTERY``), each
    rule's ``families`` filled in with its own family when it names none. An item is mastered when
    all of its rules hold. The rules come from ``generator.io.startcache`` when an entry built from the
    families' files is there, so a quiz imports only the families it draws."""
    rows = startcache.cached("mastery", source_files(), _mastery_rows)
    if not _mastery_shaped(rows):
        rows = _mastery_rows()  # not the shape this writes: read the modules, as without a cache
    out: dict[int, list[Any]] = {}
    for item, row in rows:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}
        rule = base.Mastery(**fields)
        out.setdefault(int(item), []).append(rule)
    return dict(sorted(out.items()))


def _mastery_rows() -> list[list[Any]]:
    """[item, the rule as a dict] for every family's ``MASTERY``, in family order (``mastery_rules``)."""
    rows: list[list[Any]] = []
    for name in names():
        for item, rule in (getattr(module(name), "MASTERY", None) or {}).items():
            if not rule.families and not rule.lab:
                rule = dataclasses.replace(rule, families=(name,))
            rows.append([int(item), {k: list(v) if isinstance(v, tuple) else v  # as JSON keeps it
                                     for k, v in dataclasses.asdict(rule).items()}])
    return rows


def _mastery_shaped(rows: Any) -> bool:
    fields = {f.name for f in dataclasses.fields(base.Mastery)}
    return isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == 2 and type(r[0]) is int and isinstance(r[1], dict)
        and set(r[1]) == fields for r in rows)


def spec(name: str) -> Any:
    """The family's spec (``generator.problems.specs.FamilySpec``) from ``generator/problems/specs/NAME.yaml`` (or its
    package's ``specs``), validated with the family's own ``check_params`` once per process. The
    parsed YAML comes from ``generator.io.startcache`` when an entry built from today's spec files is
    there, so a quiz imports no PyYAML and validates only the specs of the families it draws."""
    parsed = _specs.get(name)
    if parsed is None:
        if name not in found():
            raise KeyError(name)
        document = json.loads(_documents()[name])
        path = str(found()[name].spec)
        parsed = specs.parse_spec(document["data"], {tuple(w): line for w, line in document["lines"]}, path,
                                  FAMILIES)
        if parsed.family != name:
            parsed.fail(("family",), f"the spec of family '{name}' must say family: {name} (its file is {name}.yaml)")
        _specs[name] = parsed
    return parsed


_specs: dict[str, Any] = {}


@functools.lru_cache(maxsize=1)
def _documents() -> dict[str, str]:
    """name -> its spec's parsed document and key-path -> line map, as JSON text (each parsed when drawn)."""

    documents: dict[str, str] = startcache.cached("specs", spec_files(),
                                                  lambda: {n: _document(f.spec) for n, f in sorted(found().items())})
    return documents


def _document(path: Path) -> str:
    data, lines = specs.read_document(path)
    document = {"data": data, "lines": [[list(where), line] for where, line in lines.items()]}
    try:
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = ""
    if not text or not startcache.same(json.loads(text), document):
        raise specs.SpecError(f"{path}:1: holds a value JSON can not keep exactly (a date, a non-text key?); "
                              "quote it in the YAML")
    return text


class LazyFamilies(Mapping[str, ModuleType]):
    """name -> family module, imported on first lookup; membership imports nothing; iterating gives
    the names in course order (importing every module, once)."""

    def __getitem__(self, name: str) -> ModuleType:
        return module(name)

    def __contains__(self, name: object) -> bool:
        try:
            return name in found()
        except TypeError:  # unhashable: not a family name
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __len__(self) -> int:
        return len(found())


FAMILIES: Mapping[str, ModuleType] = LazyFamilies()
