"""Calibration by nonlinear least squares, parameter intervals, out-of-sample errors.

A model is calibrated on some rows and judged on others: :func:`calibrate` fits
(scipy.optimize.least_squares) and reports linearised confidence intervals,
:func:`prediction_errors` and :func:`leave_one_out` measure what the fit does on data
it did not see.

>>> x = np.array([0.0, 1.0, 2.0, 3.0]); y = 1.0 + 2.0 * x
>>> fit = calibrate(lambda p: p[0] + p[1] * x - y, [0.0, 0.0], ["a", "b"])
>>> np.round(fit.x, 6).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as st
from scipy.optimize import least_squares

__all__ = ["Fit", "calibrate", "prediction_errors", "mape", "leave_one_out"]


@dataclass(frozen=True, eq=False)
class Fit:
    """A least-squares fit: estimates, linearised standard errors and intervals."""

    names: tuple[str, ...]
    x: np.ndarray
    stderr: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    residuals: np.ndarray
    dof: int
    success: bool
    message: str
    at_bound: np.ndarray

    def table(self) -> pd.DataFrame:
        """Tidy (parameter, estimate, stderr, ci_low, ci_high, at_bound).

        An estimate at a bound means the data push the parameter past what is
        physical; its linearised interval is then not meaningful.
        """
        return pd.DataFrame({"parameter": self.names, "estimate": self.x, "stderr": self.stderr,
                             "ci_low": self.ci_low, "ci_high": self.ci_high,
                             "at_bound": self.at_bound})

    def __getitem__(self, name: str) -> float:
        return float(self.x[self.names.index(name)])


def calibrate(residuals: Callable[[np.ndarray], np.ndarray], x0: Sequence[float],
              names: Sequence[str], bounds: tuple[Sequence[float], Sequence[float]] | None = None,
              confidence: float = 0.95, **kwargs) -> Fit:
    """Minimise ``sum(residuals(x)**2)`` from ``x0``; intervals from the Jacobian.

    The covariance is ``s^2 (J^T J)^+`` with ``s^2 = SSR / (m - n)``; intervals use
    Student's t with ``m - n`` degrees of freedom. With no spare degrees of freedom
    (as many parameters as residuals) the errors and intervals are NaN.
    """
    names = tuple(names)
    x0 = np.asarray(x0, dtype=float)
    if len(names) != len(x0):
        raise ValueError(f"{len(x0)} starting values for {len(names)} names {names}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence}: must be in (0, 1)")
    b = (-np.inf, np.inf) if bounds is None else bounds
    res = least_squares(residuals, x0, bounds=b, **kwargs)
    m, n = len(res.fun), len(x0)
    dof = m - n
    if dof > 0:
        s2 = float(res.fun @ res.fun) / dof
        cov = s2 * np.linalg.pinv(res.jac.T @ res.jac)
        stderr = np.sqrt(np.clip(np.diag(cov), 0, None))
        half = st.t.ppf(0.5 + confidence / 2, dof) * stderr
    else:
        stderr = half = np.full(n, np.nan)
    lb, ub = (np.broadcast_to(np.asarray(v, dtype=float), x0.shape) for v in b)
    tol = 1e-9 * np.maximum(1.0, np.abs(res.x))
    at_bound = (np.abs(res.x - lb) <= tol) | (np.abs(ub - res.x) <= tol)
    return Fit(names, res.x, stderr, res.x - half, res.x + half, res.fun, dof,
               bool(res.success), str(res.message), at_bound)


def prediction_errors(observed: Sequence[float], predicted: Sequence[float]) -> pd.DataFrame:
    """Per row: observed, predicted, error (predicted - observed) and error in % of observed.

    >>> prediction_errors([100.0, 200.0], [110.0, 190.0])["error_pct"].tolist()
    [10.0, -5.0]
    """
    o, p = np.asarray(observed, dtype=float), np.asarray(predicted, dtype=float)
    if o.shape != p.shape:
        raise ValueError(f"observed and predicted differ in shape: {o.shape} vs {p.shape}")
    if np.any(o == 0):
        raise ValueError("observed contains 0: percentage errors are undefined")
    return pd.DataFrame({"observed": o, "predicted": p, "error": p - o,
                         "error_pct": (p - o) / o * 100.0})


def mape(observed: Sequence[float], predicted: Sequence[float]) -> float:
    """Mean absolute percentage error.

    >>> mape([100.0, 200.0], [110.0, 190.0])
    7.5
    """
    return float(prediction_errors(observed, predicted)["error_pct"].abs().mean())


def leave_one_out(fit_predict: Callable[[np.ndarray], np.ndarray],
                  observed: Sequence[float]) -> pd.DataFrame:
    """Leave-one-out prediction errors.

    ``fit_predict(train)`` receives a boolean mask of the rows to fit on and returns
    predictions for every row; row ``i``'s prediction is taken from the fit without it.

    >>> y = np.array([1.0, 2.0, 3.0, 10.0])
    >>> loo = leave_one_out(lambda tr: np.full(len(y), y[tr].mean()), y)
    >>> loo["predicted"].tolist()
    [5.0, 4.666666666666667, 4.333333333333333, 2.0]
    """
    o = np.asarray(observed, dtype=float)
    pred = np.empty_like(o)
    for i in range(len(o)):
        train = np.ones(len(o), dtype=bool)
        train[i] = False
        pred[i] = np.asarray(fit_predict(train), dtype=float)[i]
    out = prediction_errors(o, pred)
    out.insert(0, "row", np.arange(len(o)))
    return out
