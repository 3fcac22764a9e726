"""The page_counter stock of v4 of the series (era E5, v4): the memcg side, patches 2/5-5/5.

Ports mm/memcontrol.c as changed by Joshua Hahn's "[PATCH v4 0/5]
mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter" (23 Jun
2026, lore 20260623180124.868655-1-joshua.hahnjy@gmail.com) on cgroup v2, on the
linux-mm tree of :mod:`memcglab.kernel.memcontrol` (030321517fd4):

* 2/5 flattens try_charge_memcg's memsw/memory charge; on cgroup v2 (no memsw)
  nothing changes;
* 4/5 charges the memory counter through ``page_counter_try_charge_stock`` (no
  ``consume_stock``, no ``batch``, no refill), drains with ``memcg_drain_stock``
  (remote ``atomic_xchg``) in ``drain_all_stock`` and ``memcg_hotplug_cpu_dead``,
  allocates the stock in css_online, and turns the socket and objcg uncharges
  into direct uncharges;
* 5/5 deletes the unused memcg_stock code: nothing observable.

css_offline is unchanged by v4 (``drain_all_stock`` only; there is no
``page_counter_disable_stock`` in v4), and so is the retry loop after the first
charge attempt (:meth:`MemcgCharge.reclaim_retry`). The page_counter side lives in
:mod:`memcglab.kernel.page_counter_stock_v4`.

>>> from memcglab.kernel.observer import Observer
>>> m = PageCounterStockV4Charge(nr_cpus=2, observer=Observer(log=[]))
>>> memcg = m.mem_cgroup_css_alloc(1, m.root_mem_cgroup); m.mem_cgroup_css_online(memcg)
>>> m.try_charge(memcg, GFP_KERNEL, 3, cpu=1), m.try_charge(memcg, GFP_KERNEL, 3, cpu=1)
(0, 0)
>>> m.observer.log
[('walk', 1, 64, 'try_charge'), ('refill', 1, 1, 61), ('hit', 1, 1, 3)]
>>> m.stocks_json()
[{}, {'1': 58}]
"""

from __future__ import annotations

from memcglab.kernel.memcg_stock_pcstock import CounterStockViews
from memcglab.kernel.memcontrol import (
    GFP_KERNEL,
    ChargeRetry,
    Gfp,
    MemcgCharge,
    MemCgroup,
    for_each_mem_cgroup_tree,
    gfpflags_allow_spinning,
)
from memcglab.kernel.page_counter_stock_v4 import (
    page_counter_alloc_stock,
    page_counter_drain_stock,
    page_counter_try_charge_stock,
    page_counter_uncharge,
)

__all__ = ["PageCounterStockV4Charge", "GFP_KERNEL"]


class PageCounterStockV4Charge(CounterStockViews, MemcgCharge):
    """v4's charge path: one lock-free ``atomic_t`` stock per CPU per memory counter."""

    kernel_version = "v4 2026-06-23 (Joshua Hahn, page_counter stock, patches 1-5)"

    def mem_cgroup_css_online(self, memcg: MemCgroup) -> None:
        """mem_cgroup_css_online() with v4 4/5: allocate the memory counter's stock.

        The RFC's drain of the parent's stock (RFC 7/8) was dropped in v3.
        """
        # failure is nonfatal, charges fall back to direct hierarchy
        page_counter_alloc_stock(memcg.memory, self.batch, self.nr_cpus)
        memcg.online = True

    def try_charge_memcg(self, memcg: MemCgroup, gfp: Gfp, nr_pages: int, cpu: int) -> int:
        """Port of try_charge_memcg() after v4 2/5 and 4/5 (cgroup v2): 0 or -ENOMEM.

        Every pass starts with page_counter_try_charge_stock(), which tries this
        CPU's stock, then the batch, then ``nr_pages``. A hit (``nr_charged == 0``)
        returns at once; a walked charge goes to ``handle_high:``, where no memcg is
        over memory.high on the contract's machine. A failure goes to ``reclaim:``,
        the retry loop the kernel keeps (:meth:`MemcgCharge.reclaim_retry`). The
        memsw charge and uncharge of 2/5 are cgroup v1 only (do_memsw_account()).
        """
        self.observer.call("try_charge_memcg")
        loop = ChargeRetry(allow_spinning=gfpflags_allow_spinning(gfp))
        while True:  # retry:
            # the refill variants decide page_counter_try_charge_stock()'s greedy batch
            ok, counter, nr_charged = page_counter_try_charge_stock(
                memcg.memory, nr_pages, cpu, refill=not self.skips_refill(loop.allow_spinning))
            if ok:
                if not nr_charged:
                    self.observer.stock_hit(cpu, memcg.id, nr_pages)
                    return 0
                break  # goto handle_high
            assert counter is not None
            mem_over_limit: MemCgroup = counter.owner  # mem_cgroup_from_counter(counter, memory)
            # reclaim:
            status = self.reclaim_retry(memcg, mem_over_limit, gfp, nr_pages, cpu, loop)
            if status is not None:
                return status
        # handle_high: no memcg is above memory.high ("max"), so memcg_nr_pages_over_high
        # (now grown by nr_charged, 4/5) is never touched.
        return 0

    def consume_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> bool:
        """Removed from the charge path by v4 4/5 (deleted by 5/5): never a hit."""
        return False

    def refill_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Deleted by v4 5/5; 4/5 turned its callers into direct uncharges, as here."""
        self.memcg_uncharge(memcg, nr_pages, cpu)

    def memcg_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """memcg_uncharge(): the plain page_counter_uncharge(); the stock is not touched."""
        page_counter_uncharge(memcg.memory, nr_pages)

    def mem_cgroup_sk_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """mem_cgroup_sk_uncharge() after v4 4/5: ``page_counter_uncharge(&memcg->memory)``.

        obj_cgroup_uncharge_pages() becomes memcg_uncharge() (4/5): the same walk.
        """
        page_counter_uncharge(memcg.memory, nr_pages)

    def memcg_drain_stock(self, memcg: MemCgroup, cpu: int) -> None:
        """Port of memcg_drain_stock() (v4 4/5): the memory counter's stock on ``cpu``.

        The memsw counter's stock is drained too on cgroup v1 (do_memsw_account()).
        """
        page_counter_drain_stock(memcg.memory, cpu)

    def drain_all_stock(self, root_memcg: MemCgroup, cpu: int) -> None:
        """Port of drain_all_stock() after v4 4/5: every stock of the subtree, remotely.

        for_each_mem_cgroup_tree() (pre-order, offline memcgs included: contract V5)
        around for_each_online_cpu(), each stock taken by atomic_xchg (V4). The
        calling CPU plays no part. The obj stock loop that follows holds no pages here.
        """
        if self.percpu_charge_mutex:  # !mutex_trylock(&percpu_charge_mutex)
            return
        self.percpu_charge_mutex = True
        for memcg in for_each_mem_cgroup_tree(root_memcg):
            for online_cpu in range(self.nr_cpus):  # for_each_online_cpu(cpu)
                self.memcg_drain_stock(memcg, online_cpu)
        for c in range(self.nr_cpus):  # the unchanged obj stock loop
            self.obj.drain_cpu_if_needed(c, root_memcg)
        self.percpu_charge_mutex = False

    def memcg_hotplug_cpu_dead(self, cpu: int) -> int:
        """Port of memcg_hotplug_cpu_dead() after v4 4/5: drain_obj_stock of ``cpu``, then
        every memcg's stock on ``cpu``."""
        self.obj.drain_dead_cpu(cpu)
        for memcg in for_each_mem_cgroup_tree(self.root_mem_cgroup):  # for_each_mem_cgroup()
            self.memcg_drain_stock(memcg, cpu)
        return 0

    def stock_locks(self, cpu: int) -> list:
        """No page stock lock: every page stock access is atomic, so ``nested`` changes
        nothing on the page side (V8). The obj stock, which v4 leaves alone, keeps its
        local_trylock, which a ``nested`` object operation finds taken."""
        return self.obj.locks(cpu)

    def slot_violation(self) -> str | None:
        """The first stock outside ``[0, batch - 1]`` (contract V9), described."""
        for m in self.memcgs.values():
            for cpu, s in enumerate(m.memory.stock or ()):
                if not 0 <= s.nr_pages <= self.batch - 1:
                    return f"cpu {cpu} stock of memcg {m.id} holds {s.nr_pages} pages " \
                           f"(batch {self.batch}, at most {self.batch - 1})"
        return None
