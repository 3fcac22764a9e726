"""Notebook 06 (the v4 page_counter stock): its outputs from the quick reproduce run."""

from __future__ import annotations

import nbformat
import pandas as pd
import pytest

from memcglab.plots import captions
from memcglab.studies import read_claims, read_counts
from memcglab.studies.s06_page_counter_stock_v4.scenarios import (
    PREDICTION_COLUMNS,
    QUICK_SCENARIOS,
    scenario_files,
)
from memcglab.studies.s06_page_counter_stock_v4.study import (
    PREDICTIONS_FILE,
    QUICK_POINTS,
)
from tests.notebooks.outputs import NOTEBOOKS, study_outputs

STEM = "06_page_counter_stock_v4"
MACHINES = ("butt-netperf-72cpu", "lkp-2s-224t-spr")


@pytest.fixture(scope="module")
def run(quick_reproduce):
    return study_outputs(quick_reproduce, STEM)


def test_committed_clean_with_a_question_and_parameters():
    nb = nbformat.read(NOTEBOOKS / f"{STEM}.ipynb", as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.cells[0].source.startswith("# 6. ") and "**Question.**" in nb.cells[0].source
    assert nb.cells[1].metadata.get("tags") == ["parameters"]
    for decl in ("quick: bool = False", 'output_dir: str = "results/06"'):
        assert decl in nb.cells[1].source
    assert all(c.outputs == [] and c.execution_count is None
               for c in nb.cells if c.cell_type == "code")


def test_predictions_are_written_before_any_comparison():
    nb = nbformat.read(NOTEBOOKS / f"{STEM}.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    first = lambda s: next(i for i, c in enumerate(code) if s in c)  # noqa: E731
    assert first("study.regenerate(") < first("comparison(") < first("claims(")
    assert first("study.regenerate(") < first("study.madvise(")
    assert "predict_all" not in "".join(code) and "sensitivity_figure" not in "".join(code)


def test_predictions_parquet_is_the_quick_scenario_files_through_predict(run):
    out, _ = run
    pred = pd.read_parquet(out / PREDICTIONS_FILE)
    assert tuple(pred.columns) == PREDICTION_COLUMNS
    # quick: the 224-thread v4-vs-multi files, at fewer points
    assert pred["file"].tolist() == [f.name for f in scenario_files(QUICK_SCENARIOS)]
    assert set(pred["machine"]) == {"lkp-2s-224t-spr"} and set(pred["pair"]) == {"multi_vs_v4"}
    assert (pred["points"] == QUICK_POINTS).all()
    assert pred["calibration"].str.startswith("default:").all()
    assert (pred["low"] <= pred["change_pct"]).all() and (pred["change_pct"] <= pred["high"]).all()
    rr = pred[pred["workload"] == "tcp_rr"]
    assert (rr["high"] < 0).all()  # every uncharge walks to the shared root: a loss


def test_sidecar_claims_and_counts(run):
    _, r = run
    assert r["madvise_equivalent_5"] is True and r["madvise_equivalent_2"] is True
    assert r["change_pct_tcp_rr_lkp_2s_224t_spr_multi_vs_v4"] < 0 and r["predictions"] == 8
    assert 0 < r["stale_max_fraction_of_bound"] <= 1
    claims = read_claims(r)
    rules = [c["rule"] for c in claims]
    # nothing was measured: predictions, then the stranded pages as a behaviour of the port
    assert rules == ["prediction"] * len(scenario_files(QUICK_SCENARIOS)) + ["port"]
    assert all(c["simulated"].count("memcglab predict ") == 1 for c in claims[:-1])
    counts = read_counts(r)
    # the simulated madvise TOSTs carry seed noise only: counts, not claims
    assert any(c["note"].startswith("TOST +-2%") for c in counts)
    assert counts and {c["study"] for c in counts} == {"06"}
    walks = {c["configuration"]: c["value"] for c in counts
             if c["quantity"] == "page_counter walks per 1000 charges"}
    assert {k.rsplit(", ", 1)[1] for k in walks} == set(MACHINES)  # counts: both machines
    key = "pcstock-v4, tcp_rr, butt-netperf-72cpu"
    assert walks[key] == pytest.approx(r["walks_per_1000_v4_tcp_rr_butt_netperf_72cpu"], abs=1e-3)
    assert walks[key] > 1000  # a walk per uncharge, and one per stock miss


def test_figures_are_saved_with_captions(run):
    out, _ = run
    names = {"06_counts.png", "06_predictions.png", "06_stale.png", "06_stale_series.png",
             "06_stale_per_memcg.png", "06_madvise_tost.png"}
    assert names == {p.name for p in out.glob("*.png")}
    assert set(captions(out)) == names
