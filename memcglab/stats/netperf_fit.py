"""Study 1's fit: the contention model's free parameters from the "without" column alone.

The charge-path network (:func:`memcglab.queueing.chargepath_throughput`) has two
parameters no prior pins down well enough: the non-memcg CPU cycles per message
(``other_cycles``) and the hold time of a shared usage-line transfer under contention
(``c2c_cycles``). They are fitted, by :func:`scipy.optimize.least_squares` (trf, in
log space, within the registered bounds), to the relative error of the per-flow Mbps
of the "without" model (the single stock's load) against the published "without"
column, six rows. Everything else (clock, SMT gain, cross-socket and per-sharer costs,
the variant's CPUs per flow) is an input: one value per parameter point of a batch.

A batch of B parameter points is B independent fits; :func:`fit_without` solves them
in one call, as one least-squares problem whose Jacobian is block diagonal
(``jac_sparsity``), so finite differences need two evaluations per step whatever B
is. The result for each point is what a separate fit of that point gives.

The published "with" column is never an argument here: the fit sees the "without"
column, and :func:`predict` only the fitted parameters and the "with" model's load.

>>> from memcglab.queueing import ChargePathLoad
>>> load = ChargePathLoad(clients=[6, 36], names=("usage:0",), shared=[[0.1], [0.6]],
...                       private=[0.1, 0.3], memcg_cycles=[100.0, 200.0])
>>> truth = predict(load, {"ghz": 2.5}, np.array([9000.0]), np.array([800.0]))
>>> f = fit_without(load, {"ghz": 2.5}, truth[0], (12000.0, 150.0), (3000.0, 45.0),
...                 (80000.0, 3500.0))
>>> [round(float(v)) for v in (f.other_cycles[0], f.c2c_cycles[0])]
[9000, 800]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import least_squares
from scipy.sparse import block_diag, csr_matrix

from memcglab.queueing import ChargePathLoad, ChargePathParams, chargepath_throughput

__all__ = ["WithoutFit", "fit_without", "predict"]


@dataclass(frozen=True)
class WithoutFit:
    """Fitted ``other_cycles`` and ``c2c_cycles`` per parameter point ``(B,)``, the
    fitted "without" Mbps ``(B, P)``, the relative residuals, and which parameters
    ended at a bound ``(B, 2)``."""

    other_cycles: np.ndarray
    c2c_cycles: np.ndarray
    fitted_mbps: np.ndarray
    residuals: np.ndarray
    at_bound: np.ndarray
    success: bool

    @property
    def mape_pct(self) -> np.ndarray:
        """The fit's mean absolute percentage error on "without", per point ``(B,)``."""
        return 100.0 * np.abs(self.residuals).mean(axis=-1)


def _batch(params: Mapping[str, ArrayLike]) -> int:
    sizes = {np.size(v) for v in params.values() if np.ndim(v) == 1}
    if len(sizes) > 1:
        raise ValueError(f"params: arrays of lengths {sorted(sizes)}; all must have one "
                         "length B (or be scalars)")
    return sizes.pop() if sizes else 1


def predict(load: ChargePathLoad, params: Mapping[str, ArrayLike], other_cycles: ArrayLike,
            c2c_cycles: ArrayLike) -> np.ndarray:
    """Per-flow Mbps ``(B, P)`` of ``load`` with the fitted parameters and the inputs
    ``params`` (:class:`~memcglab.queueing.ChargePathParams` fields or prior names)."""
    p = ChargePathParams.from_params({**params, "other_cycles": other_cycles,
                                      "c2c_cycles": c2c_cycles})
    return chargepath_throughput(load, p).per_flow_mbps


def fit_without(load: ChargePathLoad, params: Mapping[str, ArrayLike],
                without_mbps: ArrayLike, x0: Sequence[float], lower: Sequence[float],
                upper: Sequence[float]) -> WithoutFit:
    """Fit ``other_cycles`` and ``c2c_cycles`` of every parameter point to ``without_mbps``
    (one published value per client count of ``load``); see the module doc."""
    y = np.asarray(without_mbps, dtype=float)
    nclients = np.asarray(load.clients).size
    if y.shape != (nclients,) or not np.all(np.isfinite(y) & (y > 0)):
        raise ValueError(f"without_mbps={y.tolist()}: need {nclients} positive Mbps, one "
                         "per client count of the load")
    lo, hi, start = (np.log(np.asarray(v, dtype=float)) for v in (lower, upper, x0))
    if lo.shape != (2,) or not np.all((lo < start) & (start < hi)):
        raise ValueError(f"x0={list(x0)}, lower={list(lower)}, upper={list(upper)}: need two "
                         "positive values each, x0 strictly inside the bounds")
    b = _batch(params)

    def resid(u: np.ndarray) -> np.ndarray:
        x = np.exp(u.reshape(b, 2))
        return (predict(load, params, x[:, 0], x[:, 1]) / y - 1.0).ravel()

    sparsity = csr_matrix(block_diag([np.ones((nclients, 2))] * b))
    res = least_squares(resid, np.tile(start, b), bounds=(np.tile(lo, b), np.tile(hi, b)),
                        jac_sparsity=sparsity, method="trf", x_scale=1.0,
                        max_nfev=200)
    u = res.x.reshape(b, 2)
    x = np.exp(u)
    span = hi - lo
    at_bound = (u - lo < 1e-4 * span) | (hi - u < 1e-4 * span)
    fitted = predict(load, params, x[:, 0], x[:, 1])
    return WithoutFit(other_cycles=x[:, 0], c2c_cycles=x[:, 1], fitted_mbps=fitted,
                      residuals=fitted / y - 1.0, at_bound=at_bound,
                      success=bool(res.success))
