"""Mean value analysis of closed, single-class, product-form queueing networks.

A network is ``K`` stations, each given by its service demand ``D_k``: the seconds of
service one job needs there per cycle (visits times service time per visit), plus a
think time ``Z`` spent at a delay station outside the measured response time. A
station is load-independent and queueing (one server, FCFS with exponential service,
or processor sharing) unless ``delay`` marks it as a pure delay (infinitely many
servers: its residence time is its demand, whatever the queue).

:func:`mva` is the exact recursion of Reiser and Lavenberg (J. ACM 27(2), 1980), in
the form of Lazowska, Zahorjan, Graham and Sevcik, *Quantitative System Performance*
(1984), ch. 6, and Jain, *The Art of Computer Systems Performance Analysis* (1991),
ch. 34; for n = 1, 2, ..., N:

* residence ``R_k(n) = D_k (1 + Q_k(n-1))`` (``D_k`` at a delay station), by the
  arrival theorem: an arriving job sees the network with itself removed;
* throughput ``X(n) = n / (Z + sum_k R_k(n))`` (Little's law on the whole loop);
* queue lengths ``Q_k(n) = X(n) R_k(n)`` (Little's law at station k).

:func:`schweitzer` replaces ``Q_k(n-1)`` by ``(n-1)/n Q_k(n)`` (Schweitzer 1979, Bard
1979) and solves the fixed point at each population independently: no recursion over
n, a few percent from exact, what large populations and many classes use.

Every function is vectorised: ``demands`` may have any leading batch shape
``(..., K)`` (a batch of parameter points), ``think`` broadcasts against the batch,
and the recursion runs once over n for the whole batch.

Results are indexed by population ``n = 0..N``: row 0 is the empty network
(throughput, queue lengths and utilisations 0; residence times ``D_k``, what a job
arriving to an empty network sees, so ``response[0] == response[1]`` with no queue).

Why not line-solver (PyPI ``line-solver`` 3.0.8, checked 2026-12-01): its native
Python ``pfqn_mva`` needs no JVM, but (1) it pins ``pandas<3`` and ``numpy>=2.3.3``
while this project runs pandas 3.1, so installing it would downgrade pandas for the
whole lab; (2) it pulls ``mcp``, ``websockets<13`` and ``networkx`` and ships a 37 MB
wheel with a 31 MB native simulator binary, for about 20 lines of recursion; (3) its
MVA returns the final population only and loops in Python per station and
population, with no batch axis, while the uncertainty layer needs every population
for thousands of parameter points at once.

>>> r = mva([2.0, 3.0, 1.0], think=4.0, n=3)   # Jain (1991), Example 34.2
>>> [round(float(x), 3) for x in r.throughput]
[0.0, 0.1, 0.175, 0.229]
>>> round(float(r.response[3]), 3)
9.088
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MvaResult", "MvaPoint", "mva", "mva_at", "schweitzer", "check_network"]

#: the largest population the recursions accept (an input guard, not a numerical limit)
N_MAX = 1_000_000


@dataclass(frozen=True)
class MvaResult:
    """Mean performance of a closed network at populations ``0..N`` (``n`` is the index).

    Shapes, for demands of shape ``(..., K)``: ``throughput`` and ``response``
    ``(..., N+1)``; ``residence``, ``queue_lengths`` and ``utilisation``
    ``(..., N+1, K)``. Units: jobs per second, seconds, jobs. ``response`` excludes
    the think time. A delay station's "utilisation" ``X D_k`` is its mean number of
    jobs (it has no server to saturate).
    """

    demands: np.ndarray
    think: np.ndarray
    delay: np.ndarray
    throughput: np.ndarray
    response: np.ndarray
    residence: np.ndarray
    queue_lengths: np.ndarray
    utilisation: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """The populations ``0..N`` that index the results."""
        return np.arange(self.throughput.shape[-1])

    @property
    def bottleneck(self) -> np.ndarray:
        """Index of the queueing station with the largest demand (``...`` shape); -1 if none."""
        d = np.where(self.delay, -np.inf, self.demands)
        return np.where(np.isfinite(d.max(axis=-1)), d.argmax(axis=-1), -1)


@dataclass(frozen=True)
class MvaPoint:
    """Mean performance of each network of a batch at its own population ``n`` (``...``).

    Shapes: ``n``, ``throughput`` and ``response`` ``(...)``; ``residence``,
    ``queue_lengths`` and ``utilisation`` ``(..., K)``. Units as :class:`MvaResult`.
    """

    n: np.ndarray
    throughput: np.ndarray
    response: np.ndarray
    residence: np.ndarray
    queue_lengths: np.ndarray
    utilisation: np.ndarray


def check_network(demands: ArrayLike, think: ArrayLike = 0.0, n: int = 1,
                  delay: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a network; return ``demands`` (..., K), ``think`` (...) and ``delay`` (K,).

    >>> check_network([1.0, -2.0])
    Traceback (most recent call last):
    ...
    ValueError: demands=[1.0, -2.0]: must be finite and >= 0 (seconds per job)
    """
    d = np.asarray(demands, dtype=float)
    if d.ndim == 0 or d.shape[-1] == 0:
        raise ValueError(f"demands={np.asarray(demands).tolist()}: need at least one station "
                         "(an array of shape (..., K) with K >= 1)")
    if not np.all(np.isfinite(d) & (d >= 0)):
        raise ValueError(f"demands={d.tolist()}: must be finite and >= 0 (seconds per job)")
    z = np.asarray(think, dtype=float)
    if not np.all(np.isfinite(z) & (z >= 0)):
        raise ValueError(f"think={z.tolist()}: must be finite and >= 0 (seconds)")
    try:
        z = np.broadcast_to(z, np.broadcast_shapes(z.shape, d.shape[:-1]))
        d = np.broadcast_to(d, z.shape + d.shape[-1:])
    except ValueError:
        raise ValueError(f"think has shape {z.shape}: must broadcast against the batch shape "
                         f"{d.shape[:-1]} of demands") from None
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 0 <= n <= N_MAX:
        raise ValueError(f"n={n!r}: must be an integer population between 0 and {N_MAX}")
    k = d.shape[-1]
    dl = np.zeros(k, dtype=bool) if delay is None else np.asarray(delay, dtype=bool)
    if dl.shape != (k,):
        raise ValueError(f"delay has shape {dl.shape}: must be ({k},), one flag per station")
    if np.any(d.sum(axis=-1) + z <= 0):
        raise ValueError("demands and think are all zero for some network: a job would "
                         "cycle in no time (throughput is unbounded)")
    return d, z, dl


def _result(d, z, dl, x, q_or_r) -> MvaResult:
    r = q_or_r
    return MvaResult(demands=d, think=z, delay=dl, throughput=x, response=r.sum(axis=-1),
                     residence=r, queue_lengths=x[..., None] * r,
                     utilisation=x[..., None] * d[..., None, :])


def mva(demands: ArrayLike, think: ArrayLike = 0.0, n: int = 1,
        delay: ArrayLike | None = None) -> MvaResult:
    """Exact MVA of a closed network at every population ``0..n``.

    ``demands`` are seconds of service per job at each station, shape ``(..., K)``;
    ``think`` seconds at the delay station outside the response time; ``delay`` a
    length-K mask of stations that are pure delays (no queueing).

    >>> r = mva([1.0], n=2)               # one queue: X(n) = 1/D once n >= 1
    >>> r.throughput.tolist(), r.queue_lengths[:, 0].tolist()
    ([0.0, 1.0, 1.0], [0.0, 1.0, 2.0])
    """
    d, z, dl = check_network(demands, think, n, delay)
    x = np.zeros(z.shape + (n + 1,))
    res = np.empty(d.shape[:-1] + (n + 1, d.shape[-1]))
    res[..., 0, :] = d
    q = np.zeros(d.shape)
    for m in range(1, n + 1):
        r = np.where(dl, d, d * (1.0 + q))
        xm = m / (z + r.sum(axis=-1))
        q = xm[..., None] * r
        x[..., m] = xm
        res[..., m, :] = r
    return _result(d, z, dl, x, res)


def mva_at(demands: ArrayLike, think: ArrayLike, n: ArrayLike,
           delay: ArrayLike | None = None) -> MvaPoint:
    """Exact MVA of each network of a batch at its own population, keeping no trajectory.

    ``n`` is an integer array broadcast against the batch shape of ``demands``. The
    recursion runs to ``max(n)``; at step m only the networks with ``n >= m`` are
    updated, so the work is ``sum(n) * K`` and the memory ``O(batch * K)``: what a
    sweep over many client counts and parameter points needs.

    >>> p = mva_at([[1.0, 2.0], [1.0, 2.0]], 1.0, [2, 3])
    >>> [round(float(x), 6) for x in p.throughput], [round(8 / 21, 6), round(63 / 142, 6)]
    ([0.380952, 0.443662], [0.380952, 0.443662])
    """
    nn = np.asarray(n)
    if nn.size == 0 or not np.issubdtype(nn.dtype, np.integer) or nn.min() < 0:
        raise ValueError(f"n={nn.tolist()}: must be integer populations >= 0")
    d0 = np.asarray(demands, dtype=float)
    shape = np.broadcast_shapes(d0.shape[:-1] if d0.ndim else (), np.shape(think), nn.shape)
    d, z, dl = check_network(np.broadcast_to(d0, shape + d0.shape[-1:]),
                             np.broadcast_to(think, shape), int(nn.max()), delay)
    k = d.shape[-1]
    pop = np.broadcast_to(nn, shape).ravel()
    order = np.argsort(-pop, kind="stable")                 # largest populations first
    df, zf, pf = d.reshape(-1, k)[order], z.ravel()[order], pop[order]
    # Delay stations never queue: their residence is their demand, a constant that
    # joins the think time; only the queueing columns are updated.
    dq = np.ascontiguousarray(df[:, ~dl])
    fixed = zf + df[:, dl].sum(axis=-1)
    q = np.zeros_like(dq)
    x = np.zeros(pf.size)
    active = np.searchsorted(-pf, -np.arange(1, pf[0] + 2), side="right")  # count n >= m
    for m in range(1, int(pf[0]) + 1):
        a = active[m - 1]
        rm = dq[:a] * (1.0 + q[:a])
        x[:a] = m / (fixed[:a] + rm.sum(axis=-1))
        np.multiply(x[:a, None], rm, out=q[:a])
    r = df.copy()                                           # n = 0: residence D
    r[:, ~dl] = np.divide(q, x[:, None], out=dq.copy(), where=pf[:, None] > 0)  # R = Q / X
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    xs, rs = x[back].reshape(shape), r[back].reshape(shape + (k,))
    return MvaPoint(n=pop.reshape(shape), throughput=xs, response=rs.sum(axis=-1), residence=rs,
                    queue_lengths=xs[..., None] * rs, utilisation=xs[..., None] * d)


def schweitzer(demands: ArrayLike, think: ArrayLike = 0.0, n: int = 1, tol: float = 1e-10,
               delay: ArrayLike | None = None, max_iter: int = 100_000) -> MvaResult:
    """Schweitzer's approximate MVA at every population ``0..n``, each solved on its own.

    At population m the arrival queue ``Q_k(m-1)`` is approximated by
    ``(m-1)/m Q_k(m)`` and the fixed point iterated from an even spread of the jobs
    until no queue length moves by more than ``tol * n``. All populations and the
    whole batch iterate together. Exact for m = 1; a few percent from :func:`mva`
    in between, the error shrinking as m grows far past the bottleneck's saturation.

    >>> a, e = schweitzer([2.0, 3.0, 1.0], 4.0, 20), mva([2.0, 3.0, 1.0], 4.0, 20)
    >>> round(float(a.throughput[20]), 4), round(float(e.throughput[20]), 4)
    (0.3298, 0.3332)
    """
    d, z, dl = check_network(demands, think, n, delay)
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol={tol!r}: must be a positive number")
    pop = np.arange(n + 1, dtype=float)                       # (N+1,)
    dd = d[..., None, :]                                      # (..., 1, K)
    zz = z[..., None]
    q = np.broadcast_to(pop[:, None] / d.shape[-1], d.shape[:-1] + (n + 1, d.shape[-1])).copy()
    shrink = np.where(pop > 0, (pop - 1) / np.maximum(pop, 1), 0.0)[:, None]
    for _ in range(max_iter):
        r = np.where(dl, dd, dd * (1.0 + shrink * q))
        x = pop / (zz + r.sum(axis=-1))
        new = x[..., None] * r
        done = np.max(np.abs(new - q), initial=0.0) <= tol * max(n, 1)
        q = new
        if done:
            break
    else:
        raise RuntimeError(f"schweitzer: no fixed point within max_iter={max_iter} "
                           f"iterations at tol={tol}")
    return _result(d, z, dl, x, r)
