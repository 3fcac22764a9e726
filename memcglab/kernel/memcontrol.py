"""The memcg charge path of mm/memcontrol.c: the state it touches and the common code.

Ports, from 6952350/linux-6.18.y mm/memcontrol.c at 312d9602fe3e (E3) and
linux-mm/linux-mm mm/memcontrol.c at 030321517fd4 (E4): ``try_charge_memcg`` with
its whole retry loop, ``memcg_uncharge``, ``mem_cgroup_margin``,
``__memcg_memory_event``, ``mem_cgroup_oom`` as far as a charge sees it, and the css
lifecycle as far as stocks go. The per-CPU stock of each era lives in its own module
(:mod:`memcglab.kernel.memcg_stock_single`, :mod:`~memcglab.kernel.memcg_stock_multi`,
:mod:`~memcglab.kernel.memcg_stock_pcstock`,
:mod:`~memcglab.kernel.memcg_stock_pcstock_v4`); each subclasses :class:`MemcgCharge`
and provides ``consume_stock``, ``refill_stock``, ``drain_all_stock`` and
``memcg_hotplug_cpu_dead``; v4 also replaces ``try_charge_memcg``'s first charge
attempt and keeps its retry tail (:meth:`MemcgCharge.reclaim_retry`).

The machine the replay contract describes: cgroup v2 (no memsw), gfp
``GFP_KERNEL``, reclaim that frees nothing, a memcg OOM killer that makes no
progress, no memory.high, every call in task context.

Differences from the kernel, all deliberate:

* "This CPU" is an explicit ``cpu`` argument: the simulation has no current CPU.
* Reclaim (``try_to_free_mem_cgroup_pages``) returns 0 and the OOM killer kills
  nothing, as the contract specifies; both are functions so a later model can vary
  them.
* Remote stock drains, asynchronous work items in the kernel, run synchronously
  in CPU order (the contract's ``drain_all``); the caller in the kernel does not
  wait for them, so a kernel run may see them later, never differently.
* ``current`` is :attr:`MemcgCharge.current`, a :class:`TaskStruct` holding the
  few task states try_charge_memcg tests; the replay's task has none of them set.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field

from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import (
    ENOMEM,
    PAGE_SIZE,
    PageCounter,
    page_counter_charge,
    page_counter_init,
    page_counter_read,
    page_counter_set_low,
    page_counter_set_min,
    page_counter_try_charge,
    page_counter_uncharge,
)

__all__ = [
    "MEMCG_CHARGE_BATCH",
    "MAX_RECLAIM_RETRIES",
    "PAGE_ALLOC_COSTLY_ORDER",
    "MemcgEvent",
    "Gfp",
    "GFP_KERNEL",
    "MemCgroup",
    "MemcgCharge",
    "TaskStruct",
    "ChargeRetry",
    "mem_cgroup_is_descendant",
]

#: include/linux/memcontrol.h: "size of first charge trial" (64U since ~v6.1).
MEMCG_CHARGE_BATCH = 64
#: mm/internal.h
MAX_RECLAIM_RETRIES = 16
PAGE_ALLOC_COSTLY_ORDER = 3


class MemcgEvent(enum.IntEnum):
    """``enum memcg_memory_event`` (include/linux/memcontrol.h, linux-mm 044c4600b3bd)."""

    MEMCG_LOW = 0
    MEMCG_HIGH = 1
    MEMCG_MAX = 2
    MEMCG_OOM = 3
    MEMCG_OOM_KILL = 4
    MEMCG_OOM_GROUP_KILL = 5
    MEMCG_SWAP_HIGH = 6
    MEMCG_SWAP_MAX = 7
    MEMCG_SWAP_FAIL = 8
    MEMCG_SOCK_THROTTLED = 9


MEMCG_NR_MEMORY_EVENTS = 10


class Gfp(enum.IntFlag):
    """The gfp bits the charge path tests (include/linux/gfp_types.h); ``RETRY_MAYFAIL`` is
    ``__GFP_RETRY_MAYFAIL`` and so on (Python reserves the leading underscores)."""

    HIGH = 1 << 0
    IO = 1 << 1
    FS = 1 << 2
    DIRECT_RECLAIM = 1 << 3
    KSWAPD_RECLAIM = 1 << 4
    RETRY_MAYFAIL = 1 << 5
    NOFAIL = 1 << 6
    NORETRY = 1 << 7


_GFP_RECLAIM = Gfp.DIRECT_RECLAIM | Gfp.KSWAPD_RECLAIM
GFP_KERNEL = _GFP_RECLAIM | Gfp.IO | Gfp.FS


def gfpflags_allow_spinning(gfp: Gfp) -> bool:
    """include/linux/gfp.h: any reclaim bit means the caller may spin on locks."""
    return bool(gfp & _GFP_RECLAIM)


def gfpflags_allow_blocking(gfp: Gfp) -> bool:
    return bool(gfp & Gfp.DIRECT_RECLAIM)


def get_order(size: int) -> int:
    """get_order(): the smallest order whose 2^order pages hold ``size`` bytes."""
    order, pages = 0, (size + PAGE_SIZE - 1) // PAGE_SIZE
    while (1 << order) < pages:
        order += 1
    return order


@dataclass(slots=True, eq=False)
class MemCgroup:
    """The part of ``struct mem_cgroup`` the charge path touches (cgroup v2)."""

    id: int
    parent: MemCgroup | None
    memory: PageCounter = field(default_factory=PageCounter)
    online: bool = False
    css_refcnt: int = 0  # references held by stock slots (css_get/css_put)
    memory_events: list[int] = field(default_factory=lambda: [0] * MEMCG_NR_MEMORY_EVENTS)
    memory_events_local: list[int] = field(
        default_factory=lambda: [0] * MEMCG_NR_MEMORY_EVENTS)
    children: list[MemCgroup] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"MemCgroup({self.id})"


def mem_cgroup_is_descendant(memcg: MemCgroup, root: MemCgroup) -> bool:
    """mem_cgroup_is_descendant(): true for ``root`` itself and everything below it."""
    m: MemCgroup | None = memcg
    while m is not None:
        if m is root:
            return True
        m = m.parent
    return False


@dataclass(slots=True)
class TaskStruct:
    """The task states of ``current`` that try_charge_memcg tests (all false in a replay).

    ``pf_memalloc`` is ``current->flags & PF_MEMALLOC``; ``memcg_in_oom`` is
    task_in_memcg_oom(current) (cgroup v1's OOM handling); ``oom_victim`` is
    tsk_is_oom_victim(current) and ``mmf_oom_skip`` is
    ``mm_flags_test(MMF_OOM_SKIP, current->signal->oom_mm)``; ``dying`` is
    task_is_dying(). Tests set them to reach the branches a replay never takes.
    """

    pf_memalloc: bool = False
    memcg_in_oom: bool = False
    oom_victim: bool = False
    mmf_oom_skip: bool = False
    dying: bool = False


def for_each_mem_cgroup_tree(root: MemCgroup) -> list[MemCgroup]:
    """The pre-order walk of mem_cgroup_iter(): ``root`` first, children by creation."""
    out, stack = [], [root]
    while stack:
        m = stack.pop()
        out.append(m)
        stack.extend(reversed(m.children))
    return out


@dataclass(slots=True)
class ChargeRetry:
    """The locals of one try_charge_memcg() call that survive ``goto retry``."""

    allow_spinning: bool
    nr_retries: int = MAX_RECLAIM_RETRIES
    passed_oom: bool = False
    drained: bool = False
    raised_max_event: bool = False


class MemcgCharge(abc.ABC):
    """The charge-path state of one machine: memcgs, per-CPU stocks, the charge code.

    Subclasses port one era's stock. ``batch`` stands for ``MEMCG_CHARGE_BATCH``,
    a build-time constant the replay lets a user vary.
    """

    kernel_version = ""

    def __init__(self, nr_cpus: int, batch: int = MEMCG_CHARGE_BATCH,
                 observer: Observer | None = None) -> None:
        self.nr_cpus = nr_cpus
        self.batch = batch
        self.observer = observer if observer is not None else Observer()
        self.percpu_charge_mutex = False  # static DEFINE_MUTEX(percpu_charge_mutex)
        self.current = TaskStruct()
        self.memcgs: dict[int, MemCgroup] = {}
        self.root_mem_cgroup = self.mem_cgroup_css_alloc(0, None)
        self.mem_cgroup_css_online(self.root_mem_cgroup)

    # ------------------------------------------------------------ css lifecycle

    def mem_cgroup_css_alloc(self, memcg_id: int, parent: MemCgroup | None,
                             max_pages: int | None = None) -> MemCgroup:
        """mem_cgroup_css_alloc() as far as the memory counter goes (v2: protection on)."""
        memcg = MemCgroup(memcg_id, parent)
        page_counter_init(memcg.memory, parent.memory if parent else None, True)
        memcg.memory.owner = memcg
        memcg.memory.observer = self.observer
        if max_pages is not None:
            memcg.memory.max = max_pages
        if parent is not None:
            parent.children.append(memcg)
        self.memcgs[memcg_id] = memcg
        return memcg

    def mem_cgroup_css_online(self, memcg: MemCgroup) -> None:
        """mem_cgroup_css_online(): no stock handling in E1-E4."""
        memcg.online = True

    def mem_cgroup_css_offline(self, memcg: MemCgroup) -> None:
        """mem_cgroup_css_offline(), in the kernel's order, as far as stocks go."""
        page_counter_set_min(memcg.memory, 0)
        page_counter_set_low(memcg.memory, 0)
        self.drain_all_stock(memcg, cpu=0)
        memcg.online = False

    # ------------------------------------------------------------ memory events

    def memcg_memory_event(self, memcg: MemCgroup, event: MemcgEvent,
                             allow_spinning: bool) -> None:
        """Port of __memcg_memory_event() (linux-mm 030321517fd4), without the notifiers.

        The local counter is this memcg's only. The hierarchical one is a do/while:
        ``memcg`` itself always counts (the root too, when the event is the root's),
        then each ancestor up to, but not including, the root (cgroup v2 without
        memory_localevents). ``allow_spinning`` only gates cgroup_file_notify().
        """
        memcg.memory_events_local[event] += 1
        self.observer.note("event", memcg.id, event.name, allow_spinning)
        m: MemCgroup | None = memcg
        while True:  # do { ... } while ((memcg = parent_mem_cgroup(memcg)) && !root);
            m.memory_events[event] += 1
            m = m.parent
            if m is None or m is self.root_mem_cgroup:
                break

    # ------------------------------------------------------------ charge

    def mem_cgroup_margin(self, memcg: MemCgroup) -> int:
        """Port of mem_cgroup_margin() for cgroup v2 (no memsw)."""
        count = page_counter_read(memcg.memory)
        limit = memcg.memory.max
        return limit - count if count < limit else 0

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
        """The memory-counter charge inside try_charge_memcg (no memsw on v2)."""
        return page_counter_try_charge(memcg.memory, nr_pages, cpu)

    def charge_batch(self, nr_pages: int) -> int:
        """``batch = max(MEMCG_CHARGE_BATCH, nr_pages)``: the first charge trial's size."""
        return max(self.batch, nr_pages)

    def try_charge_memcg(self, memcg: MemCgroup, gfp: Gfp, nr_pages: int, cpu: int) -> int:
        """Port of try_charge_memcg() (6.18.y / linux-mm 030321517fd4): 0 or -ENOMEM.

        The branches that cannot run on the contract's machine are kept, in order,
        so the port reads beside the C: the task states of :attr:`current`
        (PF_MEMALLOC, task_in_memcg_oom, an OOM victim whose mm has MMF_OOM_SKIP, a
        dying task) are false for the replay's task; memory.high is unset.
        """
        batch = self.charge_batch(nr_pages)
        loop = ChargeRetry(allow_spinning=gfpflags_allow_spinning(gfp))

        while True:  # retry:
            if self.consume_stock(memcg, nr_pages, cpu):
                return 0
            if not loop.allow_spinning:
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
        in the kernel; the pages are charged to ``memcg`` (no memsw on v2).
        """
        if not loop.raised_max_event:
            self.memcg_memory_event(mem_over_limit, MemcgEvent.MEMCG_MAX, loop.allow_spinning)
        page_counter_charge(memcg.memory, nr_pages)
        return 0

    def memcg_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Port of memcg_uncharge(): direct, no stock (v2: no memsw)."""
        page_counter_uncharge(memcg.memory, nr_pages, cpu)

    def mem_cgroup_sk_uncharge(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """mem_cgroup_sk_uncharge() on v2 (also obj_cgroup_uncharge_pages): via refill_stock."""
        self.refill_stock(memcg, nr_pages, cpu)

    # ------------------------------------------------------------ per era

    @abc.abstractmethod
    def consume_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> bool:
        """Charge from this CPU's stock without a walk; False to walk."""

    @abc.abstractmethod
    def refill_stock(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Put uncharged or surplus pages into this CPU's stock (or uncharge them)."""

    @abc.abstractmethod
    def drain_all_stock(self, root_memcg: MemCgroup, cpu: int) -> None:
        """Return every CPU's stocked pages of ``root_memcg``'s subtree."""

    @abc.abstractmethod
    def memcg_hotplug_cpu_dead(self, cpu: int) -> int:
        """Drain a dead CPU's stock."""

    @abc.abstractmethod
    def stock_locks(self, cpu: int) -> list:
        """The local locks an interrupted operation on ``cpu`` holds (for ``nested``)."""

    @abc.abstractmethod
    def stocked_pages(self) -> dict[int, int]:
        """Pages of each memcg (by id) sitting in all per-CPU stocks (for the invariant)."""

    @abc.abstractmethod
    def stocks_json(self) -> list:
        """The contract's ``stocks`` array, one entry per CPU."""

    @abc.abstractmethod
    def slot_violation(self) -> str | None:
        """The first stock entry outside the invariant's bounds, described; None if all hold."""
