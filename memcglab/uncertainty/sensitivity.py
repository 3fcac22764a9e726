"""What drives a priced quantity: Sobol indices, one-at-a-time swings, break-even values.

:func:`sobol` samples a :class:`Space` afresh; :func:`design_sobol` takes the points a
result was already priced at (a unit-cube design and a function of it), so its indices
explain the band that result printed, and :func:`crossing` reads where a curve of medians
meets a target.

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

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from memcglab.uncertainty.priors import Prior
from memcglab.uncertainty.space import SEED, Draws, Space

__all__ = ["QuantityFn", "at_fixed", "break_even", "crossing", "design_sobol", "sobol",
           "top_driver", "tornado"]

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


def _given(y_at: Callable[[np.ndarray], np.ndarray], unit: np.ndarray) -> np.ndarray:
    y = np.asarray(y_at(unit), dtype=float)
    if y.shape != (unit.shape[0],):
        raise ValueError(f"y_at returned shape {y.shape} for {unit.shape[0]} points; it must "
                         "return one value per point (a 1-D array)")
    return y


def design_sobol(y_at: Callable[[np.ndarray], np.ndarray], design: np.ndarray,
                 columns: Sequence[str], seed: int = 0) -> tuple[pd.Series, pd.Series]:
    """First-order and total Sobol indices of each input of ``design``: the ``n``
    unit-cube points a result was priced at (n a power of 2), ``y_at`` the quantity at
    any such points, ``columns`` the input each coordinate drives (coordinates that
    share a name are one input, resampled together).

    ``design`` is the estimators' ``A``; ``B`` is a second scrambled Sobol design of the
    same size, and ``A_B^i`` is ``A`` with input ``i``'s coordinates taken from ``B``.
    Their values go to ``scipy.stats.sobol_indices`` as given outputs (its ``func``
    dict): Saltelli 2010 for the first order, Jansen 1999 for the total. ``n (k + 2)``
    evaluations for ``k`` inputs, the first ``n`` the printed result's own. A constant
    quantity has NaN indices.

    >>> a = stats.qmc.Sobol(3, rng=np.random.default_rng(1)).random(256)
    >>> first, total = design_sobol(lambda u: 5 * u[:, 0] * u[:, 2] + 0.1 * u[:, 1], a,
    ...                             ["x", "y", "x"])
    >>> list(total.index), top_driver(total), bool(total["y"] < 0.01)
    (['x', 'y'], ('x', 1.0), True)
    """
    a = np.asarray(design, dtype=float)
    if a.ndim != 2 or a.shape[1] != len(columns):
        raise ValueError(f"design has shape {a.shape}; need (points, {len(columns)}), one "
                         "column per coordinate")
    n, dims = a.shape
    if n < 2 or n & (n - 1):
        raise ValueError(f"design has {n} points: the Sobol estimators need a power of 2")
    names = list(dict.fromkeys(columns))
    # a second design independent of the first, the same for every call with this seed
    b = stats.qmc.Sobol(dims, scramble=True, rng=np.random.default_rng([seed, 2])).random(n)
    f_a, f_b = _given(y_at, a), _given(y_at, b)
    f_ab = np.empty((len(names), 1, n))
    for i, name in enumerate(names):
        cols = [k for k, c in enumerate(columns) if c == name]
        mixed = a.copy()
        mixed[:, cols] = b[:, cols]
        f_ab[i, 0] = _given(y_at, mixed)
    if np.ptp(np.concatenate([f_a, f_b])) == 0.0:
        nan = pd.Series(np.nan, index=names)
        return nan, nan.copy()
    res = stats.sobol_indices(func={"f_A": f_a[None, :], "f_B": f_b[None, :], "f_AB": f_ab},
                              n=n)
    first = np.asarray(res.first_order, dtype=float).reshape(-1)
    total = np.asarray(res.total_order, dtype=float).reshape(-1)
    return pd.Series(first, index=names), pd.Series(total, index=names)


def top_driver(total: pd.Series) -> tuple[str, float] | None:
    """The input with the largest total index and that index, clipped to [0, 1] (Jansen's
    estimator is never negative, but its noise may pass 1); None when none is finite.

    >>> top_driver(pd.Series({"a": 0.2, "b": 1.04})), top_driver(pd.Series({"a": np.nan}))
    (('b', 1.0), None)
    """
    finite = total[np.isfinite(total.to_numpy(dtype=float))]
    if finite.empty:
        return None
    name = str(finite.idxmax())
    return name, float(min(1.0, max(0.0, finite[name])))


def crossing(xs: Sequence[float], ys: Sequence[float], target: float,
             near: float) -> float | None:
    """Where the curve ``(xs, ys)`` meets ``target`` (linear between its points), the
    crossing nearest ``near``; None when it never does.

    >>> crossing([0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 0.0, 2.0], 1.0, near=2.4)
    2.5
    >>> crossing([0.0, 1.0], [0.0, 2.0], 5.0, near=0.0) is None
    True
    """
    x, g = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float) - target
    roots = [float(v) for v, d in zip(x, g, strict=True) if d == 0.0]
    for i in np.flatnonzero(g[:-1] * g[1:] < 0):
        roots.append(float(x[i] + (x[i + 1] - x[i]) * g[i] / (g[i] - g[i + 1])))
    return min(roots, key=lambda r: abs(r - near)) if roots else None
