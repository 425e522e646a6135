"""generator.io.startcache: built on first use in the user cache directory, keyed by content, ignored when damaged.

Nothing is checked in, so nothing goes stale: an edit to any input changes the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.model import catalogue
from generator.problems import families, generate
from generator.io import startcache
from tests.conftest import bound

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("DRILL_CACHE_DIR", str(folder))

    def drop():
        catalogue.load.cache_clear()
        generate.registry.cache_clear()
        families.forget()
        startcache.forget_digests()

    drop()
    yield folder
    monkeypatch.undo()
    drop()


def _counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_built_once_then_read_and_rebuilt_when_an_input_changes(cache, tmp_path):
    source = tmp_path / "in.yaml"
    source.write_text("a: 1\n")
    build, calls = _counting({"a": [1, 2.5, "x", None, True]})
    assert startcache.cached("t", [source], build) == {"a": [1, 2.5, "x", None, True]}
    assert startcache.cached("t", [source], build) == {"a": [1, 2.5, "x", None, True]} and len(calls) == 1
    entries = list(cache.glob("t-*.json"))
    assert len(entries) == 1
    source.write_text("a: 2\n")  # one byte: a new key, a new entry
    startcache.forget_digests()
    assert startcache.cached("t", [source], build) and len(calls) == 2
    assert len(list(cache.glob("t-*.json"))) == 2


def test_replace_rewrites_the_entry_of_the_same_content_only(cache, tmp_path):
    source = tmp_path / "in.yaml"
    source.write_text("a: 1\n")
    build, calls = _counting({"x": True})
    assert startcache.cached("t", [source], build) == {"x": True}
    startcache.replace("t", [source], {"x": True, "y": False})  # a table completed by a later call
    assert startcache.cached("t", [source], build) == {"x": True, "y": False} and len(calls) == 1
    assert len(list(cache.glob("t-*.json"))) == 1
    source.write_text("a: 2\n")  # other content: the replaced value is not read under the new key
    startcache.forget_digests()
    assert startcache.cached("t", [source], build) == {"x": True} and len(calls) == 2


def test_a_probe_table_grows_to_the_skills_of_each_selection(cache):
    small = generate.Registry().generate(["host_link"], ["v5e"], 1, 0)
    table = json.loads(next(cache.glob("probes-*.json")).read_bytes().split(b"\n", 1)[1])
    assert table and all(sid.startswith("host_link:v5e:") for sid in table)
    wider = generate.Registry().generate(["host_link", "floor"], ["v5e"], 1, 0)
    grown = json.loads(next(cache.glob("probes-*.json")).read_bytes().split(b"\n", 1)[1])
    assert table.items() <= grown.items() and any(sid.startswith("floor:") for sid in grown)
    assert [p.id for p in wider if p.family == "host_link"] == [p.id for p in small]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other format", "other key", "not an object",
                                    "fifo", "folder", "deep"])
def test_a_damaged_entry_is_ignored_and_rebuilt(cache, tmp_path, damage):
    source = tmp_path / "in.yaml"
    source.write_text("a: 1\n")
    build, calls = _counting({"a": 1})
    startcache.cached("t", [source], build)
    (entry,) = cache.glob("t-*.json")
    good = entry.read_text()
    entry.unlink()
    if damage == "fifo":
        os.mkfifo(entry)  # a scratch node: reading it must not hang
    elif damage == "folder":
        entry.mkdir()
    else:
        entry.write_text({"garbage": "\x00{not json", "truncated": good[: len(good) // 2],
                          "other format": good.replace(f'"format":{startcache.FORMAT}', '"format":99'),
                          "other key": good.replace('"key":"', '"key":"0'), "not an object": "[1, 2]",
                          "deep": "[" * 100_000 + "]" * 100_000}[damage])
    assert startcache.cached("t", [source], build) == {"a": 1} and len(calls) == 2


def _aged(path: Path, days: float = 3) -> None:
    import time

    old = time.time() - days * 86400
    os.utime(path, (old, old))


def test_only_entries_the_cache_provably_wrote_are_deleted(cache, tmp_path):
    """`DRILL_CACHE_DIR=docs` with the user's skills-matrix.json in it: never deleted."""
    source = tmp_path / "in.yaml"
    source.write_text("a: 1\n")
    startcache.cached("skills", [source], lambda: [1])
    (ours,) = cache.glob("skills-*.json")
    _aged(ours)
    users = {"skills-matrix.json": "{}", "skills-0123456789abcdef10.json": '{"mine": true}',
             "skills-fedcba9876543210ff.json": ours.read_text().replace(ours.name[7:-5], "fedcba9876543210ff")
             .replace('[1]', '[2]')}  # our header, a content that is not its own
    for name, text in users.items():
        (cache / name).write_text(text)
        _aged(cache / name)
    source.write_text("a: 2\n")
    startcache.forget_digests()
    startcache.cached("skills", [source], lambda: [2])  # a new entry: the time stale ones are removed
    assert not ours.exists()  # ours, proven by its own name, key and checksum
    assert all((cache / name).read_text() == text for name, text in users.items())


def test_a_symlinked_cache_folder_is_never_followed(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (real / "skills-matrix.json").write_text("{}")
    _aged(real / "skills-matrix.json")
    link = tmp_path / "rudrite-kernels"
    link.symlink_to(real)
    monkeypatch.setenv("DRILL_CACHE_DIR", str(link))
    source = tmp_path / "in.yaml"
    source.write_text("x")
    build, calls = _counting([1])
    assert startcache.cached("skills", [source], build) == [1]
    assert startcache.cached("skills", [source], build) == [1] and len(calls) == 2  # nothing cached there
    assert sorted(p.name for p in real.iterdir()) == ["skills-matrix.json"]


def test_an_entry_that_is_a_symlink_is_neither_read_nor_replaced(cache, tmp_path):
    source = tmp_path / "in.yaml"
    source.write_text("x")
    startcache.cached("t", [source], lambda: [1])
    (entry,) = cache.glob("t-*.json")
    victim = tmp_path / "victim.txt"
    victim.write_text(entry.read_text())
    entry.unlink()
    entry.symlink_to(victim)
    build, calls = _counting([1])
    assert startcache.cached("t", [source], build) == [1] and len(calls) == 1
    assert entry.is_symlink() and victim.read_text().startswith("{")


@pytest.mark.parametrize("edit", [("1.5", "9.5"), ("1.5", "1.6")])
def test_an_edited_or_bit_flipped_value_is_not_trusted(cache, tmp_path, edit):
    source = tmp_path / "in.yaml"
    source.write_text("x")
    build, calls = _counting({"peak": 1.5})
    startcache.cached("t", [source], build)
    (entry,) = cache.glob("t-*.json")
    entry.write_text(entry.read_text().replace(*edit))  # format and key still match
    assert startcache.cached("t", [source], build) == {"peak": 1.5} and len(calls) == 2


def test_a_poisoned_catalogue_entry_does_not_change_a_roofline(cache):
    from click.testing import CliRunner

    from drills.cli import cli

    args = ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "4096,4096,4096"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    (entry,) = cache.glob("catalogue-*.json")
    text = entry.read_text()
    assert "1.97e14" in text or "197000000000000" in text
    entry.write_text(text.replace("1.97e14", "9.99e14").replace("197000000000000", "999000000000000"))
    catalogue.load.cache_clear()
    generate.registry.cache_clear()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and again.output == first.output


def test_a_value_json_can_not_keep_is_used_but_not_cached(cache, tmp_path):
    source = tmp_path / "in.yaml"
    source.write_text("x")
    build, calls = _counting({1: "int key"})
    assert startcache.cached("t", [source], build) == {1: "int key"}
    assert startcache.cached("t", [source], build) == {1: "int key"} and len(calls) == 2
    assert not list(cache.glob("t-*.json"))


def test_an_unwritable_cache_directory_costs_time_not_correctness(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DRILL_CACHE_DIR", str(blocker / "cache"))
    source = tmp_path / "in.yaml"
    source.write_text("x")
    assert startcache.cached("t", [source], lambda: [1]) == [1]


def test_the_cache_gives_the_same_catalogue_specs_skills_and_problems_as_the_yaml(cache):
    cold = generate.Registry()  # empty cache: the YAML path, which writes the entries
    assert {p.name.split("-")[0] for p in cache.glob("*.json")} == {"catalogue", "families", "specs", "skills",
                                                                   "miss_reason"}  # its explained cases
    cold_problems = [(p.id, p.prompt, p.answer, p.solution) for p in cold.generate(count=1, seed=5)]
    catalogue.load.cache_clear()
    families.forget()
    warm = generate.Registry()
    assert [s.to_dict() for s in warm.all_skills] == [s.to_dict() for s in cold.all_skills]
    assert [(p.id, p.prompt, p.answer, p.solution) for p in warm.generate(count=1, seed=5)] == cold_problems
    from generator.io import yamlio

    assert catalogue.parse(yamlio.safe_load(catalogue.CATALOGUE_PATH.read_text())) == catalogue.load()
    yaml_specs = {name: spec for name, spec in generate.Registry(str(families.specs_dir(
        Path(families.__file__).parent))).specs.items()}
    assert {n: warm.specs[n] for n in yaml_specs} == yaml_specs


def test_the_skill_index_is_keyed_by_every_generator_file():
    inputs = {p.relative_to(REPO).as_posix() for p in generate.index_inputs()}
    assert {"generator/model/chips.yaml", "generator/model/costs.py", "generator/problems/families/floor.py",
            "generator/problems/families/data/miss_reason_cases.json", "generator/problems/specs/floor.yaml"} <= inputs


def _start(cache: Path, code: str) -> list[str]:
    env = {**os.environ, "DRILL_CACHE_DIR": str(cache)}
    env.pop(families.EXTRA_PACKAGES_ENV, None)
    probe = ("import atexit, json, sys; atexit.register(lambda: sys.stderr.write('MODULES ' + "
             "json.dumps(sorted(sys.modules)) + chr(10)));" + code)
    res = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=bound(120))
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stderr.splitlines() if x.startswith("MODULES "))
    return json.loads(line[len("MODULES "):])


def test_a_warm_start_parses_no_yaml_and_imports_only_the_drawn_family(tmp_path):
    code = "import random; from generator.problems import generate; generate.draw('ridge:v5e:bf16', random.Random(1))"
    cold = _start(tmp_path / "cache", code)
    assert "yaml" in cold and "generator.problems.families.vocabulary" in cold
    warm = _start(tmp_path / "cache", code)
    assert "yaml" not in warm and "generator.problems.specs" in warm
    drawn = sorted(m for m in warm if m.startswith("generator.problems.families.") and m.rsplit(".", 1)[1] in families.found())
    assert drawn == ["generator.problems.families.ridge"]  # helpers (base, slips) may come along; no other family


def test_the_cached_explained_cases_are_the_ones_the_model_explains(cache):
    from generator import explain as miss_reasons
    from generator.io import safeio
    from generator.problems.families import miss_reason

    spec = generate.Registry().specs["miss_reason"]  # the entry is written
    (entry,) = cache.glob("miss_reason-*.json")
    cached_ids = json.loads(entry.read_text().split("\n", 1)[1])  # the header line, then the value
    assert cached_ids == list(spec.params["cases"]) and cached_ids
    all_cases = safeio.read_json_bounded(miss_reason.DATA_DIR / spec.params["cases_file"],
                                         miss_reason.MAX_CASES_BYTES)["cases"]
    cases = [{**c, "ev": miss_reasons.OpEvidence.from_dict(c["evidence"])} for c in all_cases]
    explained = [c["id"] for c in cases
                 if miss_reason.key_reasons(c) and not miss_reason._wrong_lands_on_key(c, float(spec.tolerance))]
    assert cached_ids == explained


def test_the_suite_never_uses_the_users_own_cache_folder():
    """tests/conftest.py points the start-up cache at a folder of the run's own (unless one is named)."""
    import platformdirs

    assert startcache.cache_dir() != Path(platformdirs.user_cache_dir(startcache.APP, appauthor=False))


def _rehashed(entry: Path, old: str, new: str) -> None:
    """Edit an entry's value and recompute its checksum, as a writer who knows the format would."""
    head, body = entry.read_bytes().split(b"\n", 1)
    body = body.replace(old.encode(), new.encode())
    header = json.loads(head)
    assert body != entry.read_bytes().split(b"\n", 1)[1], "the edit found nothing to change"
    header["hash"] = startcache._digest(body)
    entry.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_shared_cache_folder_is_not_used_and_one_line_says_so(cache, tmp_path, capfd, mode):
    """``DRILL_CACHE_DIR`` at a folder others can write: a re-hashed entry planted there is never read, nothing
    is written there, and one line (once per process) says the cache is not used."""
    source = tmp_path / "in.yaml"
    source.write_text("x")
    startcache.cached("t", [source], lambda: {"peak": 1.5})
    (entry,) = cache.glob("t-*.json")
    _rehashed(entry, "1.5", "9.5")
    os.chmod(cache, mode)
    build, calls = _counting({"peak": 1.5})
    for _ in range(3):
        assert startcache.cached("t", [source], build) == {"peak": 1.5}
    startcache.replace("t", [source], {"peak": 2.5})
    assert len(calls) == 3 and "9.5" in entry.read_text() and sorted(cache.iterdir()) == [entry]
    err = capfd.readouterr().err
    assert err.count("\n") == 1, err
    assert f"start-up cache folder {cache} is writable by its group or by other users (mode {mode:04o})" in err
    assert "not used" in err


def test_a_cache_entry_others_can_write_or_own_is_not_read(cache, tmp_path, capfd):
    source = tmp_path / "in.yaml"
    source.write_text("x")
    startcache.cached("t", [source], lambda: {"peak": 1.5})
    (entry,) = cache.glob("t-*.json")
    assert stat_mode(cache) == 0o700 and stat_mode(entry) == 0o600  # made private, whatever the umask
    _rehashed(entry, "1.5", "9.5")
    assert startcache.cached("t", [source], lambda: {"peak": 1.5}) == {"peak": 9.5}  # ours: trusted as written
    os.chmod(entry, 0o622)
    build, calls = _counting({"peak": 1.5})
    assert startcache.cached("t", [source], build) == {"peak": 1.5} and len(calls) == 1
    assert "9.5" in entry.read_text()  # not read, and not replaced either
    err = capfd.readouterr().err
    assert f"start-up cache entry {entry} is writable by its group or by other users (mode 0622); not used" in err
    if os.geteuid() == 0:  # only root can give a file away
        os.chmod(entry, 0o600)
        os.chown(entry, 65534, 65534)
        startcache.forget_digests()
        assert startcache.cached("t", [source], build) == {"peak": 1.5} and len(calls) == 2
        assert "owned by another user (uid 65534)" in capfd.readouterr().err


def stat_mode(path: Path) -> int:
    import stat

    return stat.S_IMODE(path.stat().st_mode)


def test_the_cache_makes_its_folder_and_entries_private_under_a_group_writable_umask(cache, tmp_path, capfd):
    source = tmp_path / "in.yaml"
    source.write_text("x")
    old = os.umask(0o002)
    try:
        build, calls = _counting([1])
        startcache.cached("t", [source], build)
        startcache.cached("t", [source], build)
    finally:
        os.umask(old)
    (entry,) = cache.glob("t-*.json")
    assert stat_mode(cache) == 0o700 and stat_mode(entry) == 0o600 and len(calls) == 1
    assert capfd.readouterr().err == ""


def test_a_folder_above_the_cache_that_others_can_write_is_refused(tmp_path, monkeypatch, capfd):
    """Another user could rename a cache folder out of a folder they can write, and put their own in its place."""
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    monkeypatch.setenv("DRILL_CACHE_DIR", str(open_dir / "cache"))
    startcache.forget_digests()
    source = tmp_path / "in.yaml"
    source.write_text("x")
    build, calls = _counting([1])
    assert startcache.cached("t", [source], build) == [1] and startcache.cached("t", [source], build) == [1]
    assert len(calls) == 2 and not (open_dir / "cache").exists()
    assert f"{open_dir} above it is writable by its group or by other users (mode 0777)" in capfd.readouterr().err
    os.chmod(open_dir, 0o1777)  # sticky, as /tmp: no one may rename what is not theirs
    startcache.forget_digests()
    startcache.cached("t", [source], build)
    assert startcache.cached("t", [source], build) == [1] and len(calls) == 3
    assert capfd.readouterr().err == ""


def test_a_users_file_at_an_entrys_exact_name_is_never_replaced(cache, tmp_path):
    """``c/catalogue-<key>.json`` that the user wrote: not read as an entry, not written over (``cached`` and
    ``replace`` alike), and a damaged entry of our own is still rebuilt in place."""
    source = tmp_path / "in.yaml"
    source.write_text("x")
    startcache.cached("t", [source], lambda: [1])
    (entry,) = cache.glob("t-*.json")
    ours = entry.read_text()
    for mine in ('{"my": "notes"}\n', "my notes\n", ours.replace('"key":"', '"key":"0')):
        entry.write_text(mine)
        build, calls = _counting([1])
        assert startcache.cached("t", [source], build) == [1] and len(calls) == 1
        startcache.replace("t", [source], [1, 2])
        assert entry.read_text() == mine
    entry.write_text(ours[: len(ours) - 3])  # our header, a truncated value: ours, rebuilt in place
    assert startcache.cached("t", [source], lambda: [1]) == [1] and entry.read_text() == ours


def test_drill_at_a_shared_cache_folder_gives_the_model_s_numbers_and_one_line(tmp_path, monkeypatch):
    """The issue's poison: a re-hashed ``catalogue-*.json`` halving v5e's floor, in a folder others can write."""
    from click.testing import CliRunner

    from drills.cli import cli

    shared = tmp_path / "shared"
    monkeypatch.setenv("DRILL_CACHE_DIR", str(shared))
    args = ["roofline", "--chip", "v5e", "--op", "matmul", "--shape", "2048,2048,2048"]

    def run():
        catalogue.load.cache_clear()
        generate.registry.cache_clear()
        startcache.forget_digests()
        return CliRunner().invoke(cli, args)

    first = run()
    assert first.exit_code == 0 and "87.2" in first.output, first.output
    (entry,) = shared.glob("catalogue-*.json")
    _rehashed(entry, "197000000000000", "394000000000000")
    assert "43.6" in run().output  # a private folder's entry is the user's own: read as written
    os.chmod(shared, 0o777)
    again = run()
    assert again.exit_code == 0 and again.stdout == first.stdout
    assert again.stderr.count("start-up cache folder") == 1 and "not used" in again.stderr
    catalogue.load.cache_clear()
    generate.registry.cache_clear()


def test_a_warm_start_reads_the_mastery_rules_without_importing_every_family(tmp_path):
    """The quiz plans new skills by the "Can you" rules: warm, they come from the cache, and no family
    module is imported to read them (the miss_reason family would bring the judge of explanations)."""
    _cold_imports_every_family_warm_none(tmp_path, (
        "from generator.problems import families; "
        "print(repr(sorted((k, [repr(r) for r in v]) for k, v in families.mastery_rules().items())))"))


def _cold_imports_every_family_warm_none(tmp_path, code: str) -> None:
    """``code`` run twice on one cache: first it imports the families (miss_reason among them), then none,
    nor the judge of explanations miss_reason brings."""
    cold = _start(tmp_path / "cache", code)
    assert "generator.problems.families.miss_reason" in cold
    warm = _start(tmp_path / "cache", code)
    assert not [m for m in warm if m.startswith("generator.problems.families.") and m.rsplit(".", 1)[1] in families.found()]
    assert "generator.explain" not in warm


def test_the_cached_mastery_rules_are_the_modules_own_and_a_bad_entry_is_rebuilt(cache, monkeypatch):
    from generator.problems.families import base

    from_modules = families.mastery_rules()  # the first call builds the entry
    assert families.mastery_rules() == from_modules and 6 in from_modules
    assert all(isinstance(r, base.Mastery) for rules in from_modules.values() for r in rules)
    monkeypatch.setattr(startcache, "cached", lambda name, inputs, build: [[6, {"what": "forged"}]])
    assert families.mastery_rules() == from_modules


def test_a_warm_chip_filtered_selection_imports_no_family_to_leave_out_device_practice(tmp_path):
    """``drill quiz --chip v5e`` leaves out the families of practice on the lab's own device: warm, which
    they are comes from the cache, and selecting the skills imports no family module."""
    _cold_imports_every_family_warm_none(tmp_path, (
        "from generator.problems import generate; "
        "print(sorted({s.family for s in generate.skills(None, ['v5e'])}))"))


def test_the_cached_device_practice_families_are_the_modules_own_and_a_bad_entry_is_rebuilt(cache, monkeypatch):
    families.device_practice.cache_clear()
    from_modules = families.device_practice()
    assert from_modules == {n for n in families.found() if getattr(families.module(n), "DEVICE_PRACTICE", False)}
    assert "miss_reason" in from_modules
    families.device_practice.cache_clear()
    monkeypatch.setattr(startcache, "cached", lambda name, inputs, build: ["no_such_family"])
    assert families.device_practice() == from_modules
    families.device_practice.cache_clear()
