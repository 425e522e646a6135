"""Issue 17's answer key: ids round-trip, the book's worked answers are right, fair draws, vocabulary.

The sweep covers every family and chip with several seeds (the fast set uses fewer seeds than
the slow one; both check 100% of ids)."""

from __future__ import annotations

import re
import time

import pytest

from generator import generate
from generator.families import FAMILIES

EXPANSIONS = {"MXU": "matrix multiply unit", "VPU": "vector processing unit", "VMEM": "vector memory",
              "HBM": "high bandwidth memory", "SMEM": "scalar memory", "ICI": "inter-chip interconnect",
              "DCN": "data center network", "megacore": "megacore", "tiling lattice": "tiling lattice"}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower().replace("-", " ")))


def test_no_vocabulary_prompt_gives_its_term_away():
    cards = [p for p in generate.generate(families=["vocabulary"], count=1) if p.params.get("card", "").startswith("term")]
    assert len(cards) >= 9
    for p in cards:
        term = str(p.answer.choice)
        prompt = _words(p.prompt)
        assert not (_words(term) & prompt), (p.id, _words(term) & prompt)
        expansion = EXPANSIONS[term]
        assert " ".join(_words(expansion)) not in " ".join(re.findall(r"[a-z0-9]+", p.prompt.lower().replace("-", " ")))
        if term == "DCN":  # the example: no word of "data-center network"
            assert not ({"data", "center", "centre", "network"} & prompt), p.prompt
