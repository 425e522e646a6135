"""The generated .apkg in the official Anki client: import, study, regenerate, re-import.

A real collection in a temp dir, imported with ``Collection.import_anki_package`` and
the options Anki's import dialog defaults to (update notes and note types "if newer").
"""

import dataclasses
import random
import time

import pytest

# The official client is part of the `test` extra: a missing one fails here, never skips.
from anki.collection import Collection  # noqa: E402, I001
from anki.cards import Card  # noqa: E402  (after anki.collection: anki's own import order)
from anki.scheduler_pb2 import CardAnswer  # noqa: E402

from generator.export import anki as export  # noqa: E402
from generator.problems.generate import draw, generate  # noqa: E402

pytestmark = pytest.mark.slow

from bench.anki_schedule import import_package  # noqa: E402  (the options Anki's import dialog defaults to)


@pytest.fixture
def col(tmp_path):
    collection = Collection(str(tmp_path / "collection.anki2"))
    yield collection
    collection.close()


def note_by_id(col, problem_id):
    """The note whose problem id is ``problem_id``, with or without the draw seed (``@xxxxxxxx``)."""
    from generator.problems.generate import unseeded_id
    nids = [n for n in col.find_notes("") if unseeded_id(col.get_note(n)["Id"]) == unseeded_id(problem_id)]
    assert len(nids) == 1, f"{len(nids)} notes for {problem_id}"
    return col.get_note(nids[0])


def test_import_study_regenerate_reimport(col, tmp_path):
    problems = generate(families=["ridge", "bound", "vocabulary"], chips=["v5e"], count=2, seed=1)
    first = tmp_path / "stage0.apkg"
    export.write_deck(problems, str(first))
    log = import_package(col, first)

    # Counts, note type, deck tree.
    assert len(log.new) == len(problems) == col.note_count() == col.card_count()
    assert [m["name"] for m in col.models.all()].count(export.MODEL_NAME) == 1
    names = {d.name for d in col.decks.all_names_and_ids()}
    assert {"Rudrite Kernels", "Rudrite Kernels::Stage 0", "Rudrite Kernels::Stage 0::ridge",
            "Rudrite Kernels::Stage 0::bound", "Rudrite Kernels::Stage 0::vocabulary"} <= names

    # Fields, tags, deck and the rendered card of one problem.
    target = next(p for p in problems if p.family == "bound")
    note = note_by_id(col, target.id)
    assert list(note.keys()) == list(export.FIELDS)
    assert note["Skill"] == target.skill
    assert {"family::bound", "chip::v5e", f"op::{target.params['op']}"} <= set(note.tags)
    card = note.cards()[0]
    assert col.decks.name(card.did) == "Rudrite Kernels::Stage 0::bound"
    question, answer = card.question(), card.answer()
    assert "On the TPU v5e" in question and "Compute-bound or memory-bound?" in question
    assert f"<b>{target.answer.choice}</b>" in answer and "intensity" in answer and "verdict" in answer

    # The roofline figure arrived as media, referenced by a ridge card.
    ridge = note_by_id(col, "ridge:v5e:bf16")
    media_file = ridge["Figure"].split('"')[1]
    assert col.media.have(media_file)

    # Study one card: answer it Good.
    col.decks.select(col.decks.id_for_name("Rudrite Kernels::Stage 0::bound"))
    queued = col.sched.get_queued_cards(fetch_limit=1).cards[0]
    studied = Card(col, backend_card=queued.card)
    studied.start_timer()
    col.sched.answer_card(col.sched.build_answer(card=studied, states=queued.states, rating=CardAnswer.GOOD))
    studied_note = col.get_card(studied.id).note()
    assert col.get_card(studied.id).reps == 1

    # Regenerate: one changed answer text, one new problem. Anki updates only from a newer
    # package (note mtimes are whole seconds), so the rebuild happens in a later second.
    changed = next(i for i, p in enumerate(problems) if p.id == studied_note["Id"])
    rebuilt = list(problems)
    rebuilt[changed] = dataclasses.replace(problems[changed], solution=problems[changed].solution + ("re-checked",))
    new_problem = draw("floor:v5e:add", random.Random(99))
    rebuilt.append(new_problem)
    time.sleep(1.1)
    second = tmp_path / "stage0-v2.apkg"
    export.write_deck(rebuilt, str(second))
    log = import_package(col, second)

    assert len(log.new) == 1 and col.note_count() == len(problems) + 1 == col.card_count()
    assert [m["name"] for m in col.models.all()].count(export.MODEL_NAME) == 1  # no "... +" copy
    assert note_by_id(col, new_problem.id)["Skill"] == "floor:v5e:add"
    assert "Rudrite Kernels::Stage 0::floor" in {d.name for d in col.decks.all_names_and_ids()}
    assert "re-checked" in note_by_id(col, problems[changed].id)["Solution"]
    after = col.get_card(studied.id)
    assert after.reps == 1 and after.type != 0  # still studied, not reset to new
    assert col.db.scalar("select count() from revlog where cid = ?", studied.id) == 1


def test_reimporting_the_same_deck_adds_nothing(col, tmp_path):
    problems = generate(families=["lattice"], count=3, seed=2)
    path = tmp_path / "lattice.apkg"
    export.write_deck(problems, str(path))
    import_package(col, path)
    before = col.note_count()
    export.write_deck(generate(families=["lattice"], count=3, seed=2), str(path))
    log = import_package(col, path)
    assert not log.new and col.note_count() == before == len(problems)


def study_one(col, card):
    """Answer ``card``'s deck's next card Good; returns that card's id."""
    col.decks.select(card.did)
    queued = col.sched.get_queued_cards(fetch_limit=1).cards[0]
    studied = Card(col, backend_card=queued.card)
    studied.start_timer()
    col.sched.answer_card(col.sched.build_answer(card=studied, states=queued.states, rating=CardAnswer.GOOD))
    return studied.id


def test_a_fixed_deck_imports_over_the_previous_one(col, tmp_path):
    """`drill deck --fixed` (the old one-problem-per-note form) over the first published deck
    (tests/generator/fixtures/rudrite-stage0-v1.apkg): notes updated in place, no duplicate notes,
    one note type, the studied card's review kept."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    import_package(col, root / "tests" / "generator" / "fixtures" / "rudrite-stage0-v1.apkg")
    before = col.note_count()
    studied = study_one(col, note_by_id(col, "ridge:v5e:bf16").cards()[0])

    from generator.problems.generate import unseeded_id
    old_ids = {col.get_note(n)["Id"] for n in col.find_notes("")}
    fixed = tmp_path / "fixed.apkg"
    problems = generate(count=3, seed=0)
    export.write_deck(problems, str(fixed))
    log = import_package(col, fixed)
    ids = [unseeded_id(col.get_note(n)["Id"]) for n in col.find_notes("")]
    assert len(ids) == len(set(ids)), "a problem id appears on two notes"
    assert col.note_count() == before + len(log.new)
    # every problem the old deck already had (same id, ignoring the new draw seed) is updated in
    # place; fair draws changed which problems seed 0 draws, so only those are new notes
    same = {unseeded_id(p.id) for p in problems} & old_ids
    assert len(same) > 100 and len(log.updated) == len(same)
    assert len(log.new) == len(problems) - len(same)
    assert [m["name"] for m in col.models.all()].count(export.MODEL_NAME) == 1
    after = col.get_card(studied)
    assert after.reps == 1 and after.type != 0
    assert col.db.scalar("select count() from revlog where cid = ?", studied) == 1
    assert "the classic mistake is" in note_by_id(col, "ridge:v5e:bf16")["Solution"]


def skill_notes_in(col):
    return {col.get_note(n)["Skill"].split(" ", 1)[0]: n
            for n in col.find_notes(f'"note:{export.VARIANT_MODEL_NAME}"')}


def test_the_variant_deck_over_the_old_deck_then_regenerated(col, tmp_path):
    """The committed deck (variant form) over the previous committed deck (fixed form, the fixture
    rudrite-stage0-fixed-v2.apkg), then a regenerated variant deck over it: the old notes and their
    reviews stay untouched, one note per skill, and re-importing updates in place with 0 new notes
    and the studied skill card's review kept."""
    from pathlib import Path

    from click.testing import CliRunner

    from drills.cli import cli
    from generator.problems.generate import skills

    root = Path(__file__).resolve().parents[2]
    import_package(col, root / "tests" / "generator" / "fixtures" / "rudrite-stage0-fixed-v2.apkg")
    old_notes = col.note_count()
    old_studied = study_one(col, note_by_id(col, "ridge:v5e:bf16").cards()[0])

    log = import_package(col, root / "decks" / "rudrite-stage0.apkg")
    by_skill = skill_notes_in(col)
    assert len(log.new) == len(by_skill) == len(skills()) == col.note_count() - old_notes
    guids = col.db.list("select guid from notes")
    assert len(guids) == len(set(guids)), "0 duplicates"
    assert {m["name"] for m in col.models.all()} >= {export.MODEL_NAME, export.VARIANT_MODEL_NAME}
    assert [m["name"] for m in col.models.all()].count(export.VARIANT_MODEL_NAME) == 1
    assert col.get_card(old_studied).reps == 1  # the old deck's history is untouched
    # The old note type's cards, found in one search and suspended (history kept).
    old_cards = col.find_cards(f'"note:{export.MODEL_NAME}"')
    assert len(old_cards) == old_notes
    col.sched.suspend_cards(old_cards)

    skill_card = col.get_note(by_skill["ridge:v5e:bf16"]).cards()[0]
    studied = study_one(col, skill_card)
    assert col.get_card(studied).note().id in by_skill.values()

    time.sleep(1.1)  # Anki updates only from a newer package (whole-second note mtimes)
    again = tmp_path / "regenerated.apkg"
    result = CliRunner().invoke(cli, ["deck", "--seed", "5", "-o", str(again)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    notes_before = col.note_count()
    log = import_package(col, again)
    assert not log.new and col.note_count() == notes_before
    assert len(log.updated) == len(by_skill)
    assert skill_notes_in(col) == by_skill  # the same notes, updated in place
    after = col.get_card(studied)
    assert after.reps == 1 and after.type != 0
    assert col.db.scalar("select count() from revlog where cid = ?", studied) == 1
    assert [m["name"] for m in col.models.all()].count(export.VARIANT_MODEL_NAME) == 1


def test_reimport_updates_the_card_in_place_and_what_it_does_to_tags(col, tmp_path):
    """With the real importer: a newer variant deck replaces the note type's
    templates and CSS in place (same id, no "+" copy), keeps flags and scheduling, and replaces the
    note's tags with the package's, whether the package ships tags or none: the learner's own tags
    ("marked", "leech", "my::exam-week") can not survive a re-import. The README and docs/anki.md say so and name
    the workaround (flags survive)."""
    from pathlib import Path

    from drills.cmd_generate import card_rules
    from generator.export import card
    from generator.export.variants import skill_notes
    from generator.problems.generate import registry

    notes = skill_notes(generate(families=["ridge"], chips=["v5e"], count=2, seed=1), card_rules(),
                        registry().by_id, 2)
    first = tmp_path / "first.apkg"
    export.write_variant_deck(notes, str(first))
    import_package(col, first)
    # The collection's note type as an older deck left it: other CSS and templates.
    model = col.models.by_name(export.VARIANT_MODEL_NAME)
    model["css"], model["tmpls"][0]["qfmt"] = ".card { color: red; }", "{{Front}} old"
    col.models.update_dict(model)
    nid = col.find_notes("")[0]
    note = col.get_note(nid)
    note.tags += ["marked", "leech", "my::exam-week"]
    col.update_note(note)
    card_id = note.cards()[0].id
    col.set_user_flag_for_cards(3, [card_id])

    for shipped_tags in (True, False):
        time.sleep(1.1)  # Anki updates only from a newer package
        again = tmp_path / f"again-{shipped_tags}.apkg"
        decks, media = export.build_variant_decks(notes)
        if not shipped_tags:
            for d in decks:
                for n in d.notes:
                    n.tags = []
        export.write_apkg(decks, media, str(again))
        log = import_package(col, again)
        assert not log.new and len(log.updated) == len(notes)
        col.models._clear_cache()
        model = col.models.by_name(export.VARIANT_MODEL_NAME)
        assert model["css"] == card.CSS and model["tmpls"][0]["qfmt"] == card.templates()[0]
        assert [m["name"] for m in col.models.all()].count(export.VARIANT_MODEL_NAME) == 1
        tags = set(col.get_note(nid).tags)
        assert not tags & {"marked", "leech", "my::exam-week"}, tags  # replaced by the package's
        assert col.get_card(card_id).user_flag() == 3  # the workaround: flags are the card's, kept
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "replaces a note's tags" in readme and "flag" in readme
