"""How much slower a flow's CPU time runs when many flows keep the machine's threads busy.

A benchmark's flows (netperf's sender, softirq and receiver; a hackbench group) keep
their hardware threads busy the whole run, whether computing or stalled on a line, so
the occupancy is ``flows * cpus_per_flow`` threads, fixed for a given flow count. The
scheduler fills idle cores before SMT siblings (select_idle_core() in
kernel/sched/fair.c), so siblings pair up only past ``cpus / smt`` threads; a core
running two threads delivers ``1 + smt_gain`` times one thread's work. Past the
machine's threads, flows time-share and the demand grows with ``threads / cpus``.

:func:`cpu_slowdown` is the factor the pricing core (:mod:`memcglab.pricing.chargepath`)
multiplies a flow's CPU time by.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["cpu_slowdown"]


def cpu_slowdown(flows: ArrayLike, cpus_per_flow: ArrayLike, cpus: ArrayLike,
                 smt: ArrayLike, smt_gain: ArrayLike) -> np.ndarray:
    """Factor on a flow's CPU time when ``flows`` flows keep their threads busy.

    ``T = flows * cpus_per_flow`` threads on ``cpus / smt`` cores, idle cores first:
    1 up to one thread per core; then ``2 (T - cores)`` threads share a core at
    ``(1 + smt_gain) / 2`` of a lone thread's speed; past ``cpus`` threads, time
    sharing multiplies the full-machine factor by ``T / cpus``. Every argument
    broadcasts against the others.

    >>> cpu_slowdown([18, 27, 36, 72], 2, 72, 2, 0.25).round(3).tolist()
    [1.0, 1.4, 1.6, 3.2]
    """
    t = np.asarray(flows, dtype=float) * cpus_per_flow
    cpus = np.asarray(cpus, dtype=float)
    cores = cpus / smt
    busy = np.minimum(t, cpus)
    paired = 2.0 * np.clip(busy - cores, 0.0, None)
    factor = (busy - paired + paired * 2.0 / (1.0 + smt_gain)) / busy
    return factor * np.maximum(t / cpus, 1.0)
