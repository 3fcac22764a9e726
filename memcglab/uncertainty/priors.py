"""Priors of model inputs: a low, typical and high value, a shape, a unit and a source.

A :class:`Prior` is the one vocabulary the lab uses for an uncertain input, whether
it is a hardware cost read from ``data/hardware/`` (a vendor manual, Agner Fog's
tables, a published core-to-core latency), a value measured on this machine by
``memcglab probe`` (a narrow prior around the median), or a modelling choice a study
declares. Sampling goes through :meth:`Prior.ppf`, so quasi-random points in the unit
cube (``scipy.stats.qmc``) map to parameter values without loops.

Shapes, and what ``low``, ``typical`` and ``high`` mean for each:

``triangular``
    support ``[low, high]``, mode ``typical``;
``pert``
    beta-PERT on ``[low, high]`` with mode ``typical`` (weights the mode 4:1, as
    in PERT estimation): a smoother triangular;
``uniform``
    support ``[low, high]``; ``typical`` is the value used when the input is held
    fixed (break-even searches, point estimates);
``loguniform``
    support ``[low, high]``, uniform in the logarithm (an order-of-magnitude
    uncertainty); ``low`` must be > 0;
``point``
    a constant: ``low == typical == high``.

>>> p = Prior("c2c_transfer", "cycles", 50.0, 150.0, 400.0, "triangular", "example")
>>> float(p.ppf(0.0)), float(p.ppf(1.0))
(50.0, 400.0)
>>> Prior("x", "cycles", 5.0, 1.0, 9.0, "uniform", "s")
Traceback (most recent call last):
...
ValueError: prior x: low=5.0, typical=1.0, high=9.0: need low <= typical <= high
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

__all__ = ["SHAPES", "Prior"]

#: the distribution shapes a prior may have
SHAPES: tuple[str, ...] = ("triangular", "pert", "uniform", "loguniform", "point")


@dataclass(frozen=True)
class Prior:
    """One uncertain input: its range, its most likely value, its shape and its source."""

    name: str
    unit: str
    low: float
    typical: float
    high: float
    shape: str
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        for field in ("low", "typical", "high"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ValueError(f"prior {self.name}: {field}={v!r}: must be a finite number")
        if self.shape not in SHAPES:
            raise ValueError(f"prior {self.name}: shape={self.shape!r}: must be one of "
                             f"{', '.join(SHAPES)}")
        if not self.low <= self.typical <= self.high:
            raise ValueError(f"prior {self.name}: low={self.low}, typical={self.typical}, "
                             f"high={self.high}: need low <= typical <= high")
        if self.shape == "point" and self.low != self.high:
            raise ValueError(f"prior {self.name}: shape 'point' needs low == typical == high")
        if self.shape != "point" and self.low == self.high:
            raise ValueError(f"prior {self.name}: low == high; use shape 'point' for a constant")
        if self.shape == "loguniform" and self.low <= 0:
            raise ValueError(f"prior {self.name}: low={self.low}: loguniform needs low > 0")
        if not self.unit:
            raise ValueError(f"prior {self.name}: unit is empty; name the unit (cycles, ns, ...)")
        if not self.source:
            raise ValueError(f"prior {self.name}: source is empty; cite where the values come from")

    @property
    def width(self) -> float:
        """``high - low``: zero for a point prior."""
        return self.high - self.low

    def dist(self):  # -> scipy.stats frozen distribution, or None for a point
        """The prior as a frozen ``scipy.stats`` distribution (None for ``point``).

        Frozen once per distinct (shape, low, typical, high): freezing is most of the
        time of a propagation that draws from the same priors again and again.
        """
        return _frozen(self.shape, float(self.low), float(self.typical), float(self.high))

    def ppf(self, u: np.ndarray | float) -> np.ndarray:
        """Values at quantiles ``u`` in [0, 1] (vectorised): how samples are drawn."""
        u = np.asarray(u, dtype=float)
        if np.any((u < 0) | (u > 1)):
            raise ValueError(f"prior {self.name}: quantiles must lie in [0, 1]")
        d = self.dist()
        if d is None:
            return np.full(u.shape, float(self.typical))
        return np.asarray(d.ppf(u), dtype=float)

    def interval(self, coverage: float = 0.9) -> tuple[float, float]:
        """The central ``coverage`` interval of the prior."""
        if not 0 < coverage < 1:
            raise ValueError(f"coverage={coverage}: must lie strictly between 0 and 1")
        lo, hi = self.ppf(np.array([(1 - coverage) / 2, (1 + coverage) / 2]))
        return float(lo), float(hi)

    def narrowed(self, value: float, spread: float, source: str) -> Prior:
        """A narrow prior around a measured ``value`` (median +- ``spread``), e.g. the probe's."""
        spread = abs(float(spread))
        if spread == 0:
            return Prior(self.name, self.unit, value, value, value, "point", source)
        return Prior(self.name, self.unit, max(value - spread, 0.0) if self.low >= 0 else
                     value - spread, value, value + spread, "triangular", source)


@lru_cache(maxsize=1024)
def _frozen(shape: str, lo: float, mode: float, hi: float):
    if shape == "point":
        return None
    if shape == "uniform":
        return stats.uniform(loc=lo, scale=hi - lo)
    if shape == "loguniform":
        return stats.loguniform(lo, hi)
    if shape == "triangular":
        return stats.triang((mode - lo) / (hi - lo), loc=lo, scale=hi - lo)
    # beta-PERT with the classic weight 4 on the mode
    a = 1.0 + 4.0 * (mode - lo) / (hi - lo)
    b = 1.0 + 4.0 * (hi - mode) / (hi - lo)
    return stats.beta(a, b, loc=lo, scale=hi - lo)
