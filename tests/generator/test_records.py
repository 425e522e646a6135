"""``records.evolve`` is ``dataclasses.replace``: the same object for the model's records, the same
error for a name that is no field, and ``replace`` itself for a class whose ``__init__`` does more."""

import dataclasses

import pytest

from generator.model import catalogue, costs, roofline, transformer
from generator.problems.problem import Answer, Problem
from generator.model.records import evolve


def _cases():
    cost = costs.matmul(8, 4096, 8192, "bf16", rhs_dtype="int8")
    ceilings = roofline.Ceilings.from_chip(catalogue.load().get("v5e"), "bf16")
    step = transformer.step_cost(transformer.Model(7_000_000_000, 32, 4096), "prefill", 4, 2048, "bf16")
    problem = Problem("floor", "floor:v5e:add", "floor:v5e:add:1x1-bf16", "prompt?", Answer(1.5, "s"), 0.05,
                      ("one", "two"), ("t",), {"shape": [1, 1]}, "hint")
    return [(cost, {"bytes": 12, "bytes_written": 0}), (cost, {"flops": cost.flops / 2}),
            (ceilings, {"peak_flops_per_s": 1e12, "dtype": "int8"}), (step, {"flops_attention": 0}),
            (problem, {"id": problem.id + "@0a1b2c3d", "solution": ("three",)})]


@pytest.mark.parametrize("obj,changes", _cases())
def test_evolve_gives_what_replace_gives(obj, changes):
    made, expected = evolve(obj, **changes), dataclasses.replace(obj, **changes)
    assert made == expected and type(made) is type(expected)
    assert vars(made) == vars(expected) and list(vars(made)) == list(vars(expected))
    assert made is not obj and obj == dataclasses.replace(obj)  # the original is untouched


def test_a_name_that_is_no_field_is_refused():
    with pytest.raises(TypeError):
        evolve(costs.add(4, 4), nbytes=3)


def test_a_class_whose_init_does_more_gets_replace():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        value: int
        doubled: int = 0

        def __post_init__(self):
            object.__setattr__(self, "doubled", 2 * self.value)

    assert evolve(Checked(1), value=5).doubled == 10
