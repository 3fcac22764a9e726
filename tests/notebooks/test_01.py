"""Notebook 01 (single vs multi stock) runs under papermill and records its sidecar."""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from memcglab.studies import read_claims

NB = Path(__file__).resolve().parents[2] / "notebooks" / "01_single_vs_multi.ipynb"


def test_committed_clean_with_a_question_and_parameters():
    nb = nbformat.read(NB, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].cell_type == "markdown" and "**Question.**" in nb.cells[0].source
    assert nb.cells[1].metadata.get("tags") == ["parameters"]
    assert "quick: bool = False" in nb.cells[1].source
    assert 'output_dir: str = "results/01"' in nb.cells[1].source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb01")
    pm.execute_notebook(str(NB), str(out / "executed.ipynb"), kernel_name="python3",
                        parameters={"quick": True, "output_dir": str(out)},
                        cwd=str(NB.parent), progress_bar=False)
    return out, json.loads((out / "result.json").read_text())


def test_sidecar_has_the_verdict_and_the_rates(run):
    out, result = run
    for key in ("mape_with_pct", "mape_without_fit_pct", "band_mape_with_low_pct",
                "band_mape_with_high_pct", "shape_reproduced", "prereg_digest",
                "walks_per_op_single_max_clients", "walks_per_op_multi_max_clients",
                "hit_rate_multi_max_clients", "cycles_per_op_multi_max_clients", "conclusion"):
        assert key in result, key
    assert math.isfinite(result["mape_with_pct"]) and result["mape_with_pct"] >= 0
    assert 0 <= result["hit_rate_single_max_clients"] <= 1
    assert result["walks_per_op_multi_max_clients"] < result["walks_per_op_single_max_clients"]
    assert f"{result['mape_with_pct']:.1f}%" in result["conclusion"]
    assert [c["claim"][:8] for c in read_claims(out)] == ["seed 000"] * 2


def test_figure_is_saved_with_its_caption(run):
    out, _ = run
    assert (out / "01_single_vs_multi.png").stat().st_size > 10_000
    assert "01_single_vs_multi.png" in json.loads((out / "figures.json").read_text())
