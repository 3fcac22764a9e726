"""Compiled page_counter stock: the ``pcstock`` model.

Ports the per-page_counter stock of Joshua Hahn's RFC "[PATCH 0/8 RFC]
mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter"
(10 Apr 2026, lore 20260410210742.550489-1-joshua.hahnjy@gmail.com; seed 003),
cgroup v2 (no memsw stock): the stock-aware ``page_counter_try_charge`` (2/8) and
``page_counter_uncharge`` (3/8), the drain APIs (4/8), the memcg conversion (5/8)
and the parent drain at css_online (7/8). ``pcs[m, cpu]`` is ``nr_pages`` of CPU
``cpu``'s stock of memcg ``m``'s ``memory`` counter and ``mc[F_PCBATCH, m]`` its
``batch``. Every memcg's stock is enabled at css_online (the allocation never
fails here), so ``counter->stock`` is never NULL.

Event conventions (the RFC has no slots): each look at this CPU's stock under the
trylock counts one ``slots_scanned``; a charge that finds the stock empty is a
``miss_absent``, one that finds too few pages a ``miss_short``, and a failed trylock
a ``miss_bypass``.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.pagecounter import count, try_charge_walk, uncharge_walk
from memcglab.engine.state import (
    E_DRAINS,
    E_MISS_ABSENT,
    E_MISS_BYPASS,
    E_MISS_SHORT,
    E_SLOTS_SCANNED,
    E_STOCK_HITS,
    F_FIRST,
    F_NEXT,
    F_PARENT,
    F_PCBATCH,
    G_NCPUS,
)

__all__ = ["STOCK_HIT", "pc_try_charge", "pc_uncharge", "page_counter_drain_stock",
           "page_counter_drain_cpu", "pc_drain_all_stock", "pc_cpu_dead",
           "page_counter_disable_stock"]

#: pc_try_charge() result for a charge served by the stock (no walk).
STOCK_HIT = -2


@hot
def pc_try_charge(g, mc, ev, pcs, m, nr_pages, cpu, nested, refill):
    """page_counter_try_charge() with the RFC 2/8 stock; -2 stock hit, -1 walked, else ``*fail``.

    A ``nested`` operation fails every local_trylock: the stock is skipped and the
    surplus of a batch charge goes back through page_counter_uncharge().
    """
    if not nested:
        count(g, ev, E_SLOTS_SCANNED, cpu, m, 1)
        stock_pages = pcs[m, cpu]
        if stock_pages >= nr_pages:
            pcs[m, cpu] = stock_pages - nr_pages
            count(g, ev, E_STOCK_HITS, cpu, m, 1)
            return STOCK_HIT
        count(g, ev, E_MISS_ABSENT if stock_pages == 0 else E_MISS_SHORT, cpu, m, 1)
    else:
        count(g, ev, E_MISS_BYPASS, cpu, m, 1)
    # refill False: the refill variants make the greedy batch nr_pages
    charge = max(mc[F_PCBATCH, m], nr_pages) if refill else nr_pages
    while True:  # retry:
        fail = try_charge_walk(g, mc, ev, m, charge, cpu)
        if fail < 0:
            # charge > nr_pages implies this page_counter has stock enabled
            if charge > nr_pages:
                if not nested:
                    pcs[m, cpu] += charge - nr_pages
                else:
                    pc_uncharge(g, mc, ev, pcs, m, charge - nr_pages, cpu, nested)
            return -1
        if charge > nr_pages:
            charge = nr_pages  # retry without trying to grab extra pages for the stock
            continue
        return fail


@hot
def pc_uncharge(g, mc, ev, pcs, m, nr_pages, cpu, nested):
    """page_counter_uncharge() with the RFC 3/8 stock: deposit, cancel only the excess."""
    charge = nr_pages
    if not nested:
        count(g, ev, E_SLOTS_SCANNED, cpu, m, 1)
        stock_pages = pcs[m, cpu] + nr_pages
        batch = mc[F_PCBATCH, m]
        if stock_pages > batch:
            charge = stock_pages - batch
            pcs[m, cpu] = batch
        else:
            pcs[m, cpu] = stock_pages
            return
    uncharge_walk(g, mc, ev, m, charge, cpu)  # page_counter_cancel_hierarchy()


@kernel
def _drain_stock_cpu(g, mc, ev, pcs, m, cpu):
    # page_counter_drain_stock_cpu() / page_counter_drain_cpu(): grab, zero, cancel.
    nr_pages = pcs[m, cpu]
    pcs[m, cpu] = 0
    if nr_pages:
        uncharge_walk(g, mc, ev, m, nr_pages, cpu)
        count(g, ev, E_DRAINS, cpu, m, 1)


@kernel
def page_counter_drain_stock(g, mc, ev, pcs, m):
    """page_counter_drain_stock() (RFC 4/8): work_on_cpu() on every online CPU, in order."""
    for cpu in range(g[G_NCPUS]):
        _drain_stock_cpu(g, mc, ev, pcs, m, cpu)


@kernel
def page_counter_drain_cpu(g, mc, ev, pcs, m, cpu):
    """page_counter_drain_cpu() (RFC 4/8): a dead CPU's stock, without the lock."""
    _drain_stock_cpu(g, mc, ev, pcs, m, cpu)


@kernel
def _next_preorder(mc, c, root):
    # css_next_descendant_pre() within root's subtree (children in creation order); -1 at end.
    if mc[F_FIRST, c] >= 0:
        return mc[F_FIRST, c]
    while c != root and mc[F_NEXT, c] < 0:
        c = mc[F_PARENT, c]
    if c == root:
        return -1
    return mc[F_NEXT, c]


@kernel
def pc_drain_all_stock(g, mc, ev, pcs, root):
    """drain_all_stock() after RFC 5/8: for_each_mem_cgroup_tree(), drain each memory stock."""
    c = root
    while c >= 0:
        page_counter_drain_stock(g, mc, ev, pcs, c)
        c = _next_preorder(mc, c, root)


@kernel
def pc_cpu_dead(g, mc, ev, pcs, cpu):
    """memcg_hotplug_cpu_dead() after RFC 5/8: page_counter_drain_cpu() for every memcg."""
    c = 0
    while c >= 0:
        page_counter_drain_cpu(g, mc, ev, pcs, c, cpu)
        c = _next_preorder(mc, c, 0)


@kernel
def page_counter_disable_stock(g, mc, ev, pcs, m):
    """page_counter_disable_stock() (RFC 1/8 + 3/8): cancel the summed stock, batch = 0.

    The sum is an ``unsigned int`` in the RFC; the per-CPU values are not zeroed.
    At css_offline the preceding drain_all_stock() has emptied them, so nothing is
    cancelled in practice. The kernel names no CPU for this cancel; CPU 0 gets it.
    """
    stock_to_drain = 0
    for cpu in range(g[G_NCPUS]):
        stock_to_drain = (stock_to_drain + pcs[m, cpu]) & 0xFFFFFFFF
    if stock_to_drain:
        uncharge_walk(g, mc, ev, m, stock_to_drain, 0)
    mc[F_PCBATCH, m] = 0
