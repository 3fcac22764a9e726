"""The memcg charge path of mm/memcontrol.c: the machine, its css lifecycle, memory events.

:class:`MemcgCharge` is the charge-path state of one machine: its memcgs, the
css callbacks as far as stocks go (``mem_cgroup_css_alloc``, ``_online``,
``_offline``) and ``__memcg_memory_event``, from 6952350/linux-6.18.y
mm/memcontrol.c at 312d9602fe3e (E3) and linux-mm/linux-mm mm/memcontrol.c at
030321517fd4 (E4). The charge path itself (``try_charge_memcg`` and its retry
loop) is :mod:`memcglab.kernel.try_charge`; the types are
:mod:`memcglab.kernel.memcontrol_h`. The per-CPU stock of each era lives in its own
module (:mod:`memcglab.kernel.memcg_stock_single`, :mod:`~memcglab.kernel.memcg_stock_multi`,
:mod:`~memcglab.kernel.memcg_stock_pcstock`,
:mod:`~memcglab.kernel.memcg_stock_pcstock_v4`); each subclasses :class:`MemcgCharge`
and provides ``consume_stock``, ``refill_stock``, ``drain_all_stock`` and
``memcg_hotplug_cpu_dead``; v4 also replaces ``try_charge_memcg``'s first charge
attempt and keeps its retry tail (``reclaim_retry``).

The machine the replay contract describes: cgroup v2 (no memsw), gfp
``GFP_KERNEL``, reclaim that frees nothing, a memcg OOM killer that makes no
progress, no memory.high.

Differences from the kernel, all deliberate:

* "This CPU" is an explicit ``cpu`` argument: the simulation has no current CPU.
* Remote stock drains, asynchronous work items in the kernel, run synchronously
  in CPU order (the contract's ``drain_all``); the caller in the kernel does not
  wait for them, so a kernel run may see them later, never differently.
"""

from __future__ import annotations

import abc

from memcglab.kernel.memcontrol_h import (
    GFP_KERNEL,
    MAX_RECLAIM_RETRIES,
    MEMCG_CHARGE_BATCH,
    PAGE_ALLOC_COSTLY_ORDER,
    Gfp,
    MemcgEvent,
    MemCgroup,
    TaskStruct,
    for_each_mem_cgroup_tree,
    get_order,
    gfpflags_allow_blocking,
    gfpflags_allow_spinning,
    mem_cgroup_is_descendant,
)
from memcglab.kernel.memcontrol_v1 import V1CounterObserver
from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import (
    page_counter_init,
    page_counter_set_low,
    page_counter_set_min,
)
from memcglab.kernel.try_charge import REFILLS, ChargePath, ChargeRetry

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
    "REFILLS",
    "for_each_mem_cgroup_tree",
    "gfpflags_allow_blocking",
    "gfpflags_allow_spinning",
    "get_order",
    "mem_cgroup_is_descendant",
]


class MemcgCharge(ChargePath, abc.ABC):
    """The charge-path state of one machine: memcgs, per-CPU stocks, the charge code.

    Subclasses port one era's stock. ``batch`` stands for ``MEMCG_CHARGE_BATCH``,
    a build-time constant the replay lets a user vary. ``refill`` is the scenario
    contract's design key (:data:`REFILLS`, see :meth:`ChargePath.charge_batch`);
    ``in_task`` is ``in_task()`` for the operation running now (False for a trace
    operation with the ``irq`` word).
    """

    kernel_version = ""

    def __init__(self, nr_cpus: int, batch: int = MEMCG_CHARGE_BATCH,
                 observer: Observer | None = None) -> None:
        self.nr_cpus = nr_cpus
        self.batch = batch
        self.observer = observer if observer is not None else Observer()
        self.percpu_charge_mutex = False  # static DEFINE_MUTEX(percpu_charge_mutex)
        self.current = TaskStruct()
        self.refill = "always"
        # cgroup v1 (memcglab.kernel.memcontrol_v1): set by build_model before any memcg
        # but the root exists; the root's counters do not depend on it
        self.cgroup_version = 2
        self.swap = False
        self._v1_observers = (V1CounterObserver(self.observer, "kmem_walks"),
                              V1CounterObserver(self.observer, "memsw_walks"))
        self.in_task = True
        self.obj = None  # the era's obj stock (memcglab.kernel.objcg), set by build_model
        self.memcgs: dict[int, MemCgroup] = {}
        self.root_mem_cgroup = self.mem_cgroup_css_alloc(0, None)
        self.mem_cgroup_css_online(self.root_mem_cgroup)

    # ------------------------------------------------------------ css lifecycle

    def mem_cgroup_css_alloc(self, memcg_id: int, parent: MemCgroup | None,
                             max_pages: int | None = None) -> MemCgroup:
        """mem_cgroup_css_alloc() as far as the page counters go.

        The memory counter supports protection on cgroup v2 only (``memcg_on_dfl``; the
        root's always) and tracks failcnt on v1 (``memory.track_failcnt =
        !memcg_on_dfl``); memsw (the union with swap) and, under CONFIG_MEMCG_V1, kmem
        are initialised without protection on both, as the kernel does.
        """
        memcg = MemCgroup(memcg_id, parent)
        memcg_on_dfl = self.cgroup_version == 2
        page_counter_init(memcg.memory, parent.memory if parent else None,
                          memcg_on_dfl if parent else True)
        page_counter_init(memcg.memsw, parent.memsw if parent else None, False)
        if parent is not None:
            memcg.memory.track_failcnt = not memcg_on_dfl
        page_counter_init(memcg.kmem_counter, parent.kmem_counter if parent else None, False)
        memcg.memory.owner = memcg.memsw.owner = memcg.kmem_counter.owner = memcg
        memcg.memory.observer = self.observer
        memcg.kmem_counter.observer, memcg.memsw.observer = self._v1_observers
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
        if self.obj is not None:
            self.obj.memcg_reparent_objcgs(memcg)  # memcg_offline_kmem() and the 2026 call
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
