"""Drill specs load with the safe loader and a bad spec fails with file, line and what is wrong."""

import shutil
from pathlib import Path

import pytest

from generator.problems.generate import FAMILY_NAMES, Registry, grading_bands
from generator.problems.specs import SPECS_DIR, GradingBands, SpecError


@pytest.fixture
def specs(tmp_path):
    """A private copy of the packaged specs to break."""
    target = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, target)
    return target


def edit(path: Path, old: str, new: str) -> int:
    """Replace ``old`` once; return the 1-based line where the change starts."""
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def fails(specs: Path, match: str) -> str:
    with pytest.raises(SpecError) as info:
        Registry(str(specs))
    message = str(info.value)
    assert "\n" not in message
    assert match in message, message
    return message


def test_the_packaged_specs_declare_every_family():
    reg = Registry()
    assert set(reg.specs) == set(FAMILY_NAMES)
    for name in FAMILY_NAMES:
        assert (SPECS_DIR / f"{name}.yaml").is_file()


def test_grading_bands_come_from_the_specs():
    bands = grading_bands("floor")
    assert isinstance(bands, GradingBands)
    assert bands.hard_seconds >= bands.easy_seconds > 0 and 0 < bands.easy_rel <= bands.good_rel <= 0.05
    assert grading_bands("bound").good_rel == 0.0
    assert grading_bands("critical-batch") == grading_bands("critical_batch")


def test_broken_yaml_names_file_and_line(specs):
    path = specs / "ridge.yaml"
    line = edit(path, "  compare_dtype: bf16", "  compare_dtype: [bf16")
    message = fails(specs, "invalid YAML")
    assert message.startswith(f"{path}:")
    assert int(message.split(":")[1]) >= line


def test_wrong_type_names_the_line(specs):
    path = specs / "floor.yaml"
    line = edit(path, "tolerance: 0.05", "tolerance: lots")
    assert fails(specs, "expected a number").startswith(f"{path}:{line}: tolerance:")


def test_unknown_key_is_refused(specs):
    path = specs / "bound.yaml"
    line = edit(path, "chips: all", "chips: all\ncolour: blue")
    assert fails(specs, "unknown key 'colour'").startswith(f"{path}:{line + 1}:")


def test_unknown_placeholder_in_a_prompt(specs):
    path = specs / "ridge.yaml"
    line = edit(path, '  value: "What is the {dtype} ridge', '  value: "What is the {dtyp} ridge')
    assert fails(specs, "unknown placeholder '{dtyp}'").startswith(f"{path}:{line}: prompts.value:")


def test_attribute_access_in_a_template_is_refused(specs):
    edit(specs / "ridge.yaml", '  value: "What is the {dtype} ridge', '  value: "What is the {dtype.__class__} ridge')
    fails(specs, "unknown placeholder")


def test_duplicate_keys_are_refused(specs):
    path = specs / "lattice.yaml"
    line = edit(path, "tolerance: 0.0\n", "tolerance: 0.0\ntolerance: 0.5\n")
    assert fails(specs, "duplicate key 'tolerance'").startswith(f"{path}:{line + 1}:")


def test_unknown_chip_in_a_spec(specs):
    path = specs / "vocabulary.yaml"
    edit(path, "example_chip: v5e ", "example_chip: v9x ")
    fails(specs, "unknown chip 'v9x'")


def test_bad_op_dims(specs):
    path = specs / "intensity.yaml"
    line = edit(path, "      dims: {N: [4096, 65536, 1048576]}", "      dims: {M: [4096]}")
    message = fails(specs, "missing key(s): N")
    assert message.startswith(f"{path}:{line}: params.cases.dot.dims")


def test_negative_shape(specs):
    edit(specs / "bound.yaml", "dims: {M: [1024, 4096, 8192], N: [1024, 4096, 8192, 32768]}",
         "dims: {M: [1024, -4], N: [1024]}")
    fails(specs, "must be >= 1, got -4")


def test_easy_band_wider_than_tolerance(specs):
    edit(specs / "ridge.yaml", "  easy_rel: 0.02 ", "  easy_rel: 0.5 ")
    fails(specs, "must not be wider than tolerance")


def test_unknown_family(specs):
    path = specs / "ridge.yaml"
    edit(path, "family: ridge", "family: ridges")
    fails(specs, "unknown family 'ridges'")


def test_missing_family_file(specs):
    (specs / "lattice.yaml").unlink()
    fails(specs, "no spec for family: lattice")


def test_duplicate_family(specs):
    shutil.copy(specs / "ridge.yaml", specs / "ridge_again.yaml")
    fails(specs, "already declared")


def test_broken_can_you_check(specs):
    path = specs / "vocabulary.yaml"
    line = edit(path, "check: {family: ridge, chip: v5e, variant: bf16}", "check: {family: ridge, chip: v5e, variant: f64}")
    message = fails(specs, "can not build this check")
    assert message.startswith(f"{path}:{line}:") and "ridge:v5e:f64" in message


def test_spec_yaml_can_not_construct_objects(specs):
    edit(specs / "ridge.yaml", "compare_dtype: bf16", "compare_dtype: !!python/object/apply:os.system ['echo hi']")
    fails(specs, "invalid YAML")


def test_empty_file(specs):
    (specs / "floor.yaml").write_text("")
    fails(specs, "the file is empty")


def test_aliases_can_not_blow_up_the_walk(specs):
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9))
    (specs / "lattice.yaml").write_text(laughs)
    fails(specs, "lattice.yaml:1: (top level): missing key(s)")


@pytest.mark.parametrize("bad", [".nan", ".NaN", ".inf", "-.inf"])
def test_a_tolerance_that_is_not_finite_is_refused(specs, bad):
    """NaN compares false with every bound, so only a finiteness check stops it (and it is not JSON)."""
    path = specs / "floor.yaml"
    line = edit(path, "tolerance: 0.05", f"tolerance: {bad}")
    assert fails(specs, "expected a finite number").startswith(f"{path}:{line}: tolerance:")


def test_the_exported_json_never_holds_nan():
    import json
    from dataclasses import replace

    from generator.export import tabular

    problem = Registry().generate(["floor"], count=1, seed=3)[0]
    text = tabular.to_json([problem])
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the exported JSON"))
    with pytest.raises(ValueError):
        tabular.to_json([replace(problem, tolerance=float("nan"))])
