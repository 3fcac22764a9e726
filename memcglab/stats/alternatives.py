"""Intervals per modelling alternative: what a pooled interval is made of.

A study's interval pools its declared modelling alternatives (where pages are released,
how many CPUs a flow keeps busy) as if each option were equally likely. The rules
(``verdict_rules_addendum_2026-12-01.md``) judge a miss, and a prediction, also under
each option: :func:`option_intervals` gives, for every option of every varying
alternative, the central interval of the draws that took it. It re-creates the sample
:func:`memcglab.uncertainty.summarise` drew (same space, size, method and seed), so no
quantity is evaluated again.

>>> import numpy as np
>>> from memcglab.uncertainty import Prior, Space, summarise
>>> s = Space([Prior("x", "cycles", 0.0, 0.5, 1.0, "uniform", "example")],
...           {"arm": ["low", "high"]})
>>> r = summarise(lambda d: d["x"] + 10 * (d["arm"] == "high"), s, n=256, sobol_n=64)
>>> {k: tuple(round(v, 1) for v in iv) for k, iv in option_intervals(r).items()}
{'arm=low': (0.1, 0.9), 'arm=high': (10.1, 10.9)}
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memcglab.uncertainty import SEED

__all__ = ["option_intervals"]


def option_intervals(result: Any, seed: int = 0, method: str = "sobol",
                     min_draws: int = 32, only: tuple[str, ...] | None = None
                     ) -> dict[str, tuple[float, float]]:
    """``"name=option" -> (low, high)`` for each option of each varying alternative of
    ``result.space`` (the seed factor aside; ``only`` restricts the names) that at
    least ``min_draws`` of ``result``'s draws took; intervals at ``result.coverage``.

    ``seed`` and ``method`` must be those ``summarise`` drew with (its defaults).
    """
    space, y = result.space, np.asarray(result.samples, dtype=float)
    draws = space.sample(int(result.n), method=method, seed=seed)
    if draws.n != y.size:
        raise ValueError(f"result has {y.size} draws, its space re-sampled {draws.n}: pass "
                         "the seed and method summarise used")
    q = ((1 - result.coverage) / 2, (1 + result.coverage) / 2)
    out: dict[str, tuple[float, float]] = {}
    for alt in space.alternatives:
        if alt.name == SEED or alt.name not in space.varying \
                or (only is not None and alt.name not in only):
            continue
        idx = draws.index[alt.name]
        for j, option in enumerate(alt.options):
            sel = y[idx == j]
            if sel.size >= min_draws:
                lo, hi = np.quantile(sel, q)
                out[f"{alt.name}={option}"] = (float(lo), float(hi))
    return out
