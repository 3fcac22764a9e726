"""Statistical tests checked against values worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

from memcglab.stats.inference import (
    bootstrap_ci,
    cohens_d,
    equivalence_margin,
    hedges_g,
    paired_wilcoxon,
    perf_rse_to_sd,
    tost,
    welch,
    welch_df,
)

# Worked example: group 1 (20, sd 4, n 10), group 2 (25, sd 6, n 15).
# v1 = 16/10 = 1.6, v2 = 36/15 = 2.4, se = sqrt(4) = 2, t = 5/2 = 2.5,
# df = 4^2 / (1.6^2/9 + 2.4^2/14) = 16 / (0.284444 + 0.411429) = 22.9927.
EX = (20.0, 4.0, 10, 25.0, 6.0, 15)
DF = 16 / (1.6**2 / 9 + 2.4**2 / 14)


def test_welch_matches_hand_computation():
    w = welch(*EX)
    assert (w.diff, w.se, w.t) == (5.0, 2.0, pytest.approx(2.5))
    assert w.df == pytest.approx(22.9927, abs=1e-4)
    assert w.df == pytest.approx(DF)
    assert w.p == pytest.approx(2 * st.t.sf(2.5, DF))
    assert welch_df(4.0, 10, 6.0, 15) == pytest.approx(DF)


def test_welch_sign_is_second_minus_first():
    assert welch(25.0, 6.0, 15, 20.0, 4.0, 10).t == pytest.approx(-2.5)


def test_welch_equal_groups_df_is_pooled():
    assert welch(1.0, 3.0, 8, 2.0, 3.0, 8).df == pytest.approx(14.0)


def test_tost_matches_hand_computation():
    # margin 6: t_low = (5 + 6) / 2 = 5.5, t_high = (5 - 6) / 2 = -0.5
    r = tost(*EX, margin=6.0)
    assert r.p_lower == pytest.approx(st.t.sf(5.5, DF))
    assert r.p_upper == pytest.approx(st.t.cdf(-0.5, DF))
    assert r.p == r.p_upper and not r.equivalent
    # margin 10: t_high = -2.5, p = 0.0100 < 0.05
    r = tost(*EX, margin=10.0)
    assert r.p == pytest.approx(st.t.cdf(-2.5, DF)) and r.equivalent
    # the 90% CI is diff +- t(0.95, df) * se = 5 +- 1.713894 * 2
    assert (r.ci_low, r.ci_high) == (pytest.approx(5 - 3.427789, abs=1e-5),
                                     pytest.approx(5 + 3.427789, abs=1e-5))


def test_equivalence_margin_is_the_tost_boundary():
    m = equivalence_margin(*EX)
    assert m == pytest.approx(5 + 1.713894 * 2, abs=1e-5)
    assert tost(*EX, margin=m).p == pytest.approx(0.05)
    assert tost(*EX, margin=m * 1.0001).equivalent
    assert not tost(*EX, margin=m * 0.9999).equivalent


def test_input_errors_are_named():
    with pytest.raises(ValueError, match="n1=1, n2=15"):
        welch(20.0, 4.0, 1, 25.0, 6.0, 15)
    with pytest.raises(ValueError, match="sd1 = sd2 = 0"):
        welch(1.0, 0.0, 5, 2.0, 0.0, 5)
    with pytest.raises(ValueError, match="sd1=-1"):
        welch(1.0, -1.0, 5, 2.0, 1.0, 5)
    with pytest.raises(ValueError, match="margin=0"):
        tost(*EX, margin=0)
    with pytest.raises(ValueError, match="alpha=0.5"):
        tost(*EX, margin=1.0, alpha=0.5)


def test_effect_sizes_by_hand():
    assert cohens_d(10, 2, 20, 11, 2, 20) == pytest.approx(0.5)
    # pooled sd of (sd 4, n 10) and (sd 6, n 15): sqrt((9*16 + 14*36) / 23) = sqrt(648/23)
    assert cohens_d(*EX) == pytest.approx(5 / math.sqrt(648 / 23))
    assert hedges_g(10, 2, 20, 11, 2, 20) == pytest.approx(0.5 * (1 - 3 / 151))


def test_paired_wilcoxon_exact_by_hand():
    # all five differences positive: W- = 0, p = 2 * 1/32
    assert paired_wilcoxon([2, 3, 4, 5, 6], [1] * 5) == (0.0, 0.0625)
    # differences 1, -2, 3, 4, -5, 6: W+ = 14, W- = 7. Subsets of {1..6} summing
    # to <= 7: 1+1+1+2+2+3+4+4 = 18, so p = 2 * 18/64.
    stat, p = paired_wilcoxon([1, -2, 3, 4, -5, 6], [0] * 6)
    assert (stat, p) == (7.0, pytest.approx(36 / 64))
    with pytest.raises(ValueError, match="shapes"):
        paired_wilcoxon([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="a == b for every pair"):
        paired_wilcoxon([1, 2], [1, 2])


def test_bootstrap_ci_close_to_normal_theory_and_deterministic():
    x = np.random.default_rng(7).normal(100.0, 10.0, size=400)
    lo, hi = bootstrap_ci(x, n_resamples=3000, seed=1)
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    assert lo < x.mean() < hi
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.15)
    assert bootstrap_ci(x, n_resamples=3000, seed=1) == (lo, hi)
    assert bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    with pytest.raises(ValueError, match="at least 2 values"):
        bootstrap_ci([1.0])


def test_perf_rse_round_trip_through_perfs_formula():
    x = np.random.default_rng(3).normal(5000.0, 40.0, size=12)
    # tools/perf/util/stat.c: stddev_stats = sqrt(var / n); rel = 100 * that / mean
    rse = 100.0 * math.sqrt(x.var(ddof=1) / len(x)) / x.mean()
    assert perf_rse_to_sd(x.mean(), rse, len(x)) == pytest.approx(x.std(ddof=1))
    with pytest.raises(ValueError, match="n=1"):
        perf_rse_to_sd(1.0, 0.1, 1)
