"""The chip catalogue: ``chips.yaml`` loaded into ``Chip`` objects.

Every figure in the file is ``{value, source[, note]}``; a ``Figure`` keeps all
three so any answer can cite where its constants came from. Units are in the
names: FLOP/s, bytes/s, bytes, seconds.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import DrillError
from generator.model.roofline import UnpublishedFigureError
from generator.model import roofline
from generator.io import startcache
from generator.io.safeio import read_text_bounded

CATALOGUE_PATH = Path(__file__).with_name("chips.yaml")

# Figures that every chip must carry (the rest are optional, "where published").
REQUIRED_FIGURES = ("hbm_bytes_per_s", "hbm_bytes")


class UnknownChipError(DrillError, LookupError):
    """A chip name, alias or device_kind that the catalogue does not know."""

    def __init__(self, name: str, known: list[str], closest: str | None):
        self.name, self.known, self.closest = name, known, closest
        hint = f"; did you mean '{closest}'?" if closest else ""
        super().__init__(f"unknown chip '{name}'{hint} known chips: {', '.join(known)}")


@dataclass(frozen=True)
class Source:
    key: str
    title: str
    url: str
    retrieved: str
    note: str = ""

    def cite(self) -> str:
        return f"{self.title}, retrieved {self.retrieved}"

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "title": self.title, "url": self.url,
                "retrieved": self.retrieved, "note": self.note}


@dataclass(frozen=True)
class Alternative:
    """Another published figure for the same quantity (another edition of the source, or another source).

    ``per`` says what the published number counts: "chip" (as the catalogue's figure) or
    "host" (then the per-chip figure is ``value`` / chips per host).
    """

    value: float
    source: Source
    note: str = ""
    per: str = "chip"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source.key, "note": self.note, "per": self.per}


@dataclass(frozen=True)
class Figure:
    """One published number with the source it came from (and other published figures for it)."""

    value: Any
    source: Source
    note: str = ""
    alternatives: tuple[Alternative, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {"value": self.value, "source": self.source.key}
        if self.note:
            out["note"] = self.note
        if self.alternatives:
            out["other_editions"] = [a.to_dict() for a in self.alternatives]
        return out


@dataclass(frozen=True)
class Chip:
    name: str
    display: str
    kind: str  # "tpu" or "gpu"
    aliases: tuple[str, ...]
    device_kinds: tuple[str, ...]
    device_kind_match: str  # "exact" or "substring"
    device_kinds_source: Source | None
    peak_flops: dict[str, Figure]  # dtype -> FLOP/s (OP/s for int8)
    figures: dict[str, Figure] = field(default_factory=dict)

    # --- the two speeds -------------------------------------------------
    def peak_flops_per_s(self, dtype: str) -> float:
        """Peak FLOP/s for ``dtype``; KeyError naming the published dtypes."""
        try:
            return float(self.peak_flops[dtype].value)
        except KeyError:
            raise UnpublishedFigureError(
                f"{self.name} has no published {dtype} peak; published: {', '.join(self.peak_flops)}"
            ) from None

    @property
    def hbm_bytes_per_s(self) -> float:
        return float(self.figures["hbm_bytes_per_s"].value)

    @property
    def hbm_bytes(self) -> float:
        return float(self.figures["hbm_bytes"].value)

    def ridge_flops_per_byte(self, dtype: str = "bf16") -> float:
        """The ridge (critical intensity) on HBM, by the roofline's one formula (``roofline.ridge_flops_per_byte``)."""

        return roofline.ridge_flops_per_byte(self.peak_flops_per_s(dtype), self.hbm_bytes_per_s)

    def figure(self, key: str) -> Figure | None:
        """A figure by key (``vmem_bytes``, ``ici_bytes_per_s_one_way`` ...) or None."""
        fig = self.figures.get(key)
        return fig if fig is not None and fig.value is not None else None

    def published_figure(self, key: str) -> Figure:
        """The figure ``key``, which the caller needs (a family's required figure); KeyError if unpublished."""
        fig = self.figure(key)
        if fig is None:
            raise UnpublishedFigureError(f"{self.name} has no published {key}")
        return fig

    def value(self, key: str, default: Any = None) -> Any:
        fig = self.figure(key)
        return default if fig is None else fig.value

    def other_figures(self, key: str) -> list[tuple[float, Alternative]]:
        """(per-chip value, alternative) for each other published figure of ``key`` (a per-host
        figure is divided by the chips per host); empty when there are none."""
        fig = self.figure(key)
        if fig is None:
            return []
        out = []
        for alt in fig.alternatives:
            value = float(alt.value)
            if alt.per == "host":
                host = self.value("host_topology")
                if not host:
                    continue
                chips = 1
                for d in str(host).lower().split("x"):
                    chips *= int(d)
                value /= chips
            out.append((value, alt))
        return out

    def sources(self) -> list[Source]:
        seen: dict[str, Source] = {}
        if self.device_kinds_source is not None:
            seen[self.device_kinds_source.key] = self.device_kinds_source
        for fig in [*self.peak_flops.values(), *self.figures.values()]:
            seen.setdefault(fig.source.key, fig.source)
        return list(seen.values())

    def matches_device_kind(self, device_kind: str) -> bool:
        wanted = device_kind.strip().lower()
        for s in self.device_kinds:
            s = s.lower()
            if (self.device_kind_match == "exact" and wanted == s) or (
                self.device_kind_match == "substring" and s in wanted
            ):
                return True
        return False

    def to_dict(self) -> dict[str, Any]:
        """The JSON view used by ``drill chips --json``."""
        return {
            "name": self.name,
            "display": self.display,
            "aliases": list(self.aliases),
            "kind": self.kind,
            "device_kinds": list(self.device_kinds),
            "peak_flops_per_s": {d: float(f.value) for d, f in self.peak_flops.items()},
            "hbm_bytes_per_s": self.hbm_bytes_per_s,
            "hbm_bytes": self.hbm_bytes,
            "tensorcores_per_chip": self.value("tensorcores_per_chip"),  # None where not published
            "ridge_flops_per_byte": self.ridge_flops_per_byte("bf16"),
            "ridge_flops_per_byte_by_dtype": {
                d: self.ridge_flops_per_byte(d) for d in self.peak_flops
            },
            "figures": {k: f.to_dict() for k, f in self.figures.items()},
            "peak_flops_sources": {d: f.to_dict() for d, f in self.peak_flops.items()},
            "sources": [s.to_dict() for s in self.sources()],
        }


@dataclass(frozen=True)
class Catalogue:
    chips: tuple[Chip, ...]
    sources: dict[str, Source]
    facts: dict[str, Figure]

    def names(self) -> list[str]:
        return [c.name for c in self.chips]

    def _index(self) -> dict[str, Chip]:
        index: dict[str, Chip] = {}
        for chip in self.chips:
            for key in (chip.name, *chip.aliases):
                index[_normalize(key)] = chip
        return index

    def get(self, name: str) -> Chip:
        """A chip by name or alias, case-insensitive; UnknownChipError otherwise."""
        index = _INDEX_CACHE.get(id(self))
        if index is None:
            index = _INDEX_CACHE[id(self)] = self._index()
        chip = index.get(_normalize(name))
        if chip is None:
            import difflib  # only for the suggestion in the error: not imported by every start

            # Canonical names first, so "v5x" suggests v5e rather than an alias of TPU7x.
            close = (difflib.get_close_matches(_normalize(name), self.names(), n=1, cutoff=0.5)
                     or difflib.get_close_matches(_normalize(name), list(index), n=1, cutoff=0.5))
            raise UnknownChipError(name, self.names(), index[close[0]].name if close else None)
        return chip

    def for_device_kind(self, device_kind: str) -> Chip | None:
        """The chip JAX calls ``device_kind`` (e.g. "TPU v5 lite" -> v5e), or None."""
        for chip in self.chips:
            if chip.matches_device_kind(device_kind):
                return chip
        return None

    def fact(self, key: str) -> Figure:
        return self.facts[key]


_INDEX_CACHE: dict[int, dict[str, Chip]] = {}


def _normalize(name: str) -> str:
    return " ".join(name.strip().lower().replace("_", " ").split())


class CatalogueError(DrillError, ValueError):
    """chips.yaml is malformed: says which chip and which figure."""


def _figure(raw: Any, where: str, sources: dict[str, Source]) -> Figure:
    if not isinstance(raw, dict) or "value" not in raw or "source" not in raw:
        raise CatalogueError(f"{where}: a figure must be {{value, source[, note]}}, got {raw!r}")
    if raw["source"] not in sources:
        raise CatalogueError(f"{where}: unknown source '{raw['source']}'")
    alternatives = []
    for i, alt in enumerate(raw.get("other_editions") or ()):
        at = f"{where}.other_editions[{i}]"
        if not isinstance(alt, dict) or "value" not in alt or alt.get("source") not in sources:
            raise CatalogueError(f"{at}: an other edition must be {{value, source, note[, per]}} with a known source")
        if alt.get("per", "chip") not in ("chip", "host"):
            raise CatalogueError(f"{at}: per must be chip or host")
        alternatives.append(Alternative(float(alt["value"]), sources[alt["source"]], str(alt.get("note", "")),
                                        str(alt.get("per", "chip"))))
    return Figure(raw["value"], sources[raw["source"]], str(raw.get("note", "")), tuple(alternatives))


def parse(data: dict[str, Any]) -> Catalogue:
    """Build a Catalogue from the parsed YAML document, validating as it goes."""
    sources = {
        key: Source(key, s["title"], s["url"], str(s["retrieved"]), s.get("note", ""))
        for key, s in data["sources"].items()
    }
    facts = {k: _figure(v, f"facts.{k}", sources) for k, v in data.get("facts", {}).items()}
    chips = []
    for raw in data["chips"]:
        name = raw["name"]
        peaks = {d: _figure(f, f"{name}.peak_flops_per_s.{d}", sources)
                 for d, f in raw["peak_flops_per_s"].items()}
        if "bf16" not in peaks:
            raise CatalogueError(f"{name}: no bf16 peak")
        reserved = {"name", "display", "kind", "aliases", "device_kinds", "peak_flops_per_s"}
        figures = {k: _figure(v, f"{name}.{k}", sources) for k, v in raw.items() if k not in reserved}
        for key in REQUIRED_FIGURES:
            if key not in figures:
                raise CatalogueError(f"{name}: missing {key}")
        if raw["kind"] not in ("tpu", "gpu"):
            raise CatalogueError(f"{name}: kind must be tpu or gpu")
        chips.append(Chip(
            name=name,
            display=raw.get("display", name),
            kind=raw["kind"],
            aliases=tuple(raw.get("aliases", ())),
            device_kinds=tuple(raw["device_kinds"]["strings"]),
            device_kind_match=raw["device_kinds"]["match"],
            device_kinds_source=sources.get(raw["device_kinds"].get("source", "")),
            peak_flops=peaks,
            figures=figures,
        ))
    return Catalogue(tuple(chips), sources, facts)


@functools.lru_cache(maxsize=1)
def load(path: str | None = None) -> Catalogue:
    """The catalogue from ``chips.yaml`` (parsed once per process).

    The default file's parsed document comes from ``generator.io.startcache`` (JSON, no PyYAML) when
    an entry built from today's ``chips.yaml`` bytes is there; otherwise the YAML is parsed (and cached).
    """
    if path is None:
        return parse(startcache.cached("catalogue", [CATALOGUE_PATH], lambda: _read_yaml(CATALOGUE_PATH)))
    return parse(_read_yaml(Path(path)))


def _read_yaml(path: Path) -> Any:
    from generator.io.yamlio import safe_load  # start-up: only this path needs it

    return safe_load(read_text_bounded(path, 4 << 20))


def get(name: str) -> Chip:
    """Shortcut: ``load().get(name)``."""
    return load().get(name)
