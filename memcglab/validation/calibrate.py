"""Calibration from data: a posterior over the inputs no datasheet gives, by Laplace.

The unknowns (:class:`Param`) are positive physical quantities (a line's hold time,
cycles of work per operation, a model-error scale) with lognormal priors, or
unbounded ones with normal priors. Each :class:`Observation` is one published number
(a change in %, or the logarithm of an absolute rate) with the noise its source states,
and a vectorised function from parameter values to the model's prediction of it.

:func:`fit` maximises the log posterior (``scipy.optimize.minimize``, L-BFGS-B in the
unconstrained coordinates: log for positive parameters) and approximates the posterior
by the normal at the mode whose covariance is the inverse Hessian there
(a batched central difference, checked against ``scipy.differentiate.hessian``): the
Laplace approximation. Why this tool: the
model is cheap, smooth and has a handful of parameters, so the mode and its curvature
say what the data say; a sampler (emcee, PyMC) would add a dependency and run-to-run
randomness without changing the answer at this size, and the result must be a
deterministic file. A parameter the data do not constrain keeps (nearly) its prior
width, which the result reports (:meth:`Calibration.shrinkage`).

The likelihood of a change observation is normal in the log ratio ``L = log(new /
base)`` around the prediction's ``L_m``, with variance ``noise_L² + (sigma_rel · L_m)²``
(``noise_L`` the measurement's noise in the same units): ``sigma_rel`` (itself
calibrated when it is a parameter) is the model's relative error on the size of an
effect, so a model that predicts no effect where there is one cannot hide behind it.
A rate observation is normal in log space with variance ``noise² + sigma_abs²``.

>>> import numpy as np
>>> p = [Param("h", "cycles", 100.0, 1.0, "a prior")]
>>> obs = [Observation("c", "src", "change_pct", -50.0, 1.0,
...                    lambda v: -100.0 * v["h"] / (v["h"] + 100.0))]
>>> cal = fit(p, obs)
>>> round(float(cal.mode["h"]), 1)
100.0
>>> bool(cal.sd_log["h"] < 0.1)
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from memcglab.calibration.posterior import Calibration, Param

__all__ = ["Calibration", "Observation", "Param", "fit", "KINDS", "log_posterior"]

#: what an observation measures: a change in % (its prediction the mean log ratio), a
#: log rate, a measured log ratio with the error model and the alternatives' mixture
#: (its prediction ``L`` of shape (alternatives, points)), a log perf share (or, with
#: ``upper``, a bound on it)
KINDS: tuple[str, ...] = ("change_pct", "log_rate", "log_ratio", "log_share")
Values = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Observation:
    """One published number and the model's prediction of it."""

    case: str
    source: str
    kind: str
    measured: float
    noise: float
    predict: Callable[[Values], np.ndarray]
    #: the error model of a ``log_ratio`` observation (memcglab.scenario.errors)
    error: str = "scaled"
    #: a ``log_share`` observation that is only an upper bound (a printed 0.00)
    upper: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"observation {self.case}: kind={self.kind!r}; valid: "
                             f"{', '.join(KINDS)}")
        if not self.noise >= 0:
            raise ValueError(f"observation {self.case}: noise={self.noise}: must be >= 0")


def _loglik(obs: Observation, pred: np.ndarray, v: Values) -> np.ndarray:
    if obs.kind == "log_ratio":
        from memcglab.scenario.errors import log_density

        return log_density(obs.error, obs.measured, pred, v, obs.noise)
    if obs.kind == "log_share":
        from scipy.stats import norm

        z = (obs.measured - pred) / obs.noise
        return norm.logcdf(z) if obs.upper else norm.logpdf(z) - np.log(obs.noise)
    if obs.kind == "change_pct":
        # in log ratio: L = log(new / base), so a -70% change and a +230% one are as far
        # from 0; the model's relative error scales L, the noise is the measurement's
        lm = np.log1p(np.clip(pred, -99.999, None) / 100.0)
        lo = np.log1p(obs.measured / 100.0)
        noise = obs.noise / (100.0 + obs.measured)
        var = noise ** 2 + (v.get("sigma_rel", 0.0) * lm) ** 2 + 1e-8
        return -0.5 * ((lo - lm) ** 2 / var + np.log(2 * np.pi * var))
    var = obs.noise ** 2 + v.get("sigma_abs", 0.0) ** 2 + 1e-8
    return -0.5 * ((obs.measured - pred) ** 2 / var + np.log(2 * np.pi * var))


def _values(params: Sequence[Param], u: np.ndarray) -> dict[str, np.ndarray]:
    # u: (k, ...) -> each parameter an array of the trailing shape
    return {p.name: p.from_u(u[i]) for i, p in enumerate(params)}


def log_posterior(params: Sequence[Param], obs: Sequence[Observation],
                  hyper: Mapping[str, str] | None = None
                  ) -> Callable[[np.ndarray], np.ndarray]:
    """The log posterior as a function of ``u`` of shape ``(k, ...)`` (vectorised).

    ``hyper`` maps a normal parameter to the parameter whose value is its prior's sd (a
    hierarchical prior: the machine families' hold deviations and their spread)."""
    hyper = dict(hyper or {})

    def f(u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        shape = u.shape[1:]
        flat = u.reshape(len(params), -1)
        v = _values(params, flat)
        total = np.zeros(flat.shape[1])
        for i, p in enumerate(params):
            c, s = p.prior_u
            if p.name in hyper:
                s = v[hyper[p.name]]
                total += -0.5 * ((flat[i] - c) / s) ** 2 - np.log(s)
            else:
                total += -0.5 * ((flat[i] - c) / s) ** 2
        for o in obs:
            pred = np.asarray(o.predict(v), dtype=float)
            if o.kind == "log_ratio":
                pred = np.atleast_2d(pred)
                total += _loglik(o, np.broadcast_to(pred, (pred.shape[0], *total.shape)), v)
            else:
                total += _loglik(o, np.broadcast_to(pred, total.shape), v)
        return total.reshape(shape)

    return f


def _hessian(f: Callable[[np.ndarray], np.ndarray], u: np.ndarray, h: float = 0.02
             ) -> np.ndarray:
    """Central-difference Hessian of ``f`` at ``u``, all 2k^2 + 1 points in one batch.

    The model is vectorised over points, so one call of 2k^2 + 1 points costs about as
    much as one point; scipy.differentiate.hessian's adaptive steps reach the same
    matrix here (a test compares them) in many smaller calls, about 80 times slower.
    """
    k = u.size
    eye = np.eye(k) * h
    pts = [u]
    for i in range(k):
        pts += [u + eye[i], u - eye[i]]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    for i, j in pairs:
        pts += [u + eye[i] + eye[j], u + eye[i] - eye[j], u - eye[i] + eye[j],
                u - eye[i] - eye[j]]
    y = f(np.stack(pts, axis=1))
    out = np.zeros((k, k))
    for i in range(k):
        out[i, i] = (y[1 + 2 * i] - 2 * y[0] + y[2 + 2 * i]) / h ** 2
    base = 1 + 2 * k
    for n, (i, j) in enumerate(pairs):
        a, b, c, d = y[base + 4 * n: base + 4 * n + 4]
        out[i, j] = out[j, i] = (a - b - c + d) / (4 * h * h)
    return out


def fit(params: Sequence[Param], obs: Sequence[Observation],
        hyper: Mapping[str, str] | None = None) -> Calibration:
    """Mode and Laplace covariance of the posterior of ``params`` given ``obs``
    (``hyper``: :func:`log_posterior`'s hierarchical priors)."""
    if not params:
        raise ValueError("fit: no parameters")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"fit: parameter names repeat: {names}")
    f = log_posterior(params, obs, hyper)
    start = np.array([p.prior_u[0] for p in params])

    k = len(params)
    step = 1e-4
    offsets = np.concatenate([np.zeros((k, 1)), step * np.eye(k), -step * np.eye(k)], axis=1)

    def neg(u: np.ndarray) -> tuple[float, np.ndarray]:
        # the value and a central-difference gradient in one batched evaluation: the
        # model is vectorised over points, so 2k + 1 points cost about one
        y = f(u[:, None] + offsets)
        return -float(y[0]), -(y[1:k + 1] - y[k + 1:]) / (2 * step)

    res = optimize.minimize(neg, start, jac=True, method="L-BFGS-B",
                            options={"maxiter": 2000, "ftol": 1e-12, "gtol": 1e-8})
    mode = res.x
    precision = -_hessian(f, mode)
    # a direction the data and prior do not curve (numerical noise) keeps the prior's width
    w, vecs = np.linalg.eigh(precision)
    floor = 1.0 / max(p.prior_sd for p in params) ** 2
    w = np.maximum(w, 0.25 * floor)
    cov = (vecs / w) @ vecs.T
    return Calibration(params=tuple(params), mode_u=mode, cov_u=cov,
                       cases=tuple(o.case for o in obs), log_posterior=-float(res.fun),
                       converged=bool(res.success))
