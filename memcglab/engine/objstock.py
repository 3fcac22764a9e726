"""Compiled obj stock (objcg bytes): every era of :mod:`memcglab.models.OBJ_ERAS`.

The same functions as the faithful ports (:mod:`memcglab.kernel.obj_stock_v615`,
:mod:`~memcglab.kernel.obj_stock_pcp`, :mod:`~memcglab.kernel.obj_stock_multi`,
:mod:`~memcglab.kernel.objcg`), over flat arrays: ``ob[OB_CACHED, cpu * nobj + i]`` is
slot ``i``'s cached objcg (``-1`` for NULL) and ``ob[OB_NR, ...]`` its ``nr_bytes``;
objcg ``o`` is dense memcg ``o // nodes`` on node ``o % nodes`` (one objcg per memcg
before the 2026 tree) with ``oc[OC_NRCH, o]`` its ``nr_charged_bytes`` and
``oc[OC_KMEM, o]`` its net kmem pages. The era is ``g[G_OBJERA]``:

* ``OE_V615`` (single): one slot in the memcg stock's struct, blocking lock, drained
  pages to ``__refill_stock`` of the running CPU;
* ``OE_E2`` (multi-fix2): one slot under the memcg stock's blocking lock, direct drain;
* ``OE_E3`` (multi, multi-lru), ``OE_E41`` (pcstock): one slot, own trylock, direct
  drain (pcstock's page uncharges: the RFC's stock-aware ``memcg_uncharge``);
* ``OE_MULTI`` (multi-rr), ``OE_MULTI_V4`` (pcstock-v4): five slots, ``drain_idx``,
  U16 flush; v4's whole-page releases are direct walks.

A ``nested`` operation fails the trylock of the eras that have one (a consume miss,
the contended refill); the blocking locks of v6.15 and April 2025 never fail.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.pagecounter import count, mem_cgroup_is_descendant, uncharge_walk
from memcglab.engine.pcstock import pc_uncharge
from memcglab.engine.state import (
    E_OBJ_CGROUP_CHARGE,
    E_OBJ_CGROUP_UNCHARGE,
    E_OBJ_DRAINS,
    E_OBJ_EVICTIONS,
    E_OBJ_FLUSHES,
    E_OBJ_HITS,
    E_OBJ_MISSES,
    E_OBJ_REFILLS,
    F_KMEM,
    F_OBJPAGES,
    G_NCPUS,
    G_NOBJ,
    G_NODES,
    G_OBJERA,
    G_ODRAIN,
    G_OEVICT,
    G_OFLUSH,
    G_OHITS,
    G_OMISS,
    G_OREFILL,
    OB_CACHED,
    OB_NR,
    OC_KMEM,
    OC_MEMCG,
    OC_NRCH,
    OE_E2,
    OE_E41,
    OE_MULTI_V4,
    OE_V615,
    P_OBJ_DRAIN_IDX,
)
from memcglab.engine.stocks import refill_single_locked, refill_stock

__all__ = ["obj_charge", "obj_uncharge", "obj_drain_cpu", "obj_flush_required",
           "obj_drain_all_cpu", "objcg_of"]

PAGE_SHIFT = 12
PAGE_SIZE = 4096
U16_MAX = 0xFFFF


@hot
def objcg_of(g, m, cpu):
    """The dense objcg of dense memcg ``m`` on ``cpu``'s node (current_obj_cgroup)."""
    nodes = g[G_NODES]
    return m * nodes + cpu // (g[G_NCPUS] // nodes)


@hot
def _trylock_fails(g, nested):
    # The eras whose obj stock has a local_trylock fail it inside a nested operation.
    era = g[G_OBJERA]
    return nested and era != OE_V615 and era != OE_E2


@kernel
def _uncharge_pages(g, mc, ev, sl, pcpu, pcs, rng, oc, o, nr_pages, cpu, nested):
    # obj_cgroup_uncharge_pages(): MEMCG_KMEM down, whole pages to the memcg side.
    m = oc[OC_MEMCG, o]  # objcg->memcg (the parent once reparented)
    g[G_OFLUSH] += 1
    count(g, ev, E_OBJ_FLUSHES, cpu, m, 1)
    oc[OC_KMEM, o] -= nr_pages
    mc[F_KMEM, m] -= nr_pages
    if m == 0:  # if (!mem_cgroup_is_root(memcg))
        return
    mc[F_OBJPAGES, m] -= nr_pages
    era = g[G_OBJERA]
    if era == OE_MULTI_V4:
        uncharge_walk(g, mc, ev, m, nr_pages, cpu)  # v4 4/5: memcg_uncharge()
    elif era == OE_E41:
        pc_uncharge(g, mc, ev, pcs, m, nr_pages, cpu, nested)  # RFC 5/8: memcg_uncharge()
    else:
        refill_stock(g, mc, ev, sl, pcpu, rng, m, nr_pages, cpu, nested)


@kernel
def _drain_slot(g, mc, ev, sl, pcs, ob, oc, idx, cpu, nested):
    # drain_obj_stock() / drain_obj_stock_slot() of slot idx, run on cpu.
    o = ob[OB_CACHED, idx]
    if o < 0:
        return
    m = oc[OC_MEMCG, o]
    g[G_ODRAIN] += 1
    count(g, ev, E_OBJ_DRAINS, cpu, m, 1)
    nb = ob[OB_NR, idx]
    if nb:
        nr_pages = nb >> PAGE_SHIFT
        if nr_pages:
            oc[OC_KMEM, o] -= nr_pages
            mc[F_KMEM, m] -= nr_pages
            era = g[G_OBJERA]
            if era == OE_V615:
                mc[F_OBJPAGES, m] -= nr_pages  # no root check in v6.15
                refill_single_locked(g, mc, ev, sl, m, nr_pages, cpu)  # __refill_stock()
            elif m != 0:  # memcg_uncharge_kmem(): direct, unless the root
                mc[F_OBJPAGES, m] -= nr_pages
                if era == OE_E41:
                    pc_uncharge(g, mc, ev, pcs, m, nr_pages, cpu, nested)
                else:
                    uncharge_walk(g, mc, ev, m, nr_pages, cpu)
        oc[OC_NRCH, o] += nb & (PAGE_SIZE - 1)  # atomic_add() of the leftover
        ob[OB_NR, idx] = 0
    ob[OB_CACHED, idx] = -1  # obj_cgroup_put(old)


@kernel
def obj_drain_cpu(g, mc, ev, sl, pcs, ob, oc, stock_cpu, cpu, nested):
    """drain_obj_stock() of ``stock_cpu``'s slots in ascending order, run on ``cpu``."""
    nobj = g[G_NOBJ]
    for i in range(nobj):
        _drain_slot(g, mc, ev, sl, pcs, ob, oc, stock_cpu * nobj + i, cpu, nested)


@kernel
def obj_flush_required(g, mc, ob, oc, cpu, root):
    """obj_stock_flush_required(): any slot's memcg is in ``root``'s subtree."""
    nobj = g[G_NOBJ]
    for i in range(nobj):
        o = ob[OB_CACHED, cpu * nobj + i]
        if o >= 0 and mem_cgroup_is_descendant(mc, oc[OC_MEMCG, o], root):
            return True
    return False


@kernel
def obj_drain_all_cpu(g, mc, ev, sl, pcs, ob, oc, cpu, root, nested):
    """drain_all_stock()'s obj part for ``cpu`` (v6.16 on): drain_local_obj_stock() if
    needed, run on ``cpu`` (its flag is always clear: drains are synchronous)."""
    if obj_flush_required(g, mc, ob, oc, cpu, root):
        obj_drain_cpu(g, mc, ev, sl, pcs, ob, oc, cpu, cpu, nested)


@hot
def _consume(g, ev, ob, o, m, nbytes, cpu, nested):
    # consume_obj_stock(): the first slot caching o, if it holds enough bytes.
    if not _trylock_fails(g, nested):
        nobj = g[G_NOBJ]
        base = cpu * nobj
        for i in range(nobj):
            if ob[OB_CACHED, base + i] != o:
                continue
            if ob[OB_NR, base + i] >= nbytes:
                ob[OB_NR, base + i] -= nbytes
                g[G_OHITS] += 1
                count(g, ev, E_OBJ_HITS, cpu, m, 1)
                return True
            break
    g[G_OMISS] += 1
    count(g, ev, E_OBJ_MISSES, cpu, m, 1)
    return False


@kernel
def _refill(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, o, nbytes, allow_uncharge, cpu, nested):
    # refill_obj_stock() / __refill_obj_stock(), the page flush at its out: label.
    m = oc[OC_MEMCG, o]
    g[G_OREFILL] += 1
    count(g, ev, E_OBJ_REFILLS, cpu, m, 1)
    nr_pages = 0
    if _trylock_fails(g, nested):
        nr_pages = nbytes >> PAGE_SHIFT  # contended: no switch, whole pages out now
        oc[OC_NRCH, o] += nbytes & (PAGE_SIZE - 1)
    else:
        nobj = g[G_NOBJ]
        base = cpu * nobj
        slot = -1
        empty = -1
        for i in range(nobj):
            cached = ob[OB_CACHED, base + i]
            if cached < 0:
                if empty == -1:
                    empty = i
                continue
            if cached == o:
                slot = i
                break
        if slot == -1:
            if nobj == 1:
                slot = 0
                _drain_slot(g, mc, ev, sl, pcs, ob, oc, base, cpu, nested)  # reset
            else:
                slot = empty
                if slot == -1:
                    slot = pcpu[P_OBJ_DRAIN_IDX, cpu]  # drain_idx++, wrapped at 5
                    nxt = (slot + 1) & 0xFF
                    pcpu[P_OBJ_DRAIN_IDX, cpu] = 0 if nxt == nobj else nxt
                    g[G_OEVICT] += 1
                    count(g, ev, E_OBJ_EVICTIONS, cpu, oc[OC_MEMCG, ob[OB_CACHED, base + slot]],
                          1)
                    _drain_slot(g, mc, ev, sl, pcs, ob, oc, base + slot, cpu, nested)
            total = oc[OC_NRCH, o]  # atomic_xchg(&objcg->nr_charged_bytes, 0)
            oc[OC_NRCH, o] = 0
            ob[OB_CACHED, base + slot] = o
            allow_uncharge = True  # Allow uncharge when objcg changes
        else:
            total = ob[OB_NR, base + slot]
        total += nbytes
        if (allow_uncharge and total > PAGE_SIZE) or (nobj > 1 and total > U16_MAX):
            nr_pages = total >> PAGE_SHIFT
            total &= PAGE_SIZE - 1
        ob[OB_NR, base + slot] = total
    if nr_pages:
        _uncharge_pages(g, mc, ev, sl, pcpu, pcs, rng, oc, o, nr_pages, cpu, nested)


@kernel
def obj_uncharge(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, o, nbytes, cpu, nested):
    """obj_cgroup_uncharge(objcg, size): refill_obj_stock(objcg, size, true)."""
    count(g, ev, E_OBJ_CGROUP_UNCHARGE, cpu, oc[OC_MEMCG, o], 1)
    _refill(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, o, nbytes, True, cpu, nested)


@hot
def obj_charge_miss_pages(nbytes):
    """__obj_cgroup_charge(): the pages a byte charge takes, PAGE_ALIGN(size) >> PAGE_SHIFT."""
    return (nbytes + PAGE_SIZE - 1) >> PAGE_SHIFT


@hot
def obj_charge(g, ev, ob, o, nbytes, cpu, nested):
    """obj_cgroup_charge()'s first step, consume_obj_stock(): True on a hit.

    On a miss the caller charges :func:`obj_charge_miss_pages` through
    try_charge_memcg and, on success, calls :func:`obj_charge_done` (the page
    charge lives in :mod:`memcglab.engine.charge`, which this module cannot import).
    """
    count(g, ev, E_OBJ_CGROUP_CHARGE, cpu, o // g[G_NODES], 1)
    return _consume(g, ev, ob, o, o // g[G_NODES], nbytes, cpu, nested)


@kernel
def obj_charge_done(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, o, nbytes, cpu, nested):
    """The rest of obj_cgroup_charge() after its pages were charged: MEMCG_KMEM up and a
    refill of a non-zero remainder with allow_uncharge false."""
    nr_pages = obj_charge_miss_pages(nbytes)
    oc[OC_KMEM, o] += nr_pages
    m = oc[OC_MEMCG, o]
    mc[F_KMEM, m] += nr_pages
    mc[F_OBJPAGES, m] += nr_pages
    remainder = (nr_pages << PAGE_SHIFT) - nbytes
    if remainder:
        _refill(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, o, remainder, False, cpu, nested)
