"""The model's own error on ``y = log(new / base)``: draws for predict, densities for a fit.

``rules_addendum_2026-12-02b_model_selection.md``, section 1, registers four error models of
the measured ``y`` given the model's ``L`` at a parameter point (``z``, ``z'`` standard
normal, ``t`` Student's t with 4 degrees of freedom):

* ``scaled``: ``y = L (1 + sigma_rel z)`` (the model to 2026-12-02; it flips the sign of
  ``L`` whenever ``z < -1 / sigma_rel``);
* ``lognormal``: ``y = L exp(sigma_rel z)``, never a sign flip;
* ``lognormal+additive``: ``y = L exp(sigma_rel z) + sigma_add z'``, a flip only for
  effects of the order of ``sigma_add``;
* ``student``: ``y = L exp(sigma_rel t)``.

:func:`draw_y` makes predict's draws; :func:`log_density` is the density of a measured
``y`` with the measurement's noise (a standard deviation on ``y``) convolved, averaged
over the rows of ``L`` (the modelling alternatives, a mixture of equal weights: each was
drawn in proportion to its prior). The integral over the error's ``z`` (or ``t``) is a
fixed trapezoid grid (:data:`GRID`, addendum c explains why not 24 Gauss-Hermite nodes).

>>> import numpy as np
>>> v = {"sigma_rel": np.array([0.5]), "sigma_add": np.array([0.01])}
>>> L = np.array([[0.3]])
>>> bool(log_density("lognormal", 0.3, L, v, 0.02)[0] > log_density("lognormal", -0.3, L, v,
...                                                                  0.02)[0])
True
>>> float(draw_y("lognormal", np.array([0.3]), v, np.array([0.0]), np.array([0.0]))[0])
0.3
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats

from memcglab.calibration.posterior import Param

__all__ = ["ERROR_PARAMS", "GRID", "Y_LIMIT", "draw_y", "error_params", "log_density"]

#: the largest absolute value of log(new / base) a draw keeps (a ratio of 10^6)
Y_LIMIT = float(np.log(1e6))

#: the error's standard variate on a trapezoid grid: fine enough that neighbouring nodes
#: of a 145% effect at sigma_rel 0.5 are closer than a 2% measurement noise
GRID = np.linspace(-8.0, 8.0, 321)
_NORMAL_W = stats.norm.pdf(GRID) / stats.norm.pdf(GRID).sum()
_T_GRID = np.linspace(-16.0, 16.0, 641)
_T_W = stats.t.pdf(_T_GRID, 4) / stats.t.pdf(_T_GRID, 4).sum()

#: the error models' parameters and priors (the addendum's, section 1)
ERROR_PARAMS: dict[str, Param] = {
    "sigma_rel": Param("sigma_rel", "fraction", 0.3, 0.7,
                       "my inference: a structural model of a kernel path misses an effect's "
                       "size by tens of percent; the development set says by how much"),
    "sigma_add": Param("sigma_add", "log", 0.01, 1.0,
                       "rules_addendum_2026-12-02b: an effect of about one point that no "
                       "model resolves"),
}


def error_params(error: str) -> list[Param]:
    """The parameters error model ``error`` reads."""
    if error == "lognormal+additive":
        return [ERROR_PARAMS["sigma_rel"], ERROR_PARAMS["sigma_add"]]
    return [ERROR_PARAMS["sigma_rel"]]


def _sig(v: Mapping[str, np.ndarray], name: str, like: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(v.get(name, 0.0), dtype=float), like.shape)


def draw_y(error: str, L: np.ndarray, v: Mapping[str, np.ndarray], z: np.ndarray,
           z_add: np.ndarray) -> np.ndarray:
    """``y`` at each point: ``L`` with the error of standard variate ``z`` (a normal, or for
    ``student`` already a t variate) and ``z_add`` (the additive part's normal)."""
    L = np.asarray(L, dtype=float)
    s = _sig(v, "sigma_rel", L)
    if error == "scaled":
        y = L * (1.0 + s * z)
    else:
        y = L * np.exp(s * z)
    if error == "lognormal+additive":
        y = y + _sig(v, "sigma_add", L) * z_add
    # a ratio beyond 10^(+-6) is read as 10^(+-6): no throughput moves further, and the
    # change in % stays finite in floating point
    return np.clip(y, -Y_LIMIT, Y_LIMIT)


def log_density(error: str, y: float, L: np.ndarray, v: Mapping[str, np.ndarray],
                noise: float) -> np.ndarray:
    """log p(measured ``y`` | the point) per point, ``L`` of shape (alternatives, points)."""
    L = np.atleast_2d(np.asarray(L, dtype=float))
    s = _sig(v, "sigma_rel", L[0])[None, :, None]
    grid, w = (_T_GRID, _T_W) if error == "student" else (GRID, _NORMAL_W)
    mult = 1.0 + s * grid if error == "scaled" else np.exp(s * grid)
    var = noise ** 2 + 1e-10
    if error == "lognormal+additive":
        var = var + _sig(v, "sigma_add", L[0])[None, :, None] ** 2
    mean = L[:, :, None] * mult
    logs = -0.5 * ((y - mean) ** 2 / var + np.log(2 * np.pi * var)) + np.log(w)
    # a mixture over the alternatives (equal weights) and the error's grid
    per_alt = _logsumexp(logs, axis=2)
    return _logsumexp(per_alt, axis=0) - np.log(L.shape[0])


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))
