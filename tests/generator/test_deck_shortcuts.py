"""The deck's draws take shortcuts (solved params kept per skill, every skill's probe verdict from the
start-up cache, per-spec values a family's draw would work out again); the notes they give are the
notes the plain path gives, field for field.

One small deck (the families whose draws take each shortcut, on two chips, K=4) is built three ways:
with every shortcut and a cold start-up cache, again with the cache warm, and with every shortcut
off. The sha256 of all fields, GUIDs, tags and media must be the same.
"""

import hashlib

import pytest

from drills.cmd_generate import card_rules
from generator import generate as gen
from generator import startcache
from generator.export import anki
from generator.export.variants import skill_notes
from generator.families import base

FAMILIES = ["floor", "intensity", "host_link", "pod", "collective", "critical_batch"]
CHIPS = ["v5e", "v4p"]
K, SEED = 4, 11


class _Forgetful(dict):
    """A cache that keeps nothing: every lookup misses."""

    def __setitem__(self, key, value):
        pass


def _deck_digest(registry: gen.Registry) -> str:
    problems = registry.generate(FAMILIES, CHIPS, K, SEED)
    notes = skill_notes(problems, card_rules(), registry.by_id, K)
    decks, media = anki.build_variant_decks(notes)
    h = hashlib.sha256()
    for deck in decks:
        h.update(deck.name.encode())
        for note in deck.notes:
            h.update(repr((note.fields, note.guid, note.tags)).encode())
    for name in sorted(media):
        h.update(name.encode() + media[name])
    return h.hexdigest()


@pytest.fixture(scope="module")
def digests(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("DRILL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        solved = []
        real_solve = gen.Registry.solve
        mp.setattr(gen.Registry, "solve", lambda self, *a: solved.append(1) or real_solve(self, *a))
        cold = _deck_digest(gen.Registry())
        probes = list(startcache.cache_dir().glob("probes-*.json"))
        warm = _deck_digest(gen.Registry())
        shortcut_solves = len(solved)
        derived_entries = sum(len(values) for _, _, values in base._DERIVED.values())

        solved.clear()
        mp.setattr(gen, "_plain", lambda value: False)  # no solved params kept
        mp.setattr(gen.Registry, "_load_probes", lambda self, chosen, memos: None)  # each probe drawn, none read
        mp.setattr(base, "_DERIVED", _Forgetful())  # every per-spec value worked out at each draw
        plain = _deck_digest(gen.Registry())
        return {"cold": cold, "warm": warm, "plain": plain, "probes": probes,
                "shortcut_solves": shortcut_solves, "plain_solves": len(solved), "derived": derived_entries}
    finally:
        mp.undo()


def test_the_shortcuts_give_the_plain_paths_notes(digests):
    assert digests["cold"] == digests["plain"]
    assert digests["warm"] == digests["plain"]


def test_the_shortcuts_are_taken(digests):
    # Each shortcut is in use, so the equality above is about them: the probe table was written,
    # per-spec values were kept, and far fewer problems were solved than on the plain path (two
    # shortcut builds against one plain build).
    assert len(digests["probes"]) == 1
    assert digests["derived"] > 0
    assert digests["shortcut_solves"] < digests["plain_solves"]
