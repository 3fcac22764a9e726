"""The obj stock of v5.9 to v5.14: Roman Gushchin's slab controller and Waiman Long's series.

One class, :class:`ObjStockV5`, ports four eras of mm/memcontrol.c; the differences are
flags, each commented where it acts (docs/trace-extensions.md, "The v5 obj stock eras"):

* ``v5.9`` ("mm: memcg/slab: charge individual slab objects instead of pages", v5.9 to
  v5.13): read in torvalds/linux mm/memcontrol.c at 5458985533ba (``consume_obj_stock``,
  ``drain_obj_stock``, ``refill_obj_stock``, ``obj_cgroup_charge``,
  ``obj_cgroup_uncharge``, ``__mod_memcg_state``, ``__mod_memcg_lruvec_state``,
  ``drain_local_stock``, ``drain_all_stock``, ``memcg_hotplug_cpu_dead``). That copy
  already has Roman Gushchin's January 2021 change of ``__memcg_kmem_uncharge`` from
  ``page_counter_uncharge`` to ``refill_stock``; its patch mail shows the v5.9 body
  (the "before" side) and says it is needed from 5.9 on, so this era uncharges the
  whole pages of a drain directly. ``refill_obj_stock`` drains the whole stock (objcg
  included) when it holds more than a page. ``mod_objcg_state`` is the mm/slab.h
  inline of the same series: ``mod_memcg_lruvec_state`` on every object, whose per-CPU
  memcg and lruvec counters are added up the hierarchy past ``MEMCG_CHARGE_BATCH``
  pages' worth of bytes.
* ``v5.14-vmstat``: "mm/memcg: cache vmstat data in percpu memcg_stock_pcp" (Waiman
  Long, mainline 68ac5b3c8db2; read as its v6 2/4,
  20210506150007.16288-3-longman@redhat.com, after 1/4 "mm/memcg: move
  mod_objcg_state() to memcontrol.c", -2-): the stat bytes accumulate in the stock
  (``cached_pgdat``, ``nr_slab_unreclaimable_b``) until they pass a page or the objcg
  or node changes; ``mod_objcg_state`` switches the stock's objcg like a refill.
  Its base tree (v5.13) has ``obj_cgroup_uncharge_pages`` (whole pages to
  ``refill_stock``) and the rstat per-CPU stats (one per-CPU add per update, no
  threshold).
* ``v5.14-refill``: "mm/memcg: improve refill_obj_stock() performance" (mainline
  5387c90490f7; v6 3/4, -4-): an overflow uncharges whole pages and keeps the rest on
  the CPU; ``allow_uncharge`` false for the remainder of a charge; the shared bytes
  are taken with ``atomic_xchg`` only when ``atomic_read`` sees some.
* ``v5.14`` (to v6.14): "mm/memcg: optimize user context object stock access"
  (mainline 559271146efc; v6 4/4, -5-): ``struct obj_stock task_obj, irq_obj``;
  ``get_obj_stock()`` picks by ``in_task()``; ``drain_local_stock`` drains the irq
  stock, then the task stock (the work runs in task context).

The trace's ``obj_charge`` is a slab allocation: ``memcg_slab_pre_alloc_hook``'s
``obj_cgroup_charge`` then ``memcg_slab_post_alloc_hook``'s ``mod_objcg_state(+size)``;
``obj_uncharge`` is ``memcg_slab_free_hook``: ``obj_cgroup_uncharge`` then
``mod_objcg_state(-size)`` (the order of the hooks in Roman Gushchin's series). The
objects are kmalloc objects: ``NR_SLAB_UNRECLAIMABLE_B`` on the node of the CPU.

Differences from the kernel, all deliberate:

* These eras' locks are ``local_irq_save`` or ``preempt_disable``, which cannot fail:
  ``nested`` changes nothing here (the memcg stock of the model still sees it).
* The page stock is the model's (``machine.refill_stock``, ``try_charge_memcg``): a
  v5 obj stock runs beside the model's memcg stock, as the scenario contract combines
  them. The kernel's one ``FLUSHING_CACHED_CHARGE`` flag and work for both halves is
  the model's; the obj half here drains when its own ``obj_stock_flush_required``
  says so.
* ``memcg_hotplug_cpu_dead`` of these trees drains only the memcg stock and folds the
  dead CPU's stats (v5.9: its per-CPU counters back to 0); the obj stock of a dead CPU
  keeps its bytes, as in the kernel.
* The kernel's ``obj_cgroup_uncharge_pages`` and ``refill_stock`` of v5.x take the root
  memcg too; the replay keeps the root check of the shared page side (objcg.py), which
  only a trace that frees objects of an objcg reparented to the root can reach.
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup, mem_cgroup_is_descendant
from memcglab.kernel.objcg import PAGE_SHIFT, ObjCgroup, ObjCgroupPath
from memcglab.kernel.page_counter import PAGE_SIZE

__all__ = ["V5_9", "V5_14_VMSTAT", "V5_14_REFILL", "V5_14", "V5_ERAS", "ObjStock",
           "ObjStockV5"]

V5_9, V5_14_VMSTAT, V5_14_REFILL, V5_14 = "v5.9", "v5.14-vmstat", "v5.14-refill", "v5.14"
V5_ERAS = (V5_9, V5_14_VMSTAT, V5_14_REFILL, V5_14)


@dataclass(slots=True, eq=False)
class ObjStock:
    """The obj fields of ``memcg_stock_pcp`` (v5.9 to v5.14-refill), ``struct obj_stock``
    (v5.14). ``cached_pgdat`` is a node id; only kmalloc objects are traced, so only
    ``nr_slab_unreclaimable_b`` is ever non-zero."""

    cached_objcg: ObjCgroup | None = None
    cached_pgdat: int | None = None  # struct pglist_data * (v5.14-vmstat on)
    nr_bytes: int = 0  # unsigned int
    nr_slab_unreclaimable_b: int = 0  # int (v5.14-vmstat on)


class ObjStockV5(ObjCgroupPath):
    """The byte stock of era ``v5.9``, ``v5.14-vmstat``, ``v5.14-refill`` or ``v5.14``."""

    #: cgroup v1: __memcg_kmem_charge (v5.9) and obj_cgroup_charge_pages (v5.13) charge
    #: memcg->kmem with page_counter_try_charge after try_charge, cancel on failure
    kmem_try_charge = True
    kmem_page_v5 = True

    def __init__(self, machine, era: str = V5_14, nodes: int = 1) -> None:
        if era not in V5_ERAS:
            raise ValueError(f"era={era!r}: unknown; valid: {', '.join(V5_ERAS)}")
        super().__init__(machine, per_node=False, nodes=nodes)
        self.era = era
        self.pgdat_cpus = machine.nr_cpus // nodes  # CPUs per node, for page_pgdat()
        self.obj_stock = [ObjStock() for _ in range(machine.nr_cpus)]  # task_obj in v5.14
        self.irq_obj = [ObjStock() for _ in range(machine.nr_cpus)] if era == V5_14 else []
        # v5.9's per-CPU stat counters: memcg->vmstats_percpu and pn->lruvec_stat_cpu
        self.vmstats_percpu: dict[tuple[int, int], int] = {}
        self.lruvec_stat_cpu: dict[tuple[int, int, int], int] = {}

    # ------------------------------------------------------------ helpers

    def pgdat_of(self, cpu: int) -> int:
        """page_pgdat() of a slab page allocated on ``cpu``: its node."""
        return cpu // self.pgdat_cpus

    def get_obj_stock(self, cpu: int) -> ObjStock:
        """Port of get_obj_stock() (559271146efc): the task stock under preempt_disable in
        task context, else the irq stock under local_irq_save; before v5.14, the one
        stock of memcg_stock_pcp under local_irq_save."""
        if self.era == V5_14 and not self.m.in_task:
            return self.irq_obj[cpu]
        return self.obj_stock[cpu]

    def stocks_of(self, cpu: int) -> list[ObjStock]:
        return [self.obj_stock[cpu], *self.irq_obj[cpu:cpu + 1]]

    # ------------------------------------------------------------ statistics

    def mod_memcg_lruvec_state(self, memcg: MemCgroup, pgdat: int, val: int, cpu: int
                               ) -> None:
        """__mod_memcg_lruvec_state() for NR_SLAB_UNRECLAIMABLE_B (a byte item).

        v5.9 (5458985533ba): __mod_memcg_state() and then the lruvec counter, each
        per-CPU, each added up the hierarchy once its magnitude passes
        ``MEMCG_CHARGE_BATCH << PAGE_SHIFT`` bytes. The v5.13 base of Waiman Long's
        commits has rstat instead: two per-CPU adds and cgroup_rstat_updated(), no
        threshold (its "memcg_stats_lock"-free form, as the later patch mails show).
        """
        self.m.observer.obj_event("memcg_stat_updates", cpu, memcg.id, val)
        if self.era != V5_9:
            return
        threshold = self.m.batch << PAGE_SHIFT  # memcg_stat_item_in_bytes(): <<= PAGE_SHIFT
        for table, key in ((self.vmstats_percpu, (cpu, memcg.id)),
                           (self.lruvec_stat_cpu, (cpu, memcg.id, pgdat))):
            x = val + table.get(key, 0)
            if abs(x) > threshold:
                # for (mi = memcg; mi; mi = parent_mem_cgroup(mi)) atomic_long_add(x, ...)
                levels, mi = 0, memcg
                while mi is not None:
                    levels, mi = levels + 1, mi.parent
                self.m.observer.obj_event("memcg_stat_flushes", cpu, memcg.id, levels)
                x = 0
            table[key] = x  # __this_cpu_write()

    def mod_objcg_mlstate(self, objcg: ObjCgroup, pgdat: int, nr: int, cpu: int) -> None:
        """Port of mod_objcg_mlstate() (68ac5b3c8db2): the memcg's lruvec update."""
        self.mod_memcg_lruvec_state(objcg.memcg, pgdat, nr, cpu)

    def mod_objcg_state(self, objcg: ObjCgroup, pgdat: int, nr: int, cpu: int) -> None:
        """Port of mod_objcg_state(): v5.9's mm/slab.h inline (straight to the memcg's
        stats), or the stock-cached version of 68ac5b3c8db2 (v5.14: get_obj_stock)."""
        self.m.observer.obj_event("mod_objcg_state", cpu, objcg.memcg.id, nr)
        if self.era == V5_9:
            self.mod_memcg_lruvec_state(objcg.memcg, pgdat, nr, cpu)
            return
        stock = self.get_obj_stock(cpu)
        if stock.cached_objcg is not objcg:
            self.drain_obj_stock(stock, cpu)
            # obj_cgroup_get(objcg); atomic_xchg() only if atomic_read() sees bytes
            stock.nr_bytes = objcg.nr_charged_bytes if objcg.nr_charged_bytes else 0
            objcg.nr_charged_bytes = 0
            stock.cached_objcg = objcg
            stock.cached_pgdat = pgdat
        elif stock.cached_pgdat != pgdat:
            # Flush the existing cached vmstat data. At these commits the flush names the
            # new pgdat (fixed later: "oldpg"); the node only picks a lruvec.
            if stock.nr_slab_unreclaimable_b:
                self.mod_objcg_mlstate(objcg, pgdat, stock.nr_slab_unreclaimable_b, cpu)
                stock.nr_slab_unreclaimable_b = 0
            stock.cached_pgdat = pgdat
        # "Even for large object >= PAGE_SIZE, the vmstat data will still be cached
        # locally at least once before pushing it out."
        if not stock.nr_slab_unreclaimable_b:
            stock.nr_slab_unreclaimable_b = nr
            nr = 0
        else:
            stock.nr_slab_unreclaimable_b += nr
            if abs(stock.nr_slab_unreclaimable_b) > PAGE_SIZE:
                nr = stock.nr_slab_unreclaimable_b
                stock.nr_slab_unreclaimable_b = 0
            else:
                nr = 0
        if nr:
            self.mod_objcg_mlstate(objcg, pgdat, nr, cpu)

    # ------------------------------------------------------------ the byte stock

    def consume_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, cpu: int) -> bool:
        """Port of consume_obj_stock() (5458985533ba; v5.14: get_obj_stock)."""
        ret = False
        stock = self.get_obj_stock(cpu)
        if objcg is stock.cached_objcg and stock.nr_bytes >= nr_bytes:
            stock.nr_bytes -= nr_bytes
            ret = True
        self.m.observer.obj_event("obj_hits" if ret else "obj_misses", cpu, objcg.memcg.id,
                                  nr_bytes)
        return ret

    def drain_obj_stock(self, stock: ObjStock, cpu: int) -> None:
        """Port of drain_obj_stock(): whole pages out (v5.9: __memcg_kmem_uncharge, a
        direct uncharge; v5.14-*: obj_cgroup_uncharge_pages), the rest to the shared
        ``nr_charged_bytes``; from 68ac5b3c8db2 on, the cached stat bytes flushed."""
        old = stock.cached_objcg
        if old is None:
            return
        self.m.observer.obj_event("obj_drains", cpu, old.memcg.id, stock.nr_bytes)
        if stock.nr_bytes:
            nr_pages = stock.nr_bytes >> PAGE_SHIFT
            nr_bytes = stock.nr_bytes & (PAGE_SIZE - 1)
            if nr_pages:
                if self.era == V5_9:
                    self.memcg_uncharge_kmem(old, nr_pages, cpu)  # page_counter_uncharge()
                else:
                    self.obj_cgroup_uncharge_pages(old, nr_pages, cpu)
            # The leftover is flushed to the centralized per-memcg value.
            old.nr_charged_bytes += nr_bytes  # atomic_add()
            stock.nr_bytes = 0
        if stock.nr_slab_unreclaimable_b:  # Flush the vmstat data in current stock
            self.mod_objcg_mlstate(old, stock.cached_pgdat, stock.nr_slab_unreclaimable_b,
                                   cpu)
            stock.nr_slab_unreclaimable_b = 0
            stock.cached_pgdat = None
        stock.cached_objcg = None  # obj_cgroup_put(old)

    def obj_stock_flush_required(self, cpu: int, root_memcg: MemCgroup) -> bool:
        """Port of obj_stock_flush_required(): the cached objcg's memcg is in the subtree
        (v5.14: the task stock, as the work runs in task context, then the irq stock).
        The kernel takes the CPU's memcg_stock_pcp; here the CPU names it."""
        for stock in self.stocks_of(cpu):
            objcg = stock.cached_objcg
            if objcg is not None and mem_cgroup_is_descendant(objcg.memcg, root_memcg):
                return True
        return False

    def refill_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, allow_uncharge: bool,
                         cpu: int) -> None:
        """Port of refill_obj_stock(): v5.9 and 68ac5b3c8db2 drain the whole stock past a
        page; from 5387c90490f7 on, whole pages are uncharged after the irq-off section
        and the sub-page rest stays (``allow_uncharge`` false for a charge's remainder)."""
        self.m.observer.obj_event("obj_refills", cpu, objcg.memcg.id, nr_bytes)
        refill = self.era in (V5_14_REFILL, V5_14)
        stock = self.get_obj_stock(cpu)
        nr_pages = 0
        if stock.cached_objcg is not objcg:  # reset if necessary
            self.drain_obj_stock(stock, cpu)
            # obj_cgroup_get(objcg); v5.9 and v5.14-vmstat atomic_xchg() always, then
            # atomic_read() first: the same value either way
            stock.cached_objcg = objcg
            stock.nr_bytes = objcg.nr_charged_bytes
            objcg.nr_charged_bytes = 0
            allow_uncharge = True  # Allow uncharge when objcg changes
        stock.nr_bytes += nr_bytes
        if not refill:
            if stock.nr_bytes > PAGE_SIZE:
                self.drain_obj_stock(stock, cpu)
            return
        if allow_uncharge and stock.nr_bytes > PAGE_SIZE:
            nr_pages = stock.nr_bytes >> PAGE_SHIFT
            stock.nr_bytes &= PAGE_SIZE - 1
        if nr_pages:  # after local_irq_restore() / put_obj_stock()
            self.obj_cgroup_uncharge_pages(objcg, nr_pages, cpu)

    def kernel_obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int
                                 ) -> int:
        """Port of obj_cgroup_charge() (5458985533ba; 5387c90490f7 passes
        allow_uncharge false): consume, else whole pages (one more for a sub-page part)
        and a refill of ``PAGE_SIZE - nr_bytes``; the stock's bytes are ignored."""
        self.m.observer.obj_event("obj_cgroup_charge", cpu, objcg.memcg.id, size)
        if self.consume_obj_stock(objcg, size, cpu):
            return 0
        nr_pages = size >> PAGE_SHIFT
        nr_bytes = size & (PAGE_SIZE - 1)
        if nr_bytes:
            nr_pages += 1
        ret = self.obj_cgroup_charge_pages(objcg, gfp, nr_pages, cpu)  # __memcg_kmem_charge
        if not ret and nr_bytes:
            self.refill_obj_stock(objcg, PAGE_SIZE - nr_bytes, False, cpu)
        return ret

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """The trace's ``obj_charge``: memcg_slab_pre_alloc_hook's obj_cgroup_charge(),
        then memcg_slab_post_alloc_hook's mod_objcg_state(+size) on the CPU's node."""
        ret = self.kernel_obj_cgroup_charge(objcg, gfp, size, cpu)
        if not ret:
            self.mod_objcg_state(objcg, self.pgdat_of(cpu), size, cpu)
        return ret

    def obj_cgroup_uncharge(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """The trace's ``obj_uncharge``: memcg_slab_free_hook's obj_cgroup_uncharge()
        (refill_obj_stock(objcg, size[, true])), then mod_objcg_state(-size)."""
        self.m.observer.obj_event("obj_cgroup_uncharge", cpu, objcg.memcg.id, size)
        self.refill_obj_stock(objcg, size, True, cpu)
        self.mod_objcg_state(objcg, self.pgdat_of(cpu), -size, cpu)

    # ------------------------------------------------------------ drains

    def drain_local_obj_stock(self, cpu: int) -> None:
        """The obj half of drain_local_stock() (irqs off): v5.14 drains the irq stock,
        then the task stock (``if (in_task())``: the work runs in task context)."""
        if self.era == V5_14:
            self.drain_obj_stock(self.irq_obj[cpu], cpu)
        self.drain_obj_stock(self.obj_stock[cpu], cpu)

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """drain_all_stock()'s obj part for ``cpu``: obj_stock_flush_required(), then the
        work's drain, run right away (the contract's synchronous drains)."""
        if self.obj_stock_flush_required(cpu, root_memcg):
            self.drain_local_obj_stock(cpu)

    def drain_dead_cpu(self, cpu: int) -> None:
        """memcg_hotplug_cpu_dead() of these trees drains only the memcg stock: the obj
        stock keeps its bytes. v5.9's (5458985533ba) also folds the dead CPU's stat
        counters, ``this_cpu_xchg(memcg->vmstats_percpu->stat[i], 0)`` and the same of
        every node's ``pn->lruvec_stat_cpu``, into the atomic totals for every memcg: they
        start again from 0, so a later update crosses the threshold later. No flush is
        counted (the fold is not past a threshold). rstat (v5.13 on) keeps nothing per
        CPU here."""
        if self.era != V5_9:
            return
        for table in (self.vmstats_percpu, self.lruvec_stat_cpu):
            for key in [k for k in table if k[0] == cpu]:
                table[key] = 0  # this_cpu_xchg(..., 0); for_each_mem_cgroup(memcg)

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        """One slot (v5.9 to v5.14-refill) or two, task then irq (v5.14)."""
        return [(s.cached_objcg, s.nr_bytes) for s in self.stocks_of(cpu)]

    @property
    def nr_obj_stock(self) -> int:  # type: ignore[override]
        return 2 if self.era == V5_14 else 1
