"""The package's one queueing network: a benchmark's closed loop of CPU time and lines.

Each benchmark instance (a netperf pair or flow, an lmbench pair, a hackbench group, a
madvise job) is one customer of a closed network that runs operations back to back.
Per operation it spends

* ``cpu`` seconds on its busiest CPU (a delay station: instances do not queue for each
  other's CPUs; SMT pairing and time sharing enter through
  :func:`memcglab.pricing.cpu.cpu_slowdown`, as the caller prices ``cpu``);
* ``private`` seconds moving cache lines that only its own CPUs write (a delay);
* at every *shared* line (a page_counter usage line that several instances' walks
  write) a visit whose service is the line's transfers per operation times its hold
  time per transfer: an FCFS queue, since a line is owned by one CPU at a time.

Contention is modelled once, as the waiting of that queue: there is no extra cost per
sharer on top of it (issue 17). :func:`closed_network` runs exact MVA
(:func:`memcglab.queueing.mva_at`) at each network's own instance count, for a batch of
parameter points (and, for the studies, of instance counts), and returns the
throughput and each station's residence per operation, which is what a ``perf``
profile attributes to the function spinning on the line. ``memcglab predict``
(:mod:`memcglab.scenario.model`) and the studies build it through
:func:`memcglab.pricing.chargepath.price_flows`; study 4 (one line, no charge path)
builds its own stations for it.

Product form treats each line's hold time as exponential; a transfer's hold time is
nearly constant, and an M/D/1 queue waits half as long as an M/M/1 one, so near a
line's saturation the network errs on the slow side (its bottleneck throughput,
``1 / D``, is exact either way).

>>> r = closed_network(4, cpu=[1e-6], private=[0.0], lines=[[0.5e-6]], names=("root",))
>>> round(float(r.ops_per_s[0])), r.stations, r.bottleneck_names()
(1809524, ('cpu', 'private lines', 'root'), ['root'])
>>> float(closed_network(1, [1e-6], [0.0], [[0.5e-6]], ("root",)).ops_per_s[0])
666666.6666666666
>>> both = closed_network([[1, 4]], [[1e-6, 1e-6]], 0.0, [[[0.5e-6], [0.5e-6]]], ("root",))
>>> [round(float(x)) for x in both.ops_per_s[0]], both.bottleneck_names()
([666667, 1809524], [['cpu', 'root']])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# the submodule, not the package: memcglab.queueing re-exports cpu_slowdown from here
from memcglab.queueing.mva import mva_at

__all__ = ["NetworkResult", "closed_network", "MAX_INSTANCES"]

#: the most customers the exact recursion runs (its work grows with the population)
MAX_INSTANCES = 16384


@dataclass(frozen=True)
class NetworkResult:
    """Per network of the batch (shape ``S``, e.g. ``(B,)``): ops/s in all; per network and
    station (``S + (K,)``): demand, residence, utilisation.

    ``instances`` is each network's population. ``demands`` and ``residence`` are
    seconds per operation at each station (residence with the waiting); ``utilisation``
    of a delay station is one instance's busy fraction there, of a shared line the
    fraction of time the line is being transferred.
    """

    stations: tuple[str, ...]
    instances: np.ndarray
    ops_per_s: np.ndarray
    demands: np.ndarray
    residence: np.ndarray
    utilisation: np.ndarray

    @property
    def per_instance(self) -> np.ndarray:
        """Operations per second of one instance, ``S``."""
        return self.ops_per_s / self.instances

    @property
    def bottleneck(self) -> np.ndarray:
        """Index of the most utilised station per network, ``S``."""
        return self.utilisation.argmax(axis=-1)

    def bottleneck_names(self) -> list:
        """The most utilised station's name per network: a list (B), nested for a
        batch of more axes."""
        return np.asarray(self.stations, dtype=object)[self.bottleneck].tolist()


def closed_network(instances: ArrayLike, cpu: ArrayLike, private: ArrayLike,
                   lines: ArrayLike, names: Sequence[str]) -> NetworkResult:
    """Exact MVA of ``instances`` customers: ``cpu`` and ``private`` delay seconds per
    operation, ``lines`` shared-line service seconds per operation (last axis: the lines
    ``names``).

    Every network of a batch is solved at its own population: ``instances`` is an
    integer or an integer array that broadcasts against the batch shape of ``cpu``,
    ``private`` and ``lines[..., 0]`` (e.g. ``(B, P)`` for B parameter points at P
    instance counts, with ``instances`` of shape ``(1, P)``).
    """
    n = np.asarray(instances)
    if n.dtype == bool or not np.issubdtype(n.dtype, np.integer) or n.size == 0 \
            or n.min() < 1 or n.max() > MAX_INSTANCES:
        raise ValueError(f"instances={n.tolist()!r}: must be integers from 1 to "
                         f"{MAX_INSTANCES}")
    c = np.asarray(cpu, dtype=float)
    p = np.asarray(private, dtype=float)
    s = np.asarray(lines, dtype=float)
    if s.ndim == 0 or s.shape[-1] != len(names):
        raise ValueError(f"lines has shape {s.shape}: its last axis must be one entry per "
                         f"shared line ({len(names)}: {', '.join(names) or 'none'})")
    shape = np.broadcast_shapes(c.shape, p.shape, s.shape[:-1], n.shape)
    demands = np.concatenate([np.broadcast_to(c, shape)[..., None],
                              np.broadcast_to(p, shape)[..., None],
                              np.broadcast_to(s, shape + s.shape[-1:])], axis=-1)
    if not np.all(np.isfinite(demands) & (demands >= 0)):
        raise ValueError("closed_network: demands must be finite and >= 0")
    delay = np.array([True, True] + [False] * len(names))
    pop = np.broadcast_to(n.astype(np.int64), shape)
    res = mva_at(demands, 0.0, pop, delay=delay)
    x = res.throughput
    per_instance = x / pop
    util = np.where(delay, per_instance[..., None], x[..., None]) * demands
    return NetworkResult(stations=("cpu", "private lines", *names), instances=pop,
                         ops_per_s=x, demands=demands, residence=res.residence,
                         utilisation=util)
