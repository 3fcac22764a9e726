"""Asymptotic and balanced-job bounds on a closed network's throughput and response time.

Both need only the demands: ``D`` (their sum over queueing stations), ``D_max`` (the
bottleneck's) and ``D_avg = D / K`` over the ``K`` queueing stations; a delay
station's demand joins the think time for the throughput bounds and the response
time for the response bounds. Lazowska, Zahorjan, Graham and Sevcik, *Quantitative
System Performance* (1984), ch. 5; Jain (1991), sections 33.6 and 34.4.

Asymptotic bounds (ABA), from the bottleneck law ``X <= 1/D_max`` and from a job
that never queues (optimistic) or always finds every other job ahead (pessimistic)::

    n / (n D + Z)  <=  X(n)  <=  min(1/D_max, n / (D + Z))

Balanced-job bounds (BJB, Zahorjan, Sevcik, Eager and Galler, CACM 25(2), 1982): the
network lies between balanced networks of demand ``D_avg`` and ``D_max`` at each
station::

    n / (D + Z + (n-1) D_max / (1 + Z/(n D)))  <=  X(n)
    X(n)  <=  min(1/D_max, n / (D + Z + (n-1) D_avg / (1 + Z/D)))

Response-time bounds follow from the response-time law ``R = n/X - Z``. All are
arrays over ``n = 0..N`` (row 0 is the empty network: X = 0, R = D).

>>> b = bounds([2.0, 3.0, 1.0], think=4.0, n=20)
>>> round(float(b.throughput_high[20]), 4), round(float(b.throughput_low[1]), 4)
(0.3333, 0.1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from memcglab.queueing.mva import check_network

__all__ = ["Bounds", "bounds"]


@dataclass(frozen=True)
class Bounds:
    """Lower and upper bounds on X(n) and R(n), ``n = 0..N``; shapes ``(..., N+1)``.

    ``aba_*`` are the asymptotic bounds, ``throughput_*`` / ``response_*`` the
    tighter of the asymptotic and balanced-job bounds (the balanced-job bounds are
    never looser, so these are the BJB ones).
    """

    throughput_low: np.ndarray
    throughput_high: np.ndarray
    response_low: np.ndarray
    response_high: np.ndarray
    aba_throughput_low: np.ndarray
    aba_throughput_high: np.ndarray


def bounds(demands: ArrayLike, think: ArrayLike = 0.0, n: int = 1,
           delay: ArrayLike | None = None) -> Bounds:
    """Asymptotic and balanced-job bounds of a closed network at populations ``0..n``.

    Arguments as for :func:`memcglab.queueing.mva`. A balanced network (every
    queueing demand equal) with no think time is solved exactly by its bounds:

    >>> b = bounds([1.0, 1.0], n=3)
    >>> np.allclose(b.throughput_low, [0, 1 / 2, 2 / 3, 3 / 4]), np.allclose(b.throughput_high,
    ...             b.throughput_low)
    (True, True)
    """
    d, z, dl = check_network(demands, think, n, delay)
    dq = np.where(dl, 0.0, d)
    big_d = dq.sum(axis=-1)[..., None]
    d_max = dq.max(axis=-1)[..., None]
    k = max(int((~dl).sum()), 1)
    d_avg = big_d / k
    zz = (z + np.where(dl, d, 0.0).sum(axis=-1))[..., None]   # think plus delay stations
    pop = np.arange(n + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(d_max > 0, 1.0 / d_max, np.inf)
        aba_high = np.minimum(cap, pop / (big_d + zz))
        aba_low = np.where(pop > 0, pop / (pop * big_d + zz), 0.0)
        shrink_low = np.where(big_d > 0, 1.0 + zz / (np.maximum(pop, 1) * big_d), 1.0)
        shrink_high = np.where(big_d > 0, 1.0 + zz / big_d, 1.0)
        bjb_low = pop / (big_d + zz + (pop - 1) * d_max / shrink_low)
        bjb_high = np.minimum(cap, pop / (big_d + zz + (pop - 1) * d_avg / shrink_high))
    x_low = np.maximum(aba_low, np.where(pop > 0, bjb_low, 0.0))
    x_high = np.minimum(aba_high, np.where(pop > 0, bjb_high, 0.0))
    total = d.sum(axis=-1)[..., None]
    zt = z[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        r_low = np.where(pop > 0, pop / x_high - zt, total)
        r_high = np.where(pop > 0, pop / x_low - zt, total)
    return Bounds(throughput_low=x_low, throughput_high=x_high, response_low=r_low,
                  response_high=r_high, aba_throughput_low=aba_low, aba_throughput_high=aba_high)
