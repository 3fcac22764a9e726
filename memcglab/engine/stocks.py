"""Compiled per-CPU memcg charge stocks: the ``single`` and ``multi*`` models.

``single`` ports the v6.15 (E1) single-memcg stock: one ``cached`` memcg and an
``unsigned int nr_pages`` per CPU (slot ``cpu`` of the flat arrays).
``multi*`` port the multi-memcg stock of "[PATCH] memcg: multi-memcg percpu charge
cache" (Shakeel Butt, 16 Apr 2025, f735eebe55f8f) with fixes 1-4 and the memcg/obj
stock split, as in 6952350/linux-6.18.y mm/memcontrol.c: ``slots`` entries per CPU
at ``sl[:, cpu * slots + i]``, ``cached`` (dense memcg or -1 for NULL) and
``nr_pages`` (``uint8_t`` in the kernel; never above 254 here, see ``refill_stock``).
The victim policies (``g[G_VICTIM]``, :mod:`memcglab.engine.victims`: random for
``multi`` and ``multi-fix2``, round robin for ``multi-rr``, LRU for ``multi-lru``, or
any compiled policy given) differ only in the victim and in LRU's stamps, written
here: a slot is used whenever a lookup finds the memcg in it or the memcg is inserted
into it (the contract's rule). ``multi-fix2``: the new slot gets the never-assigned
``stock_pages`` of fix 2 (Dan Carpenter's Smatch report), modelled as 0.

Simulation-only bookkeeping: ``pcpu[P_HI, cpu]`` is one past the highest slot index ever
filled since the last full drain. Slots at or above it are empty, so scans stop
there; the first empty slot is ``hi`` when none below it is empty. This makes a
scan cost what the occupied prefix costs without changing any result, and the
``slots_scanned`` event still counts the kernel's full-length scans.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.pagecounter import count, mem_cgroup_is_descendant, uncharge_walk
from memcglab.engine.state import (
    E_CSS_REF_OPS,
    E_DRAIN_STOCK,
    E_DRAINS,
    E_EVICTIONS,
    E_LRU_WRITES,
    E_MISS_ABSENT,
    E_MISS_BYPASS,
    E_MISS_SHORT,
    E_REFILL_STOCK,
    E_SLOTS_SCANNED,
    E_STOCK_HITS,
    G_BATCH,
    G_CLOCK,
    G_EVICT,
    G_MODEL,
    G_NCPUS,
    G_NSLOTS,
    G_VICTIM,
    M_FIX2,
    M_SINGLE,
    P_HI,
    S_CACHED,
    S_NR,
    S_STAMP,
    V_LRU,
)
from memcglab.engine.victims import victim

__all__ = ["consume_stock", "refill_stock", "drain_stock", "drain_stock_fully",
           "is_memcg_drain_needed", "memcg_drain_all_stock"]


@hot
def _lru_touch(g, ev, sl, idx, cpu, m):
    # the LRU victim only: make slot idx the most recently used (a global clock orders them).
    g[G_CLOCK] += 1
    sl[S_STAMP, idx] = g[G_CLOCK]
    count(g, ev, E_LRU_WRITES, cpu, m, 1)


@hot
def drain_stock(g, mc, ev, sl, cpu, idx):
    """drain_stock(stock, i): uncharge a slot's pages, css_put and clear it.

    ``cpu`` is the CPU whose stock it is; the drain runs there (the work item of
    drain_all_stock, the slot owner in refill_stock; for memcg_hotplug_cpu_dead,
    which runs elsewhere in the kernel, the dead CPU is charged the events).
    """
    old = sl[S_CACHED, idx]
    if old < 0:
        return
    count(g, ev, E_DRAIN_STOCK, cpu, old, 1)
    stock_pages = sl[S_NR, idx]
    if stock_pages:
        uncharge_walk(g, mc, ev, old, stock_pages, cpu)  # memcg_uncharge(old, stock_pages)
        sl[S_NR, idx] = 0
        count(g, ev, E_DRAINS, cpu, old, 1)
    count(g, ev, E_CSS_REF_OPS, cpu, old, 1)  # css_put(&old->css)
    sl[S_CACHED, idx] = -1


@kernel
def drain_stock_fully(g, mc, ev, sl, pcpu, cpu):
    """drain_stock_fully(): every slot of ``cpu`` in slot order (single: its one slot)."""
    if g[G_MODEL] == M_SINGLE:
        drain_stock(g, mc, ev, sl, cpu, cpu)
        return
    base = cpu * g[G_NSLOTS]
    for i in range(pcpu[P_HI, cpu]):
        drain_stock(g, mc, ev, sl, cpu, base + i)
    pcpu[P_HI, cpu] = 0


@hot
def consume_stock(g, ev, sl, pcpu, m, nr_pages, cpu, nested):
    """consume_stock(): serve a charge from this CPU's stock; True on a hit.

    single (v6.15): the batch guard, then the blocking local_lock_irqsave (GFP_KERNEL
    allows spinning). multi (6.18.y): the batch guard or a failed local_trylock
    return false; only the first slot caching the memcg is looked at.
    """
    batch = g[G_BATCH]
    if g[G_MODEL] == M_SINGLE:
        if nr_pages > batch:
            count(g, ev, E_MISS_BYPASS, cpu, m, 1)
            return False
        count(g, ev, E_SLOTS_SCANNED, cpu, m, 1)
        if sl[S_CACHED, cpu] == m:
            stock_pages = sl[S_NR, cpu]
            if stock_pages >= nr_pages:
                sl[S_NR, cpu] = stock_pages - nr_pages
                count(g, ev, E_STOCK_HITS, cpu, m, 1)
                return True
            count(g, ev, E_MISS_SHORT, cpu, m, 1)
            return False
        count(g, ev, E_MISS_ABSENT, cpu, m, 1)
        return False
    if nr_pages > batch or nested:
        count(g, ev, E_MISS_BYPASS, cpu, m, 1)
        return False
    nslots = g[G_NSLOTS]
    base = cpu * nslots
    for i in range(pcpu[P_HI, cpu]):
        if sl[S_CACHED, base + i] != m:
            continue
        count(g, ev, E_SLOTS_SCANNED, cpu, m, i + 1)
        if g[G_VICTIM] == V_LRU:
            _lru_touch(g, ev, sl, base + i, cpu, m)
        stock_pages = sl[S_NR, base + i]
        if stock_pages >= nr_pages:
            sl[S_NR, base + i] = stock_pages - nr_pages
            count(g, ev, E_STOCK_HITS, cpu, m, 1)
            return True
        count(g, ev, E_MISS_SHORT, cpu, m, 1)
        return False
    count(g, ev, E_SLOTS_SCANNED, cpu, m, nslots)
    count(g, ev, E_MISS_ABSENT, cpu, m, 1)
    return False


@kernel
def _refill_single(g, mc, ev, sl, m, nr_pages, cpu, nested):
    # v6.15 refill_stock(): the trylock, then __refill_stock().
    if nested:  # local_trylock_irqsave() failed: uncharge directly
        uncharge_walk(g, mc, ev, m, nr_pages, cpu)
        return
    refill_single_locked(g, mc, ev, sl, m, nr_pages, cpu)


@kernel
def refill_single_locked(g, mc, ev, sl, m, nr_pages, cpu):
    """v6.15 __refill_stock() on ``cpu``'s stock: replace the cached memcg if it differs."""
    count(g, ev, E_SLOTS_SCANNED, cpu, m, 1)
    old = sl[S_CACHED, cpu]
    if old != m:
        if old >= 0:
            g[G_EVICT] += 1
            count(g, ev, E_EVICTIONS, cpu, old, 1)
        drain_stock(g, mc, ev, sl, cpu, cpu)
        count(g, ev, E_CSS_REF_OPS, cpu, m, 1)  # css_get(&memcg->css)
        sl[S_CACHED, cpu] = m
    # unsigned int stock_pages: wraps mod 2^32 as in the kernel
    stock_pages = (sl[S_NR, cpu] + nr_pages) & 0xFFFFFFFF
    sl[S_NR, cpu] = stock_pages
    if stock_pages > g[G_BATCH]:
        drain_stock(g, mc, ev, sl, cpu, cpu)


@hot
def refill_stock(g, mc, ev, sl, pcpu, rng, m, nr_pages, cpu, nested):
    """refill_stock(): put uncharged or surplus pages into this CPU's stock.

    multi (final E3 semantics, fixes 2 and 3): more than the batch, or a failed
    trylock, uncharges directly; a slot caching the memcg takes the pages and is
    drained whole if it then exceeds the batch (uint8 sum, at most 127 + 127);
    otherwise the first empty slot, or a victim, gets the memcg.
    """
    count(g, ev, E_REFILL_STOCK, cpu, m, 1)
    if g[G_MODEL] == M_SINGLE:
        _refill_single(g, mc, ev, sl, m, nr_pages, cpu, nested)
        return
    batch = g[G_BATCH]
    if nr_pages > batch or nested:
        uncharge_walk(g, mc, ev, m, nr_pages, cpu)  # memcg_uncharge(memcg, nr_pages)
        return
    nslots = g[G_NSLOTS]
    base = cpu * nslots
    lru = g[G_VICTIM] == V_LRU
    empty_slot = -1
    hi = pcpu[P_HI, cpu]
    for i in range(hi):
        cached = sl[S_CACHED, base + i]
        if cached < 0:
            if empty_slot == -1:
                empty_slot = i
        elif cached == m:
            count(g, ev, E_SLOTS_SCANNED, cpu, m, i + 1)
            if lru:
                _lru_touch(g, ev, sl, base + i, cpu, m)
            stock_pages = sl[S_NR, base + i] + nr_pages
            sl[S_NR, base + i] = stock_pages
            if stock_pages > batch:
                drain_stock(g, mc, ev, sl, cpu, base + i)
            return
    count(g, ev, E_SLOTS_SCANNED, cpu, m, nslots)
    i = empty_slot
    if i == -1:
        if hi < nslots:
            i = hi  # slots from hi up were never filled: hi is the first empty one
        else:
            i = victim(g, sl, pcpu, rng, cpu, base, nslots)
            g[G_EVICT] += 1
            count(g, ev, E_EVICTIONS, cpu, sl[S_CACHED, base + i], 1)
            drain_stock(g, mc, ev, sl, cpu, base + i)
    count(g, ev, E_CSS_REF_OPS, cpu, m, 1)  # css_get(&memcg->css)
    sl[S_CACHED, base + i] = m
    # multi-fix2 stores fix 2's stock_pages, never assigned on this path: modelled as 0.
    sl[S_NR, base + i] = 0 if g[G_MODEL] == M_FIX2 else nr_pages
    if lru:
        _lru_touch(g, ev, sl, base + i, cpu, m)
    if i >= hi:
        pcpu[P_HI, cpu] = i + 1


@kernel
def is_memcg_drain_needed(g, mc, sl, pcpu, cpu, root):
    """is_memcg_drain_needed(): a slot with pages whose memcg is under ``root``."""
    if g[G_MODEL] == M_SINGLE:
        cached = sl[S_CACHED, cpu]
        return (cached >= 0 and sl[S_NR, cpu] != 0
                and mem_cgroup_is_descendant(mc, cached, root))
    base = cpu * g[G_NSLOTS]
    for i in range(pcpu[P_HI, cpu]):
        cached = sl[S_CACHED, base + i]
        if (cached >= 0 and sl[S_NR, base + i] != 0
                and mem_cgroup_is_descendant(mc, cached, root)):
            return True
    return False


@kernel
def memcg_drain_all_stock(g, mc, ev, sl, pcpu, root):
    """drain_all_stock(root) for the memcg stocks: each CPU in order, synchronously.

    The contract drains remote CPUs synchronously in CPU order, so
    ``FLUSHING_CACHED_CHARGE`` is always clear when tested and the percpu_charge_mutex
    is always free; a CPU whose stock needs draining is drained whole.
    """
    for cpu in range(g[G_NCPUS]):
        if is_memcg_drain_needed(g, mc, sl, pcpu, cpu, root):
            drain_stock_fully(g, mc, ev, sl, pcpu, cpu)
