"""A JSON snapshot of what ``drill quiz`` needs before its first question, so startup parses no YAML.

``generator/snapshot.json`` (checked in) holds the parsed ``chips.yaml``, every drill spec's parsed
document with its key-path -> line map, and the skill index (every ``Skill``, per family and chip),
all built by the YAML path itself: ``python -m generator.snapshot`` (the regenerate command).

It is used only when it matches its inputs: ``inputs`` is a checksum (CRC-32 + Adler-32) over the names and bytes of
``chips.yaml``, ``drills/specs/*.yaml``, ``generator/*.py`` and every file under ``generator/families/``
(so a new family module, its data or its spec changes it). On any mismatch, or a
snapshot that can not be read or is not the expected shape, ``load()`` returns None and every
caller parses the YAML as before: a stale or broken snapshot costs time, never correctness.
``tests/generator/test_snapshot.py`` fails when the checked-in snapshot is not exactly what the
regenerate command would write, naming the command.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any, Iterator

from generator import safeio

FORMAT = 1
SNAPSHOT_PATH = Path(__file__).with_name("snapshot.json")
GENERATOR_DIR = Path(__file__).resolve().parent
SPECS_DIR = GENERATOR_DIR.parent / "drills" / "specs"  # = generator.specs.SPECS_DIR (not imported: it imports more)
REGENERATE = "python -m generator.snapshot"
MAX_SNAPSHOT_BYTES = 8 << 20
MAX_INPUT_BYTES = 4 << 20

_ignored = False  # True while build() runs: everything is read from the YAML


def input_files(generator_dir: Path = GENERATOR_DIR, specs_dir: Path = SPECS_DIR) -> list[Path]:
    """What the snapshot is derived from (sorted, so the digest does not depend on directory order):
    the catalogue, the specs, the generator's modules and every file of the families (their modules
    and any data they read, e.g. ``families/data/*.json``), bytecode caches and dotfiles left out."""
    families = []
    for folder, dirs, files in os.walk(generator_dir / "families"):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        families.extend(Path(folder, f) for f in files if not f.startswith("."))
    families.sort()
    return [generator_dir / "chips.yaml", *sorted(specs_dir.glob("*.yaml")), *sorted(generator_dir.glob("*.py")),
            *families]


def inputs_digest(generator_dir: Path = GENERATOR_DIR, specs_dir: Path = SPECS_DIR) -> str:
    """CRC-32 and Adler-32 (zlib: hashlib would load OpenSSL, ~8 ms a start) over each input's name
    (relative to the repository), length and bytes, and the total length.

    A checksum to notice edits, not a security measure: whoever can edit the YAML can edit the
    snapshot too. The snapshot test compares the whole content with a fresh build, so an edit that
    kept both checksums (about 1 in 2**64) would still fail the test."""
    root = str(generator_dir.parent) + os.sep
    crc, adler, total = 0, 1, 0
    for path in input_files(generator_dir, specs_dir):
        data = safeio.read_bytes_bounded(path, MAX_INPUT_BYTES)
        text = str(path)  # string slicing: pathlib's relative_to costs more than the reading
        name = (text[len(root):] if text.startswith(root) else path.name).replace(os.sep, "/")
        head = f"{name}\0{len(data)}\0".encode()
        crc, adler = zlib.crc32(data, zlib.crc32(head, crc)), zlib.adler32(data, zlib.adler32(head, adler))
        total += len(head) + len(data)
    return f"crc32:{crc:08x} adler32:{adler:08x} bytes:{total}"


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any] | None:
    """The snapshot when it is readable, well formed and built from today's inputs; else None."""
    if _ignored:
        return None
    try:
        data = json.loads(safeio.read_bytes_bounded(SNAPSHOT_PATH, MAX_SNAPSHOT_BYTES))
        if not (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("catalogue"), dict)
                and isinstance(data.get("specs"), dict) and isinstance(data.get("skills"), list)):
            return None
        if data.get("inputs") != inputs_digest():
            return None
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON, too deep: parse the YAML instead
        return None
    return data


def spec_document(entry: dict[str, Any]) -> tuple[Any, dict[tuple, int]]:
    """A snapshot spec's parsed document and key-path -> line map, as ``generator.specs.read_document``
    returns them (parsed afresh on each call, so a caller may change what it gets)."""
    document = json.loads(entry["document"])
    return document["data"], {tuple(where): line for where, line in document["lines"]}


def skill_row(skill: Any) -> list[Any]:
    """A Skill as the snapshot keeps it: [id, family, chip, variant, description, tags]."""
    return [skill.id, skill.family, skill.chip, skill.variant, skill.description, list(skill.tags)]


@contextlib.contextmanager
def ignored() -> Iterator[None]:
    """Within the block the snapshot is not used: the catalogue and the registry come from the YAML.
    The cached catalogue and registries are dropped on entry and on exit."""
    global _ignored
    from generator import catalogue, generate

    def drop() -> None:
        catalogue.load.cache_clear()
        generate.registry.cache_clear()
        load.cache_clear()

    previous, _ignored = _ignored, True
    drop()
    try:
        yield
    finally:
        _ignored = previous
        drop()


def build() -> dict[str, Any]:
    """The snapshot, computed from the YAML (and the family modules) alone, never from an old snapshot."""
    from generator import catalogue, generate, specs, yamlio

    with ignored():
        registry = generate.Registry()  # the YAML path: validates every spec, the can-you cards, unique ids
        raw_catalogue = yamlio.safe_load(safeio.read_text_bounded(catalogue.CATALOGUE_PATH, MAX_INPUT_BYTES))
        by_path = {spec.path: name for name, spec in registry.specs.items()}
        spec_entries: dict[str, Any] = {}
        for path in sorted(specs.SPECS_DIR.glob("*.yaml")):
            data, lines = specs.read_document(path)
            document = {"data": data, "lines": [[list(where), line] for where, line in lines.items()]}
            if not same(json.loads(json.dumps(document)), document):
                raise ValueError(f"{path}: holds a value JSON can not keep exactly (a date, a non-text key?); "
                                 "quote it in the YAML")
            # JSON text inside the JSON: only the spec of a family that is drawn is parsed at startup
            spec_entries[by_path[str(path)]] = {"file": path.name,
                                                "document": json.dumps(document, ensure_ascii=False,
                                                                       separators=(",", ":"))}
        snapshot = {"format": FORMAT, "regenerate": REGENERATE, "inputs": inputs_digest(),
                    "catalogue": raw_catalogue, "specs": spec_entries,
                    "skills": [skill_row(s) for s in registry.all_skills]}
    round_trip = json.loads(dump(snapshot))
    if not same(round_trip, snapshot):
        raise ValueError("the YAML holds a value JSON can not keep exactly (a date, a non-text key?); "
                         "quote it in the YAML")
    return snapshot


def dump(snapshot: dict[str, Any]) -> str:
    # One top-level key per line, so a diff shows which part changed.
    parts = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
             for k, v in snapshot.items()]
    return "{\n" + ",\n".join(parts) + "\n}\n"


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, True is not 1, "1" is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def write(path: Path | None = None) -> Path:
    """Build the snapshot and write it atomically (``generator.safeio``) to ``path`` (default SNAPSHOT_PATH)."""
    text = dump(build())
    return safeio.write_text(SNAPSHOT_PATH if path is None else path, text)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        try:
            current = json.loads(safeio.read_bytes_bounded(SNAPSHOT_PATH, MAX_SNAPSHOT_BYTES))
        except (OSError, ValueError) as exc:
            print(f"{SNAPSHOT_PATH.name}: can not read it ({exc}); run `{REGENERATE}`", file=sys.stderr)
            return 1
        if not same(current, build()):
            print(f"{SNAPSHOT_PATH.name} is stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        print(f"{SNAPSHOT_PATH.name} is current")
        return 0
    if args:
        print(f"usage: {REGENERATE} [--check]", file=sys.stderr)
        return 2
    print(f"wrote {write()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
