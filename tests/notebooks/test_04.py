"""Notebook 04 (layout and false sharing) runs under papermill and records sane results."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from memcglab.plots import captions
from memcglab.studies import CLAIM_KEYS, read_claims

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_layout_false_sharing.ipynb"


def test_committed_without_outputs_with_a_tagged_parameters_cell():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# Study 4")
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and params[0] is nb.cells[1]
    assert "quick: bool = False" in params[0].source
    assert 'output_dir: str = "results/04"' in params[0].source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import papermill

    out = tmp_path_factory.mktemp("nb04")
    papermill.execute_notebook(
        str(NOTEBOOK), str(out / "executed.ipynb"), kernel_name="python3",
        parameters={"quick": True, "output_dir": str(out)}, progress_bar=False,
        cwd=str(NOTEBOOK.parent))
    return out


def test_sidecar_has_the_study_results(run):
    r = json.loads((run / "result.json").read_text())
    assert r["stock_2025_04_sizeof"] == r["objdump_sizeof"] == 0x88
    assert (r["unaligned_lookup_lines"], r["aligned_lookup_lines"]) == (2, 1)
    assert r["max_slots_one_line"] == 7
    assert (r["same_line_parent"], r["same_line_blamed"], r["same_line_fixed"]) == (
        False, True, False)
    assert r["extra_transfers_per_event"] > 0 and r["regression_pct"] > 0
    assert r["fixed_gap_pct"] == 0.0 and r["seeds"] == 2
    assert f"{r['regression_pct']:.3f}%" in r["conclusion"]
    claims = read_claims(r)
    assert len(claims) == 7 and all(set(c) == set(CLAIM_KEYS) for c in claims)


def test_figures_are_saved_with_captions(run):
    names = {"04_stock_layout.png", "04_slots_per_line.png", "04_seed004.png"}
    assert names <= {p.name for p in run.glob("*.png")}
    assert set(captions(run)) == names
