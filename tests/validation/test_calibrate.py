"""The Laplace calibration recovers known parameters from the model's own 'measurements'."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.validation.calibrate import Observation, Param, fit, log_posterior


def saturating(h, other, n):
    """A toy charge-path model: n flows, CPU time `other`, one shared line held `h`."""
    return np.minimum(n / other, 1.0 / h)


def synthetic(true, noise, rng):
    obs = []
    for i, n in enumerate([2, 8, 32, 64, 128]):
        def change(v, n=n):
            base = saturating(v["h"] * 0.25, v["other"], n)
            new = saturating(v["h"], v["other"], n)
            return 100.0 * (new / base - 1.0)

        def rate(v, n=n):
            return np.log(saturating(v["h"] * 0.25, v["other"], n))

        vals = {k: np.array([x]) for k, x in true.items()}
        obs.append(Observation(f"c{i}", "synthetic", "change_pct",
                               float(change(vals)[0] + rng.normal(0, noise)), noise, change))
        obs.append(Observation(f"r{i}", "synthetic", "log_rate",
                               float(rate(vals)[0] + rng.normal(0, 0.02)), 0.02, rate))
    return obs


def test_recovers_known_parameters_within_its_interval():
    rng = np.random.default_rng(1)
    true = {"h": 2.0, "other": 40.0}
    params = [Param("h", "us", 1.0, 1.5, "wide prior"), Param("other", "us", 20.0, 1.5, "wide")]
    covered = 0
    for _trial in range(20):
        cal = fit(params, synthetic(true, 1.0, rng))
        assert cal.converged
        lo_h, hi_h = cal.interval("h")
        lo_o, hi_o = cal.interval("other")
        covered += (lo_h <= true["h"] <= hi_h) and (lo_o <= true["other"] <= hi_o)
        assert cal.shrinkage()["h"] < 0.2  # the data constrain h
    # two 90% intervals jointly: ~81% expected; allow sampling slack, fail a broken fit
    assert covered >= 12


def test_unconstrained_parameter_keeps_its_prior():
    params = [Param("h", "us", 1.0, 1.0, "prior"), Param("unused", "us", 5.0, 0.7, "prior")]
    obs = [Observation("c", "s", "change_pct", -50.0, 1.0,
                       lambda v: -100.0 * v["h"] / (v["h"] + 1.0))]
    cal = fit(params, obs)
    assert cal.mode["unused"] == pytest.approx(5.0, rel=1e-3)
    assert cal.shrinkage()["unused"] == pytest.approx(1.0, abs=0.05)


def test_sigma_rel_widens_the_likelihood():
    obs = [Observation("c", "s", "change_pct", -10.0, 0.5, lambda v: np.full_like(v["h"], -20.0))]
    narrow = log_posterior([Param("h", "x", 1.0, 1.0, "p")], obs)
    wide = log_posterior([Param("h", "x", 1.0, 1.0, "p"),
                          Param("sigma_rel", "1", 0.5, 0.1, "p")], obs)
    assert wide(np.array([[0.0], [np.log(0.5)]]))[0] > narrow(np.array([[0.0]]))[0]


def test_draws_are_deterministic_and_follow_the_posterior():
    params = [Param("h", "us", 1.0, 1.0, "p")]
    obs = [Observation("c", "s", "change_pct", -50.0, 2.0,
                       lambda v: -100.0 * v["h"] / (v["h"] + 1.0))]
    cal = fit(params, obs)
    a, b = cal.sample(512, seed=3), cal.sample(512, seed=3)
    assert np.array_equal(a["h"], b["h"])
    lo, hi = cal.interval("h")
    inside = np.mean((a["h"] >= lo) & (a["h"] <= hi))
    assert 0.85 < inside < 0.95


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="prior_sd"):
        Param("h", "us", 1.0, 0.0, "p")
    with pytest.raises(ValueError, match="kind='rate'"):
        Observation("c", "s", "rate", 1.0, 0.1, lambda v: v["h"])


def test_batched_hessian_matches_scipys():
    from scipy.differentiate import hessian

    from memcglab.validation.calibrate import _hessian

    def f(u):
        x, y = u[0], u[1]
        return -(x ** 2 * 3 + x * y - np.exp(0.5 * y) + y ** 4 / 10)

    u = np.array([0.3, -0.7])
    assert np.allclose(_hessian(f, u), hessian(f, u).ddf, rtol=1e-3, atol=1e-4)
