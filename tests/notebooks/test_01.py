"""Notebook 01 (single vs multi stock): its sidecar and figure from the quick reproduce run."""

from __future__ import annotations

import json
import math

import pytest

from memcglab.studies import read_claims
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "01_single_vs_multi")


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
