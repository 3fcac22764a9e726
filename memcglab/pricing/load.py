"""The pricing core's one load type: what a kernel's charge path counted per unit of work.

A :class:`FlowLoad` is one kernel (one stock model) on one workload, at one or more flow
counts P (netperf clients, instances): per unit of work (a message, a transaction, a
fault), the transfers of each shared page_counter usage line and of the flows' private
lines (:func:`memcglab.queueing.line_counts`), and the charge path's own CPU cycles
with the line transfers left out (the network's line stations price those). Where the
counts also say which transfers cross sockets (``memcglab predict``'s replay counts the
chance that a line's next writer is on another socket, line by line), the load carries
that share per line (``cross``) and for the private lines (``private_cross``); else the
pricing's one ``cross_socket_fraction`` input holds for every line.

The cycles are the cost model's price of the counted events: fixed, when a caller
prices them once (study 1 at the profile's typical costs), or one row per parameter
point, when the costs are drawn (:func:`charge_cycles` from the cost model's units per
unit of work, :func:`memcglab.pricing.per_unit_coefficients`).

>>> from memcglab.queueing import LineCounts
>>> a = LineCounts(names=("usage:0",), shared=np.array([0.5]), private=0.1,
...                messages=1000)
>>> b = LineCounts(names=("usage:0", "usage:1"), shared=np.array([0.6, 0.2]),
...                private=0.2, messages=1000)
>>> load = FlowLoad.from_counts([6, 36], [a, b], memcg_cycles=[120.0, 180.0])
>>> load.shared_names, load.shared.tolist(), load.private.tolist()
(('usage:0', 'usage:1'), [[0.5, 0.0], [0.6, 0.2]], [0.1, 0.2])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from memcglab.cost import CostParams
from memcglab.queueing.lines import LineCounts

__all__ = ["FlowLoad", "charge_cycles"]

_C2C_COL = CostParams.names().index("c2c_transfer")


@dataclass(frozen=True, eq=False)
class FlowLoad:
    """One kernel's counted charge-path load per unit of work at each flow count (module doc).

    ``flows`` is the P flow counts (an integer: one); ``shared`` is ``(P, L)``, one column
    per line of ``shared_names``; ``private`` ``(P,)``; ``memcg_cycles`` ``(P,)``, or
    ``(B, P)`` with one row per parameter point. A scalar ``private`` or
    ``memcg_cycles``, or ``shared`` given as the L values alone, is the same at every
    flow count. ``cross`` (like ``shared``) and ``private_cross`` (like ``private``) are the
    shares of those transfers that cross sockets, or None (module doc).
    """

    flows: Sequence[int] | int
    memcg_cycles: ArrayLike
    shared_names: tuple[str, ...] = ()
    shared: ArrayLike = ()
    private: ArrayLike = 0.0
    cross: ArrayLike | None = None
    private_cross: ArrayLike | None = None

    def __post_init__(self) -> None:
        raw = self.flows if isinstance(self.flows, Sequence | np.ndarray) else [self.flows]
        flows = tuple(raw)
        if not flows or not all(isinstance(f, int | np.integer) and not isinstance(f, bool)
                                and f >= 1 for f in flows):
            raise ValueError(f"FlowLoad flows={list(flows)!r}: must be integers >= 1 (one "
                             "per flow count)")
        p, names = len(flows), tuple(self.shared_names)
        shared = _per_line(self.shared, p, names)
        private = _per_count(self.private, p)
        cycles = np.asarray(self.memcg_cycles, dtype=float)
        cycles = np.full(p, float(cycles)) if cycles.ndim == 0 else cycles
        per_line = f"({p}, {len(names)}): per flow count, per shared line {list(names)}"
        checks = [("shared", shared, per_line, np.inf),
                  ("private", private, f"({p},): per flow count", np.inf),
                  ("memcg_cycles", cycles, f"({p},) or (B, {p}): per flow count", np.inf)]
        cross = private_cross = None
        if self.cross is not None:
            cross = _per_line(self.cross, p, names)
            checks.append(("cross", cross, per_line, 1.0))
        if self.private_cross is not None:
            private_cross = _per_count(self.private_cross, p)
            checks.append(("private_cross", private_cross, f"({p},): per flow count", 1.0))
        for name, v, want, hi in checks:
            ok = (v.shape == (p, len(names)) if name in ("shared", "cross") else
                  v.shape == (p,) or (name == "memcg_cycles" and v.ndim == 2
                                      and v.shape[1] == p))
            if not ok or not np.all(np.isfinite(v) & (v >= 0) & (v <= hi)):
                raise ValueError(f"FlowLoad {name} has shape {v.shape}: must be {want}, "
                                 f"of finite numbers >= 0{'' if hi == np.inf else ' and <= 1'}")
        object.__setattr__(self, "flows", tuple(int(f) for f in flows))
        object.__setattr__(self, "shared_names", names)
        object.__setattr__(self, "shared", shared)
        object.__setattr__(self, "private", np.array(private))
        object.__setattr__(self, "memcg_cycles", cycles)
        object.__setattr__(self, "cross", cross)
        object.__setattr__(self, "private_cross",
                           None if private_cross is None else np.array(private_cross))

    @classmethod
    def from_counts(cls, flows: Sequence[int], counts: Sequence[LineCounts],
                    memcg_cycles: ArrayLike) -> FlowLoad:
        """From one :class:`~memcglab.queueing.LineCounts` per flow count.

        Lines missing at some flow count (fewer ancestors shared) count 0 there.
        """
        names = tuple(dict.fromkeys(n for c in counts for n in c.names))
        shared = np.zeros((len(counts), len(names)))
        for i, c in enumerate(counts):
            for name, v in zip(c.names, c.shared, strict=True):
                shared[i, names.index(name)] = v
        return cls(flows=tuple(flows), memcg_cycles=np.asarray(memcg_cycles, dtype=float),
                   shared_names=names, shared=shared,
                   private=np.array([c.private for c in counts], dtype=float))


def _per_line(values: ArrayLike, p: int, names: tuple[str, ...]) -> np.ndarray:
    """``values`` as ``(P, L)``: the L values alone hold at every flow count."""
    v = np.asarray(values, dtype=float)
    if v.size == 0 and not names:
        return np.zeros((p, 0))
    if v.ndim == 1 and v.size == len(names):
        return np.array(np.broadcast_to(v, (p, len(names))))
    return v


def _per_count(values: ArrayLike, p: int) -> np.ndarray:
    """``values`` as ``(P,)``: a scalar holds at every flow count."""
    v = np.asarray(values, dtype=float)
    return np.broadcast_to(v, (p,)) if v.ndim == 0 else v


def charge_cycles(coef: ArrayLike, draws: Mapping[str, ArrayLike]) -> np.ndarray:
    """The charge path's CPU cycles per unit of work at each point of ``draws``: the cost
    model's units ``coef`` (:meth:`CostParams.names` order) dotted with the drawn costs.

    ``c2c_transfer``'s units are left out: the network's line stations price the
    transfers, at the hold time per transfer.

    >>> units = np.ones(len(CostParams.names()))
    >>> costs = {n: np.array([1.0, 2.0]) for n in CostParams.names()}
    >>> charge_cycles(units, costs).tolist() == [len(units) - 1.0, 2 * (len(units) - 1.0)]
    True
    """
    c = np.array(coef, dtype=float)
    if c.shape != (len(CostParams.names()),) or not np.all(np.isfinite(c)):
        raise ValueError(f"coef has shape {c.shape}: must be {len(CostParams.names())} finite "
                         "numbers in CostParams.names() order")
    missing = [n for n in CostParams.names() if n not in draws]
    if missing:
        raise ValueError(f"draws lack the cost parameters {', '.join(missing)}")
    c[_C2C_COL] = 0.0
    cost = np.column_stack([np.atleast_1d(np.asarray(draws[n], dtype=float))
                            for n in CostParams.names()])
    return cost @ c
