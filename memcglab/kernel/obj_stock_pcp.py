"""The single-slot obj stock: ``struct obj_stock_pcp`` (v6.16 to the 2026 tree), and the
pre-split stock of mm-unstable April 2025.

One cached objcg and its ``nr_bytes`` per CPU. Three eras share this code; the
differences are flags, each commented where it acts:

* ``E3`` (models ``multi``, ``multi-lru``): 6952350/linux-6.18.y mm/memcontrol.c
  312d9602fe3e, after "memcg: decouple memcg and objcg stocks" and "memcg: objcg
  stock trylock without irq disabling" (Shakeel Butt, May 2025): its own
  ``local_trylock_t``, its own flag and work; a failed trylock takes the contended
  path of refill_obj_stock (whole pages out, the rest to ``nr_charged_bytes``).
* ``E2`` (model ``multi-fix2``, mm-unstable 25 Apr 2025): the obj fields still in
  the multi-memcg ``memcg_stock_pcp``, under its ``stock_lock`` taken with the
  blocking ``local_lock_irqsave`` (the cleanup series' "before" side of "memcg:
  decouple drain_obj_stock from local stock", 29 Apr 2025), so an obj operation never
  fails its lock; drain_obj_stock already uncharges directly (cleanup 2/9); the drain
  decision and the drain itself are the memcg stock's (``MultiStock`` with ``fix2``).
* ``E4-1`` (model ``pcstock``): the 2026 mm tree the RFC was based on: the E3 stock
  split into locked helpers by Johannes Weiner's "[PATCH 0/5]: memcg: obj stock and
  slab stat caching cleanups" (2 Mar 2026) — ``trylock_stock``, ``__refill_obj_stock``
  with the page flush inside the lock, ``__obj_cgroup_charge``, refill only for a
  non-zero remainder — and objcgs per memcg per node, so one memcg's threads on two
  nodes thrash the slot (kernel notes §11.7).

Only the byte side is ported: the slab vmstat caches (``cached_pgdat``,
``nr_slab_*_b``, ``__account_obj_stock``) change statistics, not charges, and the
trace's ``obj_charge`` is ``obj_cgroup_charge``, which passes no pgdat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup, mem_cgroup_is_descendant
from memcglab.kernel.objcg import PAGE_SHIFT, ObjCgroup, ObjCgroupPath
from memcglab.kernel.page_counter import PAGE_SIZE
from memcglab.kernel.percpu import LocalTrylock, local_lock, local_trylock, local_unlock

__all__ = ["ObjStockPcp", "ObjStockSingleSlot", "E2", "E3", "E4_1"]

FLUSHING_CACHED_CHARGE = 0
E2, E3, E4_1 = "E2", "E3", "E4-1"


@dataclass(slots=True)
class ObjStockPcp:
    """``struct obj_stock_pcp`` (E3): lock, nr_bytes, cached_objcg, work, flags."""

    lock: LocalTrylock = field(default_factory=LocalTrylock)
    nr_bytes: int = 0  # unsigned int
    cached_objcg: ObjCgroup | None = None
    flags: int = 0


class ObjStockSingleSlot(ObjCgroupPath):
    """The single-slot byte stock of era ``E2``, ``E3`` or ``E4-1`` (see the module)."""

    def __init__(self, machine, era: str = E3, nodes: int = 1) -> None:
        super().__init__(machine, per_node=era == E4_1, nodes=nodes)
        self.era = era
        self.obj_stock = [ObjStockPcp() for _ in range(machine.nr_cpus)]
        if era == E2:  # one struct in E2: the obj half takes the memcg stock's lock
            for cpu, stock in enumerate(self.obj_stock):
                stock.lock = machine.memcg_stock[cpu].lock

    def uncharge_pages(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """obj_cgroup_uncharge_pages()'s target: ``refill_stock`` (E2, E3); RFC 5/8 turns it
        into memcg_uncharge() (E4-1 under ``pcstock``), the RFC's stock-aware uncharge."""
        if self.era == E4_1:
            self.m.memcg_uncharge(memcg, nr_pages, cpu)
        else:
            self.m.refill_stock(memcg, nr_pages, cpu)

    # ------------------------------------------------------------ locking

    def _lock(self, stock: ObjStockPcp) -> bool:
        """local_trylock(&obj_stock.lock) (E3, E4-1's trylock_stock); E2 takes the shared
        stock_lock with the blocking local_lock_irqsave, which cannot fail."""
        if self.era == E2:
            local_lock(stock.lock)
            return True
        return local_trylock(stock.lock)

    def locks(self, cpu: int) -> list:
        return [] if self.era == E2 else [self.obj_stock[cpu].lock]

    # ------------------------------------------------------------ the stock

    def consume_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, cpu: int) -> bool:
        """Port of consume_obj_stock() (6.18.y; E4-1: __consume_obj_stock under trylock_stock)."""
        ret = False
        stock = self.obj_stock[cpu]
        if not self._lock(stock):
            self.m.observer.obj_event("obj_misses", cpu, objcg.memcg.id, nr_bytes)
            return ret
        if objcg is stock.cached_objcg and stock.nr_bytes >= nr_bytes:
            stock.nr_bytes -= nr_bytes
            ret = True
        local_unlock(stock.lock)
        self.m.observer.obj_event("obj_hits" if ret else "obj_misses", cpu, objcg.memcg.id,
                                  nr_bytes)
        return ret

    def drain_obj_stock(self, stock: ObjStockPcp, cpu: int) -> None:
        """Port of drain_obj_stock() (6.18.y; E2 after cleanup 2/9 and 6/9): whole pages
        uncharged directly, the rest to ``nr_charged_bytes``, then obj_cgroup_put inside.

        The 2026 tree calls memcg_uncharge_kmem() for the pages, the same steps.
        ``cpu`` is the CPU that runs the drain.
        """
        old = stock.cached_objcg
        if old is None:
            return
        self.m.observer.obj_event("obj_drains", cpu, old.memcg.id, stock.nr_bytes)
        if stock.nr_bytes:
            nr_pages = stock.nr_bytes >> PAGE_SHIFT
            nr_bytes = stock.nr_bytes & (PAGE_SIZE - 1)
            if nr_pages:
                self.memcg_uncharge_kmem(old, nr_pages, cpu)
            # The leftover is flushed to the centralized per-memcg value; the next
            # refill of this objcg on any CPU moves it into that CPU's stock.
            old.nr_charged_bytes += nr_bytes  # atomic_add()
            stock.nr_bytes = 0
        # The slab vmstat flush (cached_pgdat) changes statistics only: not ported.
        stock.cached_objcg = None  # WRITE_ONCE(); obj_cgroup_put(old)

    def obj_stock_flush_required(self, stock: ObjStockPcp, root_memcg: MemCgroup) -> bool:
        """Port of obj_stock_flush_required() (6.18.y): the cached objcg's memcg is in the
        subtree; the bytes are not looked at."""
        objcg = stock.cached_objcg
        return objcg is not None and mem_cgroup_is_descendant(objcg.memcg, root_memcg)

    def refill_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, allow_uncharge: bool,
                         cpu: int) -> None:
        """Port of refill_obj_stock() (6.18.y; E4-1: trylock_stock + __refill_obj_stock;
        E2: the blocking lock, so never the contended path)."""
        self.m.observer.obj_event("obj_refills", cpu, objcg.memcg.id, nr_bytes)
        stock = self.obj_stock[cpu]
        nr_pages = 0
        if not self._lock(stock):
            # Contended (an interrupt inside this CPU's obj stock section): no switch;
            # whole pages go back now, the sub-page rest to the objcg's shared value.
            nr_pages = nr_bytes >> PAGE_SHIFT
            objcg.nr_charged_bytes += nr_bytes & (PAGE_SIZE - 1)  # atomic_add()
        else:
            if stock.cached_objcg is not objcg:  # reset if necessary
                self.drain_obj_stock(stock, cpu)
                # obj_cgroup_get(objcg); atomic_xchg() only if atomic_read() sees bytes
                stock.nr_bytes = objcg.nr_charged_bytes if objcg.nr_charged_bytes else 0
                objcg.nr_charged_bytes = 0
                stock.cached_objcg = objcg
                allow_uncharge = True  # Allow uncharge when objcg changes
            stock.nr_bytes += nr_bytes
            if allow_uncharge and stock.nr_bytes > PAGE_SIZE:
                nr_pages = stock.nr_bytes >> PAGE_SHIFT
                stock.nr_bytes &= PAGE_SIZE - 1
            if self.era == E4_1 and nr_pages:
                # __refill_obj_stock()'s out: label runs before unlock_stock()
                self.obj_cgroup_uncharge_pages(objcg, nr_pages, cpu)
                nr_pages = 0
            local_unlock(stock.lock)
        # out:
        if nr_pages:
            self.obj_cgroup_uncharge_pages(objcg, nr_pages, cpu)

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """Port of obj_cgroup_charge() (6.18.y obj_cgroup_charge_account with no pgdat; 2026:
        consume, __obj_cgroup_charge, refill only a non-zero remainder: the same steps).

        The bytes already in the stock are ignored on a miss: whole pages are charged
        and the remainder is added to the stock without a flush (allow_uncharge false).
        """
        self.m.observer.obj_event("obj_cgroup_charge", cpu, objcg.memcg.id, size)
        if self.consume_obj_stock(objcg, size, cpu):
            return 0
        ret, remainder = self.obj_cgroup_charge_size(objcg, gfp, size, cpu)
        if not ret and remainder:
            self.refill_obj_stock(objcg, remainder, False, cpu)
        return ret

    def obj_cgroup_uncharge(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """Port of obj_cgroup_uncharge(): refill_obj_stock(objcg, size, true)."""
        self.m.observer.obj_event("obj_cgroup_uncharge", cpu, objcg.memcg.id, size)
        self.refill_obj_stock(objcg, size, True, cpu)

    # ------------------------------------------------------------ drains

    def drain_local_obj_stock(self, cpu: int) -> None:
        """Port of drain_local_obj_stock() (6.18.y), the per-CPU work: always in task
        context here, so the ``!in_task()`` early return never runs."""
        stock = self.obj_stock[cpu]
        local_lock(stock.lock)
        self.drain_obj_stock(stock, cpu)
        stock.flags &= ~(1 << FLUSHING_CACHED_CHARGE)  # clear_bit()
        local_unlock(stock.lock)

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """drain_all_stock()'s obj part for ``cpu`` (6.18.y): the work, run right away."""
        stock = self.obj_stock[cpu]
        flushing = bool(stock.flags & (1 << FLUSHING_CACHED_CHARGE))
        if not flushing and self.obj_stock_flush_required(stock, root_memcg):
            stock.flags |= 1 << FLUSHING_CACHED_CHARGE  # !test_and_set_bit()
            self.drain_local_obj_stock(cpu)

    def drain_dead_cpu(self, cpu: int) -> None:
        """memcg_hotplug_cpu_dead(): drain_obj_stock() of the dead CPU, no lock (6/7 of
        "memcg: make memcg stats irq safe"; E2 took the running CPU's lock, which no
        replayed operation holds)."""
        self.drain_obj_stock(self.obj_stock[cpu], cpu)

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        stock = self.obj_stock[cpu]
        return [(stock.cached_objcg, stock.nr_bytes)]
