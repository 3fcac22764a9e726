"""Compiled try_charge_memcg(): the charge path with the kernel's retry loop.

Port of ``try_charge_memcg`` of mm/memcontrol.c (6952350/linux-6.18.y 312d9602fe3e;
the v6.15 function has the same shape for ``single``), and of its RFC 5/8 form for
``pcstock``, under the replay contract's machine: GFP_KERNEL, reclaim frees
nothing, the memcg OOM killer makes no progress, no memory.high and no memsw.
So of the kernel's exits only these remain, in the kernel's order:

1. ``consume_stock`` (not ``pcstock``: its counter checks its own stock);
2. ``page_counter_try_charge(&memcg->memory, batch)``; success goes to
   ``done_restock``, which refills the surplus ``batch - nr_pages``;
3. ``batch > nr_pages``: retry once at the exact size, no event;
4. ``MEMCG_MAX`` on the memcg over its limit; ``mem_cgroup_margin() >= nr_pages``
   retries (never true sequentially, kept for fidelity);
5. the first time, ``drain_all_stock(mem_over_limit)`` and retry;
6. ``nr_reclaimed`` is 0, so only ``nr_retries--`` (16) retries, then
   ``mem_cgroup_oom()`` fails and the charge returns ``-ENOMEM``.

``pcstock-v4`` (v4 2/5 and 4/5) replaces steps 1-3 of each pass by one
``page_counter_try_charge_stock`` (stock, batch, then ``nr_pages``; no refill in
try_charge_memcg) and keeps steps 4-6.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.objstock import obj_drain_all_cpu, obj_drain_cpu, obj_flush_required
from memcglab.engine.pagecounter import count, mem_cgroup_margin, try_charge_walk
from memcglab.engine.pcstock import STOCK_HIT, pc_drain_all_stock, pc_try_charge
from memcglab.engine.pcstock_v4 import v4_drain_all_stock, v4_try_charge_stock
from memcglab.engine.state import (
    E_TRY_CHARGE_MEMCG,
    F_MAXEV,
    G_BATCH,
    G_HITS,
    G_MODEL,
    G_NCPUS,
    G_OBJERA,
    G_REFILL,
    M_PCSTOCK,
    M_PCSTOCK_V4,
    OE_E2,
    OE_V615,
    R_NEVER,
    R_NOT_IN_IRQ,
)
from memcglab.engine.stocks import (
    consume_stock,
    drain_stock_fully,
    is_memcg_drain_needed,
    refill_stock,
)

__all__ = ["MAX_RECLAIM_RETRIES", "drain_all_stock", "try_charge_memcg"]

MAX_RECLAIM_RETRIES = 16  # mm/internal.h


@kernel
def drain_all_stock(g, mc, ev, sl, pcpu, pcs, ob, oc, root, cpu, nested):
    """drain_all_stock(root_memcg) of the model in use, called on ``cpu``.

    Only ``pcstock-v4`` drains on the calling CPU (remote atomic_xchg); the other
    models' drains run on each stock's own CPU (work items, work_on_cpu). The obj
    stock of each CPU follows its memcg stock (v6.16 on: its own flag and work); in
    v6.15 and mm-unstable April 2025 one decision drains both halves, obj half first;
    the page_counter-stock models drain every counter first, then the obj stocks.
    """
    model = g[G_MODEL]
    era = g[G_OBJERA]
    if model == M_PCSTOCK or model == M_PCSTOCK_V4:
        if model == M_PCSTOCK:
            pc_drain_all_stock(g, mc, ev, pcs, root)
        else:
            v4_drain_all_stock(g, mc, ev, pcs, root, cpu)
        for c in range(g[G_NCPUS]):  # "Drain obj_stock on all online CPUs"
            # a nested operation holds only its own CPU's locks; the work on c takes c's
            obj_drain_all_cpu(g, mc, ev, sl, pcs, ob, oc, c, root, nested and c == cpu)
        return
    for c in range(g[G_NCPUS]):
        if era == OE_V615 or era == OE_E2:
            # one FLUSHING_CACHED_CHARGE and one work (drain_local_stock) for both halves
            if (is_memcg_drain_needed(g, mc, sl, pcpu, c, root)
                    or obj_flush_required(g, mc, ob, oc, c, root)):
                obj_drain_cpu(g, mc, ev, sl, pcs, ob, oc, c, c, nested and c == cpu)
                drain_stock_fully(g, mc, ev, sl, pcpu, c)
            continue
        if is_memcg_drain_needed(g, mc, sl, pcpu, c, root):
            drain_stock_fully(g, mc, ev, sl, pcpu, c)
        obj_drain_all_cpu(g, mc, ev, sl, pcs, ob, oc, c, root, nested and c == cpu)


@hot
def try_charge_memcg(g, mc, ev, sl, pcpu, pcs, rng, ob, oc, m, nr_pages, cpu, nested, irq):
    """try_charge_memcg(memcg, GFP_KERNEL, nr_pages): True on success, False for -ENOMEM.

    ``irq``: the charge runs outside task context (``!in_task()``), which only the
    ``not-in-irq`` refill variant tests. With ``refill`` other than ``always`` the
    batch is ``nr_pages`` (not-in-irq: for irq charges; never: for every charge);
    the page_counter-stock models apply it to their counter's greedy batch.
    """
    count(g, ev, E_TRY_CHARGE_MEMCG, cpu, m, 1)
    pcstock = g[G_MODEL] == M_PCSTOCK
    v4 = g[G_MODEL] == M_PCSTOCK_V4
    batch = max(g[G_BATCH], nr_pages)
    # if (!in_task()) batch = nr_pages; (not-in-irq) / the flipped spinning test (never)
    no_refill = g[G_REFILL] == R_NEVER or (g[G_REFILL] == R_NOT_IN_IRQ and irq)
    if no_refill:
        batch = nr_pages
    nr_retries = MAX_RECLAIM_RETRIES
    drained = False
    while True:  # retry:
        if v4:
            fail = v4_try_charge_stock(g, mc, ev, pcs, m, nr_pages, cpu, not no_refill)
            if fail == STOCK_HIT:  # nr_charged == 0: return 0
                g[G_HITS] += 1
                return True
            if fail < 0:
                return True  # handle_high: nothing is over memory.high
        elif pcstock:
            fail = pc_try_charge(g, mc, ev, pcs, m, nr_pages, cpu, nested, not no_refill)
            if fail == STOCK_HIT:
                g[G_HITS] += 1
                return True
            if fail < 0:
                return True  # done_restock: the RFC removed the refill
        else:
            if consume_stock(g, ev, sl, pcpu, m, nr_pages, cpu, nested):
                g[G_HITS] += 1
                return True
            fail = try_charge_walk(g, mc, ev, m, batch, cpu)
            if fail < 0:
                if batch > nr_pages:  # done_restock
                    refill_stock(g, mc, ev, sl, pcpu, rng, m, batch - nr_pages, cpu, nested)
                return True
            if batch > nr_pages:
                batch = nr_pages
                continue
        mem_over_limit = fail
        mc[F_MAXEV, mem_over_limit] += 1  # __memcg_memory_event(mem_over_limit, MEMCG_MAX)
        # try_to_free_mem_cgroup_pages() reclaims nothing on the contract's machine.
        if mem_cgroup_margin(mc, mem_over_limit) >= nr_pages:
            continue
        if not drained:
            drain_all_stock(g, mc, ev, sl, pcpu, pcs, ob, oc, mem_over_limit, cpu, nested)
            drained = True
            continue
        if nr_retries:
            nr_retries -= 1
            continue
        return False  # mem_cgroup_oom() makes no progress: nomem, -ENOMEM
