"""generator.problems.drawplans: a skill's search outcome kept between processes, read only when it is exactly
the shape written (a value of any other shape is ignored, and every skill is searched again).

That a plan rebuilds the notes the search gives, field for field, is test_deck_shortcuts.py's."""

from __future__ import annotations

import pytest

from generator.problems import drawplans
from generator.io import startcache
from generator.problems import generate as gen


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRILL_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "in.py"
    source.write_text("x = 1\n")
    startcache.forget_digests()
    yield [source]
    startcache.forget_digests()


def test_plans_are_kept_per_selection_and_completed(inputs):
    assert drawplans.load(inputs, 0, 16) == {}
    drawplans.store(inputs, 0, 16, {"floor:v5e:add": [["0a1b2c3d", 0], ["00000001", 3]]})
    drawplans.store(inputs, 0, 16, {"ridge:v5e:bf16": [["ffffffff", 0]]})  # another skill of the same request
    drawplans.store(inputs, 1, 16, {"floor:v5e:add": [["deadbeef", 0]]})  # another seed: its own table
    assert drawplans.load(inputs, 0, 16) == {"floor:v5e:add": [["0a1b2c3d", 0], ["00000001", 3]],
                                            "ridge:v5e:bf16": [["ffffffff", 0]]}
    assert drawplans.load(inputs, 1, 16) == {"floor:v5e:add": [["deadbeef", 0]]}
    assert drawplans.load(inputs, 0, 8) == {}  # another count is another search


def test_only_the_newest_selections_are_kept(inputs):
    for seed in range(drawplans.MAX_SELECTIONS + 2):
        drawplans.store(inputs, seed, 4, {"floor:v5e:add": [[f"{seed:08x}", 0]]})
    kept = [seed for seed in range(drawplans.MAX_SELECTIONS + 2) if drawplans.load(inputs, seed, 4)]
    assert kept == list(range(2, drawplans.MAX_SELECTIONS + 2))


@pytest.mark.parametrize("table", [
    [1, 2],
    {"0:16": []},
    {"0:16": {"floor:v5e:add": [["0A1B2C3D", 0]]}},  # upper-case hex: not a token the search writes
    {"0:16": {"floor:v5e:add": [["0a1b2c3", 0]]}},  # seven digits
    {"0:16": {"floor:v5e:add": [["0a1b2c3d", -1]]}},
    {"0:16": {"floor:v5e:add": [["0a1b2c3d", True]]}},  # a bool is not a try number
    {"0:16": {"floor:v5e:add": [["0a1b2c3d", 1.0]]}},
    {"0:16": {"floor:v5e:add": [["0a1b2c3d", drawplans.MAX_TRY + 1]]}},
    {"0:16": {"floor:v5e:add": [["0a1b2c3d", 0, 0]]}},
    {"0:16": {"floor:v5e:add": "0a1b2c3d"}},
])
def test_a_table_of_another_shape_is_not_read(inputs, table):
    startcache.replace(drawplans.NAME, inputs, table)
    assert startcache.cached(drawplans.NAME, inputs, dict) == table  # it is there, and it is not used
    assert drawplans.load(inputs, 0, 16) == {}


def test_a_stored_plan_is_what_the_next_request_rebuilds(tmp_path, monkeypatch):
    """The next request reads the plan and searches no further: a plan naming one seed gives that seed's
    problem (rebuilt by ``problem(id)`` from its id) and nothing else for the skill."""
    monkeypatch.setenv("DRILL_CACHE_DIR", str(tmp_path / "cache"))
    registry = gen.Registry()
    searched = registry.generate(["ridge"], ["v5e"], 2, 0)
    skill = searched[0].skill
    drawplans.store(gen.index_inputs(), 0, 2, {skill: [["00000000", 0]]})
    rebuilt = [p for p in gen.Registry().generate(["ridge"], ["v5e"], 2, 0) if p.skill == skill]
    assert len(rebuilt) == 1 and rebuilt[0].id.endswith("@00000000")
    assert gen.Registry().problem(rebuilt[0].id) == rebuilt[0]
