"""Welch and TOST on the RFC's madvise table and on simulated trials, from hand-made inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from memcglab.stats.verdicts import (
    verdict_003,
    verdict_003_simulated,
)


def test_verdict_003_row1_by_hand():
    v = verdict_003(diff_from="rounded").set_index("cgroups")
    se = 5.097 * math.sqrt(2 / 30)  # 1.31604
    r = v.loc[1]
    assert r["diff_ms"] == -5.0
    assert r["welch_t"] == pytest.approx(-5 / se)
    assert r["welch_df"] == pytest.approx(58.0)
    assert r["welch_p"] == pytest.approx(2 * st.t.sf(5 / se, 58))
    assert r["min_equiv_margin_pct"] == pytest.approx((5 + st.t.ppf(0.95, 58) * se) / 446 * 100)
    # +-2% of 446 ms is 8.92 ms; TOST's binding side is (-5 + 8.92) / se
    assert r["tost_p"] == pytest.approx(st.t.sf((8.92 - 5) / se, 58))


def test_verdict_003_uses_the_unrounded_delta_by_default():
    v = verdict_003().set_index("cgroups")
    assert v.loc[1, "diff_ms"] == pytest.approx(-0.01195 * 446)
    assert v.loc[32, "delta_pct"] == pytest.approx(0.061)


def test_verdict_003_margin_decides():
    v = verdict_003(margin_pct=2.0)
    assert v["equivalent"].all()
    narrow = verdict_003(margin_pct=1.0).set_index("cgroups")
    # row 1 needs about 1.69%: not equivalent at 1%, the others are
    assert narrow["equivalent"].tolist() == [False, True, True]
    assert narrow.loc[1, "finding"] == "different"
    assert narrow.loc[32, "finding"] == "equivalent within +-1%"


def test_verdict_003_smaller_n_widens_the_margin():
    a = verdict_003(n=30)["min_equiv_margin_pct"]
    b = verdict_003(n=5)["min_equiv_margin_pct"]
    assert (b > a).all()


def test_verdict_003_custom_table_and_bad_option():
    t = pd.DataFrame({"cgroups": [2], "before_ms": [100.0], "after_ms": [100.0],
                      "stddev_ms": [10.0], "delta_pct": [0.0]})
    v = verdict_003(t, n=4)
    assert v.loc[0, "finding"] == "inconclusive"
    with pytest.raises(ValueError, match="diff_from='after'"):
        verdict_003(diff_from="after")


def test_verdict_003_simulated_matches_summary_statistics():
    rng = np.random.default_rng(5)
    b, a = rng.normal(446, 5, 30), rng.normal(441, 5, 30)
    s = pd.DataFrame({"cgroups": 1, "arm": ["before"] * 30 + ["after"] * 30,
                      "value": np.concatenate([b, a])})
    v = verdict_003_simulated(s).iloc[0]
    direct = st.ttest_ind(a, b, equal_var=False)
    assert v["welch_t"] == pytest.approx(direct.statistic)
    assert v["welch_p"] == pytest.approx(direct.pvalue)
    assert v["n"] == 30 and v["diff_ms"] == pytest.approx(a.mean() - b.mean())
    with pytest.raises(ValueError, match="need 'before' and 'after'"):
        verdict_003_simulated(s.replace({"arm": {"after": "later"}}))
    with pytest.raises(ValueError, match="samples needs columns"):
        verdict_003_simulated(s.rename(columns={"value": "ms"}))


def test_verdict_003_gives_the_difference_its_90pct_welch_interval():
    v = verdict_003(diff_from="rounded").set_index("cgroups")
    se = 5.097 * math.sqrt(2 / 30)
    assert v.loc[1, "ci90_half_pct"] == pytest.approx(st.t.ppf(0.95, 58) * se / 446 * 100)
