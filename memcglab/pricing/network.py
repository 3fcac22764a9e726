"""A benchmark's closed loop as a queueing network: CPU time, private lines, shared lines.

Each benchmark instance (a netperf pair, an lmbench pair, a hackbench group, a madvise
job) is one customer of a closed network that runs operations back to back. Per
operation it spends

* ``cpu`` seconds on its busiest CPU (a delay station: instances do not queue for each
  other's CPUs; SMT pairing and time sharing enter through
  :func:`memcglab.queueing.cpu_slowdown`, as the caller prices ``cpu``);
* ``private`` seconds moving cache lines that only its own CPUs write (a delay);
* at every *shared* line (a page_counter usage line that several instances' walks
  write) a visit whose service is the line's transfers per operation times its hold
  time per transfer: an FCFS queue, since a line is owned by one CPU at a time.

Contention is modelled once, as the waiting of that queue: there is no extra cost per
sharer on top of it (issue 17). :func:`closed_network` runs exact MVA
(:func:`memcglab.queueing.mva_at`) at the instance count for every parameter point and
returns the throughput and each station's residence per operation, which is what a
``perf`` profile attributes to the function spinning on the line.

>>> r = closed_network(4, cpu=[1e-6], private=[0.0], lines=[[0.5e-6]], names=("root",))
>>> round(float(r.ops_per_s[0])), r.stations, r.bottleneck_names()
(1809524, ('cpu', 'private lines', 'root'), ['root'])
>>> float(closed_network(1, [1e-6], [0.0], [[0.5e-6]], ("root",)).ops_per_s[0])
666666.6666666666
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from memcglab.queueing import mva_at

__all__ = ["NetworkResult", "closed_network", "MAX_INSTANCES"]

#: the most customers the exact recursion runs (its work grows with the population)
MAX_INSTANCES = 16384


@dataclass(frozen=True)
class NetworkResult:
    """Per parameter point (B): ops/s; per point and station (B, K): residence, utilisation.

    ``residence`` is seconds per operation at each station (waiting included);
    ``utilisation`` of a delay station is one instance's busy fraction there, of a
    shared line the fraction of time the line is being transferred.
    """

    stations: tuple[str, ...]
    ops_per_s: np.ndarray
    residence: np.ndarray
    utilisation: np.ndarray

    @property
    def bottleneck(self) -> np.ndarray:
        """Index of the most utilised station per point."""
        return self.utilisation.argmax(axis=-1)

    def bottleneck_names(self) -> list[str]:
        """The most utilised station's name, per point."""
        return [self.stations[k] for k in self.bottleneck]


def closed_network(instances: int, cpu: ArrayLike, private: ArrayLike, lines: ArrayLike,
                   names: Sequence[str]) -> NetworkResult:
    """Exact MVA of ``instances`` customers: ``cpu`` and ``private`` (B,) delay seconds per
    operation, ``lines`` (B, L) shared-line service seconds per operation named ``names``."""
    if isinstance(instances, bool) or not 1 <= int(instances) <= MAX_INSTANCES:
        raise ValueError(f"instances={instances!r}: must be an integer from 1 to "
                         f"{MAX_INSTANCES}")
    c = np.atleast_1d(np.asarray(cpu, dtype=float))
    p = np.broadcast_to(np.asarray(private, dtype=float), c.shape)
    s = np.asarray(lines, dtype=float).reshape(-1, len(names)) if len(names) else \
        np.zeros((c.size, 0))
    s = np.broadcast_to(s, (c.size, len(names)))
    demands = np.concatenate([c[:, None], p[:, None], s], axis=1)
    if not np.all(np.isfinite(demands) & (demands >= 0)):
        raise ValueError("closed_network: demands must be finite and >= 0")
    delay = np.array([True, True] + [False] * len(names))
    res = mva_at(demands, 0.0, np.full(c.size, int(instances), dtype=np.int64), delay=delay)
    x = res.throughput
    per_instance = x / instances
    util = np.where(delay, per_instance[:, None], x[:, None]) * demands
    return NetworkResult(stations=("cpu", "private lines", *names), ops_per_s=x,
                         residence=res.residence, utilisation=util)
