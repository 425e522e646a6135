"""LAB·0.1's notebook executes top to bottom on the CPU with a small N (nbclient; slow)."""

import nbformat
import pytest
from nbclient import NotebookClient

from labs import records
from tests.conftest import REPO

pytestmark = pytest.mark.slow

NOTEBOOK = REPO / "labs" / "stage-0" / "lab-0.1-rooflines.ipynb"


def _load():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    return nb


def test_the_notebook_is_tagged_for_the_site_and_has_one_parameters_cell():
    nb = _load()
    tags = [set(c.metadata.get("tags", [])) for c in nb.cells]
    assert sum("parameters" in t for t in tags) == 1
    assert sum("site:show" in t for t in tags) >= 5
    first = nb.cells[0] if nb.cells[0].cell_type == "code" else nb.cells[1]
    assert "pip" in first.source and "[lab]" not in first.source  # never replaces the runtime's jax


def test_no_formula_is_copied_into_the_notebook():
    source = "\n".join(c.source for c in _load().cells if c.cell_type == "code")
    for formula in ("2 * N**3", "N**2", "/ c[\"hbm_bw\"]", "flops / bytes", "1.97e14 /", "max(flops"):
        assert formula not in source


def test_the_notebook_runs_on_the_cpu(tmp_path):
    nb = _load()
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    out = tmp_path / "bench"
    params.source = f"N = 128\nREPS = 3\nCALIBRATE = True\nOUT = {str(out)!r}\n"
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "ridge = 240 FLOPs/byte" in text  # v5e, from the catalogue
    assert "matmul NxNxN" in text and "measured  datasheet" in text
    assert "GATE 00 OPEN (practice only: CPU records)" in text
    saved = list(out.glob("lab-0.1-cpu-*.json"))
    assert len(saved) == 1
    rec = records.load(saved[0])
    assert rec["size"] == 128 and rec["reps"] == 3
    assert list(out.glob("*.png"))
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "the plot is displayed"
