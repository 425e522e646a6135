"""generator/snapshot.json: what the quiz reads at startup instead of the YAML.

It must be exactly what ``python -m generator.snapshot`` writes from today's YAML and family modules
(so it can never go stale silently), give the same registry as the YAML path, and be ignored,
never trusted, when it does not match its inputs or can not be read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from generator import catalogue, generate, snapshot
from generator.families import FAMILIES
from tests.conftest import REPO


def _yaml_registry() -> generate.Registry:
    with snapshot.ignored():
        return generate.Registry()


def test_the_checked_in_snapshot_is_what_the_regenerate_command_writes():
    on_disk = json.loads(snapshot.SNAPSHOT_PATH.read_text(encoding="utf-8"))
    fresh = snapshot.build()
    stale = f"generator/snapshot.json is stale: run `{snapshot.REGENERATE}` and commit it"
    assert on_disk["inputs"] == snapshot.inputs_digest(), stale
    assert snapshot.same(on_disk, fresh), stale
    assert snapshot.load() is not None  # current, so the quiz uses it


def test_the_snapshot_gives_the_same_catalogue_specs_skills_and_problems_as_the_yaml():
    slow = _yaml_registry()
    assert snapshot.load() is not None
    fast = generate.Registry()
    assert isinstance(fast.specs, generate.SnapshotSpecs) and not isinstance(slow.specs, generate.SnapshotSpecs)
    assert fast.catalogue == slow.catalogue
    assert fast.all_skills == slow.all_skills and len(fast.all_skills) > 400
    assert list(fast.specs) == list(slow.specs) == sorted(FAMILIES)
    for family in FAMILIES:
        assert fast.specs[family] == slow.specs[family]
        assert fast.specs[family].lines == slow.specs[family].lines  # errors point at the same line
    assert fast.can_you() == slow.can_you()
    one_per_family = {s.family: s.id for s in reversed(fast.all_skills)}
    assert fast.generate(count=1, seed=11, families=["ridge", "vocabulary", "lattice"]) == \
        slow.generate(count=1, seed=11, families=["ridge", "vocabulary", "lattice"])
    for skill_id in one_per_family.values():
        assert fast.draw(skill_id, generate.random.Random(3)) == slow.draw(skill_id, generate.random.Random(3))


def _use_snapshot_file(monkeypatch, path) -> None:
    monkeypatch.setattr(snapshot, "SNAPSHOT_PATH", path)
    snapshot.load.cache_clear()
    catalogue.load.cache_clear()
    generate.registry.cache_clear()


@pytest.fixture
def fresh_caches():
    yield
    snapshot.load.cache_clear()
    catalogue.load.cache_clear()
    generate.registry.cache_clear()


def test_a_stale_or_broken_snapshot_is_ignored_and_the_yaml_is_parsed(tmp_path, monkeypatch, fresh_caches):
    good = json.loads(snapshot.SNAPSHOT_PATH.read_text(encoding="utf-8"))
    tampered = {**good, "skills": good["skills"][:3]}  # would hide skills if it were trusted
    cases = {
        "stale.json": json.dumps({**tampered, "inputs": "0" * 64}),  # built from other inputs
        "no-digest.json": json.dumps({k: v for k, v in tampered.items() if k != "inputs"}),
        "other-format.json": json.dumps({**tampered, "format": snapshot.FORMAT + 1}),
        "garbage.json": "\x00\xff not json",
        "truncated.json": snapshot.SNAPSHOT_PATH.read_text(encoding="utf-8")[:5000],
        "list.json": "[]",
        "wrong-shape.json": json.dumps({**good, "skills": {"not": "a list"}}),
        "deep.json": "[" * 200_000 + "]" * 200_000,
        "empty.json": "",
    }
    expected = [s.id for s in _yaml_registry().all_skills]
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        _use_snapshot_file(monkeypatch, path)
        assert snapshot.load() is None, name
        registry = generate.Registry()
        assert not isinstance(registry.specs, generate.SnapshotSpecs), name
        assert [s.id for s in registry.all_skills] == expected, name
    for special in ("missing", "fifo", "dir"):  # never blocks on a FIFO, never reads a directory
        path = tmp_path / special
        if special == "fifo":
            os.mkfifo(path)
        elif special == "dir":
            path.mkdir()
        _use_snapshot_file(monkeypatch, path)
        assert snapshot.load() is None, special
        assert catalogue.load().names() == _yaml_registry().catalogue.names()


def _copy_inputs(root):
    """The snapshot's inputs under ``root``, laid out as in the repository."""
    shutil.copytree(snapshot.GENERATOR_DIR, root / "generator", ignore=shutil.ignore_patterns("__pycache__", "export"))
    shutil.copytree(snapshot.SPECS_DIR, root / "drills" / "specs")
    return root / "generator", root / "drills" / "specs"


def test_a_new_family_module_or_spec_or_any_edit_makes_the_snapshot_stale(tmp_path):
    gen, specs = _copy_inputs(tmp_path)
    today = snapshot.inputs_digest()
    assert snapshot.inputs_digest(gen, specs) == today  # same names, same bytes
    (specs / "miss_reason.yaml").write_text((specs / "ridge.yaml").read_text(), encoding="utf-8")
    with_spec = snapshot.inputs_digest(gen, specs)
    assert with_spec != today
    (gen / "families" / "miss_reason.py").write_text("NAME = 'miss_reason'\n", encoding="utf-8")
    assert snapshot.inputs_digest(gen, specs) not in (today, with_spec)
    gen2, specs2 = _copy_inputs(tmp_path / "edit")
    chips = gen2 / "chips.yaml"
    chips.write_text(chips.read_text(encoding="utf-8").replace("2026-07-26", "2026-07-27", 1), encoding="utf-8")
    assert snapshot.inputs_digest(gen2, specs2) != today
    gen3, specs3 = _copy_inputs(tmp_path / "code")
    with open(gen3 / "families" / "ridge.py", "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert snapshot.inputs_digest(gen3, specs3) != today


def test_every_family_module_is_registered_under_its_own_name():
    files = sorted(p.stem for p in (snapshot.GENERATOR_DIR / "families").glob("*.py")
                   if p.stem not in ("__init__", "base", "ops"))
    assert sorted(FAMILIES) == files  # a module not in the registry would be silently left out
    assert tuple(FAMILIES) == generate.FAMILY_NAMES
    for name in FAMILIES:
        assert FAMILIES[name].NAME == name
    assert "nope" not in FAMILIES and [] not in FAMILIES
    with pytest.raises(KeyError):
        FAMILIES["nope"]


def test_the_regenerate_command_checks_and_refuses_unknown_arguments(tmp_path, monkeypatch, capsys):
    assert snapshot.main(["--check"]) == 0
    assert snapshot.main(["--bogus"]) == 2
    stale = tmp_path / "snapshot.json"
    stale.write_text(json.dumps({"format": 1}), encoding="utf-8")
    monkeypatch.setattr(snapshot, "SNAPSHOT_PATH", stale)
    assert snapshot.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert snapshot.main([]) == 0  # writes it atomically through safeio
    assert snapshot.same(json.loads(stale.read_text(encoding="utf-8")), snapshot.build())


_MODULES_AT_EXIT = ("import atexit, json, sys;"
                    "atexit.register(lambda: sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + chr(10)));"
                    "sys.argv = ['drill'] + sys.argv[1:];"
                    "from drills.cli import main; main()")


def _modules_at_exit(*args: str, stdin: str = "") -> tuple[subprocess.CompletedProcess, list[str]]:
    res = subprocess.run([sys.executable, "-c", _MODULES_AT_EXIT, *args], input=stdin, text=True,
                         capture_output=True, cwd=REPO, timeout=120)
    line = next(x for x in res.stderr.splitlines() if x.startswith("MODULES "))
    return res, json.loads(line[len("MODULES "):])


@pytest.mark.slow
def test_the_quiz_reaches_its_first_prompt_without_yaml_or_other_families(tmp_path):
    for seed, count in (("1", "1"), ("4", "3")):
        res, modules = _modules_at_exit("quiz", "--store", str(tmp_path / f"s{seed}.sqlite3"), "--count", count,
                                        "--new", count, "--seed", seed)
        assert res.returncode == 0, res.stderr
        first = next(x for x in res.stdout.splitlines() if x.startswith("[1/"))
        family = first.split("] ", 1)[1].split(" · ")[0].replace(" ", "_")
        assert family in FAMILIES
        families = {m.rsplit(".", 1)[1] for m in modules if m.startswith("generator.families.")} - {"base", "ops"}
        assert families == {family}, first  # only the drawn family, not all of them
        assert not [m for m in modules if m == "yaml" or m.startswith(("yaml.", "generator.yamlio"))]
        assert "generator.snapshot" in modules


@pytest.mark.slow
def test_drill_check_rebuilds_a_problem_without_yaml(tmp_path):
    problem = generate.generate(families=["floor"], chips=["v5e"], count=1, seed=2)[0]
    res, modules = _modules_at_exit("check", "--problem-id", problem.id, "--answer", "1s", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["problem_id"] == problem.id
    assert "yaml" not in modules
    assert {m for m in modules if m.startswith("generator.families.")} <= {
        "generator.families.floor", "generator.families.base", "generator.families.ops"}
