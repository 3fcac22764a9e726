"""Notebook 03 (page_counter stock vs multi stock): its sidecar from the quick reproduce run."""

from __future__ import annotations

import json

import pytest

from memcglab.studies import read_claims, read_counts
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "03_pcstock_vs_multi")


def test_sidecar_has_the_tests_and_the_priced_changes(run):
    out, r = run
    for c in (1, 4, 32):
        assert isinstance(r[f"equivalent_published_{c}"], bool)
        assert abs(r[f"delta_pct_madvise_{c}"]) < 100
        assert r[f"judged_published_delta_{c}"] in ("agrees", "misses", "undetermined")
    assert r["judged_negligible"] in ("agrees", "misses", "undetermined")
    for key in ("netperf_all_scenarios_low_pct", "netperf_release_task_median_pct",
                "netperf_release_softirq_high_pct", "netperf_task_spread_independent_driver",
                "conclusion"):
        assert key in r, key
    assert r["walks_per_1000_pcstock_task_spread_independent"] > \
        r["walks_per_1000_multi_task_spread_independent"]
    assert r["netperf_all_scenarios_low_pct"] <= r["netperf_all_scenarios_high_pct"]


def test_counts_come_with_the_claims(run):
    out, _ = run
    counts = read_counts(out)
    assert {c["quantity"] for c in counts} >= {"walks per 1000 charges",
                                               "shared-line transfers per message"}
    assert any("softirq/paired/together" in c["configuration"] for c in counts)
    claims = read_claims(out)
    assert claims[0]["claim"].startswith("negligible performance differences")
    assert all(c["source"].startswith("mm/memcontrol, page_counter") for c in claims)
    assert [c["rule"] for c in claims[:4]] == ["qualitative"] + ["measured"] * 3
    predictions = [c for c in claims if c["rule"] == "prediction"]
    assert predictions and all(c["low"] <= c["high"] and c["prediction"] for c in predictions)


def test_figures(run):
    out, _ = run
    pngs = set(json.loads((out / "figures.json").read_text()))
    assert pngs == {"03_counts.png", "03_predictions.png", "03_sensitivity.png",
                    "03_equivalence.png"}
