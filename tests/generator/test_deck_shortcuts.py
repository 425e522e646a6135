"""The deck's draws take shortcuts (solved params kept per skill, every skill's probe verdict from the
start-up cache, per-spec values a family's draw would work out again, the card's wrong answers read
from the distances the fair draws measured, an unfair draw's mistakes priced only up to the first
unfair one, a miss case's explanations searched once); the notes they give are the notes the plain
path gives, field for field.

One small deck (the families whose draws take each shortcut, on two chips, K=4) is built three ways:
with every shortcut (``variants.course_notes``, as `drill deck` builds it) and a cold start-up cache,
again with the cache warm (the probe verdicts read), and with every shortcut off (each variant's wrong
answers asked of its family again, every mistake of every draw priced, every explanation searched at
each ask). The sha256 of all fields, GUIDs, tags and media must be the same.
"""

import hashlib

import pytest

from drills.cmd_generate import card_rules
from generator.problems import generate as gen
from generator import explain as miss_reasons
from generator.io import startcache
from generator.export import anki
from generator.export.variants import course_notes, skill_notes
from generator.problems.families import base, miss_reason, mistakes

FAMILIES = ["floor", "intensity", "host_link", "pod", "collective", "critical_batch", "miss_reason"]
CHIPS = ["v5e", "v4p"]
K, SEED = 4, 11


class _Forgetful(dict):
    """A cache that keeps nothing: every lookup misses."""

    def __setitem__(self, key, value):
        pass

    def get(self, key, default=None):
        return None


def _deck_digest(registry: gen.Registry, shortcuts: bool = True) -> str:
    if shortcuts:
        notes = course_notes(registry, card_rules(), FAMILIES, CHIPS, K, SEED)
    else:
        notes = skill_notes(registry.generate(FAMILIES, CHIPS, K, SEED), card_rules(), registry.by_id, K)
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
        asked, read = [], []
        real_found, real_read = mistakes.found, mistakes.misconceptions.outside_key_measured
        mp.setattr(mistakes, "found", lambda *a, **k: asked.append(1) or real_found(*a, **k))
        mp.setattr(mistakes.misconceptions, "outside_key_measured",
                   lambda *a: read.append(1) or real_read(*a))
        unfair = []
        real_distances = gen._distances
        mp.setattr(gen, "_distances", lambda p, teaches=None: (lambda found: found is None and unfair.append(1)
                                                                 or found)(real_distances(p, teaches)))
        cold = _deck_digest(gen.Registry())
        probes = list(startcache.cache_dir().glob("probes-*.json"))
        cold_solves = len(solved)
        warm = _deck_digest(gen.Registry())
        shortcut_solves = len(solved)
        warm_solves = shortcut_solves - cold_solves
        derived_entries = sum(len(values) for _, _, values in base._DERIVED.values())
        shortcut_asked, shortcut_read = len(asked), len(read)
        explanations_cached = miss_reason.explanations.cache_info().currsize
        stopped_early = len(unfair)

        solved.clear()
        asked.clear()
        mp.setattr(gen, "_plain", lambda value: False)  # no solved params kept
        mp.setattr(gen, "_distances", lambda p, teaches=None: real_distances(p))  # every mistake priced
        mp.setattr(gen.Registry, "_load_probes", lambda self, chosen, memos: None)  # each probe drawn, none read
        mp.setattr(base, "_DERIVED", _Forgetful())  # every per-spec value worked out at each draw
        mp.setattr(miss_reason, "explanations",  # every explanation searched at each ask
                   lambda ev: tuple(miss_reasons.explanations(ev, miss_reason.MOST_REASONS)))
        read.clear()
        plain = _deck_digest(gen.Registry(), shortcuts=False)
        variants = len(gen.Registry().generate(FAMILIES, CHIPS, K, SEED))
        return {"cold": cold, "warm": warm, "plain": plain, "probes": probes,
                "cold_solves": cold_solves, "warm_solves": warm_solves, "variants": variants,
                "shortcut_solves": shortcut_solves, "plain_solves": len(solved), "derived": derived_entries,
                "shortcut_asked": shortcut_asked, "plain_asked": len(asked),
                "shortcut_read": shortcut_read, "plain_read": len(read),
                "explanations_cached": explanations_cached, "stopped_early": stopped_early}
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
    # The warm build read the cold build's probe verdicts: it solved fewer problems (the cold build also
    # solved its probes' draws), and at least one a variant.
    assert digests["variants"] <= digests["warm_solves"] < digests["cold_solves"]
    assert digests["derived"] > 0
    assert digests["shortcut_solves"] < digests["plain_solves"]
    # The cards' wrong answers: read from the measured distances for most variants (two shortcut
    # builds), so the families were asked fewer times than on the plain path, which reads none.
    assert digests["shortcut_read"] > 0 and digests["plain_read"] == 0
    assert digests["shortcut_asked"] < 2 * digests["plain_asked"]
    assert digests["explanations_cached"] > 0
    assert digests["stopped_early"] > 0


def test_the_measured_distances_give_every_familys_wrong_answers():
    # Every family, each skill on one chip: the wrong answers read from a draw's measured distances are
    # the ones its family names when asked again, value, step and order.
    registry = gen.Registry()
    measured: dict = {}
    problems = registry.generate(list(gen.FAMILY_NAMES), ["v5e"], 2, SEED, measured=measured)
    assert {p.family for p in problems} == set(gen.FAMILY_NAMES)
    read = set()
    for p in problems:
        asked = mistakes.wrong_answers(p)
        given = mistakes.wrong_answers(p, measured=measured[p.id])
        if mistakes._measured_suffice(p):
            read.add(p.family)
        assert [(w.misconception.id, w.value, w.step) for w in given] == \
            [(w.misconception.id, w.value, w.step) for w in asked], p.id
    assert {"floor", "intensity", "critical_batch", "transformer_step", "host_link", "interconnect"} <= read


def test_each_family_that_says_its_hook_drops_only_near_answers_does():
    """``DROPS_ONLY_WITHIN_TOLERANCE``: for every drawn numeric problem of each family that sets it, the
    wrong answers read from the fair draw's distances are the ones its hook names, value and step."""
    from generator.problems import families

    flagged = [name for name in gen.FAMILY_NAMES
               if getattr(families.FAMILIES[name], "DROPS_ONLY_WITHIN_TOLERANCE", False)]
    assert len(flagged) >= 4
    registry = gen.Registry()
    checked = 0
    for seed in (0, 1):
        measured = {}
        for p in registry.generate(flagged, None, 4, seed, measured=measured):
            if p.answer.is_choice:
                continue
            read = mistakes.misconceptions.outside_key_measured(p, measured[p.id])
            asked = mistakes.misconceptions.outside_key(p, mistakes.found(p, registry.catalogue))
            assert [(w.misconception.id, w.value, w.step) for w in read] == \
                [(w.misconception.id, w.value, w.step) for w in asked], p.id
            checked += 1
    assert checked > 300
