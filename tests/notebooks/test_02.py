"""Notebook 02 (policy and slots) runs under papermill for any policy and slot count."""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from memcglab.studies import read_claims

NB = Path(__file__).resolve().parents[2] / "notebooks" / "02_policy_and_slots.ipynb"


def test_committed_clean_with_typed_sweep_parameters():
    nb = nbformat.read(NB, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].cell_type == "markdown" and "**Question.**" in nb.cells[0].source
    params = nb.cells[1]
    assert params.metadata.get("tags") == ["parameters"]
    for decl in ('policy: str = "random"', "slots: int = 7", "quick: bool = False",
                 'output_dir: str = "results/02"'):
        assert decl in params.source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def _run(out: Path, **params) -> dict:
    pm.execute_notebook(str(NB), str(out / "executed.ipynb"), kernel_name="python3",
                        parameters={"quick": True, "output_dir": str(out), **params},
                        cwd=str(NB.parent), progress_bar=False)
    return json.loads((out / "result.json").read_text())


@pytest.fixture(scope="module")
def default(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb02")
    return out, _run(out)


def test_sidecar_records_policy_slots_and_outcomes(default):
    out, r = default
    assert (r["policy"], r["slots"], r["model"]) == ("random", 7, "multi")
    assert r["tp_change_vs_random_netperf_pct"] == 0.0
    for key in ("walks_per_1000_netperf", "cycles_per_op_netperf", "lru_mean_advantage_pct_netperf",
                "lru_ci_low_netperf", "lru_ci_high_netperf", "lru_verdict_netperf",
                "netperf_slots_needed", "netperf_best_policy", "one_line_slots", "conclusion"):
        assert key in r, key
    lo, mean, hi = (r[f"lru_{k}_netperf"] for k in ("ci_low", "mean_advantage_pct", "ci_high"))
    assert lo <= mean <= hi
    assert 1 <= r["netperf_slots_needed"] <= 16 and math.isfinite(r["cycles_per_op_netperf"])
    assert all(c["claim"].startswith("seed 000: random") for c in read_claims(out))
    figures = json.loads((out / "figures.json").read_text())
    assert {"02_policies.png", "02_slots.png"} <= set(figures)


def test_another_policy_and_slot_count(tmp_path):
    r = _run(tmp_path, policy="rr", slots=4)
    assert (r["policy"], r["slots"], r["model"]) == ("rr", 4, "multi-rr")
    assert math.isfinite(r["tp_change_vs_random_netperf_pct"])
    assert "rr changes the predicted throughput" in r["conclusion"]
