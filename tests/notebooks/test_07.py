"""Notebook 07 (validation): the scoreboard's sidecar, its sections and figures from the
quick reproduce run."""

from __future__ import annotations

import re

import nbformat
import pytest

from memcglab.plots import captions
from memcglab.scenario.predict import SELF_FUNCTIONS
from memcglab.scenario.spec import PROFILE_NAMES
from memcglab.studies import CLAIM_KEYS, read_claims, read_counts
from memcglab.validation.dataset import priced_cases
from memcglab.validation.devset import case_profile
from tests.notebooks.outputs import study_outputs


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, "07_validation")


def test_sidecar_has_the_summary_and_the_goals(run):
    _, r = run
    assert r["cases"] == len(priced_cases())
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
    assert len(counts) == 6 * len(priced_cases()) and {c["study"] for c in counts} == {"07"}
    root = [c for c in counts if c["configuration"] ==
            "optimize_charge_codepath/root_vs_v6.0-rc1, base kernel"]
    assert {c["value"] for c in root} == {0.0}  # the root memcg charges nothing


def test_figure_has_a_caption(run):
    out, _ = run
    assert (out / "07_predicted_vs_measured.png").is_file()
    assert "diagonal" in captions(out)["07_predicted_vs_measured.png"]


def _shown(out) -> str:
    """Every markdown cell and every displayed output of the executed notebook, as text."""
    nb = nbformat.read(out / "07_validation.ipynb", as_version=4)
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            parts.append(data.get("text/markdown", data.get("text/plain", o.get("text", ""))))
    return "\n".join(parts)


def _printed_rows() -> tuple[int, int]:
    """The development set's printed memcg perf rows: (above 0.00, printed 0.00)."""
    above = zero = 0
    for case in (c for c in priced_cases() if c.profile):
        for kinds in case_profile(case).values():
            for kind, shares in kinds.items():
                for fn, share in shares.items():
                    if fn in PROFILE_NAMES and (kind != "self" or fn in SELF_FUNCTIONS):
                        above, zero = above + (share > 0), zero + (share <= 0)
    return above, zero


def test_the_proper_scores_with_the_base_run_and_the_fair_baselines_are_shown(run):
    out, r = run
    assert 0 < r["interval_score"] and 0 < r["crps"] < r["interval_score"]
    assert r["interval_score_measured"] > 0
    shown = _shown(out)
    for row in ("| memcglab |", "| memcglab+measured |", "| no_change |", "| inverse_cycles |",
                "| bottleneck_law |"):
        assert row in shown, row
    assert "IS sk_forward_alloc_regression" in shown
    assert "Issue 22's goals for the scores" in shown
    given = re.search(r"Given the base run where the source prints it \((\d+) of (\d+) cases\)",
                      shown)
    assert given and 0 < int(given[1]) < int(given[2]) == len(priced_cases())
    assert "By the proper rule" in r["conclusion"]


def test_the_build_up_is_the_committed_ablation_and_its_follow_ups(run):
    out, r = run
    assert r["ablation_rows"] == 12 + 2 + 2  # the build-up, two follow-ups, the layout run
    shown = _shown(out)
    assert "The build-up from the committed run, data/validation/history/2026-12-02_ablation/" \
        in shown
    assert "| build-up | socket growth | 1.187 | 0.94 |" in shown
    assert "| build-up | perf shares in the likelihood | 0.94 | 1.746 |" in shown
    assert "| reference | per-family hold-time deviations | 1.575 | 1.734 |" in shown
    assert "Rejected (the score did not fall): private lines" in shown


def test_the_profile_comparison_counts_every_printed_row_against_the_goal(run):
    out, r = run
    above, zero = _printed_rows()
    assert r["profile_rows"] == above and above > 0
    assert 0 <= r["profile_within"] <= r["profile_rows"]
    shown = _shown(out)
    assert (f"{r['profile_within']} of {r['profile_rows']} printed memcg rows" in shown
            and "within a factor of 2" in shown)
    assert f"Of the {zero} rows perf printed as 0.00" in shown
    assert (out / "07_profiles.png").is_file()
    caption = captions(out)["07_profiles.png"]
    assert "×2 and ×1/2" in caption and "% of cycles" in caption
