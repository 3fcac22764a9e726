"""The single-memcg per-CPU charge stock of v6.15 (era E1).

Ports the stock functions of mm/memcontrol.c as they stood just before "memcg:
multi-memcg percpu charge cache" (Shakeel Butt, 16 Apr 2025): the removed lines of
that patch (``shared/seeds/000_*``) on next-20250415, with the ``local_trylock_t``
of Alexei Starovoitov's v6.15 change. One cached memcg per CPU with an
``unsigned int`` page count; a refill that pushes the count past the batch drains
the whole stock, whatever its size (there is no "> batch" bypass in this era).

The objcg half of this era's stock (``cached_objcg``, ``nr_bytes``) shares the
struct and its lock; its functions are :mod:`memcglab.kernel.obj_stock_v615`
(``self.obj``). drain_local_stock, drain_all_stock and memcg_hotplug_cpu_dead drain
both halves, as v6.15 does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcglab.kernel.memcontrol import (
    GFP_KERNEL,
    Gfp,
    MemcgCharge,
    MemCgroup,
    gfpflags_allow_spinning,
    mem_cgroup_is_descendant,
)
from memcglab.kernel.percpu import LocalTrylock, local_lock, local_trylock, local_unlock

__all__ = ["MemcgStockPcpSingle", "SingleStock"]

FLUSHING_CACHED_CHARGE = 0
_UINT_MASK = (1 << 32) - 1


@dataclass(slots=True)
class MemcgStockPcpSingle:
    """``struct memcg_stock_pcp`` of v6.15: lock, cached, nr_pages, cached_objcg, nr_bytes,
    flags (``cached_pgdat`` and the slab stat caches: statistics, left out)."""

    stock_lock: LocalTrylock = field(default_factory=LocalTrylock)
    cached: MemCgroup | None = None  # this never be root cgroup
    nr_pages: int = 0  # unsigned int
    cached_objcg: object = None  # struct obj_cgroup * (obj_stock_v615)
    nr_bytes: int = 0  # unsigned int
    flags: int = 0


def _test_and_set_bit(bit: int, stock: MemcgStockPcpSingle) -> bool:
    old = bool(stock.flags & (1 << bit))
    stock.flags |= 1 << bit
    return old


class SingleStock(MemcgCharge):
    """The v6.15 charge path: try_charge_memcg over a one-memcg stock per CPU."""

    kernel_version = "v6.15 (single stock, local_trylock_t)"

    def __init__(self, nr_cpus: int, batch: int = 64, observer=None) -> None:
        self.memcg_stock = [MemcgStockPcpSingle() for _ in range(nr_cpus)]
        super().__init__(nr_cpus, batch, observer)

    def consume_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int,
                      gfp: Gfp = GFP_KERNEL) -> bool:
        """Port of consume_stock(memcg, nr_pages, gfp_mask) (v6.15)."""
        ret = False
        if nr_pages > self.batch:
            return ret
        stock = self.memcg_stock[cpu]
        if gfpflags_allow_spinning(gfp):
            local_lock(stock.stock_lock)  # local_lock_irqsave()
        elif not local_trylock(stock.stock_lock):
            return ret
        stock_pages = stock.nr_pages
        if memcg is stock.cached and stock_pages >= nr_pages:
            stock.nr_pages = stock_pages - nr_pages
            ret = True
        local_unlock(stock.stock_lock)
        self.observer.note("consume", cpu, memcg.id, nr_pages, ret)
        if ret:
            self.observer.stock_hit(cpu, memcg.id, nr_pages)
        return ret

    def drain_stock(self, stock: MemcgStockPcpSingle, cpu: int) -> None:
        """Port of drain_stock(stock) (v6.15): return the stocked pages, drop the memcg."""
        stock_pages = stock.nr_pages
        old = stock.cached
        if old is None:
            return
        self.observer.call("drain_stock")
        if stock_pages:
            self.observer.note("drain", cpu, 0, old.id, stock_pages)
            self.memcg_uncharge(old, stock_pages, cpu)
            stock.nr_pages = 0
        old.css_refcnt -= 1  # css_put(&old->css)
        stock.cached = None

    def drain_local_stock(self, cpu: int) -> None:
        """Port of drain_local_stock() (v6.15), the per-CPU work: the obj half first (its
        pages into this stock), then the memcg half; obj_cgroup_put after unlocking."""
        stock = self.memcg_stock[cpu]
        local_lock(stock.stock_lock)  # local_lock_irqsave()
        self.obj.drain_obj_stock(stock, cpu)
        self.drain_stock(stock, cpu)
        stock.flags &= ~(1 << FLUSHING_CACHED_CHARGE)
        local_unlock(stock.stock_lock)

    def refill_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Port of refill_stock() (v6.15): trylock, then __refill_stock()."""
        self.observer.call("refill_stock")
        stock = self.memcg_stock[cpu]
        if not local_trylock(stock.stock_lock):  # local_trylock_irqsave()
            # In case of unlikely failure to lock percpu stock_lock uncharge memcg directly.
            self.memcg_uncharge(memcg, nr_pages, cpu)
            return
        self.refill_stock_locked(memcg, nr_pages, cpu)
        local_unlock(stock.stock_lock)

    def refill_stock_locked(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Port of __refill_stock() (v6.15): ``cpu``'s stock, its lock already held."""
        stock = self.memcg_stock[cpu]
        if stock.cached is not memcg:  # reset if necessary
            if stock.cached is not None:
                self.observer.eviction(cpu, 0, stock.cached.id, stock.nr_pages)
            self.drain_stock(stock, cpu)
            memcg.css_refcnt += 1  # css_get(&memcg->css)
            stock.cached = memcg
        # unsigned int arithmetic: wraps mod 2^32 as in the kernel
        stock_pages = (stock.nr_pages + nr_pages) & _UINT_MASK
        stock.nr_pages = stock_pages
        self.observer.note("refill", cpu, memcg.id, nr_pages)
        if stock_pages > self.batch:
            self.drain_stock(stock, cpu)

    def drain_all_stock(self, root_memcg: MemCgroup, cpu: int) -> None:
        """Port of drain_all_stock() (v6.15), remote work run synchronously in CPU order."""
        if self.percpu_charge_mutex:  # mutex_trylock() failed: someone else drains
            return
        self.percpu_charge_mutex = True
        for c in range(self.nr_cpus):  # for_each_online_cpu()
            stock = self.memcg_stock[c]
            memcg = stock.cached
            flush = bool(memcg is not None and stock.nr_pages
                         and mem_cgroup_is_descendant(memcg, root_memcg))
            if not flush and self.obj.obj_stock_flush_required(stock, root_memcg):
                flush = True  # else if (obj_stock_flush_required(stock, root_memcg))
            if flush and not _test_and_set_bit(FLUSHING_CACHED_CHARGE, stock):
                # c == curcpu calls drain_local_stock() directly; any other CPU gets
                # schedule_work_on(), whose work the contract runs right away.
                self.drain_local_stock(c)
        self.percpu_charge_mutex = False

    def memcg_hotplug_cpu_dead(self, cpu: int) -> int:
        """Port of memcg_hotplug_cpu_dead() (v6.15).

        "drain_obj_stock requires stock_lock": the lock taken is the one of the CPU
        running the callback, and drain_obj_stock's __refill_stock fills *that* CPU's
        memcg stock, so the dead CPU's whole obj pages land on a surviving CPU
        (kernel notes §11.4). The trace names only the dead CPU; the callback runs on
        :meth:`control_cpu`. Then the dead CPU's memcg stock is drained, unlocked.
        """
        stock = self.memcg_stock[cpu]
        here = self.control_cpu(cpu)
        local_lock(self.memcg_stock[here].stock_lock)  # local_lock_irqsave()
        self.obj.drain_obj_stock(stock, here)
        local_unlock(self.memcg_stock[here].stock_lock)
        self.drain_stock(stock, cpu)
        return 0

    def control_cpu(self, dead: int) -> int:
        """The CPU that runs a CPU-dead callback for ``dead``: the lowest-numbered other
        CPU (the replay's choice; ``dead`` itself on a one-CPU machine)."""
        return 0 if dead != 0 or self.nr_cpus == 1 else 1

    def stock_locks(self, cpu: int) -> list[LocalTrylock]:
        return [self.memcg_stock[cpu].stock_lock]  # the obj half shares it

    def stocked_pages(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for stock in self.memcg_stock:
            if stock.cached is not None:
                out[stock.cached.id] = out.get(stock.cached.id, 0) + stock.nr_pages
        return out

    def slot_violation(self) -> str | None:
        """The first stock outside the invariant's bounds, described; None if all hold."""
        for cpu, s in enumerate(self.memcg_stock):
            if s.cached is None and s.nr_pages:
                return f"cpu {cpu} stock is empty but holds {s.nr_pages} pages"
            if not 0 <= s.nr_pages <= self.batch:
                return f"cpu {cpu} stock holds {s.nr_pages} pages (batch {self.batch})"
        return None

    def stocks_json(self) -> list:
        return [[[s.cached.id, s.nr_pages] if s.cached is not None else None]
                for s in self.memcg_stock]
