"""Notebook 02 (policy and slots): the default run's sidecar, and a run with another policy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import papermill as pm
import pytest

from memcglab.studies import read_claims, read_counts
from tests.notebooks.outputs import NOTEBOOKS, study_outputs

NB = NOTEBOOKS / "02_policy_and_slots.ipynb"
MIXES = ("netperf", "uniform", "zipf", "bursty")


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
    for key in ("walks_per_1000_netperf_random", "evictions_per_1000_netperf_lru",
                "recency_writes_per_charge_netperf", "netperf_active_over_slots_pct_w64",
                "netperf_slots_needed", "one_line_slots", "lru_extra_lines_per_write",
                "conclusion"):
        assert key in r, key
    for mix in MIXES:
        lo, mid, hi = (r[f"advantage_{k}_pct_{mix}"] for k in ("low", "median", "high"))
        assert lo <= mid <= hi and math.isfinite(mid)
        assert r[f"verdict_{mix}"] in ("agrees", "misses", "undetermined")
    assert 1 <= r["netperf_slots_needed"] <= 16


def test_counts_come_with_the_priced_claims(default):
    out, _ = default
    counts = read_counts(out)
    assert counts and counts[0]["quantity"] == "windows with more active memcgs than slots (%)"
    claims = read_claims(out)
    assert len(claims) == 1  # 'always': one claim, judged on every mix
    c = claims[0]
    assert c["claim"].startswith("random victim better than LRU") and c["rule"] == "qualitative"
    assert c["low"] <= c["estimate"] <= c["high"] and c["driver"]
    assert all(m in c["reason"] for m in MIXES)
    if c["verdict"] == "misses":
        assert c["would_take"].startswith("a recency write (percpu_rmw) of")
    figures = json.loads((out / "figures.json").read_text())
    assert {"02_active.png", "02_policies.png", "02_slots.png",
            "02_sensitivity.png"} <= set(figures)


def test_another_policy_and_slot_count(tmp_path):
    r = _run(tmp_path, policy="rr", slots=4)
    assert (r["policy"], r["slots"], r["model"]) == ("rr", 4, "multi-rr")
    assert math.isfinite(r["tp_change_vs_random_netperf_pct"])
    assert r["lru_extra_lines_per_write"] == 0  # 4 slots leave room in the first line
