import copy

import pytest

from generator.model import catalogue
from generator.model.catalogue import CatalogueError, UnknownChipError, parse
from generator.io.yamlio import safe_load

CAT = catalogue.load()

# The figures of ../shared/reference/chips.md, checked against the data file.
REFERENCE = {
    "v3": (1.4e14, 9.0e11, 32e9), "v4p": (2.75e14, 1.2e12, 32e9), "v5p": (4.59e14, 2.8e12, 96e9),
    "v5e": (1.97e14, 8.2e11, 16e9), "v6e": (9.20e14, 1.6e12, 32e9), "tpu7x": (2.30e15, 7.4e12, 192e9),
    "a100": (3.1e14, 2.0e12, 80e9), "h100": (9.9e14, 3.4e12, 80e9), "h200": (9.9e14, 4.8e12, 141e9),
    "b200": (2.3e15, 8.0e12, 192e9),
}


def test_every_chip_from_the_reference_is_there_with_its_figures():
    assert sorted(CAT.names()) == sorted(REFERENCE)
    for name, (peak, bw, cap) in REFERENCE.items():
        chip = CAT.get(name)
        assert (chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s, chip.hbm_bytes) == (peak, bw, cap)


def test_every_figure_has_a_known_source_with_retrieval_date():
    for chip in CAT.chips:
        figures = [*chip.peak_flops.values(), *chip.figures.values()]
        assert figures
        for fig in figures:
            assert fig.source.key in CAT.sources
            assert fig.source.title and fig.source.url.startswith("https://") and fig.source.retrieved
    for fig in CAT.facts.values():
        assert fig.source.key in CAT.sources


def test_editions_that_disagree_are_noted():
    assert "8.1e11" in CAT.get("v5e").figures["hbm_bytes_per_s"].note
    assert "9.1e14" in CAT.get("v6e").peak_flops["bf16"].note


def test_every_alias_resolves_to_exactly_one_chip():
    owners = {}
    for chip in CAT.chips:
        for key in (chip.name, *chip.aliases):
            norm = " ".join(key.lower().split())
            assert owners.setdefault(norm, chip.name) == chip.name, f"{key} names two chips"
            assert CAT.get(key.upper()).name == chip.name


@pytest.mark.parametrize("alias,name", [
    ("v4", "v4p"), ("Trillium", "v6e"), ("ironwood", "tpu7x"), ("v7", "tpu7x"), ("TPU7x", "tpu7x"),
    ("h200", "h200"), ("V5E", "v5e"),
])
def test_named_aliases(alias, name):
    assert catalogue.get(alias).name == name


@pytest.mark.parametrize("kind,name", [
    ("TPU v5 lite", "v5e"), ("TPU v5", "v5p"), ("TPU v6 lite", "v6e"), ("TPU7x", "tpu7x"), ("TPU v4", "v4p"),
    ("NVIDIA H200", "h200"), ("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA A100-SXM4-80GB", "a100"),
])
def test_device_kind_mapping(kind, name):
    assert CAT.for_device_kind(kind).name == name


def test_unknown_device_kind_and_cpu_map_to_nothing():
    assert CAT.for_device_kind("cpu") is None
    assert CAT.for_device_kind("TPU v9 imaginary") is None


def test_unknown_chip_names_the_closest_match():
    with pytest.raises(UnknownChipError) as info:
        catalogue.get("v6")
    assert info.value.closest in CAT.names()
    assert "known chips" in str(info.value)


def test_tpus_carry_interconnect_and_topology():
    for chip in CAT.chips:
        if chip.kind == "tpu":
            for key in ("ici_bytes_per_s_one_way", "ici_bytes_per_s_bidi", "pod_topology", "host_topology"):
                assert chip.figure(key) is not None, (chip.name, key)
            assert chip.value("ici_bytes_per_s_bidi") == 2 * chip.value("ici_bytes_per_s_one_way")
    assert CAT.get("v5e").value("vmem_bytes") == 128 * 2**20
    assert CAT.get("v6e").value("mxu_shape") == [256, 256]


def _raw():
    with open(catalogue.CATALOGUE_PATH, encoding="utf-8") as fh:
        return safe_load(fh)


def test_a_figure_without_source_is_rejected():
    raw = copy.deepcopy(_raw())
    del raw["chips"][0]["hbm_bytes_per_s"]["source"]
    with pytest.raises(CatalogueError, match="v3.hbm_bytes_per_s"):
        parse(raw)


def test_an_unknown_source_is_rejected():
    raw = copy.deepcopy(_raw())
    raw["chips"][2]["peak_flops_per_s"]["bf16"]["source"] = "my-memory"
    with pytest.raises(CatalogueError, match="unknown source"):
        parse(raw)


# --- facts with the source each now cites --------------------------------------------

def test_v6e_has_one_tensorcore_citing_the_cloud_tpu_page():
    fig = CAT.get("v6e").figures["tensorcores_per_chip"]
    assert fig.value == 1 and fig.source.key == "cloud-tpu-system-architecture"
    assert "Each v6e chip contains one TensorCore" in fig.note
    assert "system architecture" in fig.source.title.lower()
    assert CAT.get("v5e").value("tensorcores_per_chip") == 1
    assert [CAT.get(n).value("tensorcores_per_chip") for n in ("v4p", "v5p")] == [2, 2]


def test_drill_chips_json_shows_one_tensorcore_on_v6e():
    import json

    from tests.conftest import invoke_drill
    res = invoke_drill("chips", "--json")
    assert res.returncode == 0, res.stderr
    v6e = next(c for c in json.loads(res.stdout) if c["name"] == "v6e")
    assert v6e["figures"]["tensorcores_per_chip"]["value"] == 1 and v6e["tensorcores_per_chip"] == 1
    assert "cloud-tpu-system-architecture" in {s["key"] for s in v6e["sources"]}


def test_lattice_facts_cite_the_seed_and_int8_is_marked_derived():
    for key, want in (("tiling_lattice_32bit", [8, 128]), ("tiling_lattice_bf16", [16, 128]),
                      ("tiling_lattice_int8", [32, 128])):
        fig = CAT.facts[key]
        assert fig.value == want and fig.source.key == "course-seed", key
        assert "lattice rule" in fig.source.title.lower()
    assert "(8, 128)" in CAT.facts["tiling_lattice_32bit"].note
    assert "bf16 packs (16, 128)" in CAT.facts["tiling_lattice_bf16"].note
    assert CAT.facts["tiling_lattice_int8"].note.startswith("derived")


def test_older_edition_notes_say_per_host_and_where_9_1e14_came_from():
    v3 = CAT.get("v3")
    for key, old in (("pcie_bytes_per_s", "1.5e10"), ("dcn_bytes_per_s", "2.5e10")):
        note = v3.figures[key].note
        assert old in note and "per host" in note and "per chip" in note, note
    assert "Rooflines" in CAT.get("v6e").peak_flops["bf16"].note
    assert "older table" in CAT.get("v6e").peak_flops["bf16"].note


def test_wraparound_rule_is_data():
    assert CAT.get("v5e").value("ici_wraparound") == {"axis_equals": 16}
    assert CAT.get("v6e").value("ici_wraparound") == {"axis_equals": 16}
    assert CAT.get("v5p").value("ici_wraparound") == {"whole_cubes_of": 4}
    assert CAT.get("v3").value("ici_wraparound") is None
