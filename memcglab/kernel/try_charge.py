"""try_charge_memcg() and its retry loop: the charge path of mm/memcontrol.c.

Ports, from 6952350/linux-6.18.y mm/memcontrol.c at 312d9602fe3e (E3) and
linux-mm/linux-mm mm/memcontrol.c at 030321517fd4 (E4): ``try_charge_memcg`` with
its whole retry loop, ``memcg_uncharge``, ``mem_cgroup_margin``,
``mem_cgroup_oom`` as far as a charge sees it. The kernel file keeps the charge
path apart from the css callbacks and the memory events; so does this port:
:class:`ChargePath` is the charge half of :class:`memcglab.kernel.memcontrol.MemcgCharge`,
which supplies the stock (``consume_stock``, ``refill_stock``, ``drain_all_stock``)
and ``memcg_memory_event``.

Differences from the kernel, all deliberate:

* "This CPU" is an explicit ``cpu`` argument: the simulation has no current CPU.
* Reclaim (``try_to_free_mem_cgroup_pages``) returns 0 and the OOM killer kills
  nothing, as the contract specifies; both are methods so a later model can vary
  them.
* ``current`` is ``MemcgCharge.current``, a :class:`~memcglab.kernel.memcontrol_h.TaskStruct`
  holding the few task states try_charge_memcg tests; the replay's task has none set.
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.kernel.memcontrol_h import (
    MAX_RECLAIM_RETRIES,
    PAGE_ALLOC_COSTLY_ORDER,
    Gfp,
    MemcgEvent,
    MemCgroup,
    get_order,
    gfpflags_allow_blocking,
    gfpflags_allow_spinning,
)
from memcglab.kernel.memcontrol_v1 import do_memsw_account
from memcglab.kernel.page_counter import (
    ENOMEM,
    PAGE_SIZE,
    PageCounter,
    page_counter_charge,
    page_counter_read,
    page_counter_try_charge,
    page_counter_uncharge,
)

__all__ = ["ChargePath", "ChargeRetry", "REFILLS"]

#: The scenario contract's ``refill`` design key: ``always`` is the kernel as the
#: models port it; ``not-in-irq`` is "memcg: skip stock refill in irq context" (Shakeel
#: Butt, 2023 test patch): try_charge_memcg starts with ``if (!in_task()) batch =
#: nr_pages;``; ``never`` is the flipped gfpflags_allow_spinning() test (March 2025):
#: every charge uses ``batch = nr_pages``. Uncharges reach the stock as in the model.
REFILLS = ("always", "not-in-irq", "never")


@dataclass(slots=True)
class ChargeRetry:
    """The locals of one try_charge_memcg() call that survive ``goto retry``."""

    allow_spinning: bool
    nr_retries: int = MAX_RECLAIM_RETRIES
    passed_oom: bool = False
    drained: bool = False
    raised_max_event: bool = False


class ChargePath:
    """The charge half of ``MemcgCharge``: try_charge_memcg(), its retry loop, uncharges.

    Mixed into :class:`memcglab.kernel.memcontrol.MemcgCharge`, which provides the
    state (``batch``, ``current``, ``root_mem_cgroup``) and the per-era stock.
    """

    def mem_cgroup_margin(self, memcg: MemCgroup) -> int:
        """Port of mem_cgroup_margin(): pages left below memory.max and, with
        do_memsw_account() (cgroup v1 with swap), below memsw.max too."""
        margin = 0
        count = page_counter_read(memcg.memory)
        limit = memcg.memory.max
        if count < limit:
            margin = limit - count
        if do_memsw_account(self):
            count = page_counter_read(memcg.memsw)
            limit = memcg.memsw.max
            if count < limit:
                margin = min(margin, limit - count)
            else:
                margin = 0
        return margin

    def try_to_free_mem_cgroup_pages(self, memcg: MemCgroup, nr_pages: int) -> int:
        """Reclaim on the contract's machine frees nothing."""
        return 0

    def mem_cgroup_out_of_memory(self, memcg: MemCgroup, order: int) -> bool:
        """mem_cgroup_out_of_memory(): the kill is skipped when the margin already covers
        the request; otherwise the contract's OOM killer makes no progress."""
        if self.mem_cgroup_margin(memcg) >= (1 << order):
            return True
        return False

    def mem_cgroup_oom(self, memcg: MemCgroup, order: int) -> bool:
        """mem_cgroup_oom() as seen from try_charge_memcg (v2: no v1 oom hooks)."""
        if order > PAGE_ALLOC_COSTLY_ORDER:
            return False
        self.memcg_memory_event(memcg, MemcgEvent.MEMCG_OOM, True)
        return self.mem_cgroup_out_of_memory(memcg, order)

    def try_charge(self, memcg: MemCgroup, gfp: Gfp, nr_pages: int, cpu: int) -> int:
        """try_charge(): the root memcg is never charged."""
        if memcg is self.root_mem_cgroup:
            return 0
        return self.try_charge_memcg(memcg, gfp, nr_pages, cpu)

    def charge_counters(self, memcg: MemCgroup, nr_pages: int, cpu: int
                        ) -> tuple[bool, PageCounter | None]:
        """The counter charges inside try_charge_memcg (and v5.x try_charge): ``(ok,
        failing counter)``, whose ``owner`` is ``mem_over_limit``.

        On cgroup v2 (and v1 without swap accounting) only ``memory``. With
        do_memsw_account(), ``memsw`` first: if it refuses, its failing counter is the
        one over its limit (the kernel also clears MEMCG_RECLAIM_MAY_SWAP, which only
        reclaim reads, and reclaim frees nothing here); if ``memory`` then refuses,
        memsw is uncharged again and memory's counter is the one over its limit.
        The kernel's ``if (!do_memsw_account() || page_counter_try_charge(memsw))``
        is split in two tests here, with the same calls in the same order.
        """
        if do_memsw_account(self):
            ok, counter = page_counter_try_charge(memcg.memsw, nr_pages, cpu)
            if not ok:
                return False, counter  # mem_cgroup_from_counter(counter, memsw)
        ok, counter = page_counter_try_charge(memcg.memory, nr_pages, cpu)
        if ok:
            return True, None  # goto done_restock
        if do_memsw_account(self):
            page_counter_uncharge(memcg.memsw, nr_pages, cpu)
        return False, counter  # mem_cgroup_from_counter(counter, memory)

    def charge_batch(self, nr_pages: int) -> int:
        """``batch = max(MEMCG_CHARGE_BATCH, nr_pages)``: the first charge trial's size.

        With ``refill = "not-in-irq"`` the next line of the variant follows: ``if
        (!in_task()) batch = nr_pages;``, so a charge in interrupt or softirq context
        takes only what it needs and never refills (or switches) the stock.
        """
        batch = max(self.batch, nr_pages)
        if self.refill == "not-in-irq" and not self.in_task:
            batch = nr_pages
        return batch

    def skips_refill(self, allow_spinning: bool) -> bool:
        """Whether the refill variant in use makes this charge use ``batch = nr_pages``.

        The page_counter-stock models decide the batch inside the counter's charge
        (RFC 2/8 page_counter_try_charge, v4 3/5 page_counter_try_charge_stock, as
        ``max(counter->batch, nr_pages)``); they take this answer there, so the
        stock is still consulted first and never refilled.
        """
        if self.refill == "never":
            return allow_spinning  # the flipped test: if (gfpflags_allow_spinning(gfp))
        return self.refill == "not-in-irq" and not self.in_task

    def try_charge_memcg(self, memcg: MemCgroup, gfp: Gfp, nr_pages: int, cpu: int) -> int:
        """Port of try_charge_memcg() (6.18.y / linux-mm 030321517fd4): 0 or -ENOMEM.

        The branches that cannot run on the contract's machine are kept, in order,
        so the port reads beside the C: the task states of :attr:`current`
        (PF_MEMALLOC, task_in_memcg_oom, an OOM victim whose mm has MMF_OOM_SKIP, a
        dying task) are false for the replay's task; memory.high is unset.
        """
        self.observer.call("try_charge_memcg")
        batch = self.charge_batch(nr_pages)
        loop = ChargeRetry(allow_spinning=gfpflags_allow_spinning(gfp))

        while True:  # retry:
            if self.consume_stock(memcg, nr_pages, cpu):
                return 0
            # refill = "never" flips this test (March 2025): if (allow_spinning), which
            # GFP_KERNEL always passes, so every charge takes batch = nr_pages.
            if (loop.allow_spinning if self.refill == "never" else not loop.allow_spinning):
                batch = nr_pages  # avoid the refill and flush of the older stock
            ok, counter = self.charge_counters(memcg, batch, cpu)
            if ok:
                break  # goto done_restock
            assert counter is not None
            mem_over_limit: MemCgroup = counter.owner  # mem_cgroup_from_counter(counter, memory)

            if batch > nr_pages:
                batch = nr_pages
                continue
            status = self.reclaim_retry(memcg, mem_over_limit, gfp, nr_pages, cpu, loop)
            if status is not None:
                return status

        # done_restock:
        if batch > nr_pages:
            self.refill_stock(memcg, batch - nr_pages, cpu)
        # The memory.high loop finds no memcg over its high limit (high is "max").
        return 0

    def reclaim_retry(self, memcg: MemCgroup, mem_over_limit: MemCgroup, gfp: Gfp,
                      nr_pages: int, cpu: int, loop: ChargeRetry) -> int | None:
        """The rest of a failed pass of try_charge_memcg(): None to ``goto retry``, else
        the call's return value (0 after ``force:``, or -ENOMEM).

        From the PF_MEMALLOC check to the ``force:`` label, in the kernel's order
        (linux-mm 030321517fd4); v4 of the page_counter stock series (its ``reclaim:``
        label, 2/5 and 4/5) keeps all of it, so both charge paths share this code.
        """
        current = self.current
        if current.pf_memalloc:  # unlikely(current->flags & PF_MEMALLOC)
            return self._force(memcg, mem_over_limit, nr_pages, loop)
        if current.memcg_in_oom:  # unlikely(task_in_memcg_oom(current))
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)
        if not gfpflags_allow_blocking(gfp):
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)
        # An OOM victim still needs to charge memory to exit; once the reaper has
        # set MMF_OOM_SKIP on its mm, fail the charge to expedite the exit.
        if current.oom_victim and current.mmf_oom_skip:
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)

        self.memcg_memory_event(mem_over_limit, MemcgEvent.MEMCG_MAX, loop.allow_spinning)
        loop.raised_max_event = True
        nr_reclaimed = self.try_to_free_mem_cgroup_pages(mem_over_limit, nr_pages)
        if self.mem_cgroup_margin(mem_over_limit) >= nr_pages:
            return None
        if not loop.drained:
            self.drain_all_stock(mem_over_limit, cpu)
            loop.drained = True
            return None
        if gfp & Gfp.NORETRY:
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)
        # Even though the limit is exceeded, reclaim may have freed some pages: retry
        # before killing, for regular (small) pages only.
        if nr_reclaimed and nr_pages <= (1 << PAGE_ALLOC_COSTLY_ORDER):
            return None
        if loop.nr_retries:  # if (nr_retries--) goto retry;
            loop.nr_retries -= 1
            return None
        loop.nr_retries -= 1
        if gfp & Gfp.RETRY_MAYFAIL:
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)
        # Avoid an endless loop for tasks bypassed by the OOM killer.
        if loop.passed_oom and current.dying:
            return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)
        if self.mem_cgroup_oom(mem_over_limit, get_order(nr_pages * PAGE_SIZE)):
            loop.passed_oom = True
            loop.nr_retries = MAX_RECLAIM_RETRIES
            return None
        return self._nomem(memcg, mem_over_limit, gfp, nr_pages, loop)

    def _nomem(self, memcg: MemCgroup, mem_over_limit: MemCgroup, gfp: Gfp, nr_pages: int,
               loop: ChargeRetry) -> int:
        """The ``nomem:`` label: fail unless the caller may not fail."""
        if not gfp & (Gfp.NOFAIL | Gfp.HIGH):
            return -ENOMEM
        return self._force(memcg, mem_over_limit, nr_pages, loop)

    def _force(self, memcg: MemCgroup, mem_over_limit: MemCgroup, nr_pages: int,
               loop: ChargeRetry) -> int:
        """The ``force:`` label: raise MEMCG_MAX if the pass has not, then charge past the limit.

        The event goes to ``mem_over_limit`` with the call's ``allow_spinning``, as
        in the kernel; the pages are charged to ``memcg`` (and its memsw with
        do_memsw_account()).
        """
        if not loop.raised_max_event:
            self.memcg_memory_event(mem_over_limit, MemcgEvent.MEMCG_MAX, loop.allow_spinning)
        page_counter_charge(memcg.memory, nr_pages)
        if do_memsw_account(self):
            page_counter_charge(memcg.memsw, nr_pages)
        return 0

    def memcg_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Port of memcg_uncharge(): direct, no stock; memsw too with do_memsw_account()
        (v5.x's drain_stock, cancel_charge and uncharge_batch have the same two calls)."""
        page_counter_uncharge(memcg.memory, nr_pages, cpu)
        if do_memsw_account(self):
            page_counter_uncharge(memcg.memsw, nr_pages, cpu)

    def mem_cgroup_sk_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """mem_cgroup_sk_uncharge() on v2 (also obj_cgroup_uncharge_pages): via refill_stock."""
        self.refill_stock(memcg, nr_pages, cpu)
