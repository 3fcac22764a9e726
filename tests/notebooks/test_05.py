"""Notebook 05 (historic behaviour) runs under papermill and records sane results."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from memcglab.plots import captions
from memcglab.studies import CLAIM_KEYS, read_claims

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_history.ipynb"


def test_committed_without_outputs_with_a_tagged_parameters_cell():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# Study 5")
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and params[0] is nb.cells[1]
    assert "quick: bool = False" in params[0].source
    assert 'output_dir: str = "results/05"' in params[0].source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import papermill

    out = tmp_path_factory.mktemp("nb05")
    papermill.execute_notebook(
        str(NOTEBOOK), str(out / "executed.ipynb"), kernel_name="python3",
        parameters={"quick": True, "output_dir": str(out)}, progress_bar=False,
        cwd=str(NOTEBOOK.parent))
    return out


def test_sidecar_has_the_study_results(run):
    r = json.loads((run / "result.json").read_text())
    assert r["demo_violation_op"] == 2 and r["demo_violation_operation"] == "charge 0 1 3"
    assert r["fix3_passes_check"] is True and r["fix3_failed_charges"] == 0
    assert 0 < r["fix2_first_failed_op"] <= r["leak_ops"]
    assert r["fix2_failed_charges"] > 0 and r["fix2_leaked_pages"] > 0
    assert r["batch_demo_stocked_multi"] > r["batch_demo_stocked_single"]
    assert 0 <= r["refills_over_batch_share"] <= 1 and r["max_extra_walks_pct"] >= 0
    assert str(r["fix2_leaked_pages"]) in r["conclusion"]
    claims = read_claims(r)
    assert len(claims) == 4 and all(set(c) == set(CLAIM_KEYS) for c in claims)


def test_figures_are_saved_with_captions(run):
    names = {"05_fix2_leak.png", "05_batch_refill.png"}
    assert names <= {p.name for p in run.glob("*.png")}
    assert set(captions(run)) == names
