"""The multi-objcg obj stock of the 2026 mm tree: ``NR_OBJ_STOCK`` = 5 slots, ``drain_idx``.

Port of linux-mm/linux-mm mm/memcontrol.c at 030321517fd4, after "[PATCH v3 0/4]
memcg: shrink obj_stock_pcp and cache multiple objcgs" (Shakeel Butt, 25 May 2026,
20260526033931.1760588-1-shakeel.butt@linux.dev): five cached objcgs per CPU with
``uint16_t nr_bytes[]``, victim by the round robin ``drain_idx`` when all five are
taken, the U16_MAX flush guard, objcgs per memcg per node. Models ``multi-rr`` (this
tree) and ``pcstock-v4`` (the tree v4 was built on, with v4 4/5's
``obj_cgroup_uncharge_pages`` → ``memcg_uncharge``: :class:`ObjStockMultiV4`).

Only the byte side is ported (``index``, ``node_id`` and the int16 slab stat caches
of ``__account_obj_stock`` change statistics, not charges).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup, mem_cgroup_is_descendant
from memcglab.kernel.objcg import PAGE_SHIFT, ObjCgroup, ObjCgroupPath
from memcglab.kernel.page_counter import PAGE_SIZE
from memcglab.kernel.percpu import LocalTrylock, local_lock, local_trylock, local_unlock

__all__ = ["NR_OBJ_STOCK", "ObjStockPcpMulti", "ObjStockMulti", "ObjStockMultiV4"]

NR_OBJ_STOCK = 5
FLUSHING_CACHED_CHARGE = 0
U16_MAX = 0xFFFF


@dataclass(slots=True)
class ObjStockPcpMulti:
    """``struct obj_stock_pcp`` of the 2026 tree: lock, nr_bytes[5], cached[5], work,
    flags, drain_idx (``index``/``node_id``/stats: statistics, left out)."""

    lock: LocalTrylock = field(default_factory=LocalTrylock)
    nr_bytes: list[int] = field(default_factory=lambda: [0] * NR_OBJ_STOCK)  # uint16_t
    cached: list[ObjCgroup | None] = field(default_factory=lambda: [None] * NR_OBJ_STOCK)
    flags: int = 0
    drain_idx: int = 0  # uint8_t, zeroed per-CPU data


class ObjStockMulti(ObjCgroupPath):
    """The five-slot byte stock of linux-mm 030321517fd4 (per-node objcgs)."""

    nr_obj_stock = NR_OBJ_STOCK

    def __init__(self, machine, nodes: int = 1) -> None:
        super().__init__(machine, per_node=True, nodes=nodes)
        self.obj_stock = [ObjStockPcpMulti() for _ in range(machine.nr_cpus)]

    def trylock_stock(self, cpu: int) -> ObjStockPcpMulti | None:
        """Port of trylock_stock(): this CPU's stock, or None when its trylock fails."""
        stock = self.obj_stock[cpu]
        return stock if local_trylock(stock.lock) else None

    @staticmethod
    def unlock_stock(stock: ObjStockPcpMulti | None) -> None:
        """Port of unlock_stock(): unlock only a stock that trylock_stock() returned."""
        if stock is not None:
            local_unlock(stock.lock)

    def locks(self, cpu: int) -> list:
        return [self.obj_stock[cpu].lock]

    def __consume(self, objcg: ObjCgroup, stock: ObjStockPcpMulti, nr_bytes: int) -> bool:
        # __consume_obj_stock(): only the first slot caching objcg is looked at.
        for i in range(NR_OBJ_STOCK):
            if stock.cached[i] is not objcg:
                continue
            if stock.nr_bytes[i] >= nr_bytes:
                stock.nr_bytes[i] -= nr_bytes
                return True
            return False
        return False

    def consume_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, cpu: int) -> bool:
        """Port of consume_obj_stock() and __consume_obj_stock() (030321517fd4)."""
        ret = False
        stock = self.trylock_stock(cpu)
        if stock is not None:
            ret = self.__consume(objcg, stock, nr_bytes)
            self.unlock_stock(stock)
        self.m.observer.obj_event("obj_hits" if ret else "obj_misses", cpu, objcg.memcg.id,
                                  nr_bytes)
        return ret

    def drain_obj_stock_slot(self, stock: ObjStockPcpMulti, i: int, cpu: int) -> None:
        """Port of drain_obj_stock_slot(): pages via memcg_uncharge_kmem, the rest to
        ``nr_charged_bytes``, then obj_cgroup_put. ``cpu`` runs the drain."""
        old = stock.cached[i]
        if old is None:
            return
        self.m.observer.obj_event("obj_drains", cpu, old.memcg.id, stock.nr_bytes[i])
        if stock.nr_bytes[i]:
            nr_pages = stock.nr_bytes[i] >> PAGE_SHIFT
            nr_bytes = stock.nr_bytes[i] & (PAGE_SIZE - 1)
            if nr_pages:
                self.memcg_uncharge_kmem(old, nr_pages, cpu)
            old.nr_charged_bytes += nr_bytes  # atomic_add(): the centralized leftover
            stock.nr_bytes[i] = 0
        # if (stock->index == i) drain_obj_stock_stats(stock): statistics only
        stock.cached[i] = None  # WRITE_ONCE(); obj_cgroup_put(old)

    def drain_obj_stock(self, stock: ObjStockPcpMulti, cpu: int) -> None:
        """Port of drain_obj_stock(): every slot, in ascending order."""
        for i in range(NR_OBJ_STOCK):
            self.drain_obj_stock_slot(stock, i, cpu)

    def obj_stock_flush_required(self, stock: ObjStockPcpMulti, root_memcg: MemCgroup
                                 ) -> bool:
        """Port of obj_stock_flush_required(): any slot's memcg in the subtree (bytes not
        looked at); a match then drains all five slots."""
        for i in range(NR_OBJ_STOCK):
            objcg = stock.cached[i]
            if objcg is None:
                continue
            if mem_cgroup_is_descendant(objcg.memcg, root_memcg):
                return True
        return False

    def __refill(self, objcg: ObjCgroup, stock: ObjStockPcpMulti | None, nr_bytes: int,
                 allow_uncharge: bool, cpu: int) -> None:
        # Port of __refill_obj_stock() (030321517fd4), page flush at its out: label.
        nr_pages = 0
        if stock is None:
            nr_pages = nr_bytes >> PAGE_SHIFT
            objcg.nr_charged_bytes += nr_bytes & (PAGE_SIZE - 1)  # atomic_add()
        else:
            slot = empty_slot = -1
            for i in range(NR_OBJ_STOCK):
                cached = stock.cached[i]
                if cached is None:
                    if empty_slot == -1:
                        empty_slot = i
                    continue
                if cached is objcg:
                    slot = i
                    break
            if slot == -1:
                slot = empty_slot
                if slot == -1:
                    slot = stock.drain_idx  # stock->drain_idx++ (uint8_t), wrapped at 5
                    stock.drain_idx = (stock.drain_idx + 1) & 0xFF
                    if stock.drain_idx == NR_OBJ_STOCK:
                        stock.drain_idx = 0
                    self.m.observer.obj_event("obj_evictions", cpu,
                                              stock.cached[slot].memcg.id, slot)
                    self.drain_obj_stock_slot(stock, slot, cpu)
                # obj_cgroup_get(objcg); the xchg result kept in the unsigned int local
                stock_nr_bytes = objcg.nr_charged_bytes if objcg.nr_charged_bytes else 0
                objcg.nr_charged_bytes = 0
                stock.cached[slot] = objcg
                allow_uncharge = True  # Allow uncharge when objcg changes
            else:
                stock_nr_bytes = stock.nr_bytes[slot]
            stock_nr_bytes += nr_bytes
            if (allow_uncharge and stock_nr_bytes > PAGE_SIZE) or stock_nr_bytes > U16_MAX:
                nr_pages = stock_nr_bytes >> PAGE_SHIFT
                stock_nr_bytes &= PAGE_SIZE - 1
            stock.nr_bytes[slot] = stock_nr_bytes
        # out:
        if nr_pages:
            self.obj_cgroup_uncharge_pages(objcg, nr_pages, cpu)

    def refill_obj_stock(self, objcg: ObjCgroup, nr_bytes: int, allow_uncharge: bool,
                         cpu: int) -> None:
        """Port of refill_obj_stock(): trylock_stock, __refill_obj_stock, unlock_stock."""
        self.m.observer.obj_event("obj_refills", cpu, objcg.memcg.id, nr_bytes)
        stock = self.trylock_stock(cpu)
        self.__refill(objcg, stock, nr_bytes, allow_uncharge, cpu)
        self.unlock_stock(stock)

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """Port of obj_cgroup_charge() (030321517fd4): consume, else __obj_cgroup_charge and
        a refill of a non-zero remainder with allow_uncharge false."""
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

    def drain_local_obj_stock(self, cpu: int) -> None:
        """Port of drain_local_obj_stock(): the work, in task context, blocking lock."""
        stock = self.obj_stock[cpu]
        local_lock(stock.lock)
        self.drain_obj_stock(stock, cpu)
        stock.flags &= ~(1 << FLUSHING_CACHED_CHARGE)  # clear_bit()
        local_unlock(stock.lock)

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """drain_all_stock()'s obj part for ``cpu``: schedule_drain_work()'s work, run now."""
        stock = self.obj_stock[cpu]
        flushing = bool(stock.flags & (1 << FLUSHING_CACHED_CHARGE))
        if not flushing and self.obj_stock_flush_required(stock, root_memcg):
            stock.flags |= 1 << FLUSHING_CACHED_CHARGE  # !test_and_set_bit()
            self.drain_local_obj_stock(cpu)

    def drain_dead_cpu(self, cpu: int) -> None:
        """memcg_hotplug_cpu_dead(): drain_obj_stock() of the dead CPU, no lock."""
        self.drain_obj_stock(self.obj_stock[cpu], cpu)

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        stock = self.obj_stock[cpu]
        return list(zip(stock.cached, stock.nr_bytes, strict=True))


class ObjStockMultiV4(ObjStockMulti):
    """The same stock under v4 of the page_counter-stock series (23 Jun 2026)."""

    def uncharge_pages(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """v4 4/5: obj_cgroup_uncharge_pages() calls memcg_uncharge() instead of
        refill_stock(): every whole page from the obj side is one direct walk."""
        self.m.memcg_uncharge(memcg, nr_pages, cpu)
