"""generator.problems.bulk: the cyclic collector paused for a bulk build, as ``generator.problems.bulk`` says is safe."""

import gc

from drills.cmd_generate import card_rules
from generator.problems import bulk
from generator.problems import generate as gen
from generator.export import anki
from generator.export.variants import course_notes


def test_the_pause_nests_and_restores_the_collector():
    assert gc.isenabled()
    with bulk.collector_paused():
        assert not gc.isenabled()
        with bulk.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk.collector_paused():
            pass
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()


def test_a_deck_build_leaves_no_cycles_for_the_collector(tmp_path):
    """What the pause relies on: a deck of every family, built with the collector off, leaves no
    unreachable cycle behind (everything it made is freed by reference counting)."""
    registry = gen.Registry()
    registry.generate(count=2, seed=9)  # the registry's own caches filled before the count starts
    gc.collect()
    with bulk.collector_paused():
        notes = course_notes(registry, card_rules(), max_variants=2, seed=9)
        anki.write_variant_deck(notes, str(tmp_path / "d.apkg"))
        del notes
        assert not gc.isenabled()
        assert gc.collect() == 0
