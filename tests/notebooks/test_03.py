"""Notebook 03 (page_counter stock vs multi stock): its sidecar from the quick reproduce run."""

from __future__ import annotations

import json

import pytest

from memcglab.studies import read_claims
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "03_pcstock_vs_multi")


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
