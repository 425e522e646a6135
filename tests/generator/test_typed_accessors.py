"""The typed accessors that replace ``# type: ignore``s: a numeric answer's number, a choice's pick, a
per-chip skill's chip, a figure a family needs; each refuses the other case in one clear error."""

from __future__ import annotations

import pytest

from generator.model import catalogue
from generator.problems.families.base import make_skill
from generator.problems.problem import Answer


def test_answer_number_and_pick_refuse_the_other_kind():
    numeric, choice = Answer(value=2.5e-6, unit="s"), Answer(choice="memory", choices=("compute", "memory"))
    assert numeric.number == 2.5e-6 and isinstance(Answer(value=3, unit="").number, float)
    assert choice.picked == "memory"
    with pytest.raises(ValueError, match="choice 'memory', not a number"):
        choice.number
    with pytest.raises(ValueError, match="not a choice"):
        numeric.picked


def test_skill_chip_name_refuses_a_skill_without_a_chip():
    assert make_skill("ridge", "v5e", "bf16", "").chip_name == "v5e"
    with pytest.raises(ValueError, match="not drawn on a chip"):
        make_skill("vocabulary", None, "terms", "").chip_name


def test_published_figure_is_the_figure_or_a_key_error():
    cat = catalogue.load()
    chip = next(c for c in cat.chips if c.figure("vmem_bytes") is not None)
    assert chip.published_figure("vmem_bytes") is chip.figure("vmem_bytes")
    without = next(c for c in cat.chips if c.figure("vmem_bytes") is None)
    with pytest.raises(KeyError, match="no published vmem_bytes"):
        without.published_figure("vmem_bytes")
