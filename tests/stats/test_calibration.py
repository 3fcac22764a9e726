"""Calibration: recovery, classical standard errors, leave-one-out identities."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.stats.calibration import calibrate, leave_one_out, mape, prediction_errors

X = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
Y = np.array([1.1, 2.9, 5.2, 6.8, 9.1, 11.0])


def _ols():
    A = np.column_stack([np.ones_like(X), X])
    coef, *_ = np.linalg.lstsq(A, Y, rcond=None)
    return A, coef


def test_linear_fit_matches_ordinary_least_squares_by_hand():
    fit = calibrate(lambda p: p[0] + p[1] * X - Y, [0.0, 0.0], ["a", "b"])
    A, coef = _ols()
    assert fit.x == pytest.approx(coef, abs=1e-8)
    # classical: s^2 = SSR / (n - 2), se(b) = sqrt(s^2 / Sxx)
    e = Y - A @ coef
    s2 = e @ e / (len(X) - 2)
    sxx = ((X - X.mean()) ** 2).sum()
    assert fit.stderr[1] == pytest.approx(np.sqrt(s2 / sxx), rel=1e-6)
    assert fit.stderr[0] == pytest.approx(np.sqrt(s2 * (1 / len(X) + X.mean() ** 2 / sxx)),
                                          rel=1e-6)
    assert fit.dof == 4 and fit["b"] == pytest.approx(coef[1])
    t = fit.table()
    assert list(t.columns) == ["parameter", "estimate", "stderr", "ci_low", "ci_high", "at_bound"]
    assert (t["ci_low"] < t["estimate"]).all() and (t["estimate"] < t["ci_high"]).all()


def test_nonlinear_recovery_and_interval_coverage():
    rng = np.random.default_rng(11)
    x = np.linspace(0, 4, 40)
    y = 3.0 * np.exp(-0.7 * x) + rng.normal(0, 0.02, x.size)
    fit = calibrate(lambda p: p[0] * np.exp(-p[1] * x) - y, [1.0, 0.1], ["amp", "rate"],
                    bounds=([0, 0], [10, 10]))
    assert fit.success
    assert fit.ci_low[0] < 3.0 < fit.ci_high[0]
    assert fit.ci_low[1] < 0.7 < fit.ci_high[1]
    assert not fit.at_bound.any()


def test_an_estimate_pushed_to_a_bound_is_flagged():
    # y falls with x but the slope is bounded below by 0
    y = np.array([5.0, 4.0, 3.0, 2.0])
    x = np.arange(4.0)
    fit = calibrate(lambda p: p[0] + p[1] * x - y, [1.0, 1.0], ["a", "b"],
                    bounds=([0, 0], [np.inf, np.inf]))
    assert fit.at_bound.tolist() == [False, True]
    assert fit.table()["at_bound"].tolist() == [False, True]


def test_no_spare_degrees_of_freedom_gives_nan_intervals():
    fit = calibrate(lambda p: p - np.array([2.0]), [0.0], ["a"])
    assert fit.x[0] == pytest.approx(2.0) and np.isnan(fit.stderr[0]) and fit.dof == 0


def test_calibrate_rejects_mismatched_names():
    with pytest.raises(ValueError, match="2 starting values for 1 names"):
        calibrate(lambda p: p, [0.0, 0.0], ["a"])


def test_loo_equals_the_hat_matrix_identity_for_ols():
    # For OLS the held-out residual is e_i / (1 - h_ii).
    A, coef = _ols()
    h = np.diag(A @ np.linalg.inv(A.T @ A) @ A.T)
    e = Y - A @ coef

    def fit_predict(train):
        c, *_ = np.linalg.lstsq(A[train], Y[train], rcond=None)
        return A @ c

    loo = leave_one_out(fit_predict, Y)
    assert (Y - loo["predicted"].to_numpy()) == pytest.approx(e / (1 - h))
    assert loo["row"].tolist() == list(range(len(Y)))


def test_prediction_errors_and_mape():
    t = prediction_errors([100.0, 50.0], [90.0, 60.0])
    assert t["error"].tolist() == [-10.0, 10.0]
    assert t["error_pct"].tolist() == [-10.0, 20.0]
    assert mape([100.0, 50.0], [90.0, 60.0]) == 15.0
    with pytest.raises(ValueError, match="observed contains 0"):
        mape([0.0], [1.0])
    with pytest.raises(ValueError, match="differ in shape"):
        mape([1.0, 2.0], [1.0])
