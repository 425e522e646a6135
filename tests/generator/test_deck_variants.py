"""The variant deck without a browser: the notes, their data and the `drill deck` verb.

The card's behaviour in a real Anki collection and Chromium is in test_anki_variants.py (slow).
"""

import json
import re
import sqlite3
import zipfile

import genanki
import pytest
from click.testing import CliRunner

from drills.cli import cli
from drills.cmd_generate import card_rules
from generator.problems import families
from generator.problems import generate as gen
from generator.export import anki, card
from generator.export.variants import DEFAULT_VARIANTS, skill_notes

PROBLEMS = gen.generate(families=["floor", "bound", "ridge", "vocabulary", "critical_batch"], chips=["v5e"],
                        count=4, seed=3)
NOTES = skill_notes(PROBLEMS, card_rules(), gen.registry().by_id, 4)


def _rows(path):
    with zipfile.ZipFile(path) as z:
        db = z.read("collection.anki2")
    copy = path.with_suffix(".anki2")
    copy.write_bytes(db)
    return sqlite3.connect(copy).execute("select guid, flds, tags, mid from notes").fetchall()


def test_one_note_per_skill_with_its_variants():
    skills = {p.skill for p in PROBLEMS}
    assert [n.skill for n in NOTES] == list(dict.fromkeys(p.skill for p in PROBLEMS))
    assert len(NOTES) == len(skills)
    for n in NOTES:
        ids = [v.problem.id for v in n.variants]
        assert ids == [p.id for p in PROBLEMS if p.skill == n.skill][:4]
        assert 1 <= n.seed < 2**31 - 1 and n.to_dict()["seed"] == n.seed


def test_variant_deck_notes_guids_and_fields(tmp_path):
    path = tmp_path / "v.apkg"
    report = anki.write_variant_deck(NOTES, str(path))
    rows = _rows(path)
    assert report.notes == len(rows) == len(NOTES)
    assert {r[0] for r in rows} == {anki.skill_guid(n.skill) for n in NOTES}
    assert {r[3] for r in rows} == {anki.VARIANT_MODEL_ID}
    for guid, flds, tags, _ in rows:
        fields = dict(zip(card.FIELDS, flds.split("\x1f")))
        note = next(n for n in NOTES if anki.skill_guid(n.skill) == guid)
        data = json.loads(fields["Data"])
        assert data["skill"] == note.skill and [v["id"] for v in data["v"]] == [v.problem.id for v in note.variants]
        # Every variant is written complete; all but the first hidden (a client without script shows the first).
        for side, parts in (("Front", 1), ("Back", 2)):  # the back: each answer, the verdict, each working
            blocks = re.findall(r'<div class="rk-v" data-v="(\d+)"( hidden)?>', fields[side])
            assert blocks == [(str(i), "" if i == 0 else " hidden") for i in range(len(note.variants))] * parts
            assert f'data-problem-id="{note.variants[0].problem.id}"' in fields[side]
        for v in note.variants:
            assert v.problem.id in fields["Data"]
            assert anki.answer_html(v.problem) in fields["Back"]
        assert 'data-verdict="none" data-misconception=""' in fields["Back"]
        assert set(tags.split()) == set(gen.registry().by_id[note.skill].tags)
        for f in fields.values():
            assert not genanki.Note._find_invalid_html_tags_in_field(f)


def test_no_field_of_any_family_holds_a_tag_genanki_would_warn_about():
    """The exporter skips genanki's scan for invalid HTML tags (``anki._GeneratedNote``): its fields are
    escaped where they are built. That scan, run here over every field of both decks for every skill
    (one problem each), finds nothing; and the notes the exporter writes are that class."""
    registry = gen.registry()
    problems = registry.generate(count=1, seed=5)
    assert {p.family for p in problems} == set(gen.FAMILY_NAMES)
    variant_decks, _ = anki.build_variant_decks(skill_notes(problems, card_rules(), registry.by_id, 1))
    fixed_decks, _ = anki.build_decks(problems)
    notes = [n for d in variant_decks + fixed_decks for n in d.notes]
    assert len(notes) > 300 and all(type(n) is anki._GeneratedNote for n in notes)
    found = {tag for n in notes for field in n.fields for tag in genanki.Note._find_invalid_html_tags_in_field(field)}
    assert found == set()
    # The scan does see a tag it does not know: the check above can fail.
    assert genanki.Note._find_invalid_html_tags_in_field("T_math < T_comms -> memory-bound") != []


def test_card_data_is_python_computed_and_script_safe():
    note = next(n for n in NOTES if n.family == "floor")
    text = card.data_json(note)
    assert "<" not in text and ">" not in text and "&" not in text
    data = json.loads(text)
    v, variant = data["v"][0], note.variants[0]
    assert v["k"] == variant.problem.answer.value and v["t"] == variant.good_rel
    assert [w[1] for w in v["w"]] == [w.misconception.id for w in variant.wrong]
    assert set(data["m"]) == {w.misconception.id for x in note.variants for w in x.wrong}
    choice = next(n for n in NOTES if n.family == "bound").to_dict()["v"][0]
    assert choice["k"] in choice["c"] and "s" not in choice


def test_the_script_holds_no_formula():
    """The template's script chooses and compares; no chip figure, unit prefix or formula constant in it."""
    qfmt, afmt = card.templates()
    assert card.script() in qfmt and "<script" not in afmt  # the back gets the script through {{FrontSide}}
    assert "{{" not in card.script()  # nothing Anki's template language would read as a field
    numbers = set(re.findall(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", card.SCRIPT))
    # indexes, digits, minutes, and the protobuf wire format (8 field/wire split, 5 fixed32, 128 varint base)
    assert numbers <= {"0", "1", "2", "3", "4", "5", "8", "9", "10", "128", "60000"}, numbers  # no factor


def test_the_cards_unit_table_is_answers_own():
    """The reader data in the script is generator.model.answers.card_reader(), every entry what parse_unit says."""
    from generator.model import answers

    table = answers.card_reader()
    assert json.dumps(table, ensure_ascii=True, separators=(",", ":")) in card.script()
    for w, (scale, dims, kind) in table["exact"].items():
        unit = answers.parse_unit(w)
        assert (unit.scale, ",".join(map(str, unit.dims))) == (scale, dims)
    assert table["exact"]["us"][0] == 1e-6 and table["lower"]["microseconds"][0] == 1e-6
    assert "MS" not in table["exact"] and "MS" in table["ambiguous"]


def test_variant_note_type_id_changes_with_its_fields():
    assert anki.variant_model_fingerprint() == anki.VARIANT_MODEL_FINGERPRINT, (
        "card.FIELDS, the templates or the CSS changed. New, renamed or reordered FIELDS: give the note "
        "type a new VARIANT_MODEL_ID. Templates or CSS only: Anki replaces them in place from a newer "
        "package (test_anki_real); keep the id. Then update VARIANT_MODEL_FINGERPRINT")
    assert anki.VARIANT_MODEL_ID != anki.MODEL_ID and anki.VARIANT_MODEL_ID not in {families.deck_id(f) for f in families.FAMILIES}


def test_card_unit_follows_the_prompt():
    from drills.quiz.assess import stated_unit
    from generator.model import answers

    for n in NOTES:
        for v in n.variants:
            a = v.problem.answer
            if a.is_choice:
                assert v.unit == ""
            elif stated_unit(v.problem):
                assert v.unit_scale == pytest.approx(answers.parse_unit(
                    stated_unit(v.problem)).scale, rel=0)


def test_deck_verb_forms(tmp_path):
    runner = CliRunner()
    out = tmp_path / "d.apkg"
    r = runner.invoke(cli, ["deck", "--family", "ridge", "--chip", "v5e", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "one per skill" in r.output and {x[3] for x in _rows(out)} == {anki.VARIANT_MODEL_ID}
    r = runner.invoke(cli, ["deck", "--family", "ridge", "--chip", "v5e", "--fixed", "--count", "2", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert {x[3] for x in _rows(out)} == {anki.MODEL_ID}
    for bad in (["--count", "2"], ["--fixed", "--variants", "3"], ["--variants", "0"], ["--variants", "65"]):
        r = runner.invoke(cli, ["deck", "--family", "ridge", *bad, "-o", str(out)])
        assert r.exit_code == 2 and "Traceback" not in r.output, (bad, r.output)


def test_default_k_is_stated():
    """The default K is the one `drill deck --help` states (its copy is kept apart so the help loads light)."""
    from drills import cmd_generate

    assert DEFAULT_VARIANTS == 16 == cmd_generate.DEFAULT_DECK_VARIANTS
    text = " ".join(CliRunner().invoke(cli, ["deck", "--help"]).output.split())
    assert f"Default {DEFAULT_VARIANTS}; 1 to 64." in text


def test_no_two_problems_or_notes_ask_the_same_thing():
    """`--fixed --count 3` over the whole course: no identical prompts; each unordered pair of chips
    is compared by one skill only (ridge), so the variant deck has no duplicate prompt either."""
    problems = gen.generate(count=3)
    prompts = [p.prompt for p in problems]
    assert len(prompts) == len(set(prompts))
    pairs: dict[frozenset, set] = {}
    for p in gen.generate(families=["ridge"], count=16):
        if p.answer.is_choice:
            pairs.setdefault(frozenset(p.answer.choices) | {p.params["dtype"]}, set()).add(p.skill)
    assert pairs and all(len(skills) == 1 for skills in pairs.values()), pairs


def test_cards_say_when_a_skill_has_one_problem_and_cite_no_test_path():
    problems = gen.generate(families=["ridge", "miss_reason"], chips=["v5e"], count=3, seed=0)
    notes = skill_notes(problems, card_rules(), gen.registry().by_id, 3)
    single = [n for n in notes if len(n.variants) == 1]
    assert single and len(single) < len(notes)
    for n in notes:
        front = card.front_html(n)
        assert ("A fact: the same every time." in front) == (len(n.variants) == 1)
    for p in problems:
        assert "tests/" not in anki.solution_html(p)
    assert any("lab-0.1-" in anki.solution_html(p) for p in problems if p.family == "miss_reason")


from hypothesis import given, settings, strategies as st  # noqa: E402

from generator.export import rotation  # noqa: E402


@settings(max_examples=60)
@given(st.integers(1, rotation.MODULUS - 1), st.integers(-40_000, 80_000), st.integers(1, 64),
       st.one_of(st.none(), st.integers(0, 63)))
def test_rotation_invariants(seed, day, k, last):
    """The pick is a variant; never the last one shown (K >= 2); consecutive days differ (K >= 3);
    a block of K days shows every variant once."""
    last = None if last is None else last % k
    i = rotation.pick(seed, day, k, last)
    assert 0 <= i < k
    if k >= 2 and last is not None:
        assert i != last
    if k >= 3:
        assert rotation.day_pick(seed, day, k) != rotation.day_pick(seed, day + 1, k)
    start = day - day % k
    assert sorted(rotation.day_pick(seed, d, k) for d in range(start, start + k)) == list(range(k))


def test_two_variants_never_show_the_last_one_again():
    """K = 2 on every day of many notes, whichever was shown last (the days where both neighbours agree
    included)."""
    for seed in range(1, 200):
        for day in range(-30, 30):
            for last in (0, 1):
                assert rotation.pick(seed, day, 2, last) == 1 - last, (seed, day, last)


def test_a_block_never_starts_with_the_previous_blocks_last_variant():
    """Without memory, the first day of each block differs from the day before it (K >= 3), on every
    block boundary of many notes: the case a shuffle alone gets wrong about once in K."""
    boundaries = 0
    for k in (3, 4, 5, 8, 16):
        for seed in range(1, 120):
            for block in range(-3, 12):
                day = block * k
                assert rotation.day_pick(seed, day, k) != rotation.day_pick(seed, day - 1, k), (k, seed, block)
                boundaries += 1
    assert boundaries == 5 * 119 * 15
