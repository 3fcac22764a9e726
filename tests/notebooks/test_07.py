"""Notebook 07 (validation): the scoreboard's sidecar and figure from the quick reproduce run."""

from __future__ import annotations

import pytest

from memcglab.plots import captions
from memcglab.studies import CLAIM_KEYS, read_claims, read_counts
from memcglab.validation.devset import load_cases
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "07_validation")


def test_sidecar_has_the_summary_and_the_goals(run):
    _, r = run
    assert r["cases"] == len(load_cases())
    assert 0 <= r["coverage"] <= 1 and 0 <= r["sign_accuracy"] <= 1
    assert r["median_width_pp"] >= 0 and r["median_abs_error_pp"] >= 0
    claims = read_claims(r)
    assert len(claims) == 4 and {c["rule"] for c in claims} == {"goal"}
    assert all(set(CLAIM_KEYS) <= set(c) for c in claims)
    assert {c["verdict"] for c in claims} <= {"goal met", "goal missed"}
    assert "leave one source out" in r["conclusion"]


def test_counts_are_every_case_both_kernels(run):
    _, r = run
    counts = read_counts(r)
    assert len(counts) == 6 * len(load_cases()) and {c["study"] for c in counts} == {"07"}
    root = [c for c in counts if c["configuration"] ==
            "optimize_charge_codepath/root_vs_v6.0-rc1, base kernel"]
    assert {c["value"] for c in root} == {0.0}  # the root memcg charges nothing


def test_figure_has_a_caption(run):
    out, _ = run
    assert (out / "07_predicted_vs_measured.png").is_file()
    assert "diagonal" in captions(out)["07_predicted_vs_measured.png"]
