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
from memcglab.engine.objstock import (
    obj_charge,
    obj_charge_done,
    obj_charge_miss_pages,
    obj_drain_cpu,
    obj_uncharge,
    objcg_of,
)
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
    E_OBJ_CHARGES,
    E_OBJ_UNCHARGES,
    E_UNCHARGES,
    E_UNCHARGES_DIRECT,
    F_ACC,
    F_DEPTH,
    F_FIRST,
    F_HELD,
    F_LAST,
    F_MAX,
    F_NEXT,
    F_OBJPAGES,
    F_ONLINE,
    F_PARENT,
    F_PCBATCH,
    F_RHEAD,
    F_RTAIL,
    F_USAGE,
    G_BATCH,
    G_BUSY,
    G_CHECK,
    G_FAILED,
    G_MODEL,
    G_NCPUS,
    G_NMEMCG,
    G_NODES,
    G_NSLOTS,
    G_OBJERA,
    G_OBJUSED,
    G_OFAIL,
    G_OPS,
    G_OSHORT,
    G_RFREE,
    G_RUSED,
    G_SHORT,
    LIMIT_CLAMP,
    M_PCSTOCK,
    M_PCSTOCK_V4,
    M_SINGLE,
    OB_CACHED,
    OB_NR,
    OC_ACC,
    OC_KMEM,
    OC_LIVE,
    OC_MEMCG,
    OC_NRCH,
    OE_V615,
    P_HI,
    RN_BYTES,
    RN_NEXT,
    RN_OBJCG,
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
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
)

__all__ = ["run_chunk", "conservation"]

_CLAMP = np.uint64(LIMIT_CLAMP)


@kernel
def obj_conservation(g, ob, oc, nobjcg):
    """The obj half of the invariant: slots in bounds, every objcg's bytes add up."""
    for o in range(nobjcg):
        oc[OC_ACC, o] = oc[OC_LIVE, o] + oc[OC_NRCH, o]
    for idx in range(ob.shape[1]):
        o = ob[OB_CACHED, idx]
        if o < 0:
            if ob[OB_NR, idx] != 0:
                return False
        elif ob[OB_NR, idx] < 0:
            return False
        else:
            oc[OC_ACC, o] += ob[OB_NR, idx]
    for o in range(nobjcg):
        if oc[OC_ACC, o] != 4096 * oc[OC_KMEM, o]:
            return False
    return True


@kernel
def _css_online(g, mc, ev, pcs, oc, m, parent, limit):
    # cgroup creation: mem_cgroup_css_alloc() counters, then mem_cgroup_css_online().
    nodes = g[G_NODES]
    for node in range(nodes):  # its objcgs (one per node in the 2026 tree): objcg->memcg
        oc[OC_MEMCG, m * nodes + node] = m
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
def conservation(g, mc, sl, pcpu, pcs, ob, oc):
    """Whether the contract's invariant holds: for every memcg, usage = held + stocked +
    kmem (pages charged through its objcgs) + children's usage; every stock between 0
    and the batch (``pcstock-v4``: the batch minus one); an empty slot holds nothing;
    and for every objcg, PAGE_SIZE x kmem = live + stocked bytes + nr_charged_bytes
    (kernel notes §11.11)."""
    n = g[G_NMEMCG]
    batch = g[G_BATCH]
    nodes = g[G_NODES]
    for c in range(n):
        mc[F_ACC, c] = mc[F_HELD, c]
    if g[G_OBJUSED]:
        if not obj_conservation(g, ob, oc, n * nodes):
            return False
        for c in range(n):
            mc[F_ACC, c] += mc[F_OBJPAGES, c]
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
def _run_push(g, mc, rn, m, o, nbytes):
    # Append nbytes of live objects of objcg o to memcg m's runs (merged with the last).
    tail = mc[F_RTAIL, m]
    if tail >= 0 and rn[RN_OBJCG, tail] == o:
        rn[RN_BYTES, tail] += nbytes
        return
    r = g[G_RFREE]
    if r >= 0:
        g[G_RFREE] = rn[RN_NEXT, r]
    else:
        r = g[G_RUSED]
        g[G_RUSED] += 1
    rn[RN_OBJCG, r] = o
    rn[RN_BYTES, r] = nbytes
    rn[RN_NEXT, r] = -1
    if tail >= 0:
        rn[RN_NEXT, tail] = r
    else:
        mc[F_RHEAD, m] = r
    mc[F_RTAIL, m] = r


@kernel
def _obj_op(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, rn, o, m, nbytes, c, nested, irq):
    # obj_charge / obj_uncharge (docs/trace-extensions.md): the faithful Replayer._obj.
    g[G_OBJUSED] = 1
    if o == OP_OBJ_CHARGE:
        count(g, ev, E_OBJ_CHARGES, c, m, 1)
        objcg = objcg_of(g, m, c)
        if not obj_charge(g, ev, ob, objcg, nbytes, c, nested):
            # __obj_cgroup_charge(): obj_cgroup_charge_pages() through try_charge_memcg()
            if not try_charge_memcg(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, m,
                                    obj_charge_miss_pages(nbytes), c, nested, irq):
                g[G_OFAIL] += 1
                return
            obj_charge_done(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, objcg, nbytes, c, nested)
        oc[OC_LIVE, objcg] += nbytes
        _run_push(g, mc, rn, m, objcg, nbytes)
        return
    left = nbytes
    while left and mc[F_RHEAD, m] >= 0:
        r = mc[F_RHEAD, m]
        objcg = rn[RN_OBJCG, r]
        take = min(left, rn[RN_BYTES, r])
        rn[RN_BYTES, r] -= take
        if rn[RN_BYTES, r] == 0:  # the oldest run is gone: back to the free list
            mc[F_RHEAD, m] = rn[RN_NEXT, r]
            if mc[F_RHEAD, m] < 0:
                mc[F_RTAIL, m] = -1
            rn[RN_NEXT, r] = g[G_RFREE]
            g[G_RFREE] = r
        left -= take
        oc[OC_LIVE, objcg] -= take
        count(g, ev, E_OBJ_UNCHARGES, c, m, 1)
        obj_uncharge(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, objcg, take, c, nested)
    g[G_OSHORT] += left


@kernel
def run_ops(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, rn, op, nested, cpu, dense, arg, irq):
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
            if try_charge_memcg(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, m, a, c, nested[k],
                                irq[k]):
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
        elif o == OP_OBJ_CHARGE or o == OP_OBJ_UNCHARGE:
            _obj_op(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, rn, o, m, a, c, nested[k], irq[k])
        elif o == OP_CGROUP:
            _css_online(g, mc, ev, pcs, oc, g[G_NMEMCG], m, a)
        elif o == OP_DRAIN_ALL:
            drain_all_stock(g, mc, ev, sl, pcpu, pcs, ob, oc, m, c, nested[k])
        elif o == OP_CPU_DEAD:
            # memcg_hotplug_cpu_dead(): the obj stock first (v6.15: on the CPU running
            # the callback, whose memcg stock takes the pages), then the page stocks
            if g[G_OBJERA] == OE_V615:
                here = 0 if c != 0 or g[G_NCPUS] == 1 else 1
                obj_drain_cpu(g, mc, ev, sl, pcs, ob, oc, c, here, nested[k])
            else:
                obj_drain_cpu(g, mc, ev, sl, pcs, ob, oc, c, c, nested[k])
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
            # mem_cgroup_css_offline(): memcg_reparent_objcgs(), drain_all_stock(), then
            # (RFC 5/8) disable the stock (the trace names no CPU: CPU 0, as the faithful port)
            parent = mc[F_PARENT, m]
            for objcg in range(g[G_NMEMCG] * g[G_NODES]):
                if oc[OC_MEMCG, objcg] == m:
                    oc[OC_MEMCG, objcg] = parent
            drain_all_stock(g, mc, ev, sl, pcpu, pcs, ob, oc, m, 0, nested[k])
            if pcstock:
                page_counter_disable_stock(g, mc, ev, pcs, m)
            mc[F_ONLINE, m] = 0
        if check and not conservation(g, mc, sl, pcpu, pcs, ob, oc):
            return k
    return -1


def run_chunk(s: State, ops: np.ndarray, dense: np.ndarray) -> int:
    """:func:`run_ops` over an ``OP_DTYPE`` chunk and its dense column, on the arrays of ``s``."""
    return run_ops(s.g, s.mc, s.ev, s.sl, s.pcpu, s.pcs, s.rng, s.ob, s.oc, s.rn, ops["op"],
                   ops["nested"], ops["cpu"], dense, ops["arg"], ops["irq"])
