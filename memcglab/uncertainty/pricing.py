"""Vectorised pricing: event counts once per trace, cycles for thousands of parameter points.

The cost model is linear (:mod:`memcglab.cost`): cycles per operation are the units of
each hardware cost per operation (:func:`memcglab.cost.coefficients`) dotted with the
costs. So the engine counts events once per trace (per seed and modelling
alternative), :meth:`CoefficientTable.from_events` turns each count into its
coefficient vector, and :meth:`CoefficientTable.cycles` prices ``N`` sampled points
as one row-wise product ``C[row] . P`` (``N x 8`` by ``N x 8``), with no Python loop
over the points.

>>> from memcglab.events import ChargeEvents
>>> from memcglab.uncertainty.priors import Prior
>>> from memcglab.uncertainty.space import Space
>>> evs = {}
>>> for seed, hits in ((0, 10), (1, 5)):
...     ev = ChargeEvents.zeros(ncpus=1, nmemcgs=1)
...     ev.per_cpu["charges"][0], ev.per_cpu["stock_hits"][0] = 10, hits
...     evs[seed] = ev
>>> table = CoefficientTable.from_events(evs, factors=("seed",))
>>> space = Space([Prior("percpu_rmw", "cycles", 2.0, 5.0, 8.0, "uniform", "example")],
...               seeds=[0, 1])
>>> d = space.at({"seed": [0, 1], "percpu_rmw": [5.0, 8.0]}, n=2)
>>> table.cycles(d).tolist()  # seed 0: call + lock + line + rmw; seed 1: half the hits
[44.0, 43.0]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab.cost import CostParams, coefficients
from memcglab.events import ChargeEvents
from memcglab.uncertainty.space import Draws

__all__ = ["CoefficientTable", "price"]


def price(coefs: np.ndarray, rows: np.ndarray, params: np.ndarray) -> np.ndarray:
    """Row-wise ``coefs[rows[i]] . params[i]``: one priced value per point (vectorised).

    ``coefs`` is ``(K, P)`` (a coefficient vector per trace), ``rows`` ``(N,)`` indices
    into it, ``params`` ``(N, P)`` the cost parameters of each point.

    >>> price(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([0, 1]), np.array([[3.0, 4.0]] * 2))
    array([3., 8.])
    """
    coefs, params = np.asarray(coefs, dtype=float), np.asarray(params, dtype=float)
    rows = np.asarray(rows, dtype=np.intp)
    if coefs.ndim != 2 or params.ndim != 2 or params.shape[1] != coefs.shape[1]:
        raise ValueError(f"coefs {coefs.shape} and params {params.shape}: need (K, P) and "
                         "(N, P) with the same P")
    if rows.shape != (params.shape[0],):
        raise ValueError(f"rows {rows.shape}: need one row index per point ({params.shape[0]})")
    return np.einsum("np,np->n", coefs[rows], params)


@dataclass(frozen=True)
class CoefficientTable:
    """Coefficient vectors (units of each cost parameter per op) per trace key.

    ``factors`` names the discrete inputs of a :class:`~memcglab.uncertainty.space.Space`
    that pick a trace (``("seed", "cpus_per_flow")``); ``keys[i]`` holds their values
    for row ``i`` of ``matrix`` (``K x len(params)``).
    """

    factors: tuple[str, ...]
    keys: tuple[tuple[Hashable, ...], ...]
    matrix: np.ndarray
    params: tuple[str, ...] = CostParams.names()

    def __post_init__(self) -> None:
        m = np.asarray(self.matrix, dtype=float)
        if m.shape != (len(self.keys), len(self.params)):
            raise ValueError(f"matrix {m.shape}: need ({len(self.keys)} keys, "
                             f"{len(self.params)} params)")
        for k in self.keys:
            if len(k) != len(self.factors):
                raise ValueError(f"key {k!r}: need one value per factor {self.factors}")
        if len(set(self.keys)) != len(self.keys):
            raise ValueError("keys repeat; each trace key must appear once")
        object.__setattr__(self, "matrix", m)

    @classmethod
    def from_events(cls, events: Mapping[Hashable, ChargeEvents | Mapping[str, float]],
                    factors: Sequence[str] = ("seed",), lines_per_scan: float | None = None,
                    slots: int | Mapping[Hashable, int] = 7,
                    per: str = "charges") -> CoefficientTable:
        """From event counts per key (a tuple of factor values, or a bare value for one
        factor) through :func:`memcglab.cost.coefficients`; ``slots`` may vary by key."""
        factors = tuple(factors)
        keys, rows = [], []
        for key, ev in events.items():
            s = slots[key] if isinstance(slots, Mapping) else slots
            keys.append(key if isinstance(key, tuple) else (key,))
            rows.append(coefficients(ev, lines_per_scan=lines_per_scan, slots=s, per=per)
                        .reindex(list(CostParams.names())).to_numpy())
        return cls(factors, tuple(keys), np.array(rows).reshape(len(keys), -1))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, factors: Sequence[str]) -> CoefficientTable:
        """From a frame with one column per factor and one per cost parameter."""
        factors = tuple(factors)
        names = CostParams.names()
        missing = [c for c in (*factors, *names) if c not in frame.columns]
        if missing:
            raise ValueError(f"frame lacks columns {missing}; need {factors} and {names}")
        keys = tuple(tuple(r) for r in frame[list(factors)].itertuples(index=False))
        return cls(factors, keys, frame[list(names)].to_numpy(float))

    def frame(self) -> pd.DataFrame:
        """The table as a frame: factor columns, then one column per parameter."""
        out = pd.DataFrame(list(self.keys), columns=list(self.factors))
        return pd.concat([out, pd.DataFrame(self.matrix, columns=list(self.params))], axis=1)

    def rows(self, draws: Draws) -> np.ndarray:
        """The table row of each point, from the points' factor values (vectorised)."""
        missing = [f for f in self.factors if f not in draws.index]
        if missing:
            raise ValueError(f"draws lack discrete inputs {missing}; the table is keyed by "
                             f"{self.factors}")
        radix = [len(draws.options[f]) for f in self.factors]
        lookup = np.full(int(np.prod(radix)), -1, dtype=np.intp)
        for i, key in enumerate(self.keys):
            code = 0
            for f, v, r in zip(self.factors, key, radix, strict=True):
                if v in draws.options[f]:
                    code = code * r + draws.options[f].index(v)
                else:
                    code = -1
                    break
            if code >= 0:
                lookup[code] = i
        code = np.zeros(draws.n, dtype=np.intp)
        for f, r in zip(self.factors, radix, strict=True):
            code = code * r + draws.index[f]
        out = lookup[code]
        if np.any(out < 0):
            j = int(np.flatnonzero(out < 0)[0])
            key = tuple(draws.options[f][draws.index[f][j]] for f in self.factors)
            raise KeyError(f"no coefficients for {dict(zip(self.factors, key, strict=True))}; "
                           "count events for every combination the space can draw")
        return out

    def cycles(self, draws: Draws, fixed: CostParams | None = None) -> np.ndarray:
        """Cycles per op at every point: cost parameters from ``draws`` where the space
        has a prior of that name, else from ``fixed`` (default :class:`CostParams`)."""
        fixed = fixed or CostParams()
        params = np.empty((draws.n, len(self.params)))
        for j, name in enumerate(self.params):
            params[:, j] = draws[name] if name in draws and name not in draws.index \
                else getattr(fixed, name)
        return price(self.matrix, self.rows(draws), params)
