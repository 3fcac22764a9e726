"""Notebook 04 (layout and false sharing): its sidecar and figures from the quick reproduce run."""

from __future__ import annotations

import pytest

from memcglab.plots import captions
from memcglab.stats import load_rules
from memcglab.studies import CLAIM_KEYS, read_claims, read_counts
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "04_layout_false_sharing")


def test_sidecar_has_the_study_results(run):
    _, r = run
    assert r["stock_2025_04_sizeof"] == r["objdump_sizeof"] == 0x88
    assert (r["unaligned_lookup_lines"], r["aligned_lookup_lines"]) == (2, 1)
    assert r["max_slots_one_line"] == 7
    assert (r["same_line_parent"], r["same_line_blamed"], r["same_line_fixed"]) == (
        False, True, False)
    assert r["extra_transfers_per_event"] > 0 and r["regression_pct"] > 0
    assert r["regression_low_pct"] <= r["regression_pct"] <= r["regression_high_pct"]
    assert r["fixed_gap_pct"] == 0.0 and r["seeds"] == 2
    assert r["line_misses_per_cpu_per_event"] <= r["ceiling_per_event"]
    assert f"{r['reads_typical']:.0f} times per swap-fail event" in r["conclusion"]
    claims = read_claims(r)
    assert len(claims) == 7 and all(set(CLAIM_KEYS) <= set(c) for c in claims)
    priced = [c for c in claims if c["rule"] == "measured"]
    words = load_rules().words
    assert len(priced) == 2 and all(c["verdict"] in words["measured"] for c in priced)
    assert [c["verdict"] for c in claims if c["rule"] == "exact"][:4] == ["matches"] * 4
    assert priced[0]["low"] == r["regression_low_pct"]
    assert len(read_counts(r)) == 4


def test_figures_are_saved_with_captions(run):
    out, _ = run
    names = {"04_stock_layout.png", "04_slots_per_line.png", "04_seed004.png",
             "04_seed004_sensitivity.png"}
    assert names <= {p.name for p in out.glob("*.png")}
    assert set(captions(out)) == names
