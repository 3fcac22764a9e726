"""The compiled replay loop: one trace operation after another, and the --check invariant.

Replay-level rules of the contract that are not kernel code live here: the pages
each memcg holds (successful charges not yet uncharged), ``min(NR, held)``
releases with ``short_uncharges`` for the rest, ``failed_charges``, ``set_max_busy``
and the conservation invariant. Everything else calls the ported functions.
"""

from __future__ import annotations

import numpy as np

from memcglab.engine.charge import drain_all_stock, try_charge_memcg
from memcglab.engine.jit import kernel
from memcglab.engine.pagecounter import count, page_counter_set_max, uncharge_walk
from memcglab.engine.pcstock import (
    page_counter_disable_stock,
    page_counter_drain_stock,
    pc_cpu_dead,
    pc_uncharge,
)
from memcglab.engine.pcstock_v4 import v4_cpu_dead
from memcglab.engine.state import (
    E_CHARGES,
    E_FAILED_CHARGES,
    E_UNCHARGES,
    E_UNCHARGES_DIRECT,
    F_ACC,
    F_DEPTH,
    F_FIRST,
    F_HELD,
    F_LAST,
    F_MAX,
    F_NEXT,
    F_ONLINE,
    F_PARENT,
    F_PCBATCH,
    F_USAGE,
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
    LIMIT_CLAMP,
    M_PCSTOCK,
    M_PCSTOCK_V4,
    M_SINGLE,
    P_HI,
    S_CACHED,
    S_NR,
    State,
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

__all__ = ["run_chunk", "conservation"]

_CLAMP = np.uint64(LIMIT_CLAMP)


@kernel
def _css_online(g, mc, ev, pcs, m, parent, limit):
    # cgroup creation: mem_cgroup_css_alloc() counters, then mem_cgroup_css_online().
    mc[F_PARENT, m] = parent
    mc[F_DEPTH, m] = mc[F_DEPTH, parent] + 1
    mc[F_MAX, m] = limit
    mc[F_ONLINE, m] = 1
    if mc[F_LAST, parent] < 0:
        mc[F_FIRST, parent] = m
    else:
        mc[F_NEXT, mc[F_LAST, parent]] = m
    mc[F_LAST, parent] = m
    if m >= g[G_NMEMCG]:
        g[G_NMEMCG] = m + 1
    if g[G_MODEL] == M_PCSTOCK:
        mc[F_PCBATCH, m] = g[G_BATCH]  # page_counter_enable_stock(memory, MEMCG_CHARGE_BATCH)
        page_counter_drain_stock(g, mc, ev, pcs, parent)  # RFC 7/8: parent is no longer a leaf
    elif g[G_MODEL] == M_PCSTOCK_V4:
        mc[F_PCBATCH, m] = g[G_BATCH]  # v4 4/5: page_counter_alloc_stock(); nothing else


@kernel
def conservation(g, mc, sl, pcpu, pcs):
    """Whether the contract's invariant holds: for every memcg, usage = held + stocked +
    children's usage; every stock between 0 and the batch (``pcstock-v4``: the batch
    minus one); an empty slot holds nothing."""
    n = g[G_NMEMCG]
    batch = g[G_BATCH]
    for c in range(n):
        mc[F_ACC, c] = mc[F_HELD, c]
    if g[G_MODEL] == M_PCSTOCK_V4:
        batch -= 1
    if g[G_MODEL] == M_PCSTOCK or g[G_MODEL] == M_PCSTOCK_V4:
        for m in range(n):
            for cpu in range(g[G_NCPUS]):
                p = pcs[m, cpu]
                if p < 0 or p > batch:
                    return False
                mc[F_ACC, m] += p
    else:
        nslots = 1 if g[G_MODEL] == M_SINGLE else g[G_NSLOTS]
        for cpu in range(g[G_NCPUS]):
            used = 1 if g[G_MODEL] == M_SINGLE else pcpu[P_HI, cpu]
            for i in range(used):
                idx = cpu * nslots + i
                cached = sl[S_CACHED, idx]
                p = sl[S_NR, idx]
                if cached < 0:
                    if p != 0:
                        return False
                elif p < 0 or p > batch:
                    return False
                else:
                    mc[F_ACC, cached] += p
    for c in range(1, n):
        mc[F_ACC, mc[F_PARENT, c]] += mc[F_USAGE, c]
    for c in range(n):
        if mc[F_USAGE, c] != mc[F_ACC, c]:
            return False
    return True


@kernel
def run_ops(g, mc, ev, sl, pcpu, pcs, rng, op, nested, cpu, dense, arg, irq):
    """Replay one validated chunk; return -1, or the row after which --check failed.

    ``dense`` is the validator's column (the dense memcg; for ``cgroup``, the dense
    parent, the new memcg being the next index). ``arg`` is clamped to LONG_MAX
    (see state.LIMIT_CLAMP). On a failure the state is that right after the row.
    """
    check = g[G_CHECK]
    pcstock = g[G_MODEL] == M_PCSTOCK
    v4 = g[G_MODEL] == M_PCSTOCK_V4
    for k in range(op.shape[0]):
        o = op[k]
        c = cpu[k]
        m = np.int64(dense[k])
        raw = arg[k]
        a = np.int64(raw) if raw <= _CLAMP else LIMIT_CLAMP
        g[G_OPS] += 1
        if o == OP_CHARGE:
            count(g, ev, E_CHARGES, c, m, 1)
            if try_charge_memcg(g, mc, ev, sl, pcpu, pcs, rng, m, a, c, nested[k], irq[k]):
                mc[F_HELD, m] += a
            else:
                g[G_FAILED] += 1
                count(g, ev, E_FAILED_CHARGES, c, m, 1)
        elif o == OP_UNCHARGE or o == OP_UNCHARGE_DIRECT:
            release = min(a, mc[F_HELD, m])
            g[G_SHORT] += a - release
            if release:
                mc[F_HELD, m] -= release
                if pcstock:
                    pc_uncharge(g, mc, ev, pcs, m, release, c, nested[k])
                elif v4:
                    # mem_cgroup_sk_uncharge() and memcg_uncharge() after v4 4/5: the
                    # plain page_counter_uncharge(), no stock touched
                    uncharge_walk(g, mc, ev, m, release, c)
                elif o == OP_UNCHARGE:
                    refill_stock(g, mc, ev, sl, pcpu, rng, m, release, c, nested[k])
                else:
                    uncharge_walk(g, mc, ev, m, release, c)  # memcg_uncharge()
                count(g, ev, E_UNCHARGES if o == OP_UNCHARGE else E_UNCHARGES_DIRECT, c, m, 1)
        elif o == OP_CGROUP:
            _css_online(g, mc, ev, pcs, g[G_NMEMCG], m, a)
        elif o == OP_DRAIN_ALL:
            drain_all_stock(g, mc, ev, sl, pcpu, pcs, m, c)
        elif o == OP_CPU_DEAD:
            if pcstock:
                pc_cpu_dead(g, mc, ev, pcs, c)
            elif v4:
                v4_cpu_dead(g, mc, ev, pcs, c)
            else:
                drain_stock_fully(g, mc, ev, sl, pcpu, c)  # memcg_hotplug_cpu_dead(): no lock
        elif o == OP_SET_MAX:
            if page_counter_set_max(mc, m, a):
                g[G_BUSY] += 1
        elif o == OP_OFFLINE:
            # mem_cgroup_css_offline(): drain_all_stock(), then (RFC 5/8) disable the stock
            # (the trace names no CPU for it: CPU 0, as the faithful port)
            drain_all_stock(g, mc, ev, sl, pcpu, pcs, m, 0)
            if pcstock:
                page_counter_disable_stock(g, mc, ev, pcs, m)
            mc[F_ONLINE, m] = 0
        if check and not conservation(g, mc, sl, pcpu, pcs):
            return k
    return -1


def run_chunk(s: State, ops: np.ndarray, dense: np.ndarray) -> int:
    """:func:`run_ops` over an ``OP_DTYPE`` chunk and its dense column, on the arrays of ``s``."""
    return run_ops(s.g, s.mc, s.ev, s.sl, s.pcpu, s.pcs, s.rng, ops["op"], ops["nested"],
                   ops["cpu"], dense, ops["arg"], ops["irq"])
