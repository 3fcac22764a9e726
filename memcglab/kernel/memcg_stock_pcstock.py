"""The page_counter stock of the RFC (era E5): the memcg side, patches 5-8.

Ports mm/memcontrol.c as changed by Joshua Hahn's "[PATCH 0/8 RFC]
mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter" (10 Apr
2026, ``shared/seeds/003_*``) on cgroup v2: the memcg stock is gone;
``try_charge_memcg`` charges ``nr_pages`` through the stock-aware
``page_counter_try_charge`` (5/8), every uncharge goes to the stock-aware
``page_counter_uncharge`` (5/8), css_online enables the memory counter's stock and
drains the parent's (5/8, 7/8), css_offline drains and disables it, and
``drain_all_stock`` / hotplug drain the page_counter stocks (5/8). Patch 6/8 (the
memsw stock) is cgroup v1 only and does not run here.
"""

from __future__ import annotations

from memcglab.kernel.memcontrol import (
    MemcgCharge,
    MemCgroup,
    for_each_mem_cgroup_tree,
)
from memcglab.kernel.page_counter import (
    PageCounter,
    page_counter_set_low,
    page_counter_set_min,
    page_counter_try_charge,
    page_counter_uncharge,
)
from memcglab.kernel.page_counter_stock import (
    page_counter_disable_stock,
    page_counter_drain_cpu,
    page_counter_drain_stock,
    page_counter_enable_stock,
)
from memcglab.kernel.percpu import LocalTrylock

__all__ = ["CounterStockViews", "PageCounterStockCharge"]


class CounterStockViews:
    """What the replay reads of per-page_counter stocks (the RFC's and v4's alike).

    Not a kernel port: the replay's view of ``memcg->memory.stock`` on every CPU,
    for the conservation check and the ``stocks`` output (pcstock's dict form).
    """

    def stocked_pages(self) -> dict[int, int]:
        """Pages in each memcg's memory-counter stocks, summed over CPUs."""
        return {m.id: sum(s.nr_pages for s in m.memory.stock)
                for m in self.memcgs.values() if m.memory.stock is not None}

    def stocks_json(self) -> list:
        """Per CPU, ``{"MEMCG": nr_pages}`` for every non-zero stock (replay contract)."""
        out = []
        for cpu in range(self.nr_cpus):
            out.append({str(m.id): m.memory.stock[cpu].nr_pages for m in self.memcgs.values()
                        if m.memory.stock is not None and m.memory.stock[cpu].nr_pages})
        return out


class PageCounterStockCharge(CounterStockViews, MemcgCharge):
    """The RFC's charge path: per-page_counter, per-CPU stocks of up to ``batch`` pages."""

    kernel_version = "RFC 2026-04-10 (Joshua Hahn, page_counter stock, patches 1-8)"

    def mem_cgroup_css_online(self, memcg: MemCgroup) -> None:
        """mem_cgroup_css_online() with RFC 5/8 and 7/8."""
        # failure is nonfatal, charges fall back to direct hierarchy
        page_counter_enable_stock(memcg.memory, self.batch, self.nr_cpus)
        # On v2, non-leaf memcgs cannot directly be charged. This child's parent is
        # no longer a leaf, so drain the parent's stock.
        parent = memcg.parent
        if parent is not None:
            page_counter_drain_stock(parent.memory, range(self.nr_cpus))
        memcg.online = True

    def mem_cgroup_css_offline(self, memcg: MemCgroup) -> None:
        """mem_cgroup_css_offline() with RFC 5/8: drain_all_stock, then disable the stock."""
        page_counter_set_min(memcg.memory, 0)
        page_counter_set_low(memcg.memory, 0)
        self.obj.memcg_reparent_objcgs(memcg)  # before drain_all_stock (2026 tree)
        self.drain_all_stock(memcg, cpu=0)
        page_counter_disable_stock(memcg.memory)
        memcg.online = False

    def charge_counters(self, memcg: MemCgroup, nr_pages: int, cpu: int
                        ) -> tuple[bool, PageCounter | None]:
        """The RFC's stock-aware page_counter_try_charge(); the refill variants (the
        scenario contract's ``refill``) decide its ``max(batch, nr_pages)`` there."""
        return page_counter_try_charge(memcg.memory, nr_pages, cpu,
                                       refill=not self.skips_refill(True))

    def consume_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> bool:
        """Deleted by RFC 5/8: the stock is consulted inside page_counter_try_charge()."""
        return False

    def charge_batch(self, nr_pages: int) -> int:
        """RFC 5/8 charges exactly ``nr_pages``: no batch retry, no done_restock refill."""
        return nr_pages

    def refill_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """RFC 5/8 turns the refill_stock() callers into direct page_counter_uncharge()."""
        page_counter_uncharge(memcg.memory, nr_pages, cpu)

    def memcg_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """memcg_uncharge(): page_counter_uncharge() of a stock-enabled counter (RFC 3/8)."""
        page_counter_uncharge(memcg.memory, nr_pages, cpu)

    def drain_all_stock(self, root_memcg: MemCgroup, cpu: int) -> None:
        """drain_all_stock() after RFC 5/8: every page_counter stock of the subtree."""
        if self.percpu_charge_mutex:
            return
        self.percpu_charge_mutex = True
        for memcg in for_each_mem_cgroup_tree(root_memcg):
            page_counter_drain_stock(memcg.memory, range(self.nr_cpus))
        for c in range(self.nr_cpus):  # "Drain obj_stock on all online CPUs"
            self.obj.drain_cpu_if_needed(c, root_memcg)
        self.percpu_charge_mutex = False

    def memcg_hotplug_cpu_dead(self, cpu: int) -> int:
        """memcg_hotplug_cpu_dead() after RFC 5/8: the obj stock, then every memcg's
        page_counter stock on that CPU."""
        self.obj.drain_dead_cpu(cpu)
        for memcg in for_each_mem_cgroup_tree(self.root_mem_cgroup):  # for_each_mem_cgroup()
            page_counter_drain_cpu(memcg.memory, cpu)
        return 0

    def stock_locks(self, cpu: int) -> list[LocalTrylock]:
        return [*(m.memory.stock[cpu].lock for m in self.memcgs.values()
                  if m.memory.stock is not None), *self.obj.locks(cpu)]

    def slot_violation(self) -> str | None:
        for m in self.memcgs.values():
            for cpu, s in enumerate(m.memory.stock or ()):
                if not 0 <= s.nr_pages <= self.batch:
                    return f"cpu {cpu} stock of memcg {m.id} holds {s.nr_pages} pages " \
                           f"(batch {self.batch})"
        return None
