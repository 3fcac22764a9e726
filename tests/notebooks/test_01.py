"""Notebook 01 (the netperf "with" column predicted from "without"): sidecar, prediction,
figures."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from memcglab.studies import read_claims, read_counts
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "01_single_vs_multi")


def test_sidecar_has_the_registered_scores_and_the_counts(run):
    out, result = run
    for key in ("mape_with_pct", "rows_covered", "goal_met", "variant_mape_median_pct",
                "fit_mape_without_median_pct", "shape_verdict", "shape_power", "prereg_sha256",
                "walks_per_op_single_max_clients", "walks_per_op_multi_max_clients",
                "calibrated_mape_with_pct", "calibrated_rows_inside", "calibrated_goal_met",
                "third_interval_score", "third_interval_score_measured", "third_skill",
                "third_interval_score_inverse_cycles", "third_goal_met", "conclusion"):
        assert key in result, key
    assert math.isfinite(result["mape_with_pct"]) and result["mape_with_pct"] >= 0
    assert result["walks_per_op_multi_max_clients"] < result["walks_per_op_single_max_clients"]
    assert f"{result['mape_with_pct']:.1f}%" in result["conclusion"]
    assert f"{result['calibrated_mape_with_pct']:.1f}%" in result["conclusion"]
    assert f"{result['third_interval_score']:.3f}" in result["conclusion"]
    claims = read_claims(out)
    assert len(claims) == 19 and all(c["source"].startswith("memcg: multi-memcg percpu charge")
                                     for c in claims)
    # the registered rows, the second prediction (per client count, its goal), then the
    # third's skill verdict and goal
    assert [c["rule"] for c in claims] == (["measured"] * 7 + ["shape", "qualitative", "goal"]
                                           + ["measured"] * 6 + ["goal"] + ["goal"] * 2)
    assert all("calibrated without the 'with' column" in c["claim"] for c in claims[10:16])
    assert all(c["claim"].startswith("third prediction") for c in claims[17:])
    assert len(read_counts(out)) == 72


def test_predictions_and_figures_are_saved(run):
    out, _ = run
    pred = pd.read_parquet(out / "predictions.parquet")
    assert list(pred.columns[:4]) == ["clients", "predicted_with_mbps", "low", "high"]
    second = pd.read_parquet(out / "predictions_calibrated.parquet")
    assert list(second.columns[:4]) == ["clients", "predicted_with_mbps", "low", "high"]
    assert second["clients"].tolist() == pred["clients"].tolist()
    figs = json.loads((out / "figures.json").read_text())
    third = pd.read_parquet(out / "predictions_third.parquet")
    assert sorted(set(third["variant"])) == ["A", "B"]
    assert (out / "predictions_third_draws.parquet").exists()
    for name in ("01_single_vs_multi.png", "01_sensitivity.png", "01_calibrated.png",
                 "01_third.png"):
        assert (out / name).stat().st_size > 10_000 and name in figs
