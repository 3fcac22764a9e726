"""Study 1's second prediction: "with" from the development-set calibration, written before
the "with" column is read, then scored as the addendum registers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from memcglab.stats import load_rules
from memcglab.studies import check_claims
from memcglab.studies.s01_single_vs_multi import calibrated
from memcglab.studies.s01_single_vs_multi import study as netperf_study
from memcglab.validation import study01


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("s01c")
    p = netperf_study.NetperfParams.from_notebook(quick=True, output_dir=str(out))
    order = []
    real_with = netperf_study.published_with

    def guarded():
        order.append((out / calibrated.PREDICTIONS_FILE).exists())
        return real_with()

    mp = pytest.MonkeyPatch()
    mp.setattr(netperf_study, "published_with", guarded)
    try:
        cpred = netperf_study.predict_calibrated(p)
        assert not order, "the 'with' column was read before the prediction was written"
        cv = netperf_study.verdict_calibrated(p, cpred)
    finally:
        mp.undo()
    return p, cpred, cv, out, order


def test_the_prediction_is_written_before_with_is_read(run):
    p, cpred, _, out, order = run
    assert order == [True]
    written = pd.read_parquet(out / calibrated.PREDICTIONS_FILE)
    assert list(written.columns[:4]) == ["clients", "predicted_with_mbps", "low", "high"]
    pd.testing.assert_frame_equal(written, cpred.table)
    assert written["clients"].tolist() == list(p.prereg.clients)
    assert (written["points"] == study01.QUICK_POINTS).all() and cpred.points == 64
    assert (written["calibration_sha256"] == study01.calibration_sha256(
        cpred.calibration)).all()
    assert cpred.calibration.left_out == (study01.CACHE_KEY,)


def test_rows_mape_and_words_follow_the_addendum(run):
    _, cpred, cv, *_ = run
    r, s = cv.rows, cv.summary
    w = netperf_study.published_with()
    assert r["published_with"].tolist() == w.tolist()
    inside = (r["low"] <= w) & (w <= r["high"])
    assert (r["inside"] == inside).all() and s["calibrated_rows_inside"] == int(inside.sum())
    mape = 100 * np.mean(np.abs(cpred.table["predicted_with_mbps"] / w - 1))
    assert s["calibrated_mape_with_pct"] == pytest.approx(mape)
    assert set(r["verdict"]) <= set(load_rules().words["measured"])
    assert s["calibrated_goal_met"] == (bool(inside.all()) and mape <= 10.0)


def test_score_by_hand():
    table = pd.DataFrame({
        "clients": [6, 12], "predicted_with_mbps": [100.0, 200.0], "low": [90.0, 150.0],
        "high": [110.0, 205.0], "predicted_without_mbps": [80.0, 90.0], "change_pct": [1.0, 2.0],
        "new_bottleneck": ["cpu", "cpu"], "alternatives": [1, 2],
        "calibration_sha256": ["a" * 64] * 2,
        # each row's band driver (validation.drivers.DRIVER_COLUMNS), worked by hand: the
        # hold scale, the median reaching 100-300 Mbit/s over its drawn range
        "driver": ["hold_scale"] * 2, "driver_st": [0.8, 0.7], "driver_unit": ["x c2c"] * 2,
        "driver_low": [1.0, 1.0], "driver_high": [5.0, 5.0], "driver_median": [100.0, 200.0],
        "reach_values": [[1.0, 3.0, 5.0]] * 2, "reach_medians": [[100.0, 200.0, 300.0]] * 2})
    pred = calibrated.CalibratedPrediction(table, None, 16)
    v = calibrated.score(pred, np.array([105.0, 250.0]))
    assert v.rows["inside"].tolist() == [True, False]
    assert v.summary["calibrated_mape_with_pct"] == pytest.approx(50 * (5 / 105 + 50 / 250))
    # [90, 110] overlaps 105 +- 5% and is 20 wide, at most 2 x the 10.5 tolerance
    assert v.verdicts["with_6"].word == "agrees"
    assert v.verdicts["with_12"].word == "misses"  # [150, 205] below 250 - 12.5
    assert v.verdicts["goal"].word == "goal missed"
    rows = check_claims(calibrated.claims(v))
    assert [x["rule"] for x in rows] == ["measured", "measured", "goal"]
    assert rows[0]["estimate"] == 100.0 and rows[0]["unit"] == "Mbps"
    assert rows[-1]["simulated"].startswith("MAPE 12.4% of the median; 1 of 2 rows")
    with pytest.raises(ValueError, match="with_mbps has 3 values"):
        calibrated.score(pred, np.ones(3))


def test_claims_summary_conclusion_and_figure(run):
    _, _, cv, *_ = run
    rows = check_claims(calibrated.claims(cv))
    assert [x["rule"] for x in rows] == ["measured"] * 6 + ["goal"]
    assert all(x["source"].startswith("memcg: multi-memcg percpu charge cache") for x in rows)
    assert all(x["low"] <= x["estimate"] <= x["high"] for x in rows[:6])
    text = calibrated.conclusion(cv)
    assert f"{cv.summary['calibrated_mape_with_pct']:.1f}%" in text
    assert ("**met**" in text) == cv.summary["calibrated_goal_met"]
    fig = netperf_study.calibrated_figure(cv)
    assert fig.axes[0].get_ylabel().startswith("per-flow throughput")
    plt.close(fig)
