"""The compiled replay loop: one trace operation after another, and the --check invariant.

Replay-level rules of the contract that are not kernel code live here: the pages
each memcg holds (successful charges not yet uncharged), ``min(NR, held)``
releases with ``short_uncharges`` for the rest, ``failed_charges``, ``set_max_busy``
and the conservation invariant. Everything else calls the ported functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memcglab.engine.charge import drain_all_stock, try_charge_memcg
from memcglab.engine.pagecounter import ev, page_counter_set_max, uncharge_walk
from memcglab.engine.pcstock import (
    page_counter_disable_stock,
    page_counter_drain_stock,
    pc_cpu_dead,
    pc_uncharge,
)
from memcglab.engine.state import (
    E_CHARGES,
    E_FAILED_CHARGES,
    E_UNCHARGES,
    E_UNCHARGES_DIRECT,
    G_BATCH,
    G_BUSY,
    G_CHECK,
    G_FAILED,
    G_MODEL,
    G_NCPUS,
    G_NMEMCG,
    G_NSLOTS,
    G_OPS,
    G_SHORT,
    M_PCSTOCK,
    M_SINGLE,
)
from memcglab.engine.stocks import drain_stock_fully, refill_stock
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
)

__all__ = ["run_ops", "conservation", "BAD_USAGE", "BAD_SLOT_RANGE", "BAD_EMPTY_SLOT"]

# conservation() verdicts
BAD_USAGE, BAD_SLOT_RANGE, BAD_EMPTY_SLOT = 1, 2, 3


@njit(cache=True)
def _css_online(s, m, parent, limit):
    # cgroup creation: mem_cgroup_css_alloc() counters, then mem_cgroup_css_online().
    s.parent[m] = parent
    s.depth[m] = s.depth[parent] + 1
    s.maxv[m] = limit
    s.online[m] = 1
    if s.last[parent] < 0:
        s.first[parent] = m
    else:
        s.nxt[s.last[parent]] = m
    s.last[parent] = m
    if m >= s.g[G_NMEMCG]:
        s.g[G_NMEMCG] = m + 1
    if s.g[G_MODEL] == M_PCSTOCK:
        s.pcbatch[m] = s.g[G_BATCH]  # page_counter_enable_stock(memory, MEMCG_CHARGE_BATCH)
        page_counter_drain_stock(s, parent)  # RFC 7/8: the parent is no longer a leaf


@njit(cache=True)
def conservation(s):
    """The contract's invariant: ``(0, 0)`` when it holds, else ``(verdict, where)``.

    ``where`` is the memcg for BAD_USAGE, and the flat slot index (multi/single) or
    ``memcg * cpus + cpu`` (pcstock) for the slot verdicts.
    """
    n = s.g[G_NMEMCG]
    batch = s.g[G_BATCH]
    ncpus = s.g[G_NCPUS]
    acc = s.held[:n].copy()
    model = s.g[G_MODEL]
    if model == M_PCSTOCK:
        for m in range(n):
            for cpu in range(ncpus):
                p = s.pcs[m, cpu]
                if p < 0 or p > batch:
                    return BAD_SLOT_RANGE, m * ncpus + cpu
                acc[m] += p
    else:
        nslots = 1 if model == M_SINGLE else s.g[G_NSLOTS]
        for cpu in range(ncpus):
            used = 1 if model == M_SINGLE else s.hi[cpu]
            for i in range(used):
                idx = cpu * nslots + i
                cached = s.cached[idx]
                p = np.int64(s.nrp[idx])
                if cached < 0:
                    if p != 0:
                        return BAD_EMPTY_SLOT, idx
                elif p > batch:
                    return BAD_SLOT_RANGE, idx
                else:
                    acc[cached] += p
    for c in range(1, n):
        acc[s.parent[c]] += s.usage[c]
    for c in range(n):
        if s.usage[c] != acc[c]:
            return BAD_USAGE, c
    return 0, 0


@njit(cache=True)
def run_ops(s, op, nested, cpu, mem, par, arg):
    """Replay one validated chunk; return ``(-1, 0, 0)`` or the first --check failure.

    ``mem``/``par`` are dense memcg indices, ``arg`` the argument clamped to int64
    (see state.LIMIT_CLAMP). A failure returns ``(row, verdict, where)`` with the
    state as it is right after that operation.
    """
    check = s.g[G_CHECK]
    pcstock = s.g[G_MODEL] == M_PCSTOCK
    for k in range(op.shape[0]):
        o = op[k]
        c = cpu[k]
        m = mem[k]
        a = arg[k]
        s.g[G_OPS] += 1
        if o == OP_CHARGE:
            ev(s, E_CHARGES, c, m, 1)
            if try_charge_memcg(s, m, a, c, nested[k]):
                s.held[m] += a
            else:
                s.g[G_FAILED] += 1
                ev(s, E_FAILED_CHARGES, c, m, 1)
        elif o == OP_UNCHARGE or o == OP_UNCHARGE_DIRECT:
            release = min(a, s.held[m])
            s.g[G_SHORT] += a - release
            if release:
                s.held[m] -= release
                if pcstock:
                    pc_uncharge(s, m, release, c, nested[k])
                elif o == OP_UNCHARGE:
                    refill_stock(s, m, release, c, nested[k])
                else:
                    uncharge_walk(s, m, release, c)  # memcg_uncharge()
                ev(s, E_UNCHARGES if o == OP_UNCHARGE else E_UNCHARGES_DIRECT, c, m, 1)
        elif o == OP_CGROUP:
            _css_online(s, m, par[k], a)
        elif o == OP_DRAIN_ALL:
            drain_all_stock(s, m)
        elif o == OP_CPU_DEAD:
            if pcstock:
                pc_cpu_dead(s, c)
            else:
                drain_stock_fully(s, c)  # memcg_hotplug_cpu_dead(): no lock needed
        elif o == OP_SET_MAX:
            if page_counter_set_max(s, m, a):
                s.g[G_BUSY] += 1
        elif o == OP_OFFLINE:
            # mem_cgroup_css_offline(): drain_all_stock(), then (RFC 5/8) disable the stock
            drain_all_stock(s, m)
            if pcstock:
                page_counter_disable_stock(s, m)
            s.online[m] = 0
        if check:
            verdict, where = conservation(s)
            if verdict:
                return k, verdict, where
    return -1, 0, 0

