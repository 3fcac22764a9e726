"""What makes a prediction's band wide: each group of inputs' share of the variance.

The scenario contract's ``band`` (revision 2) gives, for ``y = log(new / base)`` (the model's
error included), the **total Sobol index** of each group of inputs: the share of the
variance of ``y`` that would remain unexplained if every input but the group's were
known, so a group that acts only together with another still shows. Jansen's estimator
(Saltelli et al. 2010, "Variance based sensitivity analysis of model output", Computer
Physics Communications 181: 259-270) on the prediction's own Sobol points ``A``, a second
design ``B`` of the same size, and for each group the points ``A`` with the group's
coordinates taken from ``B``: ``S_T = E[(y(A) - y(A_B))^2] / (2 Var y)``. Group indices, not
one per input, which is why this is not :func:`scipy.stats.sobol_indices` (it has no
groups). The shares need not sum to 1.

The calibrated inputs come from the posterior's normal approximation through its Cholesky
factor, so a calibrated coordinate moves every parameter after it; a coordinate is
counted in the group of the parameter it leads (an approximation the docs state).

>>> group_of("sigma_rel"), group_of("fixed_cycles:tcp_stream"), group_of("hold_scale")
('model_error', 'work', 'hardware')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import qmc

__all__ = ["GROUPS", "group_of", "variance_shares"]

#: the contract's groups, in its order
GROUPS: tuple[str, ...] = ("model_error", "alternatives", "hardware", "work")
_ERROR = {"sigma_rel", "sigma_add", "sigma_abs", "z_change", "z_rate", "z_add"}


def group_of(name: str) -> str:
    """The group an input (a column of the unit cube) belongs to."""
    if name in _ERROR:
        return "model_error"
    if name == "alternative":
        return "alternatives"
    if name.startswith(("fixed_cycles:", "unit_cycles:")):
        return "work"
    return "hardware"


def variance_shares(y_at: Callable[[np.ndarray], np.ndarray], unit: np.ndarray,
                    columns: tuple[str, ...], seed: int) -> dict[str, float]:
    """Each group's total Sobol index of ``y_at`` (a function of unit-cube points) at the
    design ``unit`` (module doc); 0 for a group with no coordinate or no variance."""
    n, dims = unit.shape
    other = qmc.Sobol(dims, scramble=True, seed=seed + 7919).random(n)
    ya, yb = y_at(unit), y_at(other)
    var = float(np.var(np.concatenate([ya, yb])))
    out = {}
    for g in GROUPS:
        cols = [i for i, c in enumerate(columns) if group_of(c) == g]
        if not cols or var <= 0.0:
            out[g] = 0.0
            continue
        mixed = unit.copy()
        mixed[:, cols] = other[:, cols]
        out[g] = float(min(1.0, 0.5 * np.mean((ya - y_at(mixed)) ** 2) / var))
    return out
