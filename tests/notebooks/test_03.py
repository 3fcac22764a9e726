"""Notebook 03 (page_counter stock vs multi stock) runs under papermill."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from memcglab.studies import read_claims

NB = Path(__file__).resolve().parents[2] / "notebooks" / "03_pcstock_vs_multi.ipynb"


def test_committed_clean_with_a_question_and_parameters():
    nb = nbformat.read(NB, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].cell_type == "markdown" and "**Question.**" in nb.cells[0].source
    assert nb.cells[1].metadata.get("tags") == ["parameters"]
    assert "quick: bool = False" in nb.cells[1].source
    assert 'output_dir: str = "results/03"' in nb.cells[1].source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb03")
    pm.execute_notebook(str(NB), str(out / "executed.ipynb"), kernel_name="python3",
                        parameters={"quick": True, "output_dir": str(out)},
                        cwd=str(NB.parent), progress_bar=False)
    return out, json.loads((out / "result.json").read_text())


def test_sidecar_has_both_workloads_and_the_tests(run):
    out, r = run
    for c in (1, 4, 32):
        assert isinstance(r[f"equivalent_published_{c}"], bool)
        assert abs(r[f"delta_pct_madvise_{c}"]) < 100
    for key in ("walks_per_op_multi_madvise", "walks_per_op_pcstock_madvise",
                "walks_per_op_multi_netperf", "walks_per_op_pcstock_netperf",
                "cycles_per_op_pcstock_netperf", "netperf_cycles_change_pct",
                "pcstock_loses_netperf", "conclusion"):
        assert key in r, key
    assert r["walks_per_op_pcstock_netperf"] > r["walks_per_op_multi_netperf"]
    claims = read_claims(out)
    assert [c["claim"][:8] for c in claims] == ["seed 003"] * 2
    pngs = set(json.loads((out / "figures.json").read_text()))
    assert pngs == {"03_walks_and_cycles.png", "03_equivalence.png"}
