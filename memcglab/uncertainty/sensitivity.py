"""What drives a priced quantity: Sobol indices, one-at-a-time swings, break-even values.

A quantity function takes :class:`~memcglab.uncertainty.space.Draws` (``n`` points)
and returns ``n`` values, without a loop over the points. Holding an input "fixed"
means priors at ``typical`` and alternatives at their declared defaults; the seed
factor, having no meaningful default, is averaged over its seeds (with equal weight),
so a break-even or a tornado bar is a statement about the model, not about one trace.

>>> from memcglab.uncertainty.priors import Prior
>>> s = Space([Prior("x", "cycles", 0.0, 1.0, 4.0, "uniform", "example")])
>>> break_even(lambda d: d["x"] - 3.0, s, "x")
3.0
>>> break_even(lambda d: d["x"] + 1.0, s, "x") is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from memcglab.uncertainty.priors import Prior
from memcglab.uncertainty.space import SEED, Draws, Space

__all__ = ["QuantityFn", "at_fixed", "break_even", "sobol", "tornado"]

#: a vectorised quantity: n input points -> n values
QuantityFn = Callable[[Draws], np.ndarray]


def _evaluate(fn: QuantityFn, draws: Draws) -> np.ndarray:
    y = np.asarray(fn(draws), dtype=float)
    if y.shape != (draws.n,):
        raise ValueError(f"quantity function returned shape {y.shape} for {draws.n} points; "
                         "it must return one value per point (a 1-D array)")
    return y


def at_fixed(fn: QuantityFn, space: Space, values: Mapping[str, np.ndarray | Any]) -> np.ndarray:
    """The quantity with ``values`` (name -> array of m values, or one value) set and the
    other inputs fixed (module doc): m values, each averaged over the seeds."""
    m = max([np.size(v) for v in values.values()] + [1])
    cols: dict[str, list[Any]] = {}
    for k, v in values.items():
        vals = [v] * m if np.ndim(v) == 0 else list(v)
        if len(vals) != m:
            raise ValueError(f"input {k}: {len(vals)} values; every input needs {m} or one")
        cols[k] = vals
    seeds = space.seeds if space.seeds and SEED not in values else ()
    if len(seeds) < 2:
        return _evaluate(fn, space.at(cols, n=m))
    ns = len(seeds)
    rep: dict[str, list[Any]] = {k: [x for x in v for _ in range(ns)] for k, v in cols.items()}
    rep[SEED] = list(seeds) * m
    return _evaluate(fn, space.at(rep, n=m * ns)).reshape(m, ns).mean(axis=1)


def break_even(fn: QuantityFn, space: Space, name: str, threshold: float = 0.0,
               grid: int = 65, xtol: float = 1e-9) -> float | None:
    """Where the quantity crosses ``threshold`` as prior ``name`` moves over
    ``[low, high]``, the others fixed; the crossing nearest ``typical``, or None.

    Scans ``grid`` points for a sign change, then refines with ``scipy.optimize.brentq``.
    """
    p = space[name]
    if not isinstance(p, Prior):
        raise ValueError(f"break_even: input {name!r} is discrete; only a prior has a "
                         "break-even value")
    if p.shape == "point":
        return None
    xs = np.linspace(p.low, p.high, grid)
    g = at_fixed(fn, space, {name: xs}) - threshold
    roots: list[float] = [float(x) for x, v in zip(xs, g, strict=True) if v == 0.0]
    for i in np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0):
        roots.append(float(optimize.brentq(
            lambda x: float(at_fixed(fn, space, {name: np.array([x])})[0] - threshold),
            xs[i], xs[i + 1], xtol=xtol)))
    if not roots:
        return None
    return min(roots, key=lambda r: abs(r - p.typical))


def tornado(fn: QuantityFn, space: Space) -> pd.DataFrame:
    """One-at-a-time swings: the quantity at each varying input's extremes, others fixed.

    A prior goes to ``low`` and ``high``; an alternative (and the seed) to each option,
    its smallest and largest result kept. Rows are sorted by swing, largest first.
    """
    base = float(at_fixed(fn, space, {})[0])
    rows = []
    for name in space.varying:
        x = space[name]
        if isinstance(x, Prior):
            y = at_fixed(fn, space, {name: np.array([x.low, x.high])})
            labels, unit = (f"{x.low:g}", f"{x.high:g}"), x.unit
        else:
            y = at_fixed(fn, space, {name: list(x.options)})
            lo, hi = int(np.argmin(y)), int(np.argmax(y))
            y, labels, unit = y[[lo, hi]], (str(x.options[lo]), str(x.options[hi])), "option"
        rows.append({"input": name, "unit": unit, "at_low": labels[0], "at_high": labels[1],
                     "y_low": float(y[0]), "y_high": float(y[1]), "y_typical": base,
                     "swing": float(abs(y[1] - y[0]))})
    cols = ["input", "unit", "at_low", "at_high", "y_low", "y_high", "y_typical", "swing"]
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)


def sobol(fn: QuantityFn, space: Space, n: int = 1024, seed: int = 0
          ) -> tuple[pd.Series, pd.Series]:
    """First-order and total Sobol indices of every varying input
    (``scipy.stats.sobol_indices``, Saltelli 2010; ``n (d + 2)`` evaluations).

    Every input is sampled on its unit coordinate (a uniform dist for SciPy) and mapped
    by :meth:`Space.draws`, so alternatives and seeds are factors like any prior.
    Indices of a constant quantity are undefined and come back as NaN.
    """
    names = space.varying
    if not names:
        nan = pd.Series(dtype=float)
        return nan, nan
    if n < 2 or n & (n - 1):
        raise ValueError(f"n={n}: Sobol indices need a power of 2 (e.g. 1024)")

    spread = [0.0]

    def func(x: np.ndarray) -> np.ndarray:
        y = _evaluate(fn, space.draws(np.clip(x.T, 0.0, 1.0)))
        spread[0] = max(spread[0], float(np.ptp(y)) if y.size else 0.0)
        return y[None, :]

    if len(names) == 1:  # one input explains all the variance (SciPy fails on d = 1)
        func(stats.qmc.Sobol(1, rng=seed).random_base2(int(np.log2(n))).T)
        first = total = np.array([1.0])
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            res = stats.sobol_indices(func=func, n=n, dists=[stats.uniform()] * len(names),
                                      rng=np.random.default_rng(seed))
        first = np.asarray(res.first_order, dtype=float).reshape(-1)
        total = np.asarray(res.total_order, dtype=float).reshape(-1)
    if spread[0] == 0.0:  # SciPy reports 0 for a constant quantity; undefined, say so
        first = total = np.full(len(names), np.nan)
    return pd.Series(first, index=list(names)), pd.Series(total, index=list(names))
