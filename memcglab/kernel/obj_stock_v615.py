"""The obj stock of v6.15 (era E1): the objcg half of the single ``memcg_stock_pcp``.

Ports the obj functions of mm/memcontrol.c as v6.15 has them, read from the
"before" side of Shakeel Butt's cleanup series: "[RFC PATCH 06/10] memcg: do
obj_cgroup_put inside drain_obj_stock" (13 Mar 2025,
20250314061511.1308152-7-shakeel.butt@linux.dev), on the tree with the v6.15
``localtry`` lock (Alexei Starovoitov), shows refill_obj_stock, replace_stock_objcg,
drain_obj_stock (returning the old objcg), mod_objcg_state, drain_local_stock and
memcg_hotplug_cpu_dead; its v2 ("[PATCH v2 0/9] memcg: cleanup per-cpu stock", 3 Apr
2025, 20250404013913.1663035-1-shakeel.butt@linux.dev) 2/9 shows drain_obj_stock's
``__refill_stock``. No v6.15 mm/memcontrol.c is stored to read directly.

``cached_objcg`` and ``nr_bytes`` live in the same per-CPU struct as the memcg stock
(:class:`memcglab.kernel.memcg_stock_single.MemcgStockPcpSingle`) under its one
``stock_lock``, which every obj function takes with the blocking
``local_lock_irqsave``: an obj operation never fails its lock (and ``single``
refuses ``nested``). ``drain_obj_stock`` hands the old objcg's whole pages to
``__refill_stock``, the unlocked inner refill of *this* CPU's memcg stock, with the
lock already held, and returns the old objcg for the caller to put after unlocking.

The slab vmstat caches (``cached_pgdat``, ``nr_slab_*_b``, ``mod_objcg_state``)
change statistics only and are left out; ``obj_charge`` is obj_cgroup_charge().
"""

from __future__ import annotations

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup, mem_cgroup_is_descendant
from memcglab.kernel.memcontrol_v1 import memcg1_account_kmem
from memcglab.kernel.objcg import PAGE_SHIFT, ObjCgroup, ObjCgroupPath
from memcglab.kernel.page_counter import PAGE_SIZE
from memcglab.kernel.percpu import local_lock, local_unlock

__all__ = ["ObjStockV615"]


class ObjStockV615(ObjCgroupPath):
    """The v6.15 byte stock, inside ``SingleStock``'s ``memcg_stock`` (one objcg per memcg)."""

    def __init__(self, machine, nodes: int = 1) -> None:
        super().__init__(machine, per_node=False, nodes=nodes)

    def consume_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, cpu: int) -> bool:
        """Port of consume_obj_stock() (v6.15): local_lock_irqsave, then a match or not."""
        ret = False
        stock = self.m.memcg_stock[cpu]
        local_lock(stock.stock_lock)  # local_lock_irqsave(&memcg_stock.stock_lock)
        if objcg is stock.cached_objcg and stock.nr_bytes >= nr_bytes:
            stock.nr_bytes -= nr_bytes
            ret = True
        local_unlock(stock.stock_lock)
        self.m.observer.obj_event("obj_hits" if ret else "obj_misses", cpu, objcg.memcg.id,
                                  nr_bytes)
        return ret

    def drain_obj_stock(self, stock, cpu: int) -> ObjCgroup | None:
        """Port of drain_obj_stock() (v6.15): return the old objcg; its whole pages go to
        ``__refill_stock`` of the CPU running the drain (``cpu``), with no root check.

        The caller holds ``stock_lock`` (for the hotplug drain, the running CPU's).
        """
        old = stock.cached_objcg
        if old is None:
            return None
        self.m.observer.obj_event("obj_drains", cpu, old.memcg.id, stock.nr_bytes)
        if stock.nr_bytes:
            nr_pages = stock.nr_bytes >> PAGE_SHIFT
            nr_bytes = stock.nr_bytes & (PAGE_SIZE - 1)
            if nr_pages:
                memcg = old.memcg  # get_mem_cgroup_from_objcg(old)
                memcg.kmem -= nr_pages  # mod_memcg_state(memcg, MEMCG_KMEM, -nr_pages)
                memcg1_account_kmem(self.m, memcg, -nr_pages)
                memcg.obj_pages -= nr_pages  # even for the root: v6.15 stocks its pages
                old.kmem_pages -= nr_pages
                self.m.refill_stock_locked(memcg, nr_pages, cpu)  # __refill_stock()
            old.nr_charged_bytes += nr_bytes  # atomic_add()
            stock.nr_bytes = 0
        # The slab vmstat flush (cached_pgdat) changes statistics only: not ported.
        stock.cached_objcg = None
        # "The `old' objects needs to be released by the caller via obj_cgroup_put()
        # outside of memcg_stock_pcp::stock_lock."
        return old

    def obj_stock_flush_required(self, stock, root_memcg: MemCgroup) -> bool:
        """Port of obj_stock_flush_required() (v6.15): the cached objcg's memcg is in the
        subtree (the bytes are not looked at)."""
        objcg = stock.cached_objcg
        return objcg is not None and mem_cgroup_is_descendant(objcg.memcg, root_memcg)

    def replace_stock_objcg(self, stock, objcg: ObjCgroup, cpu: int) -> ObjCgroup | None:
        """Port of replace_stock_objcg() (v6.15): drain, cache ``objcg`` with its shared
        bytes (atomic_xchg only when atomic_read sees some); return the old objcg."""
        old = self.drain_obj_stock(stock, cpu)
        # obj_cgroup_get(objcg)
        stock.nr_bytes = objcg.nr_charged_bytes if objcg.nr_charged_bytes else 0
        objcg.nr_charged_bytes = 0
        stock.cached_objcg = objcg
        return old

    def refill_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, allow_uncharge: bool,
                         cpu: int) -> None:
        """Port of refill_obj_stock() (v6.15): under the blocking irqsave lock; the page
        flush (obj_cgroup_uncharge_pages, a trylock of the same lock) after unlocking."""
        self.m.observer.obj_event("obj_refills", cpu, objcg.memcg.id, nr_bytes)
        stock = self.m.memcg_stock[cpu]
        nr_pages = 0
        local_lock(stock.stock_lock)  # local_lock_irqsave()
        if stock.cached_objcg is not objcg:  # reset if necessary
            self.replace_stock_objcg(stock, objcg, cpu)  # obj_cgroup_put(old) after unlock
            allow_uncharge = True  # Allow uncharge when objcg changes
        stock.nr_bytes += nr_bytes
        if allow_uncharge and stock.nr_bytes > PAGE_SIZE:
            nr_pages = stock.nr_bytes >> PAGE_SHIFT
            stock.nr_bytes &= PAGE_SIZE - 1
        local_unlock(stock.stock_lock)
        if nr_pages:
            self.obj_cgroup_uncharge_pages(objcg, nr_pages, cpu)

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """Port of obj_cgroup_charge() (v6.15): consume, else whole pages and a refill of
        ``PAGE_SIZE - nr_bytes`` with allow_uncharge false when there is a sub-page part."""
        self.m.observer.obj_event("obj_cgroup_charge", cpu, objcg.memcg.id, size)
        if self.consume_obj_stock(objcg, size, cpu):
            return 0
        nr_pages = size >> PAGE_SHIFT
        nr_bytes = size & (PAGE_SIZE - 1)
        if nr_bytes:
            nr_pages += 1
        ret = self.obj_cgroup_charge_pages(objcg, gfp, nr_pages, cpu)
        if not ret and nr_bytes:
            self.refill_obj_stock(objcg, PAGE_SIZE - nr_bytes, False, cpu)
        return ret

    def obj_cgroup_uncharge(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """Port of obj_cgroup_uncharge(): refill_obj_stock(objcg, size, true)."""
        self.m.observer.obj_event("obj_cgroup_uncharge", cpu, objcg.memcg.id, size)
        self.refill_obj_stock(objcg, size, True, cpu)

    def drain_dead_cpu(self, cpu: int) -> None:
        """Not used: v6.15's memcg_hotplug_cpu_dead drains both halves itself
        (:meth:`memcglab.kernel.memcg_stock_single.SingleStock.memcg_hotplug_cpu_dead`)."""
        raise AssertionError("v6.15 drains the obj half from memcg_hotplug_cpu_dead")

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """Not used: v6.15 decides one drain for both halves in drain_all_stock."""
        raise AssertionError("v6.15 drains the obj half from drain_local_stock")

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        stock = self.m.memcg_stock[cpu]
        return [(stock.cached_objcg, stock.nr_bytes)]
