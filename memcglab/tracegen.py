"""Small random valid traces, for differential and property tests of a model or policy.

A plugin's faithful class and its compiled twin must agree on every trace
(``docs/extending.md``); these generators are the ones the lab's own engine tests use,
shipped in the package so that an installed memcglab has them too. They are built with
a seeded ``numpy.random.Generator`` so that every failure is reproducible from its seed.
The traces are tiny (tens of operations, 1-4 CPUs, a handful of memcgs, small limits),
so that failed charges, evictions, stock overflows, drains, offlines, ``cpu_dead``,
``nested`` and ``set_max`` refusals all happen often. IDs mix small values, values of
several digits (whose string and numeric orders differ) and the largest allowed ID.

>>> from memcglab.replay import replay
>>> t = random_trace(3)
>>> t.source, t.ops.size == random_trace(3).ops.size
('<random 3>', True)
>>> replay(random_obj_trace(3), "multi", check=True)["model"]
'multi'
"""

from __future__ import annotations

import numpy as np

from memcglab.trace import (
    IRQ_OPS,
    MEMCG_ID_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    Trace,
)

__all__ = ["random_obj_trace", "random_trace", "with_irq", "without_nested"]

_KINDS = (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, OP_CGROUP, OP_DRAIN_ALL, OP_CPU_DEAD,
          OP_SET_MAX, OP_OFFLINE)
_WEIGHTS = np.array([34, 22, 8, 7, 5, 5, 6, 4], dtype=float)
_WEIGHTS /= _WEIGHTS.sum()


def _nr(rng: np.random.Generator, batch: int) -> int:
    r = rng.random()
    if r < 0.6:
        return int(rng.integers(1, 9))
    if r < 0.9:
        return int(rng.integers(1, 2 * batch + 2))
    return int(rng.integers(1, 400))


def random_trace(seed: int, n_ops: int | None = None, batch: int = 64,
                 nested: bool = True, bursts: bool = False) -> Trace:
    """A valid trace of about ``n_ops`` operations (random length 10-60 by default).

    ``bursts`` repeats some small charges on the same CPU and memcg (2-5 in a row),
    so that per-counter stocks (``pcstock``, ``pcstock-v4``) are hit and emptied.
    """
    rng = np.random.default_rng(seed)
    cpus = int(rng.integers(1, 5))
    n_ops = int(rng.integers(10, 61)) if n_ops is None else n_ops
    pool = [int(x) for x in rng.permutation(np.arange(1, 25))]
    pool[:0] = [int(rng.integers(100, 10**6)), MEMCG_ID_MAX]
    online = {0: True}
    parent = {0: -1}
    rows: list[tuple] = []

    def live_children(m: int) -> int:
        return sum(1 for c, p in parent.items() if p == m and online[c])

    def add_cgroup() -> None:
        if not pool:
            return
        mid = pool.pop(int(rng.integers(0, min(len(pool), 4))))
        par = int(rng.choice([m for m in online if online[m]]))
        limit = PAGE_COUNTER_MAX if rng.random() < 0.4 else int(rng.integers(1, 400))
        online[mid], parent[mid] = True, par
        rows.append((OP_CGROUP, False, -1, mid, par, limit))

    for _ in range(int(rng.integers(1, 4))):
        add_cgroup()
    while len(rows) < n_ops:
        kind = int(rng.choice(_KINDS, p=_WEIGHTS))
        live = [m for m in online if online[m] and m != 0]
        cpu = int(rng.integers(0, cpus))
        nest = nested and rng.random() < 0.15
        if (kind == OP_CGROUP or not live) and pool:
            add_cgroup()
            continue
        if not live:  # every ID used and every memcg offline: only the root is left
            rows.append((OP_DRAIN_ALL if rng.random() < 0.5 else OP_CPU_DEAD, nest, cpu, 0,
                         -1, 0))
            continue
        m = int(rng.choice(live))
        if kind == OP_CHARGE:
            rows.append((kind, nest, cpu, m, -1, _nr(rng, batch)))
            if bursts and rng.random() < 0.3:
                for _ in range(int(rng.integers(1, 5))):
                    rows.append((kind, nested and rng.random() < 0.15, cpu, m, -1,
                                 int(rng.integers(1, max(2, batch // 2) + 1))))
        elif kind in (OP_UNCHARGE, OP_UNCHARGE_DIRECT):
            target = 0 if rng.random() < 0.05 else m
            rows.append((kind, nest, cpu, target, -1, _nr(rng, batch)))
        elif kind == OP_DRAIN_ALL:
            target = 0 if rng.random() < 0.2 else m
            rows.append((kind, nest, cpu, target, -1, 0))
        elif kind == OP_CPU_DEAD:
            rows.append((kind, nest, cpu, 0, -1, 0))
        elif kind == OP_SET_MAX:
            rows.append((kind, nest, -1, m, -1, int(rng.integers(1, 500))))
        elif kind == OP_OFFLINE:
            leaves = [x for x in live if live_children(x) == 0]
            if leaves:
                x = int(rng.choice(leaves))
                online[x] = False
                rows.append((kind, nest, -1, x, -1, 0))
    ops = np.array([(op, nst, c, m, p, a, 0, False, 0) for op, nst, c, m, p, a in rows],
                   dtype=OP_DTYPE)
    return Trace(cpus, ops, f"<random {seed}>")


def with_irq(trace: Trace, seed: int, share: float = 0.3) -> Trace:
    """The same trace with the ``irq`` word on about ``share`` of the operations that
    take it (a stream of its own, so the trace itself is unchanged)."""
    rng = np.random.default_rng([seed, 7])
    ops = trace.ops.copy()
    eligible = np.isin(ops["op"], IRQ_OPS)
    ops["irq"] = eligible & (rng.random(len(ops)) < share)
    return Trace(trace.cpus, ops, trace.source, trace.nodes)


def without_nested(trace: Trace) -> Trace:
    """The same trace with every ``nested`` flag cleared (the ``single`` model refuses it)."""
    ops = trace.ops.copy()
    ops["nested"] = False
    return Trace(trace.cpus, ops, trace.source, trace.nodes)


_OBJ_KINDS = (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, OP_CGROUP, OP_DRAIN_ALL, OP_CPU_DEAD,
              OP_SET_MAX, OP_OFFLINE, OP_OBJ_CHARGE, OP_OBJ_UNCHARGE)
_OBJ_WEIGHTS = np.array([12, 8, 4, 6, 4, 4, 3, 3, 32, 24], dtype=float)
_OBJ_WEIGHTS /= _OBJ_WEIGHTS.sum()


def _bytes(rng: np.random.Generator) -> int:
    r = rng.random()
    if r < 0.5:
        return int(rng.choice([8, 64, 192, 264, 512, 1024, 2056]))
    if r < 0.75:
        return int(rng.integers(1, 4200))
    if r < 0.95:
        return int(rng.integers(4096, 3 * 4096 + 2))
    return int(rng.integers(60000, 70000))  # past U16_MAX: the five-slot stock's flush


def random_obj_trace(seed: int, n_ops: int | None = None, batch: int = 64,
                     nested: bool = True, irq: bool = True) -> Trace:
    """A valid trace with object operations (obj_charge, obj_uncharge), the irq word and
    a nodes line: the page operations of :func:`random_trace`, then bytes in small
    objects, sizes around and past a page, and a few past U16_MAX."""
    rng = np.random.default_rng([seed, 11])
    cpus = int(rng.choice([1, 2, 3, 4, 6]))
    nodes = int(rng.choice([d for d in (1, 2, 3) if cpus % d == 0]))
    n_ops = int(rng.integers(15, 80)) if n_ops is None else n_ops
    pool = [int(x) for x in rng.permutation(np.arange(1, 20))]
    online, parent = {0: True}, {0: -1}
    rows: list[tuple] = []

    def add_cgroup() -> None:
        if not pool:
            return
        mid = pool.pop(0)
        par = int(rng.choice([m for m in online if online[m]]))
        limit = PAGE_COUNTER_MAX if rng.random() < 0.5 else int(rng.integers(1, 300))
        online[mid], parent[mid] = True, par
        rows.append((OP_CGROUP, False, -1, mid, par, limit, False))

    for _ in range(int(rng.integers(1, 4))):
        add_cgroup()
    while len(rows) < n_ops:
        kind = int(rng.choice(_OBJ_KINDS, p=_OBJ_WEIGHTS))
        live = [m for m in online if online[m] and m != 0]
        cpu = int(rng.integers(0, cpus))
        nest = nested and rng.random() < 0.15
        flag = irq and kind in IRQ_OPS and rng.random() < 0.25
        if (kind == OP_CGROUP or not live) and pool:
            add_cgroup()
            continue
        if not live:
            rows.append((OP_DRAIN_ALL, nest, cpu, 0, -1, 0, False))
            continue
        m = int(rng.choice(live))
        if kind in (OP_OBJ_CHARGE, OP_OBJ_UNCHARGE):
            for _ in range(int(rng.integers(1, 4)) if rng.random() < 0.3 else 1):
                target = 0 if kind == OP_OBJ_UNCHARGE and rng.random() < 0.03 else m
                rows.append((kind, nest, cpu, target, -1, _bytes(rng), flag))
        elif kind in (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT):
            rows.append((kind, nest, cpu, m, -1, _nr(rng, batch), flag))
        elif kind == OP_DRAIN_ALL:
            rows.append((kind, nest, cpu, 0 if rng.random() < 0.2 else m, -1, 0, False))
        elif kind == OP_CPU_DEAD:
            rows.append((kind, nest, cpu, 0, -1, 0, False))
        elif kind == OP_SET_MAX:
            rows.append((kind, nest, -1, m, -1, int(rng.integers(1, 400)), False))
        elif kind == OP_OFFLINE:
            leaves = [x for x in live if not any(p == x and online[c]
                                                 for c, p in parent.items())]
            if leaves:
                x = int(rng.choice(leaves))
                online[x] = False
                rows.append((kind, nest, -1, x, -1, 0, False))
    ops = np.array([(op, nst, c, m, p, a, 0, f, 0) for op, nst, c, m, p, a, f in rows],
                   dtype=OP_DTYPE)
    return Trace(cpus, ops, f"<random obj {seed}>", nodes)
