"""Small random valid traces for differential and property tests of the engine.

The generators are :mod:`memcglab.tracegen` (shipped in the package, so that a plugin's
tests in ``docs/extending.md`` run from an installed memcglab too); this module keeps
the tests' list of the contract's models beside them, and :func:`random_slab_trace`,
the slab-allocator traces the older obj-stock eras need.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from memcglab.kernel.obj_memcg_caches import KMALLOC_SIZES
from memcglab.trace import (
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
    PAGE_COUNTER_MAX,
    Trace,
)
from memcglab.tracegen import random_obj_trace, random_trace, with_irq, without_nested

__all__ = ["MODELS", "OBJ_STOCK_ERAS", "V1_MODELS", "random_obj_trace", "random_slab_trace",
           "random_trace", "random_v1_trace", "with_irq", "without_nested"]

#: every model of the replay contract, in the contract's order
MODELS = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2", "pcstock", "pcstock-v4")
#: the models that run on cgroup v1 (the page_counter-stock models are refused there)
V1_MODELS = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2")
#: the older obj-stock eras (memcglab.models.OBJ_STOCK_ERAS) the compiled engine runs
OBJ_STOCK_ERAS = ("memcg-caches", "v5.9", "v5.14-vmstat", "v5.14-refill", "v5.14")

_SLAB_KINDS = ("alloc", "free", "burst", "cpu_dead", "drain_all", "offline", "pages",
               "set_max")
_SLAB_WEIGHTS = np.array([36, 30, 8, 5, 5, 4, 8, 4], dtype=float)
_SLAB_WEIGHTS /= _SLAB_WEIGHTS.sum()


def _slab_size(rng: np.random.Generator, palette: list[int]) -> int:
    r = rng.random()
    if r < 0.7:
        return int(rng.choice(palette))  # a workload's few object sizes
    if r < 0.85:
        return int(rng.choice(KMALLOC_SIZES))  # a kmalloc size, whole
    if r < 0.95:
        return int(rng.integers(8193, 40000))  # kmalloc_large
    return int(rng.integers(200_000, 600_000))  # one object past v5.9's stat threshold


def random_slab_trace(seed: int, n_ops: int | None = None, nested: bool = True,
                      irq: bool = True) -> Trace:
    """A valid trace of a slab workload: a few object sizes allocated and freed whole,
    oldest first (as the replay frees them), on a few CPUs and nodes, with bursts of one
    size (a memcg cache filling and emptying slabs), kmalloc_large objects, a few objects
    past v5.9's per-CPU stat threshold, frees on other CPUs and in irq context, and the
    page operations that move objcgs (offline with live objects: reparenting), empty
    stocks (drain_all, cpu_dead) or make page charges fail (small limits, set_max)."""
    rng = np.random.default_rng([seed, 23])
    cpus = int(rng.choice([1, 2, 3, 4]))
    nodes = int(rng.choice([d for d in (1, 2) if cpus % d == 0]))
    n_ops = int(rng.integers(30, 120)) if n_ops is None else n_ops
    palette = [int(x) for x in rng.choice([24, 96, 192, 264, 520, 700, 1024, 2056, 3000,
                                           4096, 5000], size=3, replace=False)]
    pool = [int(x) for x in rng.permutation(np.arange(1, 12))]
    online, parent = {0: True}, {0: -1}
    live: dict[int, deque[int]] = {}
    rows: list[tuple] = []

    def add_cgroup() -> None:
        if not pool:
            return
        mid = pool.pop(0)
        par = int(rng.choice([m for m in online if online[m]]))
        limit = PAGE_COUNTER_MAX if rng.random() < 0.6 else int(rng.integers(2, 200))
        online[mid], parent[mid], live[mid] = True, par, deque()
        rows.append((OP_CGROUP, False, -1, mid, par, limit, False))

    def obj(kind: int, cpu: int, m: int, size: int) -> None:
        flag = irq and rng.random() < 0.25
        rows.append((kind, nested and rng.random() < 0.1, cpu, m, -1, size, flag))

    for _ in range(int(rng.integers(1, 4))):
        add_cgroup()
    while len(rows) < n_ops:
        kind = str(rng.choice(_SLAB_KINDS, p=_SLAB_WEIGHTS))
        members = [m for m in online if online[m] and m != 0]
        cpu = int(rng.integers(0, cpus))
        if not members:
            if pool:
                add_cgroup()
            else:
                rows.append((OP_DRAIN_ALL, False, cpu, 0, -1, 0, False))
            continue
        m = int(rng.choice(members))
        if kind == "alloc":
            size = _slab_size(rng, palette)
            live[m].append(size)
            obj(OP_OBJ_CHARGE, cpu, m, size)
        elif kind == "burst":
            size = int(rng.choice(palette))
            for _ in range(int(rng.integers(3, 40))):
                live[m].append(size)
                obj(OP_OBJ_CHARGE, cpu, m, size)
        elif kind == "free":
            # the oldest one to five objects, whole; now and then a part of one
            k = min(len(live[m]), int(rng.integers(1, 6)))
            size = sum(live[m].popleft() for _ in range(k))
            if size == 0 or rng.random() < 0.1:
                size += int(rng.integers(1, 300))
            obj(OP_OBJ_UNCHARGE, int(rng.integers(0, cpus)) if rng.random() < 0.4 else cpu,
                m, size)
        elif kind == "cpu_dead":
            rows.append((OP_CPU_DEAD, False, cpu, 0, -1, 0, False))
        elif kind == "drain_all":
            rows.append((OP_DRAIN_ALL, False, cpu, 0 if rng.random() < 0.3 else m, -1, 0,
                         False))
        elif kind == "offline" and pool:  # a new memcg takes the offlined one's place
            leaves = [x for x in members if not any(p == x and online[c]
                                                    for c, p in parent.items())]
            x = int(rng.choice(leaves))
            online[x] = False
            rows.append((OP_OFFLINE, False, -1, x, -1, 0, False))
            add_cgroup()
        elif kind == "pages":
            op = OP_CHARGE if rng.random() < 0.6 else OP_UNCHARGE
            rows.append((op, nested and rng.random() < 0.1, cpu, m, -1,
                         int(rng.integers(1, 80)), irq and rng.random() < 0.2))
        elif kind == "set_max":
            rows.append((OP_SET_MAX, False, -1, m, -1, int(rng.integers(1, 300)), False))
    ops = np.array([(op, nst, c, m, p, a, 0, f, 0) for op, nst, c, m, p, a, f in rows],
                   dtype=OP_DTYPE)
    return Trace(cpus, ops, f"<random slab {seed}>", nodes)


def random_v1_trace(seed: int) -> Trace:
    """A trace for the cgroup v1 differential test: by turns a trace of object
    operations (kmem charges and uncharges through the obj stock, limits that make page
    charges fail, so memsw is charged and uncharged again), a slab workload (whole
    slab pages, kmalloc_large) and a page-only trace with bursts (memsw beside the
    stock's batches and drains)."""
    kind = seed % 3
    if kind == 0:
        return random_obj_trace(seed)
    if kind == 1:
        return random_slab_trace(seed)
    return random_trace(seed, bursts=True)
