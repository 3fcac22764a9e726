"""Notebook 02 (policy and slots): the default run's sidecar, and a run with another policy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import papermill as pm
import pytest

from memcglab.studies import read_claims
from tests.notebooks.outputs import NOTEBOOKS, study_outputs

NB = NOTEBOOKS / "02_policy_and_slots.ipynb"


def _run(out: Path, **params) -> dict:
    pm.execute_notebook(str(NB), str(out / "executed.ipynb"), kernel_name="python3",
                        parameters={"quick": True, "output_dir": str(out), **params},
                        cwd=str(NB.parent), progress_bar=False)
    return json.loads((out / "result.json").read_text())


@pytest.fixture(scope="module")
def default(quick_reproduce):
    return study_outputs(quick_reproduce, NB.stem)


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
