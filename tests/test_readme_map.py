"""The README's map matches the tree: every module of generator/ and drills/ is in "What is here",
and every file the map or "Where things live" names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _map_block() -> str:
    section = README.split("## What is here", 1)[1]
    return section.split("```", 2)[1]


def _entries(package: str) -> set[str]:
    return {p.name + ("/" if p.is_dir() else "") for p in (REPO / package).iterdir()
            if p.name not in ("__init__.py", "__pycache__") and not p.name.startswith(".")}


def _named_under(block: str, package: str) -> set[str]:
    """The entries the map lists directly below ``package``'s line (a path such as "generator/model":
    each part a line indented under the one before), not those of a folder listed under it."""
    lines = block.splitlines()
    start, indent = -1, -1
    for part in package.split("/"):
        start = next(i for i in range(start + 1, len(lines))
                     if len(lines[i]) - len(lines[i].lstrip()) > indent and lines[i].lstrip().startswith(f"{part}/"))
        indent = len(lines[start]) - len(lines[start].lstrip())
    names: set[str] = set()
    child = None
    for line in lines[start + 1:]:
        depth = len(line) - len(line.lstrip())
        if depth <= indent:
            break
        child = depth if child is None else child
        if depth > child:
            continue  # a folder's own entries, or a description's second line
        # an entry starts its line, follows two spaces, or follows ", " in a list of entries
        names |= set(re.findall(r"(?:^ +|  |, )([A-Za-z_][\w.-]*(?:\.py|\.yaml|/))(?=[ ,]|$)", line))
    return names


MAPPED = ("generator", "generator/model", "generator/problems", "generator/explain", "generator/io", "drills",
          "drills/quiz", "drills/store")


def test_every_generator_and_drills_entry_is_on_the_map_and_nothing_else():
    block = _map_block()
    for package in MAPPED:
        named = _named_under(block, package)
        assert named == _entries(package), (package, sorted(named ^ _entries(package)))


def test_every_path_the_where_table_names_exists():
    section = README.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    paths = [p for p in re.findall(r"`((?:generator|drills|labs|bench)/[^`*\s]+)`", section)]
    assert len(paths) > 20
    missing = [p for p in paths if not (REPO / p.split(":")[0]).exists() and "NAME" not in p]
    assert not missing, missing
