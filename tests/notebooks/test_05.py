"""Notebook 05 (historic behaviour): its sidecar and figures from the quick reproduce run."""

from __future__ import annotations

import pytest

from memcglab.plots import captions
from memcglab.studies import CLAIM_COLUMNS, CLAIM_KEYS, read_claims, read_counts
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
    assert len(claims) == 4
    assert all(set(CLAIM_KEYS) <= set(c) <= set(CLAIM_COLUMNS) for c in claims)
    assert {c["rule"] for c in claims} == {"port"}
    assert {c["verdict"] for c in claims} <= {"shown in the port", "not shown in the port"}


def test_sidecar_has_the_exact_counts(run):
    _, r = run
    counts = read_counts(r)
    assert counts and {c["study"] for c in counts} == {"05"}
    fix2 = [c for c in counts if c["configuration"].startswith("multi-fix2, netperf_rx")]
    by_quantity = {c["quantity"]: c["value"] for c in fix2}
    assert by_quantity["failed charges (count)"] == r["fix2_failed_charges"]
    assert by_quantity["leaked pages (4 KiB pages)"] == r["fix2_leaked_pages"]
    assert by_quantity["operation of the first failed charge (1-based)"] == \
        r["fix2_first_failed_op"]
    increase = [c["value"] for c in counts
                if c["quantity"] == "walk increase of the full drain (%)"]
    assert max(increase) == r["max_extra_walks_pct"]
    walks = [c for c in counts if c["quantity"] == "page_counter walks per 1000 charges"]
    assert len(walks) == 3 * len(increase)  # three stocks per bulk share


def test_figures_are_saved_with_captions(run):
    out, _ = run
    names = {"05_fix2_leak.png", "05_batch_refill.png"}
    assert names <= {p.name for p in out.glob("*.png")}
    assert set(captions(out)) == names
