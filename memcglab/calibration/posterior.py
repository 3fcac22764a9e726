"""A calibrated posterior: the inputs no datasheet gives, with their uncertainty.

:class:`Param` is one unknown (a positive physical quantity with a lognormal prior, or
an unbounded one with a normal prior); :class:`Calibration` is the normal
approximation of the posterior in the unconstrained coordinates (log for positive
inputs) that :func:`memcglab.validation.calibrate.fit` returns, and what
``memcglab predict`` draws its calibrated inputs from. It holds parameters only: the
measurements it was fitted to stay in the validation layer.

>>> p = Param("h", "cycles", 100.0, 0.5, "a prior")
>>> cal = Calibration((p,), np.array([np.log(200.0)]), np.array([[0.01]]), ("c",), 0.0, True)
>>> round(cal.mode["h"]), [round(x) for x in cal.interval("h")]
(200, [170, 236])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, qmc

__all__ = ["Calibration", "Param"]


@dataclass(frozen=True)
class Param:
    """One calibrated input: its prior (median and log-scale sd, or mean and sd)."""

    name: str
    unit: str
    prior_median: float
    prior_sd: float
    source: str
    positive: bool = True  # lognormal prior (sd in log units); else normal

    def __post_init__(self) -> None:
        if self.prior_sd <= 0 or (self.positive and self.prior_median <= 0):
            raise ValueError(f"param {self.name}: prior_median={self.prior_median}, "
                             f"prior_sd={self.prior_sd}: need sd > 0 (and median > 0 "
                             "for a positive parameter)")

    def to_u(self, x: np.ndarray) -> np.ndarray:
        """Values in the unconstrained coordinate (log for a positive parameter)."""
        return np.log(x) if self.positive else np.asarray(x, dtype=float)

    def from_u(self, u: np.ndarray) -> np.ndarray:
        """Values back from the unconstrained coordinate."""
        return np.exp(u) if self.positive else np.asarray(u, dtype=float)

    @property
    def prior_u(self) -> tuple[float, float]:
        """The prior's centre and sd in the unconstrained coordinate."""
        centre = float(np.log(self.prior_median)) if self.positive else self.prior_median
        return centre, self.prior_sd


@dataclass(frozen=True)
class Calibration:
    """The Laplace posterior: mode and covariance in the unconstrained coordinates."""

    params: tuple[Param, ...]
    mode_u: np.ndarray
    cov_u: np.ndarray
    cases: tuple[str, ...]
    log_posterior: float
    converged: bool

    @property
    def names(self) -> tuple[str, ...]:
        """The parameters' names, in order."""
        return tuple(p.name for p in self.params)

    @property
    def mode(self) -> dict[str, float]:
        """The posterior mode, each parameter in its own units."""
        return {p.name: float(p.from_u(u)) for p, u in zip(self.params, self.mode_u,
                                                            strict=True)}

    @property
    def sd_log(self) -> dict[str, float]:
        """Posterior sd in the unconstrained coordinate (log units for positive inputs)."""
        return {p.name: float(np.sqrt(self.cov_u[i, i])) for i, p in enumerate(self.params)}

    def interval(self, name: str, coverage: float = 0.9) -> tuple[float, float]:
        """The posterior's central interval of one parameter, in its own units."""
        i = self.names.index(name)
        z = norm.ppf(0.5 + coverage / 2)
        s = float(np.sqrt(self.cov_u[i, i]))
        p = self.params[i]
        return float(p.from_u(self.mode_u[i] - z * s)), float(p.from_u(self.mode_u[i] + z * s))

    def shrinkage(self) -> dict[str, float]:
        """Posterior sd over prior sd, per parameter: near 1 means the data say little."""
        return {p.name: float(np.sqrt(self.cov_u[i, i]) / p.prior_sd)
                for i, p in enumerate(self.params)}

    def sample(self, n: int, seed: int = 0) -> dict[str, np.ndarray]:
        """``n`` quasi-random draws of the posterior (scrambled Sobol normals)."""
        if n < 1:
            raise ValueError(f"n={n}: must be >= 1")
        engine = qmc.MultivariateNormalQMC(mean=self.mode_u, cov=self.cov_u, seed=seed)
        u = engine.random(n)
        return {p.name: p.from_u(u[:, i]) for i, p in enumerate(self.params)}

    def from_unit(self, unit_cube: np.ndarray) -> dict[str, np.ndarray]:
        """Posterior draws from points of the unit cube, one column per parameter."""
        z = norm.ppf(np.clip(unit_cube, 1e-12, 1 - 1e-12))
        chol = np.linalg.cholesky(self.cov_u + 1e-12 * np.eye(len(self.params)))
        u = self.mode_u[None, :] + z @ chol.T
        return {p.name: p.from_u(u[:, i]) for i, p in enumerate(self.params)}
