"""What the studies hand :func:`memcglab.stats.judge` besides an interval.

* :func:`would_take`: for a miss, the value of each named input at which the model (its
  other inputs typical, seeds averaged) reaches the measured value itself, searched past
  the prior's range up to a physical bound, each marked infeasible where the study's
  own check says the model's assumptions fail there;
* :func:`derived_band`: a quantity derived from measured numbers (a gain, a normalised
  curve), widened by interval arithmetic over its inputs' noise.

>>> from memcglab.uncertainty import Prior, Space
>>> s = Space([Prior("c2c", "cycles", 45.0, 150.0, 350.0, "triangular", "example")])
>>> [t.text() for t in would_take(lambda d: d["c2c"] / 100.0, s, ["c2c"], 17.7)]
['c2c = 1770 cycles (outside its prior 45-350)']
>>> lo, hi = derived_band(lambda w, wo: 100 * (w / wo - 1), {"w": (110.0, 5.5),
...                                                         "wo": (100.0, 5.0)})
>>> round(lo, 2), round(hi, 2)
(-0.48, 21.58)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy import optimize

from memcglab.stats import Take
from memcglab.uncertainty import Prior, QuantityFn, Space, at_fixed

__all__ = ["derived_band", "search_range", "would_take"]


def search_range(p: Prior, reach: float = 100.0) -> tuple[float, float]:
    """Where :func:`would_take` looks: from the physical floor (0, or the prior's low over
    ``reach`` for a quantity that must stay positive; a fraction stops at 1) to ``reach``
    times the prior's high."""
    if p.unit.startswith("fraction"):
        return 0.0, 1.0
    lo = float(p.low) / reach if p.low > 0 else 0.0
    return lo, float(p.high) * reach if p.high > 0 else reach


def would_take(fn: QuantityFn, space: Space, names: Sequence[str], target: float, *,
               infeasible: Callable[[str, float], str] | None = None, reach: float = 100.0,
               grid: int = 129) -> list[Take]:
    """The value of each prior in ``names`` at which ``fn`` equals ``target`` (others
    typical), the crossing nearest the prior's typical value; ``infeasible(name, value)``
    returns why the model's assumptions fail at that value ("" when they hold)."""
    out = []
    for name in names:
        p = space[name]
        if not isinstance(p, Prior):
            raise ValueError(f"would_take: input {name!r} is discrete; only a prior has a value "
                             "to reach")
        lo, hi = search_range(p, reach)
        ends = np.linspace(lo, min(hi, max(p.high, lo) * 2.0), grid // 2)
        far = np.geomspace(max(ends[-1], 1e-9), hi, grid - grid // 2) if hi > ends[-1] else []
        xs = np.unique(np.concatenate([ends, far]))
        g = at_fixed(fn, space, {name: xs}) - target
        roots = [float(x) for x, v in zip(xs, g, strict=True) if v == 0.0]
        for i in np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0):
            roots.append(float(optimize.brentq(
                lambda x, n=name: float(at_fixed(fn, space, {n: np.array([x])})[0] - target),
                xs[i], xs[i + 1], xtol=1e-4 * max(1e-9, abs(xs[i + 1])))))
        value = min(roots, key=lambda r: abs(r - p.typical)) if roots else None
        why = infeasible(name, value) if infeasible is not None and value is not None else ""
        out.append(Take(name, p.unit, value, (float(p.low), float(p.high)), why, (lo, hi)))
    return out


def derived_band(fn: Callable[..., float], inputs: Mapping[str, tuple[float, float]]
                 ) -> tuple[float, float]:
    """``fn`` of measured inputs (name -> (value, noise)) at every corner of their widened
    bands: the least and the most it can be (interval arithmetic; ``fn`` monotonic in each
    input, as a ratio or a gain is)."""
    names = list(inputs)
    corners = itertools.product(*[(v - e, v + e) for v, e in inputs.values()])
    values = [float(fn(**dict(zip(names, c, strict=True)))) for c in corners]
    return min(values), max(values)
