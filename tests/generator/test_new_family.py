"""Adding a family is one module and one spec: a toy family in a temporary package (named in
``$DRILL_FAMILY_PACKAGES``) shows up in the registry, the quiz, the deck and ``drill progress``,
with nothing else edited."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills import mastery
from drills.cli import cli
from drills.store.repository import ReviewRecord, Store
from generator.problems import families, generate
from tests.conftest import run_drill

TOY_MODULE = '''
"""A toy family for the registry's test: how many bytes of HBM n chips hold."""

from generator.problems.families.base import Mastery, per_chip, problem
from generator.problems.problem import Answer

NAME = "toy"
ORDER = 5  # before ridge: first in the course
DECK_ID = 1_739_249_999
MASTERY = {5: Mastery("a toy card right")}
PROMPTS = {"value": {"chip", "n"}}


def check_params(spec, check):
    p = check.mapping(spec.params, ("params",), required={"chips_counts"}, allowed={"chips_counts"})
    return {"chips_counts": check.int_list(p["chips_counts"], ("params", "chips_counts"))}


def skills(spec, cat):
    return per_chip(spec, cat, ["hbm"], lambda chip, v: f"HBM bytes of several {chip.display}")


def draw_params(spec, cat, skill, rng):
    return {"chip": skill.chip, "n": rng.choice(spec.params["chips_counts"])}


def solve(spec, cat, skill, params):
    chip = cat.get(params["chip"])
    fields = {"chip": chip.display, "n": str(params["n"])}
    return problem(spec, skill, str(params["n"]), spec.prompts["value"].format(**fields),
                   Answer(value=params["n"] * chip.hbm_bytes, unit="B"), ["n x the chip's HBM bytes"],
                   dict(params), spec.hints["value"].format(**fields))
'''

TOY_SPEC = """
family: toy
title: Toy HBM sums
summary: A family added by the registry's test.
chips: [v5e]
tolerance: 0.05
grading: {easy_rel: 0.01, easy_seconds: 30, hard_seconds: 120}
prompts:
  value: "How many bytes of HBM do {n} {chip} chips hold together?"
hints:
  value: "Multiply {chip}'s HBM by {n}."
params:
  chips_counts: [4]  # one count, so a test knows the answer before the quiz draws it
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    root = tmp_path / "addon"
    (root / "toyfams").mkdir(parents=True)
    (root / "toyfams" / "__init__.py").write_text('"""Family modules of a test add-on."""\n')
    (root / "toyfams" / "toy.py").write_text(textwrap.dedent(TOY_MODULE))
    (root / "specs").mkdir()
    (root / "specs" / "toy.yaml").write_text(TOY_SPEC)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv(families.EXTRA_PACKAGES_ENV, "toyfams")
    monkeypatch.setenv("DRILL_CACHE_DIR", str(tmp_path / "cache"))

    def fresh():
        from drills.quiz import session as quiz  # its per-process caches of the families' rules and skills

        families.forget()
        generate.registry.cache_clear()
        quiz._mastery_rules.cache_clear()
        quiz._every_chip.cache_clear()

    fresh()
    yield root
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "toyfams" or m.startswith("toyfams.")]:
        del sys.modules[name]
    fresh()


def test_a_toy_family_is_found_in_course_order_with_its_skills(toy):
    assert "toy" in families.FAMILIES and generate.FAMILY_NAMES[:2] == ("toy", "ridge")
    assert families.spec("toy").title == "Toy HBM sums"
    assert [s.id for s in generate.skills(["toy"])] == ["toy:v5e:hbm"]


def _quiz_the_toy(store: Path):
    """One toy card answered right: 4 x v5e's HBM bytes."""
    hbm = generate.registry().catalogue.get("v5e").hbm_bytes
    res = CliRunner().invoke(cli, ["quiz", "--store", str(store), "--family", "toy", "--count", "1", "--new", "1",
                                   "--seed", "3", "--json"], input=f"{4 * hbm:.6g} B\n")
    assert res.exit_code == 0, res.output
    return res


def test_the_quiz_asks_the_toy_family(toy, tmp_path):
    store = tmp_path / "s.db"
    res = _quiz_the_toy(store)
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [(r["skill"], r["correct"]) for r in rows] == [("toy:v5e:hbm", True)]
    with sqlite3.connect(store) as db:
        assert db.execute("select count(*) from reviews where skill = 'toy:v5e:hbm'").fetchone()[0] == 1


def test_the_deck_has_the_toy_familys_deck_under_its_own_id(toy, tmp_path):
    out = tmp_path / "toy.apkg"
    res = CliRunner().invoke(cli, ["deck", "--family", "toy", "--family", "ridge", "--chip", "v5e", "-o", str(out)])
    assert res.exit_code == 0, res.output
    with zipfile.ZipFile(out) as z:
        (tmp_path / "c.db").write_bytes(z.read("collection.anki2"))
    with sqlite3.connect(tmp_path / "c.db") as db:
        decks = json.loads(db.execute("select decks from col").fetchone()[0])
    ids = {d["name"].rsplit("::", 1)[-1]: int(d["id"]) for d in decks.values()}
    assert 1_739_249_999 in ids.values() and families.deck_id("ridge") in ids.values()


def test_drill_progress_reads_the_toy_familys_mastery_rule(toy, tmp_path):
    store, bench = tmp_path / "s.db", tmp_path / "bench"
    bench.mkdir()

    def item5():
        res = CliRunner().invoke(cli, ["progress", "--store", str(store), "--bench", str(bench), "--json"])
        assert res.exit_code == 0, res.output
        return next(i for i in json.loads(res.output)["can_you"] if i["number"] == 5)

    before = item5()
    assert "a toy card right" in before["missing"] and not before["evidence"]
    _quiz_the_toy(store)
    today = item5()  # right today: pending until recalled on a later day
    assert today["pending"] == [{"skill": "toy:v5e:hbm", "status": mastery.PENDING_TODAY}]
    assert "toy:v5e:hbm" not in today["evidence"] and not today["ticked"]
    with Store.open(store) as opened:  # right two days ago and again yesterday: recalled after a gap
        review = ReviewRecord(skill="toy:v5e:hbm", family="toy", chip="v5e", problem_id="p", params={}, prompt="?",
                              expected={"value": 1.0}, given="1 B", given_value=1.0, correct=True, rating=3,
                              relative_error=0.0, seconds_taken=4.0, hints=0)
        for days in (2, 1):
            opened.record_review(review, now=datetime.now(timezone.utc) - timedelta(days=days))
    after = item5()
    assert "toy:v5e:hbm" in after["evidence"] and "a toy card right" not in after["missing"]
    assert not after["ticked"]  # item 5 still needs its transformer_step rule too


def test_without_the_package_the_toy_family_is_gone(toy, monkeypatch):
    monkeypatch.delenv(families.EXTRA_PACKAGES_ENV)
    families.forget()
    generate.registry.cache_clear()
    assert "toy" not in families.FAMILIES and "toy" not in generate.FAMILY_NAMES


@pytest.mark.parametrize("value, words", [
    ("nonexistent_pkg", "no such package is importable"),
    ("this", "is a module, not a family package"),  # importing it would print the Zen of Python
    ("json", "defines no family"),
    ("../evil", "is not a package name"),
    ("generator.problems.families", "is in two packages"),
])
def test_a_bad_family_package_name_is_one_line_naming_the_variable(tmp_path, value, words):
    env = {families.EXTRA_PACKAGES_ENV: value, "DRILL_CACHE_DIR": str(tmp_path / "cache")}
    for args in (["--help"], ["export", "--format", "json", "--family", "ridge"]):
        res = run_drill(*args, env=env)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and f"${families.EXTRA_PACKAGES_ENV}" in lines[0] and words in lines[0], lines
        assert "Beautiful is better than ugly" not in res.stdout + res.stderr and res.stdout == ""


def test_drill_help_documents_the_family_packages_variable():
    res = run_drill("--help")
    assert res.returncode == 0 and families.EXTRA_PACKAGES_ENV in res.stdout
