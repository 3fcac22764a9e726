"""The proper-rule table in words: issue 22's goals judged by hand, and memcglab beside
memcglab+measured case by case (memcglab.validation.skill)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from memcglab.scenario.predict import scenario_draws
from memcglab.validation import skill
from memcglab.validation.dataset import case_models
from memcglab.validation.proper import MEASURED, METHODS, base_measured


def _table(lab: float, **fair) -> pd.DataFrame:
    scores = {"no_change": 3.0, "inverse_cycles": 2.0, "bottleneck_law": 2.4, **fair}
    rows = [{"method": "memcglab", "interval_score": lab, "coverage": 0.8,
             "median_width_pp": 10.0}, {"method": MEASURED, "interval_score": 9.0}]
    rows += [{"method": k, "interval_score": v} for k, v in scores.items()]
    return pd.DataFrame(rows).set_index("method")


def _scores() -> pd.DataFrame:
    # |m| are 2, 10 and 30: median 10; the -2 is within its noise, so its sign is not judged
    return pd.DataFrame({"method": "memcglab", "measured_change_pct": [-2.0, 10.0, 30.0],
                         "noise_pct": [3.0, 1.0, 1.0], "sign_right": [False, True, True]})


def test_the_goals_of_issue_22_judged():
    goals = skill.skill_goals(_table(1.75), _scores())
    assert [(ok, value) for _, ok, value in goals] == [
        (True, "1.750"), (True, "1.750"),  # 1.75 <= 0.75 x 2.4 = 1.8
        (True, "10.0 pp"), (True, "80%"), (True, "2 of 2")]
    assert "the best: inverse_cycles, 2.000" in goals[0][0]
    goals = skill.skill_goals(_table(1.9, inverse_cycles=1.5), _scores())
    assert [ok for _, ok, _ in goals][:2] == [False, False]
    assert "so at most 1.800" in goals[1][0]
    assert skill.skill_text(_table(1.8), _scores()).splitlines()[2].startswith(
        "- met: median band width no larger than the median measured change in magnitude "
        "(10.0 pp)")


def _cf(**changes) -> pd.DataFrame:
    base = {"source": "s", "base_printed": True, "profile_printed": False, "unmet": 0.0,
            "measured_change_pct": 50.0, "median": 40.0, "median_measured": 40.0,
            "interval_score": 1.0, "interval_score_measured": 1.0, "width_pp": 50.0,
            "width_pp_measured": 50.0, "inside": True, "inside_measured": True}
    return pd.DataFrame([{**base, "case": case, **row} for case, row in changes.items()])


def test_what_giving_the_base_run_did_in_words():
    cf = _cf(wide={"unmet": 0.4, "interval_score_measured": 3.0, "width_pp_measured": 500.0},
             narrow={"interval_score_measured": 4.0, "width_pp_measured": 5.0,
                     "median_measured": 4.0, "inside_measured": False},
             same={}, unprinted={"base_printed": False, "unmet": float("nan")})
    text = skill.conditioning_text(cf, _table(0.9).assign(
        interval_score=[0.9, 3.1, 3.0, 2.0, 2.4]))
    assert text.startswith("Given the base run where the source prints it (3 of 4 cases), the "
                           "mean interval score over sources goes from 0.900 to 3.100 "
                           "(worse); 2 of those 3 cases score worse.")
    assert ("In 1 (wide) the band widens (median width 50 pp without, 500 pp with); in 1 of "
            "them, at 40% to 40% of the points,") in text
    assert ("In 1 (narrow) the band narrows (median width 50.0 pp without, 5.0 pp with) and in "
            "1 of them its median moves nearer to no change") in text
    assert "1 band that held the measurement no longer does." in text
    assert "both ways" in text
    better = skill.conditioning_text(_cf(same={}), _table(0.9).assign(
        interval_score=[0.9, 0.9, 3.0, 2.0, 2.4]))
    assert better.endswith("0 of those 1 cases score worse.")


def test_the_conditioning_frame_reads_each_case_as_predict_conditions_it():
    models = {m.case.case_id: m for m in case_models()}
    wanted = ["page_counter_stock_rfc/cgroups01", "stock_refill_regression/tcp_maerts_64"]
    frame = pd.DataFrame({"case": wanted, "source": [c.split("/")[0] for c in wanted]})
    folds = {s: SimpleNamespace(calibration=None) for s in frame["source"]}
    scores = pd.DataFrame([{"method": m, "case": c, "interval_score": float(i),
                            "median": 1.0, "width_pp": 2.0 + i, "inside": m == "memcglab",
                            "measured_change_pct": -37.9}
                           for m in METHODS for i, c in enumerate(wanted)])
    cf = skill.conditioning_frame(frame, folds, scores, models, 16, 0).set_index("case")
    rfc, refill = cf.loc[wanted[0]], cf.loc[wanted[1]]
    assert not rfc["base_printed"] and pd.isna(rfc["unmet"])
    m = models[wanted[1]]
    sd = scenario_draws(m.model.with_measured(base_measured(m)), 16, 0, None,
                        with_profile=False)
    assert refill["base_printed"] and refill["unmet"] == pytest.approx(
        skill._unmet(sd.conditioning))
    assert (refill["interval_score"], refill["width_pp_measured"], refill["inside"],
            refill["inside_measured"]) == (1.0, 3.0, True, False)
