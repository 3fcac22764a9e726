"""One call from a priced quantity to the numbers a claim row needs: :func:`summarise`.

:func:`summarise` samples the :class:`~memcglab.uncertainty.space.Space` quasi-randomly,
evaluates the vectorised quantity once over the sample, and reports its median and
central 90% interval (a prediction interval over priors, alternatives and seeds
jointly), the probability that a claim holds, first-order and total Sobol indices,
the driver (largest total index), the break-even value of each prior, and the
one-at-a-time swings a tornado chart draws. The interval records which sources of
uncertainty it includes (``sources``), so a verdict can refuse one that carries only
seed noise (:mod:`memcglab.stats.verdict_rules`).

>>> from memcglab.uncertainty.priors import Prior
>>> s = Space([Prior("a", "cycles", 0.0, 0.5, 1.0, "uniform", "example"),
...            Prior("b", "cycles", 0.0, 0.5, 1.0, "uniform", "example")])
>>> r = summarise(lambda d: d["a"] + 2 * d["b"] - 1.0, s, n=1024, unit="cycles")
>>> r.driver, round(r.median, 2), round(r.p_holds, 2)
('b', 0.5, 0.75)
>>> r.break_even["b"]
0.25
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memcglab.uncertainty.priors import Prior
from memcglab.uncertainty.sensitivity import QuantityFn, _evaluate, break_even, sobol, tornado
from memcglab.uncertainty.space import Space

__all__ = ["UncertainResult", "summarise", "format_break_even"]


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def format_break_even(space: Space, break_even: Mapping[str, float | None]) -> str:
    """Break-even values as a sentence fragment, e.g.
    ``"c2c_transfer = 212 cycles; atomic_rmw: none in [10, 40] cycles"`` (crossings first)."""
    parts = []
    for name, v in sorted(break_even.items(), key=lambda kv: kv[1] is None):
        p = space[name]
        assert isinstance(p, Prior)
        parts.append(f"{name} = {_fmt(v)} {p.unit}" if v is not None else
                     f"{name}: none in [{_fmt(p.low)}, {_fmt(p.high)}] {p.unit}")
    return "; ".join(parts) if parts else "no priors vary"


@dataclass(frozen=True)
class UncertainResult:
    """A priced quantity with its interval, its claim probability and what drives it."""

    median: float
    low: float
    high: float
    coverage: float
    p_holds: float
    sobol_first: pd.Series
    sobol_total: pd.Series
    driver: str
    break_even: dict[str, float | None]
    tornado: pd.DataFrame
    sources: frozenset[str]
    unit: str
    n: int
    space: Space = field(repr=False)
    samples: np.ndarray = field(repr=False)

    @property
    def interval(self) -> tuple[float, float]:
        """``(low, high)``: the central ``coverage`` prediction interval."""
        return self.low, self.high

    def crossings(self) -> dict[str, str]:
        """``name -> "name = value unit"`` for each prior whose break-even lies in its
        range, in :attr:`break_even`'s order (the priors that never cross are left out)."""
        return {k: f"{k} = {_fmt(v)} {self.space[k].unit}"
                for k, v in self.break_even.items() if v is not None}

    def as_claim_columns(self) -> dict[str, float | str]:
        """The claims table's ``low``, ``high``, ``p_holds``, ``driver`` and ``break_even``.

        The driver carries its total Sobol index; ``break_even`` is
        :func:`format_break_even`'s sentence.
        """
        drv = self.driver if not math.isfinite(self.sobol_total.get(self.driver, math.nan)) \
            else f"{self.driver} (total Sobol index {self.sobol_total[self.driver]:.2f})"
        return {"low": self.low, "high": self.high, "p_holds": self.p_holds, "driver": drv,
                "break_even": format_break_even(self.space, self.break_even)}

    def describe(self, fmt: str = "{:.3g}") -> str:
        """``median [low, high] (90%)`` with the unit, e.g. ``"+1.8 [-0.1, 4.9] % (90%)"``."""
        f = fmt.format
        return (f"{f(self.median)} [{f(self.low)}, {f(self.high)}] {self.unit} "
                f"({self.coverage:.0%})")


def summarise(quantity_fn: QuantityFn, space: Space, n: int = 1024,
              holds: Callable[[np.ndarray], np.ndarray] | None = None,
              threshold: float = 0.0, seed: int = 0, coverage: float = 0.9,
              method: str = "sobol", unit: str = "", sobol_n: int | None = None
              ) -> UncertainResult:
    """Propagate ``space`` through ``quantity_fn`` (see the module doc).

    ``holds`` maps values to booleans (the claim; default ``y > threshold``);
    ``threshold`` is where the conclusion flips, for the break-even search;
    ``sobol_n`` (default ``n``) is the base sample of the Sobol indices.
    """
    if not 0 < coverage < 1:
        raise ValueError(f"coverage={coverage}: must lie strictly between 0 and 1")
    draws = space.sample(n, method=method, seed=seed)
    y = _evaluate(quantity_fn, draws)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"quantity function returned {int((~np.isfinite(y)).sum())} "
                         "non-finite values; check the priors' ranges")
    q = np.quantile(y, [(1 - coverage) / 2, 0.5, (1 + coverage) / 2])
    ok = np.asarray(holds(y) if holds is not None else y > threshold)
    if ok.shape != y.shape or ok.dtype != bool:
        raise ValueError(f"holds returned {ok.dtype} of shape {ok.shape}; it must map the "
                         f"{y.shape[0]} values to as many booleans")
    first, total = sobol(quantity_fn, space, n=sobol_n or n, seed=seed)
    finite = total.dropna()
    driver = str(finite.idxmax()) if len(finite) else "none (the quantity does not vary)"
    be = {k: break_even(quantity_fn, space, k, threshold=threshold) for k in space.varying
          if isinstance(space[k], Prior)}
    return UncertainResult(
        median=float(q[1]), low=float(q[0]), high=float(q[2]), coverage=coverage,
        p_holds=float(ok.mean()), sobol_first=first, sobol_total=total, driver=driver,
        break_even=be, tornado=tornado(quantity_fn, space), sources=space.sources,
        unit=unit, n=n, space=space, samples=y)
