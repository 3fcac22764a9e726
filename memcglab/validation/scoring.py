"""Proper scores of a predictive distribution against a noisy measurement.

``data/validation/rules_addendum_2026-12-02_proper_scoring.md`` registers them; all work
on ``y = log(1 + change / 100)``:

* :func:`interval_score`: the interval score at level ``1 - alpha``, the width plus
  ``2 / alpha`` times the distance by which the band misses;
* :func:`crps_from_draws`: the continuous ranked probability score of a (weighted)
  sample's empirical distribution, energy form ``E|X - y| - E|X - X'| / 2``, the second
  term from the sorted sample in ``O(n log n)``;
* :func:`convolve_noise`: a sample plus the measurement's normal noise, realised by ``K``
  fixed normal quantiles per draw (deterministic);
* :func:`weighted_quantile`: the inverse of a weighted empirical distribution function;
* :func:`noise_sd`: a noise in percentage points as a standard deviation on ``y``;
* :func:`case_scores` and :func:`per_source`: one case's scores, and the mean over the
  cases of each source then over the sources.

>>> round(crps_from_draws(np.array([1.0]), 0.25), 12)  # a point mass: the absolute error
0.75
>>> interval_score(-0.1, 0.1, 0.2, alpha=0.1)  # 0.2 wide, missed by 0.1: 0.2 + 20 x 0.1
2.2
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

__all__ = ["ALPHA", "NOISE_POINTS", "case_scores", "convolve_noise", "crps_from_draws",
           "interval_score", "log_change", "noise_sd", "per_source", "weighted_quantile"]

#: the registered level: 90% bands
ALPHA = 0.1
#: normal quantiles per draw in the noise convolution
NOISE_POINTS = 32


def log_change(change_pct) -> np.ndarray:
    """``log(1 + change / 100)``, the scores' scale."""
    return np.log1p(np.asarray(change_pct, dtype=float) / 100.0)


def noise_sd(noise_pct: float, change_pct: float) -> float:
    """A noise of ``noise_pct`` points on a change of ``change_pct`` %, as a standard
    deviation on the log scale: ``noise / (100 + m)`` (0.02 for the 2% default)."""
    if change_pct <= -100.0:
        raise ValueError(f"change_pct={change_pct}: a change must exceed -100%")
    return float(noise_pct) / (100.0 + float(change_pct))


def _weights(x: np.ndarray, w) -> np.ndarray:
    if w is None:
        return np.full(x.size, 1.0 / x.size)
    w = np.asarray(w, dtype=float).ravel()
    if w.shape != x.shape or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("weights: one finite non-negative weight per draw, not all zero")
    return w / w.sum()


def _sample(draws) -> np.ndarray:
    x = np.asarray(draws, dtype=float).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError("draws: at least one, all finite")
    return x


def convolve_noise(draws, sd: float, weights=None,
                   k: int = NOISE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Each draw plus ``sd`` times ``k`` normal quantiles ``Phi^-1((j - 1/2) / k)``; the
    convolved sample and its weights (each draw's weight shared by its ``k`` points)."""
    x = _sample(draws)
    w = _weights(x, weights)
    if sd < 0 or not np.isfinite(sd):
        raise ValueError(f"sd={sd}: must be finite and non-negative")
    if sd == 0:
        return x, w
    z = special.ndtri((np.arange(k) + 0.5) / k)
    return (x[:, None] + sd * z[None, :]).ravel(), np.repeat(w / k, k)


def weighted_quantile(draws, q, weights=None) -> np.ndarray:
    """The smallest draw whose weighted empirical distribution function reaches ``q``."""
    x = _sample(draws)
    w = _weights(x, weights)
    order = np.argsort(x, kind="stable")
    cdf = np.cumsum(w[order])
    q = np.asarray(q, dtype=float)
    # the tolerance keeps q = 0.5 of two equal weights at the lower draw despite rounding
    idx = np.searchsorted(cdf, q - 1e-12, side="left")
    return x[order][np.minimum(idx, x.size - 1)]


def interval_score(low, high, y, alpha: float = ALPHA) -> np.ndarray | float:
    """``(high - low) + (2 / alpha) ((low - y)+ + (y - high)+)``, vectorised."""
    low, high, y = (np.asarray(a, dtype=float) for a in (low, high, y))
    if np.any(high < low):
        raise ValueError("interval_score: high < low")
    out = (high - low) + (2.0 / alpha) * (np.maximum(low - y, 0) + np.maximum(y - high, 0))
    return float(out) if out.ndim == 0 else out


def crps_from_draws(draws, y: float, weights=None) -> float:
    """CRPS of the (weighted) sample's empirical distribution at ``y`` (module doc).

    ``E|X - X'| = 2 sum_i w_i x_(i) (2 W_(<i) + w_i - 1)`` over the sorted sample."""
    x = _sample(draws)
    w = _weights(x, weights)
    first = float(np.sum(w * np.abs(x - y)))
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    before = np.cumsum(ws) - ws
    spread = 2.0 * float(np.sum(ws * xs * (2.0 * before + ws - 1.0)))
    return first - 0.5 * spread


def case_scores(draws, change_pct: float, noise_pct: float, weights=None,
                alpha: float = ALPHA) -> dict[str, float]:
    """One case's registered scores: the draws and the measurement are changes in %; the
    draws are moved to the log scale, convolved with the measurement's noise and scored
    against the measured log change. Also returns the convolved band's ends (log)."""
    y = float(log_change(change_pct))
    x = log_change(_sample(draws))
    cx, cw = convolve_noise(x, noise_sd(noise_pct, change_pct), weights)
    low, high = weighted_quantile(cx, [alpha / 2, 1 - alpha / 2], cw)
    return {"interval_score": float(interval_score(low, high, y, alpha)),
            "crps": crps_from_draws(cx, y, cw), "log_low": float(low), "log_high": float(high)}


def per_source(frame: pd.DataFrame, columns: Sequence[str],
               source: str = "source") -> tuple[pd.DataFrame, pd.Series]:
    """Each source's mean of ``columns`` over its cases, and the mean of those means."""
    means = frame.groupby(source, sort=True)[list(columns)].mean()
    return means, means.mean()
