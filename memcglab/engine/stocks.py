"""Compiled per-CPU memcg charge stocks: the ``single`` and ``multi*`` models.

``single`` ports the v6.15 (E1) single-memcg stock: one ``cached`` memcg and an
``unsigned int nr_pages`` per CPU (slot ``cpu`` of the flat arrays).
``multi*`` port the multi-memcg stock of "[PATCH] memcg: multi-memcg percpu charge
cache" (Shakeel Butt, 16 Apr 2025, f735eebe55f8f) with fixes 1-4 and the memcg/obj
stock split, as in 6952350/linux-6.18.y mm/memcontrol.c: ``slots`` entries per CPU
at ``cpu * slots + i``, ``cached`` (dense memcg or -1 for NULL) and ``nr_pages``
(``uint8_t`` in the kernel; never above 254 here, see ``refill_stock``).
The victim policies differ only in ``_victim``:

* ``multi``: ``get_random_u32_below(NR_MEMCG_STOCK)`` on the contract's stream;
* ``multi-rr``: ``drain_idx`` of "memcg: use round-robin victim selection in
  refill_stock" (Shakeel Butt, 21 May 2026, c0cafe24d3f6), a ``uint8_t``;
* ``multi-lru``: the least recently used slot, a slot being used whenever a lookup
  finds the memcg in it or the memcg is inserted into it (the contract's rule);
* ``multi-fix2``: random, but the new slot gets the never-assigned ``stock_pages``
  of fix 2 (Dan Carpenter's Smatch report), modelled as 0.

Simulation-only bookkeeping: ``hi[cpu]`` is one past the highest slot index ever
filled since the last full drain. Slots at or above it are empty, so scans stop
there; the first empty slot is ``hi`` when none below it is empty. This makes a
scan cost what the occupied prefix costs without changing any result, and the
``slots_scanned`` event still counts the kernel's full-length scans.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memcglab.engine.pagecounter import ev, mem_cgroup_is_descendant, uncharge_walk
from memcglab.engine.rng import get_random_u32_below
from memcglab.engine.state import (
    E_CSS_REF_OPS,
    E_DRAINS,
    E_EVICTIONS,
    E_LRU_WRITES,
    E_MISS_ABSENT,
    E_MISS_BYPASS,
    E_MISS_SHORT,
    E_SLOTS_SCANNED,
    E_STOCK_HITS,
    G_BATCH,
    G_CLOCK,
    G_EVICT,
    G_MODEL,
    G_NCPUS,
    G_NSLOTS,
    M_FIX2,
    M_LRU,
    M_RR,
    M_SINGLE,
)

__all__ = ["consume_stock", "refill_stock", "drain_stock", "drain_stock_fully",
           "is_memcg_drain_needed", "memcg_drain_all_stock"]


@njit(cache=True)
def _lru_touch(s, idx, cpu, m):
    # multi-lru only: make slot idx the most recently used (a global clock orders them).
    s.g[G_CLOCK] += 1
    s.stamp[idx] = s.g[G_CLOCK]
    ev(s, E_LRU_WRITES, cpu, m, 1)


@njit(cache=True)
def drain_stock(s, cpu, idx):
    """drain_stock(stock, i): uncharge a slot's pages, css_put and clear it.

    ``cpu`` is the CPU whose stock it is; the drain runs there (the work item of
    drain_all_stock, the slot owner in refill_stock; for memcg_hotplug_cpu_dead,
    which runs elsewhere in the kernel, the dead CPU is charged the events).
    """
    old = s.cached[idx]
    if old < 0:
        return
    stock_pages = np.int64(s.nrp[idx])
    if stock_pages:
        uncharge_walk(s, old, stock_pages, cpu)  # memcg_uncharge(old, stock_pages)
        s.nrp[idx] = 0
        ev(s, E_DRAINS, cpu, old, 1)
    ev(s, E_CSS_REF_OPS, cpu, old, 1)  # css_put(&old->css)
    s.cached[idx] = -1


@njit(cache=True)
def drain_stock_fully(s, cpu):
    """drain_stock_fully(): every slot of ``cpu`` in slot order (single: its one slot)."""
    if s.g[G_MODEL] == M_SINGLE:
        drain_stock(s, cpu, cpu)
        return
    base = cpu * s.g[G_NSLOTS]
    for i in range(s.hi[cpu]):
        drain_stock(s, cpu, base + i)
    s.hi[cpu] = 0


@njit(cache=True)
def consume_stock(s, m, nr_pages, cpu, nested):
    """consume_stock(): serve a charge from this CPU's stock; True on a hit.

    single (v6.15): the batch guard, then the blocking local_lock_irqsave (GFP_KERNEL
    allows spinning). multi (6.18.y): the batch guard or a failed local_trylock
    return false; only the first slot caching the memcg is looked at.
    """
    batch = s.g[G_BATCH]
    if s.g[G_MODEL] == M_SINGLE:
        if nr_pages > batch:
            ev(s, E_MISS_BYPASS, cpu, m, 1)
            return False
        ev(s, E_SLOTS_SCANNED, cpu, m, 1)
        if s.cached[cpu] == m:
            stock_pages = np.int64(s.nrp[cpu])
            if stock_pages >= nr_pages:
                s.nrp[cpu] = stock_pages - nr_pages
                ev(s, E_STOCK_HITS, cpu, m, 1)
                return True
            ev(s, E_MISS_SHORT, cpu, m, 1)
            return False
        ev(s, E_MISS_ABSENT, cpu, m, 1)
        return False
    if nr_pages > batch or nested:
        ev(s, E_MISS_BYPASS, cpu, m, 1)
        return False
    nslots = s.g[G_NSLOTS]
    base = cpu * nslots
    for i in range(s.hi[cpu]):
        if s.cached[base + i] != m:
            continue
        ev(s, E_SLOTS_SCANNED, cpu, m, i + 1)
        if s.g[G_MODEL] == M_LRU:
            _lru_touch(s, base + i, cpu, m)
        stock_pages = np.int64(s.nrp[base + i])
        if stock_pages >= nr_pages:
            s.nrp[base + i] = stock_pages - nr_pages
            ev(s, E_STOCK_HITS, cpu, m, 1)
            return True
        ev(s, E_MISS_SHORT, cpu, m, 1)
        return False
    ev(s, E_SLOTS_SCANNED, cpu, m, nslots)
    ev(s, E_MISS_ABSENT, cpu, m, 1)
    return False


@njit(cache=True)
def _victim(s, cpu, base, nslots):
    # The slot to evict when every slot of this CPU is occupied.
    model = s.g[G_MODEL]
    if model == M_RR:
        i = s.didx[cpu]
        nxt = (i + 1) & 0xFF  # i = stock->drain_idx++ on a uint8_t
        if nxt == nslots:
            nxt = 0
        s.didx[cpu] = nxt
        return i
    if model == M_LRU:
        best = 0
        for i in range(1, nslots):
            if s.stamp[base + i] < s.stamp[base + best]:
                best = i
        return best
    return get_random_u32_below(s.rng, nslots)


@njit(cache=True)
def _refill_single(s, m, nr_pages, cpu, nested):
    # v6.15 refill_stock()/__refill_stock(): replace the cached memcg if it differs.
    if nested:  # local_trylock_irqsave() failed: uncharge directly
        uncharge_walk(s, m, nr_pages, cpu)
        return
    ev(s, E_SLOTS_SCANNED, cpu, m, 1)
    old = s.cached[cpu]
    if old != m:
        if old >= 0:
            s.g[G_EVICT] += 1
            ev(s, E_EVICTIONS, cpu, old, 1)
        drain_stock(s, cpu, cpu)
        ev(s, E_CSS_REF_OPS, cpu, m, 1)  # css_get(&memcg->css)
        s.cached[cpu] = m
    # unsigned int stock_pages: wraps mod 2^32 as in the kernel
    stock_pages = (np.int64(s.nrp[cpu]) + nr_pages) & 0xFFFFFFFF
    s.nrp[cpu] = stock_pages
    if stock_pages > s.g[G_BATCH]:
        drain_stock(s, cpu, cpu)


@njit(cache=True)
def refill_stock(s, m, nr_pages, cpu, nested):
    """refill_stock(): put uncharged or surplus pages into this CPU's stock.

    multi (final E3 semantics, fixes 2 and 3): more than the batch, or a failed
    trylock, uncharges directly; a slot caching the memcg takes the pages and is
    drained whole if it then exceeds the batch (uint8 sum, at most 127 + 127);
    otherwise the first empty slot, or a victim, gets the memcg.
    """
    if s.g[G_MODEL] == M_SINGLE:
        _refill_single(s, m, nr_pages, cpu, nested)
        return
    batch = s.g[G_BATCH]
    if nr_pages > batch or nested:
        uncharge_walk(s, m, nr_pages, cpu)  # memcg_uncharge(memcg, nr_pages)
        return
    nslots = s.g[G_NSLOTS]
    base = cpu * nslots
    lru = s.g[G_MODEL] == M_LRU
    empty_slot = -1
    hi = s.hi[cpu]
    for i in range(hi):
        cached = s.cached[base + i]
        if cached < 0:
            if empty_slot == -1:
                empty_slot = i
        elif cached == m:
            ev(s, E_SLOTS_SCANNED, cpu, m, i + 1)
            if lru:
                _lru_touch(s, base + i, cpu, m)
            stock_pages = np.int64(s.nrp[base + i]) + nr_pages
            s.nrp[base + i] = stock_pages
            if stock_pages > batch:
                drain_stock(s, cpu, base + i)
            return
    ev(s, E_SLOTS_SCANNED, cpu, m, nslots)
    i = empty_slot
    if i == -1:
        if hi < nslots:
            i = hi  # slots from hi up were never filled: hi is the first empty one
        else:
            i = _victim(s, cpu, base, nslots)
            s.g[G_EVICT] += 1
            ev(s, E_EVICTIONS, cpu, s.cached[base + i], 1)
            drain_stock(s, cpu, base + i)
    ev(s, E_CSS_REF_OPS, cpu, m, 1)  # css_get(&memcg->css)
    s.cached[base + i] = m
    # multi-fix2 stores fix 2's stock_pages, never assigned on this path: modelled as 0.
    s.nrp[base + i] = 0 if s.g[G_MODEL] == M_FIX2 else nr_pages
    if lru:
        _lru_touch(s, base + i, cpu, m)
    if i >= hi:
        s.hi[cpu] = i + 1


@njit(cache=True)
def is_memcg_drain_needed(s, cpu, root):
    """is_memcg_drain_needed(): a slot with pages whose memcg is under ``root``."""
    if s.g[G_MODEL] == M_SINGLE:
        cached = s.cached[cpu]
        return cached >= 0 and s.nrp[cpu] != 0 and mem_cgroup_is_descendant(s, cached, root)
    base = cpu * s.g[G_NSLOTS]
    for i in range(s.hi[cpu]):
        cached = s.cached[base + i]
        if cached >= 0 and s.nrp[base + i] != 0 and mem_cgroup_is_descendant(s, cached, root):
            return True
    return False


@njit(cache=True)
def memcg_drain_all_stock(s, root):
    """drain_all_stock(root) for the memcg stocks: each CPU in order, synchronously.

    The contract drains remote CPUs synchronously in CPU order, so
    ``FLUSHING_CACHED_CHARGE`` is always clear when tested and the percpu_charge_mutex
    is always free; a CPU whose stock needs draining is drained whole.
    """
    for cpu in range(s.g[G_NCPUS]):
        if is_memcg_drain_needed(s, cpu, root):
            drain_stock_fully(s, cpu)
