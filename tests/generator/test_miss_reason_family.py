"""Family miss_reason: real recorded misses, the reason their numbers support, the flaw of every other.

Each expected value is recomputed here from the cases file read as plain JSON and judged by the
catalogue directly (``generator.miss_reasons.assess``), not through the family's helpers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills.cli import cli
from generator import families, generate, miss_reasons
from generator.export import anki, tabular
from generator.families import miss_reason
from generator.units import fmt
from labs import miss_reason_cases
from tests.conftest import REPO

CASES_FILE = REPO / "generator" / "families" / "data" / "miss_reason_cases.json"
FIXTURE_RECORDS = REPO / "tests" / "generator" / "fixtures" / "miss_reason_records"
PROBLEMS = generate.generate(families=["miss_reason"], count=40, seed=0)


def _cases() -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(CASES_FILE.read_text())["cases"]}


def _findings(case: dict) -> dict[str, miss_reasons.Finding]:
    return {f.reason_id: f for f in miss_reasons.assess(miss_reasons.OpEvidence.from_dict(case["evidence"]))}


def _case_of(p) -> dict:
    return _cases()[p.params["case"]]


def test_the_family_has_skills_and_problems():
    ops = {p.skill for p in PROBLEMS}
    assert len(ops) >= 3 and len(PROBLEMS) >= 10
    assert {p.family for p in PROBLEMS} == {"miss_reason"}


def test_no_skill_has_one_key_and_keys_are_drawn_evenly():
    """A skill's key varies (never learnt by rote) and no reason is the likely guess."""
    import random
    from collections import Counter

    registry = generate.registry()
    for skill in [s for s in registry.all_skills if s.family == "miss_reason"]:
        rng = random.Random(skill.id)
        keys = Counter(registry.draw(skill.id, rng).answer.choice for _ in range(400))
        assert len(keys) >= 2, (skill.id, keys)
        assert max(keys.values()) < 400 * (1 / len(keys) + 0.1), (skill.id, keys)


def test_every_problem_offers_one_supported_reason_and_only_contradicted_others():
    for p in PROBLEMS:
        case = _case_of(p)
        findings = _findings(case)
        assert findings[p.answer.choice].supported, p.id
        ev = miss_reasons.OpEvidence.from_dict(case["evidence"])
        assert not (1 / 2 <= ev.ratio <= 2), "a case is a miss over 2x"
        for other in p.answer.choices:
            if other == p.answer.choice:
                continue
            assert not findings[other].supported, (p.id, other)
            # never a reason the record merely lacks the numbers for: the prompt shows what rules it out
            assert "the record has no" not in findings[other].why and "does not say" not in findings[other].why
        assert 2 <= len(p.answer.choices) <= 4 and list(p.answer.choices) == sorted(
            p.answer.choices, key=[r.id for r in miss_reasons.REASONS].index)


def test_the_prompt_gives_the_op_the_prediction_the_measurement_and_the_evidence():
    for p in PROBLEMS:
        case = _case_of(p)
        ev = miss_reasons.OpEvidence.from_dict(case["evidence"])
        assert case["label"] in p.prompt and f"N={case['size']}" in p.prompt
        assert fmt(ev.measured_seconds, "s") in p.prompt and fmt(ev.reference_seconds, "s") in p.prompt
        assert f"floor of {fmt(ev.floor_seconds, 's')}" in p.prompt
        if ev.xla_bytes is not None:
            assert fmt(ev.xla_bytes, "B") in p.prompt
        if ev.fixed_cost_seconds is not None:
            assert fmt(ev.fixed_cost_seconds, "s") in p.prompt
        for choice in p.answer.choices:
            assert p.prompt.count(choice) == 1  # each offered once, none singled out
        assert case["record"] in p.solution[-1]


def test_ids_never_name_the_key_and_round_trip_through_drill_check():
    runner = CliRunner()
    for p in PROBLEMS[:12]:
        assert p.answer.choice not in p.id
        right = json.loads(runner.invoke(cli, ["check", "--problem-id", p.id, "--answer", p.answer.choice,
                                              "--json"]).output)
        assert right["correct"] is True and right["problem_id"] == p.id
        wrong = next(c for c in p.answer.choices if c != p.answer.choice)
        res = runner.invoke(cli, ["check", "--problem-id", p.id, "--answer", wrong, "--json"])
        out = json.loads(res.output)
        assert out["correct"] is False and out["misconception"] == "unsupported-reason"
        flaw = _findings(_case_of(p))[wrong].why
        assert f"{wrong}: {flaw}" in out["feedback"]  # the wrong choice's own flaw, with its numbers


def test_a_hand_made_id_with_no_or_two_supported_reasons_is_unknown():
    p = PROBLEMS[0]
    base = p.id.rsplit(":r", 1)[0]
    supported = [rid for rid, f in _findings(_case_of(p)).items() if f.supported]
    codes = {r.id: str(i + 1) for i, r in enumerate(miss_reasons.REASONS)}
    for bad in [f"{base}:r{''.join(codes[r] for r in supported)}", f"{base}:r9", f"{base}:nonsense"]:
        with pytest.raises(generate.UnknownProblemError):
            generate.problem(bad)


def test_the_cases_are_the_misses_of_the_checked_in_records():
    """Rebuilt from the course's records (bench/) and this machine's CPU runs (fixtures): the same cases."""
    sources = sorted((REPO / "bench").glob("lab-*.json")) + sorted(FIXTURE_RECORDS.glob("lab-*.json"))
    names = {p: p.relative_to(REPO).as_posix() for p in sources}
    rebuilt = miss_reason_cases.build(sources, names)
    assert rebuilt["cases"] == json.loads(CASES_FILE.read_text())["cases"]
    for case in rebuilt["cases"]:
        assert (REPO / case["record"]).is_file()


def test_the_cases_file_ships_in_the_package():
    import ast
    import re
    # no tomllib on Python 3.10: the package-data line is a TOML array of strings, which reads as a Python list
    table = (REPO / "pyproject.toml").read_text().split("[tool.setuptools.package-data]", 1)[1]
    patterns = ast.literal_eval(re.search(r"^generator = (\[.*\])$", table, re.M).group(1))
    relative = CASES_FILE.relative_to(REPO / "generator")
    assert any(relative.match(pattern) for pattern in patterns), patterns


def test_quiz_asks_it_and_says_the_flaw_of_a_wrong_choice(tmp_path):
    from tests.drills.quizkit import planned_problems, script
    from drills.quiz import QuizOptions

    store = tmp_path / "s.db"
    options = QuizOptions(families=("miss_reason",), count=2, new_per_day=2, seed=5)
    first, second = planned_problems(store, options)
    wrong = next(c for c in first.answer.choices if c != first.answer.choice)
    res = CliRunner().invoke(cli, ["quiz", "--store", str(store), "--family", "miss_reason", "--count", "2",
                                   "--new", "2", "--seed", "5"], input=script([wrong, second.answer.choice]))
    assert res.exit_code == 0, res.output
    assert first.prompt in res.stdout and "wrong (Again)" in res.stdout
    assert _findings(_case_of(first))[wrong].why in res.stdout
    assert "Done: 2 reviews saved (1 right)" in res.output


def test_export_and_deck_carry_the_family(tmp_path):
    rows = json.loads(tabular.to_json(PROBLEMS))
    assert {r["family"] for r in rows} == {"miss_reason"} and all(r["answer"]["choice"] for r in rows)
    report = anki.write_deck(PROBLEMS, str(tmp_path / "deck.apkg"))
    assert report.notes == len(PROBLEMS) and families.deck_id("miss_reason")


def test_a_broken_cases_file_is_a_one_line_spec_error(tmp_path, monkeypatch):
    specs = tmp_path / "specs"
    specs.mkdir()
    for path in (REPO / "generator" / "specs").glob("*.yaml"):
        (specs / path.name).write_text(path.read_text())
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setattr(miss_reason, "DATA_DIR", data)
    (data / "miss_reason_cases.json").write_text('{"schema": "something else", "cases": []}')
    with pytest.raises(generate.SpecError) as err:
        generate.Registry(str(specs))
    assert "miss_reason.yaml" in str(err.value) and "\n" not in str(err.value)
    (data / "miss_reason_cases.json").write_text(json.dumps({"schema": miss_reason.CASES_SCHEMA, "cases": [
        {**next(iter(_cases().values())), "id": "a:b"}]}))
    with pytest.raises(generate.SpecError, match="without ':'"):
        generate.Registry(str(specs))
    (specs / "miss_reason.yaml").write_text((specs / "miss_reason.yaml").read_text().replace(
        "cases_file: miss_reason_cases.json", "cases_file: ../../etc/passwd"))
    with pytest.raises(generate.SpecError, match="not a path"):
        generate.Registry(str(specs))


def test_the_case_builder_command(tmp_path, capsys):
    source = sorted(FIXTURE_RECORDS.glob("lab-*.json"))[0]
    out = tmp_path / "cases.json"
    assert miss_reason_cases.main([str(source), "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["schema"] == miss_reason.CASES_SCHEMA and written["cases"]
    assert all(c["record"] == source.as_posix() for c in written["cases"])
    broken = tmp_path / "lab-broken.json"
    broken.write_text("{not json")
    assert miss_reason_cases.main([str(broken), "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "miss_reason_cases: error:" in err and not (tmp_path / "x.json").exists()
