"""Hypothesis tests, equivalence tests and effect sizes, from summary statistics or samples.

Published tables give means, a standard deviation and a trial count, not samples, so
the two-sample tests here take summary statistics (``scipy.stats.ttest_ind_from_stats``
underneath). Differences are always ``second - first`` ("after - before").

>>> w = welch(446, 5.097, 30, 441, 5.097, 30)
>>> round(w.diff, 1), round(w.t, 3), round(w.df, 1)
(-5.0, -3.799, 58.0)
>>> tost(446, 5.097, 30, 441, 5.097, 30, margin=8.92).equivalent
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.stats as st

__all__ = [
    "WelchResult",
    "TostResult",
    "welch",
    "welch_df",
    "tost",
    "equivalence_margin",
    "bootstrap_ci",
    "paired_wilcoxon",
    "cohens_d",
    "hedges_g",
    "perf_rse_to_sd",
]


def _check(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float) -> None:
    for name, v in (("mean1", m1), ("mean2", m2), ("sd1", s1), ("sd2", s2)):
        if not math.isfinite(v):
            raise ValueError(f"{name}={v}: must be finite")
    if s1 < 0 or s2 < 0:
        raise ValueError(f"sd1={s1}, sd2={s2}: standard deviations must be >= 0")
    if s1 == 0 and s2 == 0:
        raise ValueError("sd1 = sd2 = 0: the test statistic is undefined")
    if n1 < 2 or n2 < 2:
        raise ValueError(f"n1={n1}, n2={n2}: each group needs at least 2 observations")


@dataclass(frozen=True)
class WelchResult:
    """Welch's unequal-variance t-test of ``mean2 - mean1``."""

    diff: float
    se: float
    t: float
    df: float
    p: float


def welch_df(s1: float, n1: float, s2: float, n2: float) -> float:
    """Welch-Satterthwaite degrees of freedom.

    >>> round(welch_df(1.0, 10, 2.0, 10), 6)  # (0.1 + 0.4)^2 / ((0.01 + 0.16) / 9)
    13.235294
    """
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    return (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))


def welch(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float) -> WelchResult:
    """Two-sided Welch t-test from means, standard deviations and counts."""
    _check(m1, s1, n1, m2, s2, n2)
    r = st.ttest_ind_from_stats(m2, s2, n2, m1, s1, n1, equal_var=False)
    se = math.sqrt(s1 * s1 / n1 + s2 * s2 / n2)
    return WelchResult(float(m2 - m1), se, float(r.statistic), welch_df(s1, n1, s2, n2),
                       float(r.pvalue))


@dataclass(frozen=True)
class TostResult:
    """Two one-sided Welch tests of ``|mean2 - mean1| < margin`` (Schuirmann 1987)."""

    margin: float
    p: float
    p_lower: float
    p_upper: float
    ci_low: float
    ci_high: float
    alpha: float

    @property
    def equivalent(self) -> bool:
        """Whether equivalence within the margin is shown: ``p < alpha``."""
        return self.p < self.alpha


def tost(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float, margin: float,
         alpha: float = 0.05) -> TostResult:
    """TOST equivalence test with symmetric margin ``margin`` (same unit as the means).

    Equivalence is declared when both one-sided nulls (diff <= -margin, diff >= +margin)
    are rejected at ``alpha``; equivalently, when the ``1 - 2 alpha`` confidence interval
    of the difference (``ci_low``, ``ci_high``) lies inside the margins.
    """
    _check(m1, s1, n1, m2, s2, n2)
    if not margin > 0:
        raise ValueError(f"margin={margin}: must be > 0")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha={alpha}: must be in (0, 0.5)")
    lo = st.ttest_ind_from_stats(m2 + margin, s2, n2, m1, s1, n1, equal_var=False,
                                 alternative="greater")
    hi = st.ttest_ind_from_stats(m2 - margin, s2, n2, m1, s1, n1, equal_var=False,
                                 alternative="less")
    w = welch(m1, s1, n1, m2, s2, n2)
    half = st.t.ppf(1 - alpha, w.df) * w.se
    p_lo, p_hi = float(lo.pvalue), float(hi.pvalue)
    return TostResult(margin, max(p_lo, p_hi), p_lo, p_hi, w.diff - half, w.diff + half, alpha)


def equivalence_margin(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float,
                       alpha: float = 0.05) -> float:
    """The smallest symmetric margin at which TOST declares the means equivalent.

    It is the far end of the ``1 - 2 alpha`` confidence interval of the difference:
    ``|diff| + t(1 - alpha, df) * se`` (the Welch df does not depend on the margin).

    >>> m = equivalence_margin(100, 2, 30, 101, 2, 30)
    >>> tost(100, 2, 30, 101, 2, 30, m * 1.001).equivalent, tost(
    ...     100, 2, 30, 101, 2, 30, m * 0.999).equivalent
    (True, False)
    """
    w = welch(m1, s1, n1, m2, s2, n2)
    return abs(w.diff) + float(st.t.ppf(1 - alpha, w.df)) * w.se


def bootstrap_ci(data: np.ndarray | list[float], statistic: Callable = np.mean,
                 confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0,
                 method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of ``statistic`` over one sample (scipy.stats.bootstrap).

    Deterministic for a given ``seed``. BCa falls back to the percentile method when
    the sample is degenerate (BCa's acceleration is undefined for identical values).

    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], n_resamples=2000)
    >>> bool(lo < 3.5 < hi)
    True
    """
    x = np.asarray(data, dtype=float)
    if x.ndim != 1 or len(x) < 2:
        raise ValueError(f"data: need a 1-D sample of at least 2 values, got shape {x.shape}")
    if np.all(x == x[0]):
        v = float(statistic(x))
        return v, v
    res = st.bootstrap((x,), statistic, n_resamples=n_resamples, confidence_level=confidence,
                       method=method, rng=np.random.default_rng(seed), vectorized=False)
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if method == "BCa" and not (math.isfinite(lo) and math.isfinite(hi)):
        return bootstrap_ci(x, statistic, confidence, n_resamples, seed, "percentile")
    return lo, hi


def paired_wilcoxon(a: np.ndarray | list[float], b: np.ndarray | list[float]
                    ) -> tuple[float, float]:
    """Wilcoxon signed-rank test of paired samples (e.g. two policies over the same seeds).

    Returns (statistic, two-sided p); exact for small samples without ties.

    >>> paired_wilcoxon([2, 3, 4, 5, 6], [1, 1, 1, 1, 1])
    (0.0, 0.0625)
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be 1-D and paired; shapes {x.shape} and {y.shape}")
    if np.all(x == y):
        raise ValueError("a == b for every pair: the signed-rank test is undefined")
    r = st.wilcoxon(x, y)
    return float(r.statistic), float(r.pvalue)


def cohens_d(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float) -> float:
    """Standardised difference ``(mean2 - mean1) / pooled sd``.

    >>> cohens_d(10, 2, 20, 11, 2, 20)
    0.5
    """
    _check(m1, s1, n1, m2, s2, n2)
    pooled = math.sqrt(((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / (n1 + n2 - 2))
    return (m2 - m1) / pooled


def hedges_g(m1: float, s1: float, n1: float, m2: float, s2: float, n2: float) -> float:
    """Cohen's d with the small-sample bias correction ``1 - 3 / (4 (n1 + n2) - 9)``."""
    return cohens_d(m1, s1, n1, m2, s2, n2) * (1 - 3 / (4 * (n1 + n2) - 9))


def perf_rse_to_sd(mean: float, rse_pct: float, n: int) -> float:
    """Standard deviation of the runs behind perf stat's ``( +- x% )``.

    perf stat -r N prints the standard error of the mean relative to the mean
    (tools/perf/util/stat.c: stddev_stats() returns sqrt(variance / n), and
    rel_stddev_stats() makes it a percentage), so sd = x/100 * mean * sqrt(n).

    >>> perf_rse_to_sd(1000.0, 0.5, 25)
    25.0
    """
    if n < 2:
        raise ValueError(f"n={n}: perf prints a spread only for -r 2 or more runs")
    if rse_pct < 0:
        raise ValueError(f"rse_pct={rse_pct}: must be >= 0")
    return rse_pct / 100.0 * abs(mean) * math.sqrt(n)
