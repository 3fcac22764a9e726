"""The multi-memcg per-CPU charge stock (eras E3 and E4, and the historic fix 2).

Ports the memcg stock of mm/memcontrol.c after "memcg: multi-memcg percpu charge
cache" (Shakeel Butt, 16 Apr 2025) with fixes 1-4 and the memcg/obj stock split
(v6.16; 6952350/linux-6.18.y at 312d9602fe3e): ``NR_MEMCG_STOCK`` slots of a
``uint8_t`` page count and a cached memcg each, a full scan of all slots (a
drained slot can leave a hole, so occupied slots need not be contiguous), and a
victim from a pluggable policy (random in E3, the ``drain_idx`` round robin in
E4, linux-mm 030321517fd4). ``fix2=True`` restores fix 2 without Hugh Dickins'
fix 3: a new slot is given ``stock_pages``, which is never assigned on that path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcglab.kernel.memcontrol import MemcgCharge, MemCgroup, mem_cgroup_is_descendant
from memcglab.kernel.percpu import LocalTrylock, local_lock, local_trylock, local_unlock
from memcglab.kernel.victim import VictimPolicy

__all__ = ["MemcgStockPcp", "MultiStock"]

FLUSHING_CACHED_CHARGE = 0


@dataclass(slots=True)
class MemcgStockPcp:
    """``struct memcg_stock_pcp`` (E3: lock, nr_pages[], cached[], work, flags; E4 adds
    ``drain_idx``). ``cpu`` is the simulation's name for this per-CPU instance."""

    cpu: int
    nr_stock: int
    lock: LocalTrylock = field(default_factory=LocalTrylock)
    nr_pages: list[int] = field(default_factory=list)  # uint8_t nr_pages[NR_MEMCG_STOCK]
    cached: list[MemCgroup | None] = field(default_factory=list)
    flags: int = 0
    drain_idx: int = 0  # uint8_t, E4

    def __post_init__(self) -> None:
        self.nr_pages = [0] * self.nr_stock
        self.cached = [None] * self.nr_stock


class MultiStock(MemcgCharge):
    """The v6.16+ charge path over a multi-memcg stock with ``slots`` slots per CPU."""

    kernel_version = "v6.16 (6.18.y 312d9602fe3e)"

    def __init__(self, nr_cpus: int, slots: int, policy: VictimPolicy, batch: int = 64,
                 observer=None, fix2: bool = False) -> None:
        if batch > 127:
            # BUILD_BUG_ON(MEMCG_CHARGE_BATCH > S8_MAX) in refill_stock (fix 1)
            raise ValueError(f"batch={batch}: the multi-memcg stock needs a batch of at most "
                             "127 (uint8_t nr_pages[]; the kernel's BUILD_BUG_ON)")
        self.NR_MEMCG_STOCK = slots
        self.policy = policy
        self.fix2 = fix2
        self.memcg_stock = [MemcgStockPcp(cpu, slots) for cpu in range(nr_cpus)]
        super().__init__(nr_cpus, batch, observer)

    def consume_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> bool:
        """Port of consume_stock() (6.18.y): trylock only, first matching slot only."""
        ret = False
        stock = self.memcg_stock[cpu]
        if nr_pages > self.batch or not local_trylock(stock.lock):
            return ret
        for i in range(self.NR_MEMCG_STOCK):
            if memcg is not stock.cached[i]:
                continue
            stock_pages = stock.nr_pages[i]
            if stock_pages >= nr_pages:
                stock.nr_pages[i] = stock_pages - nr_pages
                ret = True
            self.policy.touch(stock, i)
            break
        local_unlock(stock.lock)
        self.observer.note("consume", cpu, memcg.id, nr_pages, ret)
        if ret:
            self.observer.stock_hit(cpu, memcg.id, nr_pages)
        return ret

    def drain_stock(self, stock: MemcgStockPcp, i: int) -> None:
        """Port of drain_stock(stock, i) (6.18.y): uncharge slot ``i`` and free it."""
        old = stock.cached[i]
        if old is None:
            return
        self.observer.call("drain_stock")
        stock_pages = stock.nr_pages[i]
        if stock_pages:
            self.observer.note("drain", stock.cpu, i, old.id, stock_pages)
            self.memcg_uncharge(old, stock_pages, stock.cpu)
            stock.nr_pages[i] = 0
        old.css_refcnt -= 1  # css_put(&old->css)
        stock.cached[i] = None

    def drain_stock_fully(self, stock: MemcgStockPcp) -> None:
        """Port of drain_stock_fully() (6.18.y): every slot, in ascending order."""
        for i in range(self.NR_MEMCG_STOCK):
            self.drain_stock(stock, i)

    def drain_local_memcg_stock(self, cpu: int) -> None:
        """Port of drain_local_memcg_stock() (6.18.y), the per-CPU work. Always in task
        context here, so the ``!in_task()`` early return never runs."""
        stock = self.memcg_stock[cpu]
        local_lock(stock.lock)
        self.drain_stock_fully(stock)
        stock.flags &= ~(1 << FLUSHING_CACHED_CHARGE)  # clear_bit()
        local_unlock(stock.lock)

    def refill_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Port of refill_stock() (6.18.y; E4 victim via the policy; fix 2 on request)."""
        assert memcg is not self.root_mem_cgroup  # VM_WARN_ON_ONCE(mem_cgroup_is_root())
        self.observer.call("refill_stock")
        stock = self.memcg_stock[cpu]
        success = False
        empty_slot = -1
        if nr_pages > self.batch or not local_trylock(stock.lock):
            # In case of larger than batch refill or unlikely failure to lock the
            # percpu stock_lock, uncharge memcg directly.
            self.memcg_uncharge(memcg, nr_pages, cpu)
            return
        self.observer.note("refill", cpu, memcg.id, nr_pages)
        for i in range(self.NR_MEMCG_STOCK):
            cached = stock.cached[i]
            if cached is None and empty_slot == -1:
                empty_slot = i
            if memcg is cached:
                # uint8_t: at most 127 + 127, so no wrap (BUILD_BUG_ON above)
                stock_pages = stock.nr_pages[i] + nr_pages
                stock.nr_pages[i] = stock_pages
                self.policy.touch(stock, i)
                if stock_pages > self.batch:
                    self.drain_stock(stock, i)
                success = True
                break
        if not success:
            i = empty_slot
            if i == -1:
                i = self.policy.victim(stock)
                victim = stock.cached[i]
                assert victim is not None
                self.observer.eviction(cpu, i, victim.id, stock.nr_pages[i])
                self.drain_stock(stock, i)
            memcg.css_refcnt += 1  # css_get(&memcg->css)
            stock.cached[i] = memcg
            # Fix 2 stored stock_pages, unassigned on this path (Smatch: "uninitialized
            # symbol 'stock_pages'"); the replay contract models its value as 0. Fix 3
            # (Hugh Dickins, 29 Apr 2025) stores nr_pages.
            stock.nr_pages[i] = 0 if self.fix2 else nr_pages
            self.policy.touch(stock, i)
        local_unlock(stock.lock)

    def is_memcg_drain_needed(self, stock: MemcgStockPcp, root_memcg: MemCgroup) -> bool:
        """Port of is_memcg_drain_needed() (6.18.y): any slot of the subtree with pages."""
        for i in range(self.NR_MEMCG_STOCK):
            memcg = stock.cached[i]
            if memcg is None:
                continue
            if stock.nr_pages[i] and mem_cgroup_is_descendant(memcg, root_memcg):
                return True
        return False

    def drain_all_stock(self, root_memcg: MemCgroup, cpu: int) -> None:
        """Port of drain_all_stock() (6.18.y), remote work run synchronously in CPU order."""
        if self.percpu_charge_mutex:  # mutex_trylock() failed: someone else drains
            return
        self.percpu_charge_mutex = True
        for c in range(self.nr_cpus):  # for_each_online_cpu()
            memcg_st = self.memcg_stock[c]
            if self.fix2:
                # mm-unstable 25 Apr 2025 (seed 000's base): one flag and one work for both
                # halves; is_drain_needed() asks the obj half first, then the slots.
                if (self.is_drain_needed(memcg_st, root_memcg)
                        and not self._test_and_set_flushing(memcg_st)):
                    self.drain_local_stock(c)
                continue
            flushing = bool(memcg_st.flags & (1 << FLUSHING_CACHED_CHARGE))
            if (not flushing and self.is_memcg_drain_needed(memcg_st, root_memcg)
                    and not self._test_and_set_flushing(memcg_st)):
                # c == cpu calls drain_local_memcg_stock() directly; another CPU gets
                # schedule_drain_work(), whose work the contract runs right away.
                self.drain_local_memcg_stock(c)
            self.obj.drain_cpu_if_needed(c, root_memcg)  # the obj stock, same CPU
        self.percpu_charge_mutex = False

    def is_drain_needed(self, stock: MemcgStockPcp, root_memcg: MemCgroup) -> bool:
        """Port of is_drain_needed() (seed 000, mm-unstable April 2025): the obj half's
        obj_stock_flush_required(), else a slot of the subtree with pages."""
        if self.obj.obj_stock_flush_required(self.obj.obj_stock[stock.cpu], root_memcg):
            return True
        return self.is_memcg_drain_needed(stock, root_memcg)

    def drain_local_stock(self, cpu: int) -> None:
        """Port of drain_local_stock() (mm-unstable April 2025), the work of both halves
        under the one stock_lock (local_lock_irqsave): drain_obj_stock, then every slot."""
        stock = self.memcg_stock[cpu]
        local_lock(stock.lock)
        self.obj.drain_obj_stock(self.obj.obj_stock[cpu], cpu)
        self.drain_stock_fully(stock)
        stock.flags &= ~(1 << FLUSHING_CACHED_CHARGE)  # clear_bit()
        local_unlock(stock.lock)

    @staticmethod
    def _test_and_set_flushing(stock: MemcgStockPcp) -> bool:
        old = bool(stock.flags & (1 << FLUSHING_CACHED_CHARGE))
        stock.flags |= 1 << FLUSHING_CACHED_CHARGE
        return old

    def memcg_hotplug_cpu_dead(self, cpu: int) -> int:
        """Port of memcg_hotplug_cpu_dead() (6.18.y): the dead CPU's obj stock, then its
        memcg stock, no lock (mm-unstable April 2025 took the running CPU's lock for the
        obj half, which no replayed operation holds)."""
        self.obj.drain_dead_cpu(cpu)
        self.drain_stock_fully(self.memcg_stock[cpu])
        return 0

    def stock_locks(self, cpu: int) -> list[LocalTrylock]:
        return [self.memcg_stock[cpu].lock, *self.obj.locks(cpu)]

    def stocked_pages(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for stock in self.memcg_stock:
            for memcg, pages in zip(stock.cached, stock.nr_pages, strict=True):
                if memcg is not None:
                    out[memcg.id] = out.get(memcg.id, 0) + pages
        return out

    def slot_violation(self) -> str | None:
        """The first slot outside the invariant's bounds, described; None if all hold."""
        for s in self.memcg_stock:
            for i, (memcg, pages) in enumerate(zip(s.cached, s.nr_pages, strict=True)):
                if memcg is None and pages:
                    return f"cpu {s.cpu} slot {i} is empty but holds {pages} pages"
                if not 0 <= pages <= self.batch:
                    return f"cpu {s.cpu} slot {i} holds {pages} pages (batch {self.batch})"
        return None

    def stocks_json(self) -> list:
        return [[[m.id, p] if m is not None else None
                 for m, p in zip(s.cached, s.nr_pages, strict=True)]
                for s in self.memcg_stock]
