"""Notebook 05 (historic behaviour): its sidecar and figures from the quick reproduce run."""

from __future__ import annotations

import pytest

from memcglab.plots import captions
from memcglab.studies import CLAIM_KEYS, read_claims
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "05_history")


def test_sidecar_has_the_study_results(run):
    _, r = run
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
    out, _ = run
    names = {"05_fix2_leak.png", "05_batch_refill.png"}
    assert names <= {p.name for p in out.glob("*.png")}
    assert set(captions(out)) == names
