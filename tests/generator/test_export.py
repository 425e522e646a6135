"""CSV / JSON exports, the .apkg layout, and all-or-nothing writes."""

import csv
import io
import json
import sqlite3
import zipfile

import genanki
import pytest

from generator.problems import families
from generator.export import ExportError, anki, atomic_write, tabular, write_text
from generator.export.figures import media_name
from generator.problems.generate import FAMILY_NAMES, generate, unseeded_id
from generator.problems.problem import Problem

PROBLEMS = generate(count=2, seed=7)


def test_json_is_a_list_of_problem_objects():
    data = json.loads(tabular.to_json(PROBLEMS))
    assert len(data) == len(PROBLEMS)
    for obj, p in zip(data, PROBLEMS):
        assert {"family", "skill", "id", "params", "prompt", "answer", "tolerance", "solution"} <= set(obj)
        assert Problem.from_dict(obj) == p
        if p.answer.is_choice:
            assert obj["answer"]["choice"] in obj["answer"]["choices"]
        else:
            assert isinstance(obj["answer"]["value"], float) and "unit" in obj["answer"]
        if obj["family"] in ("intensity", "bound", "floor"):
            params = obj["params"]
            assert isinstance(params["chip"], str) and isinstance(params["op"], str)
            assert isinstance(params["dtype"], str) and all(isinstance(d, int) for d in params["shape"])


def test_json_answers_are_base_si():
    data = json.loads(tabular.to_json(generate(families=["floor"], chips=["v5e"])))
    assert {d["answer"]["unit"] for d in data} == {"s"}
    assert all(d["answer"]["value"] < 1 for d in data)  # seconds, not µs


def test_csv_round_trips_the_fields():
    rows = list(csv.DictReader(io.StringIO(tabular.to_csv(PROBLEMS))))
    assert len(rows) == len(PROBLEMS)
    assert tuple(rows[0]) == tabular.CSV_COLUMNS
    for row, p in zip(rows, PROBLEMS):
        assert row["id"] == p.id and row["prompt"] == p.prompt
        assert row["solution"].split("\n") == list(p.solution)
        assert json.loads(row["params"]) == p.params
        if p.answer.is_choice:
            assert row["answer_choice"] == p.answer.choice and row["answer_choices"].split("|") == list(p.answer.choices)
        else:
            assert float(row["answer_value"]) == p.answer.value and row["answer_unit"] == p.answer.unit


def test_render_refuses_unknown_format():
    with pytest.raises(ValueError, match="csv, json"):
        tabular.render(PROBLEMS, "xml")


def _notes(path):
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        media = json.loads(z.read("media"))
        db = z.read("collection.anki2")
    copy = path.with_suffix(".anki2")  # a file, not deserialize(): that needs Python >= 3.11
    copy.write_bytes(db)
    return names, media, sqlite3.connect(copy)


def test_apkg_layout_and_note_guids(tmp_path):
    path = tmp_path / "deck.apkg"
    report = anki.write_deck(PROBLEMS, str(path))
    names, media, conn = _notes(path)
    assert "collection.anki2" in names and report.notes == len(PROBLEMS)
    rows = conn.execute("select guid, flds, tags, mid from notes").fetchall()
    assert len(rows) == len(PROBLEMS)
    # GUIDs from the id without its draw seed, so an older deck's notes update in place
    assert {r[0] for r in rows} == {genanki.guid_for(unseeded_id(p.id)) for p in PROBLEMS}
    assert {r[3] for r in rows} == {anki.MODEL_ID}
    by_guid = {r[0]: r for r in rows}
    p = PROBLEMS[0]
    fields = by_guid[genanki.guid_for(unseeded_id(p.id))][1].split("\x1f")
    assert fields[anki.FIELDS.index("Id")] == p.id and fields[anki.FIELDS.index("Skill")] == p.skill
    assert set(by_guid[genanki.guid_for(unseeded_id(p.id))][2].split()) == set(p.tags)
    decks = json.loads(conn.execute("select decks from col").fetchone()[0])
    assert {d["name"] for d in decks.values()} >= {anki.deck_name(f) for f in FAMILY_NAMES}
    # Media: every file is referenced by a field and named by its content hash.
    fields_text = "".join(r[1] for r in rows)
    with zipfile.ZipFile(path) as z:
        for index, name in media.items():
            assert f'src="{name}"' in fields_text
            assert name == media_name(z.read(index), "rk-roofline", "svg")


def test_note_timestamps_are_the_write_time(tmp_path):
    import time

    before = int(time.time())
    anki.write_deck(PROBLEMS[:3], str(tmp_path / "a.apkg"))
    _, _, conn = _notes(tmp_path / "a.apkg")
    assert {m for (m,) in conn.execute("select mod from notes")} <= set(range(before, int(time.time()) + 1))


def test_fields_escape_html():
    p = next(p for p in PROBLEMS if "<" in "".join(p.solution))
    fields = anki.note_fields(p)
    assert "&lt;" in fields[anki.FIELDS.index("Solution")]
    assert not genanki.Note._find_invalid_html_tags_in_field(fields[anki.FIELDS.index("Solution")])


def test_note_type_id_changes_with_its_fields():
    """Anki makes a second note type when fields change under the same id: a new layout needs a new id."""
    assert anki.model_fingerprint() == anki.MODEL_FINGERPRINT, (
        "FIELDS or the templates changed: give the note type a new MODEL_ID, then update MODEL_FINGERPRINT")


# The ids decks were first published with: a re-imported deck updates in place only under the same id.
PUBLISHED_DECK_IDS = {
    "ridge": 1_739_240_101, "intensity": 1_739_240_102, "bound": 1_739_240_103, "floor": 1_739_240_104,
    "critical_batch": 1_739_240_105, "lattice": 1_739_240_106, "vmem_fit": 1_739_240_107,
    "transformer_step": 1_739_240_108, "interconnect": 1_739_240_109, "vocabulary": 1_739_240_110,
    "pod": 1_739_240_111, "collective": 1_739_240_112, "transfer": 1_739_240_113, "host_link": 1_739_240_114,
    "sharded_matmul": 1_739_240_115, "miss_reason": 1_739_240_116,
}


def test_deck_ids_are_fixed_and_distinct(tmp_path):
    ids = {f: families.deck_id(f) for f in FAMILY_NAMES}
    assert ids == PUBLISHED_DECK_IDS
    assert len(set(ids.values())) == len(ids) and anki.MODEL_ID not in ids.values()
    problems = generate(families=["ridge", "miss_reason"], chips=["v5e"], count=1, seed=0)
    decks, _ = anki.build_decks(problems)
    assert sorted(d.deck_id for d in decks) == [ids["ridge"], ids["miss_reason"]]


def test_same_problems_same_notes(tmp_path):
    anki.write_deck(PROBLEMS, str(tmp_path / "a.apkg"))
    anki.write_deck(generate(count=2, seed=7), str(tmp_path / "b.apkg"))
    a = _notes(tmp_path / "a.apkg")[2].execute("select guid, flds from notes order by guid").fetchall()
    b = _notes(tmp_path / "b.apkg")[2].execute("select guid, flds from notes order by guid").fetchall()
    assert a == b


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.apkg"
    target.write_bytes(b"previous deck")

    def explode(tmp):
        with open(tmp, "wb") as fh:
            fh.write(b"half a zip")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(target, explode)
    assert target.read_bytes() == b"previous deck"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.apkg"]


def test_unwritable_targets(tmp_path, monkeypatch):
    with pytest.raises(ExportError, match="does not exist"):
        write_text(tmp_path / "missing" / "x.json", "[]")
    with pytest.raises(ExportError, match="is a directory"):
        write_text(tmp_path, "[]")
    # Permission bits do not bind root (CI may run as root), so ask the check itself to see a locked dir.
    import os

    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    with pytest.raises(ExportError, match="not writable"):
        write_text(tmp_path / "x.json", "[]")
    assert list(tmp_path.iterdir()) == []


def test_write_text_replaces_whole(tmp_path):
    target = tmp_path / "x.csv"
    write_text(target, "a\n")
    write_text(target, "b\n")
    assert target.read_text() == "b\n" and [p.name for p in tmp_path.iterdir()] == ["x.csv"]


def test_python_310_path_without_serialize_writes_the_same_notes(tmp_path, monkeypatch):
    """sqlite3.Connection.serialize() is Python >= 3.11; the fallback goes through a temp file."""
    monkeypatch.setattr(anki, "_CAN_SERIALIZE", False)
    path = tmp_path / "deck.apkg"
    anki.write_deck(PROBLEMS, str(path))
    _, _, conn = _notes(path)
    rows = conn.execute("select guid from notes").fetchall()
    # GUIDs from the id without its draw seed, so an older deck's notes update in place
    assert {r[0] for r in rows} == {genanki.guid_for(unseeded_id(p.id)) for p in PROBLEMS}
