"""Study 1's fit: the contention model's free parameters from the "without" column alone.

Study 1's registered network is the pricing core's
(:func:`memcglab.pricing.price_flows`) with two parameters no prior pins down well
enough: the non-memcg CPU cycles per message (``other_cycles``) and the hold time of a
shared usage-line transfer within a socket under contention (``hold_cycles``; the
registration's name for it is mapped in study 1's prereg module). They
are fitted, by :func:`scipy.optimize.least_squares` (trf, in log space, within the
registered bounds), to the relative error of the per-flow Mbps of the "without" model
(the single stock's load) against the published "without" column, six rows.
Everything else (clock, SMT gain, the cross-socket hold time and share, the per-sharer
cost, the variant's CPUs per flow) is an input: one value per parameter point of a
batch (:func:`registered_inputs` says how they enter the core).

A batch of B parameter points is B independent fits; :func:`fit_without` solves them
in one call, as one least-squares problem whose Jacobian is block diagonal
(``jac_sparsity``), so finite differences need two evaluations per step whatever B
is. The result for each point is what a separate fit of that point gives.

The published "with" column is never an argument here: the fit sees the "without"
column, and :func:`predict` only the fitted parameters and the "with" model's load.

>>> from memcglab.pricing import FlowLoad
>>> load = FlowLoad(flows=[6, 36], memcg_cycles=[100.0, 200.0], shared_names=("usage:0",),
...                 shared=[[0.1], [0.6]], private=[0.1, 0.3])
>>> point = {"busiest_cpu_share": 0.5, "cpu_ghz": 2.5, "hold_cycles_cross": 350.0,
...          "cross_socket_fraction": 0.0, "smt_gain": 0.25, "cpus_per_flow": 2.0,
...          "cpus": 72.0, "smt": 2.0, "contended_rmw_per_sharer": 5.0}
>>> truth = predict(load, point, np.array([9000.0]), np.array([800.0]))
>>> f = fit_without(load, point, truth[0], (12000.0, 150.0), (3000.0, 45.0),
...                 (80000.0, 3500.0))
>>> [round(float(v)) for v in (f.other_cycles[0], f.hold_cycles[0])]
[9000, 800]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import least_squares
from scipy.sparse import block_diag, csr_matrix

from memcglab.pricing import FlowLoad, NetworkResult, price_flows

__all__ = ["MESSAGE_BYTES", "PER_SHARER", "WithoutFit", "fit_without", "predict", "price",
           "registered_inputs"]

#: bytes per message of study 1's netperf (``-m 10K``): per-flow Mbps from messages/s
MESSAGE_BYTES = 10_240
#: the registration's per-sharer serialisation of a contended line, a prior's name
PER_SHARER = "contended_rmw_per_sharer"


@dataclass(frozen=True)
class WithoutFit:
    """Fitted ``other_cycles`` and ``hold_cycles`` per parameter point ``(B,)``, the
    fitted "without" Mbps ``(B, P)``, the relative residuals, and which parameters
    ended at a bound ``(B, 2)``."""

    other_cycles: np.ndarray
    hold_cycles: np.ndarray
    fitted_mbps: np.ndarray
    residuals: np.ndarray
    at_bound: np.ndarray
    success: bool

    @property
    def mape_pct(self) -> np.ndarray:
        """The fit's mean absolute percentage error on "without", per point ``(B,)``."""
        return 100.0 * np.abs(self.residuals).mean(axis=-1)


def _batch(point: Mapping[str, ArrayLike]) -> int:
    sizes = {np.size(v) for v in point.values() if np.ndim(v) == 1}
    if len(sizes) > 1:
        raise ValueError(f"point: arrays of lengths {sorted(sizes)}; all must have one "
                         "length B (or be scalars)")
    return sizes.pop() if sizes else 1


def _column(v: ArrayLike) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a[:, None] if a.ndim == 1 else a


def registered_inputs(load: FlowLoad, point: Mapping[str, ArrayLike], other_cycles: ArrayLike,
                      hold_cycles: ArrayLike) -> dict[str, ArrayLike]:
    """The pricing core's inputs for study 1's registered model at the fitted values.

    ``point`` holds the core's inputs (:data:`memcglab.pricing.INPUTS`) but the two
    fitted ones, and optionally :data:`PER_SHARER`. The registered hold time per
    shared-line transfer is ``(1 - x) c2c + x cross + rmw * max(0, sharers - 2)`` with
    ``sharers = min(n * cpus_per_flow, cpus)`` (data/preregistration/study01.md). The
    core has no cost per sharer: since issue 17 it models contention once, as the
    line's queueing. The registration was fixed before that and names the per-sharer
    serialisation as one of its mechanisms, so it is kept here, as part of the hold
    time the core is given (the same cycles on the within- and the cross-socket hold,
    so the mix adds them once), and not on the private lines, which the registration
    prices at the fitted hold time alone.
    """
    h = _column(hold_cycles)
    flows = np.asarray(load.flows, dtype=float)[None, :]
    sharers = np.minimum(flows * _column(point["cpus_per_flow"]), _column(point["cpus"]))
    extra = _column(point.get(PER_SHARER, 0.0)) * np.clip(sharers - 2.0, 0.0, None)
    out = {k: v for k, v in point.items() if k != PER_SHARER}
    return out | {"other_cycles": other_cycles, "hold_cycles": h + extra,
                  "hold_cycles_cross": _column(point["hold_cycles_cross"]) + extra,
                  "private_cycles": h}


def price(load: FlowLoad, point: Mapping[str, ArrayLike], other_cycles: ArrayLike,
          hold_cycles: ArrayLike) -> NetworkResult:
    """The registered network of ``load`` at the fitted values, ``(B, P)``."""
    return price_flows(load, registered_inputs(load, point, other_cycles, hold_cycles))


def predict(load: FlowLoad, point: Mapping[str, ArrayLike], other_cycles: ArrayLike,
            hold_cycles: ArrayLike) -> np.ndarray:
    """Per-flow Mbps ``(B, P)`` of ``load`` with the fitted parameters and the inputs
    ``point`` (see :func:`registered_inputs`)."""
    rate = price(load, point, other_cycles, hold_cycles).per_instance
    return rate * MESSAGE_BYTES * 8 / 1e6


def fit_without(load: FlowLoad, point: Mapping[str, ArrayLike],
                without_mbps: ArrayLike, x0: Sequence[float], lower: Sequence[float],
                upper: Sequence[float]) -> WithoutFit:
    """Fit ``other_cycles`` and ``hold_cycles`` of every parameter point to ``without_mbps``
    (one published value per client count of ``load``); see the module doc."""
    y = np.asarray(without_mbps, dtype=float)
    nclients = len(load.flows)
    if y.shape != (nclients,) or not np.all(np.isfinite(y) & (y > 0)):
        raise ValueError(f"without_mbps={y.tolist()}: need {nclients} positive Mbps, one "
                         "per client count of the load")
    lo, hi, start = (np.log(np.asarray(v, dtype=float)) for v in (lower, upper, x0))
    if lo.shape != (2,) or not np.all((lo < start) & (start < hi)):
        raise ValueError(f"x0={list(x0)}, lower={list(lower)}, upper={list(upper)}: need two "
                         "positive values each, x0 strictly inside the bounds")
    b = _batch(point)

    def resid(u: np.ndarray) -> np.ndarray:
        x = np.exp(u.reshape(b, 2))
        return (predict(load, point, x[:, 0], x[:, 1]) / y - 1.0).ravel()

    sparsity = csr_matrix(block_diag([np.ones((nclients, 2))] * b))
    res = least_squares(resid, np.tile(start, b), bounds=(np.tile(lo, b), np.tile(hi, b)),
                        jac_sparsity=sparsity, method="trf", x_scale=1.0,
                        max_nfev=200)
    u = res.x.reshape(b, 2)
    x = np.exp(u)
    span = hi - lo
    at_bound = (u - lo < 1e-4 * span) | (hi - u < 1e-4 * span)
    fitted = predict(load, point, x[:, 0], x[:, 1])
    return WithoutFit(other_cycles=x[:, 0], hold_cycles=x[:, 1], fitted_mbps=fitted,
                      residuals=fitted / y - 1.0, at_bound=at_bound,
                      success=bool(res.success))
