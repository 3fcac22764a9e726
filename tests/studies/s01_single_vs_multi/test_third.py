"""Study 1's third prediction: both variants written before "with" is read, then scored by
the proper rule beside the fair baselines, as the addendum of 2026-12-03 registers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from memcglab.studies import check_claims
from memcglab.studies.s01_single_vs_multi import study as netperf_study
from memcglab.studies.s01_single_vs_multi import third
from memcglab.validation import study01
from memcglab.validation.scoring import case_scores


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("s01t")
    p = netperf_study.NetperfParams.from_notebook(quick=True, output_dir=str(out))
    order = []
    real_with = netperf_study.published_with

    def guarded():
        order.append(all((out / f).exists() for f in (third.PREDICTIONS_FILE,
                                                       third.DRAWS_FILE)))
        return real_with()

    mp = pytest.MonkeyPatch()
    mp.setattr(netperf_study, "published_with", guarded)
    try:
        tp = netperf_study.predict_third(p)
        assert not order, "the 'with' column was read before the prediction was written"
        tv = netperf_study.verdict_third(p, tp)
    finally:
        mp.undo()
    return p, tp, tv, out, order


def test_both_variants_and_their_draws_are_written_before_with_is_read(run):
    p, tp, _, out, order = run
    assert order == [True]
    pd.testing.assert_frame_equal(pd.read_parquet(out / third.PREDICTIONS_FILE), tp.table)
    pd.testing.assert_frame_equal(pd.read_parquet(out / third.DRAWS_FILE), tp.draws)
    t = tp.table
    assert sorted(set(t["variant"])) == ["A", "B"]
    assert sorted(set(t["clients"])) == list(p.prereg.clients)
    assert (t["points"] == study01.QUICK_POINTS).all()
    # the registered terms, whatever memcglab predict's default becomes
    assert (t["terms"] == third.TERMS.key()).all()
    assert third.TERMS.key() == "error=student,cpu_slowdown,busiest_share,socket_growth," \
                                "family_deviation"
    # A is predict as it is; B is conditioned on the printed base run
    assert set(t.loc[t["variant"] == "A", "conditioning"]) == {"none"}
    assert all(c == "met" or c.startswith("unmet") for c in t.loc[t["variant"] == "B",
                                                                    "conditioning"])
    # the band in the table is the draws' (predict's quantiles of the same points)
    a6 = tp.draws.query("variant == 'A' and clients == 6")["change_pct"]
    row = t.query("variant == 'A' and clients == 6").iloc[0]
    assert np.quantile(a6, 0.5) == pytest.approx(row["change_pct"], abs=0.006)


def test_the_calibration_reads_no_with_value(run):
    from memcglab.validation.dataset import case_models

    cf = study01.calibrate(case_models(terms=third.TERMS))
    study01.check_no_change(cf.calibration.cases)
    _, tp, *_ = run
    assert (tp.table["calibration_sha256"] == study01.calibration_sha256(cf)).all()


def test_scores_follow_the_proper_rule(run):
    _, tp, tv, *_ = run
    wo, wi = netperf_study.published_without(), netperf_study.published_with()
    m = 100 * (wi / wo - 1)
    r = tv.rows
    assert set(r["method"]) == {"memcglab", "memcglab+measured", "no_change",
                                "inverse_cycles", "bottleneck_law"}
    # one row recomputed by hand from the written draws and the 2% rule
    d = tp.draws.query("variant == 'A' and clients == 12")
    s = case_scores(d["change_pct"], m[1], 2 * (1 + m[1] / 100), d["weight"])
    got = r.query("method == 'memcglab' and clients == 12").iloc[0]
    assert got["interval_score"] == pytest.approx(s["interval_score"])
    assert got["crps"] == pytest.approx(s["crps"])
    means = tv.means.set_index("method")["interval_score"]
    assert means["memcglab"] == pytest.approx(r.query("method == 'memcglab'")
                                              ["interval_score"].mean())
    skill = all(means["memcglab"] < means[b] for b in ("no_change", "inverse_cycles",
                                                        "bottleneck_law"))
    assert (tv.verdicts["skill"].word == "goal met") == skill


def _prediction(draws_a: np.ndarray) -> third.ThirdPrediction:
    rows, draws = [], []
    for v in ("A", "B"):
        rows.append({"clients": 6, "variant": v, "predicted_with_mbps": 110.0,
                     "low": 100.0, "high": 120.0})
        draws.append(pd.DataFrame({"clients": 6, "variant": v, "change_pct": draws_a,
                                   "weight": 1.0 / draws_a.size}))
    return third.ThirdPrediction(pd.DataFrame(rows), pd.concat(draws, ignore_index=True), 4)


def test_skill_is_lost_to_a_sharper_baseline_and_the_goal_by_hand():
    # measured change +10%: memcglab's draws around +10% but 40 points wide
    a = np.array([-10.0, 5.0, 15.0, 30.0])
    pred = _prediction(a)
    sharp = pd.DataFrame({"clients": 6, "method": "oracle", "change_pct": [10.0, 10.0],
                          "weight": [0.5, 0.5]})
    wide = pd.DataFrame({"clients": 6, "method": "wide", "change_pct": [-60.0, 200.0],
                         "weight": [0.5, 0.5]})
    v = third.score(pred, np.array([100.0]), np.array([110.0]), pd.concat([sharp, wide]))
    assert v.summary["third_skill"] == "no skill over oracle"
    assert v.verdicts["skill"].word == "goal missed"
    v2 = third.score(pred, np.array([100.0]), np.array([110.0]), wide)
    assert v2.summary["third_skill"] == "skill shown"
    # "with" 110 inside [100, 120] and the median exact: the original goal is met
    assert v2.summary["third_goal_met"] and v2.summary["third_mape_with_pct"] == 0.0
    v3 = third.score(pred, np.array([100.0]), np.array([130.0]), wide)
    assert not v3.summary["third_goal_met"] and v3.summary["third_rows_inside"] == 0
    with pytest.raises(ValueError, match="published columns have 2 and 1 values"):
        third.score(pred, np.ones(2), np.ones(1), wide)


def test_claims_conclusion_and_figure(run):
    _, _, tv, *_ = run
    rows = check_claims(third.claims(tv))
    assert [x["rule"] for x in rows] == ["goal", "goal"]
    text = third.conclusion(tv)
    assert f"{tv.summary['third_interval_score']:.3f}" in text
    assert tv.summary["third_skill"] in text
    fig = netperf_study.third_figure(tv)
    assert fig.axes[0].get_ylabel().startswith("log(with / without)")
    assert fig.axes[0].get_xlabel() == "netperf clients (memcgs)"
    plt.close(fig)
