"""A note's variants teach a computation: no two variants of a numeric note give the same answer to 3
significant figures, a skill whose answer hangs only on its dtype draws the dtypes, and `drill deck`
says how many notes repeat an answer (0).
"""

import re
from dataclasses import replace

from click.testing import CliRunner

from drills.cli import cli
from drills.cmd_generate import card_rules
from generator.problems import generate as gen
from generator.export import variants
from generator.export.variants import skill_notes

# The families whose notes repeated an answer before: sizes that multiply to the same element count,
# a critical batch that is the chip's ratio whatever the shape, links and collectives with equal bytes.
FAMILIES = ["intensity", "floor", "critical_batch", "interconnect", "collective", "sharded_matmul", "transfer",
            "host_link", "pod", "transformer_step", "vmem_fit"]
CHIPS = ["v5e", "h100"]
K = 16


def _sig3(x: float) -> str:
    return f"{x:.2e}"


def _notes():
    reg = gen.registry()
    return skill_notes(reg.generate(FAMILIES, CHIPS, K, 0), card_rules(), reg.by_id, K)


NOTES = _notes()


def test_no_numeric_note_asks_for_the_same_answer_twice():
    numeric = [n for n in NOTES if not n.variants[0].problem.answer.is_choice]
    assert len(numeric) > 40
    for note in numeric:
        answers = [(_sig3(v.problem.answer.number), v.problem.answer.unit) for v in note.variants]
        assert len(set(answers)) == len(answers), (note.skill, answers)
        assert not variants.repeats_an_answer(note)
    # the search still fills notes whose answers do vary
    assert sum(len(n.variants) == K for n in numeric) > len(numeric) // 5


def test_an_elementwise_ops_intensity_varies_its_dtype():
    """Its intensity does not hang on the shape or the chip: each note draws the chip's dtypes instead."""
    for chip in CHIPS:
        for case in ("add", "softmax", "reduce_sum", "dot"):
            note = next(n for n in NOTES if n.skill == f"intensity:{chip}:{case}")
            dtypes = {v.problem.params["dtype"] for v in note.variants}
            assert len(note.variants) >= 2 and "bf16" in dtypes and dtypes & {"int8", "fp8"}, (note.skill, dtypes)


def test_a_note_with_a_repeated_answer_is_counted():
    note = next(n for n in NOTES if n.skill == "floor:v5e:add")
    first = note.variants[0]
    same = replace(note.variants[1], problem=replace(note.variants[1].problem, answer=first.problem.answer))
    assert variants.repeats_an_answer(replace(note, variants=(first, same, *note.variants[2:])))
    choice = next(n for n in skill_notes(gen.generate(["bound"], ["v5e"], 4, 0), card_rules(), gen.registry().by_id, 4)
                  if len(n.variants) > 2)
    assert not variants.repeats_an_answer(choice)  # a verdict has two answers to give: not counted


def test_drill_deck_prints_the_count(tmp_path):
    r = CliRunner().invoke(cli, ["deck", "--family", "intensity", "--family", "critical_batch", "--chip", "v5e",
                                 "-o", str(tmp_path / "d.apkg")])
    assert r.exit_code == 0, r.output
    found = re.search(r"notes with fewer distinct answers than variants \(3 significant figures\): "
                      r"(\d+) of (\d+) numeric notes", r.output)
    assert found, r.output
    assert found.group(1) == "0" and int(found.group(2)) == len(gen.skills(["intensity", "critical_batch"], ["v5e"]))
