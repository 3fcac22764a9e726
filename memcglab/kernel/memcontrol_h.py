"""The memcg types of include/linux/memcontrol.h and gfp.h, as the charge path sees them.

``struct mem_cgroup`` (the part the charge path touches, cgroup v2),
``enum memcg_memory_event``, ``MEMCG_CHARGE_BATCH``, the gfp bits the charge path
tests, the task states of ``current`` that try_charge_memcg() reads, and the memcg
iterators. The code that uses them is in :mod:`memcglab.kernel.memcontrol` (css
lifecycle, memory events) and :mod:`memcglab.kernel.try_charge` (the charge path).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from memcglab.kernel.page_counter import PAGE_SIZE, PageCounter

__all__ = [
    "MEMCG_CHARGE_BATCH",
    "MAX_RECLAIM_RETRIES",
    "PAGE_ALLOC_COSTLY_ORDER",
    "MEMCG_NR_MEMORY_EVENTS",
    "MemcgEvent",
    "Gfp",
    "GFP_KERNEL",
    "MemCgroup",
    "TaskStruct",
    "for_each_mem_cgroup_tree",
    "gfpflags_allow_blocking",
    "gfpflags_allow_spinning",
    "get_order",
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
    """The part of ``struct mem_cgroup`` the charge path touches (v1 counters included)."""

    id: int
    parent: MemCgroup | None
    memory: PageCounter = field(default_factory=PageCounter)
    # cgroup v1 (memcglab.kernel.memcontrol_v1): the union's memsw (v1 with swap
    # accounting) and memcg->kmem; ``kmem`` below is the MEMCG_KMEM stat, so the counter
    # is ``kmem_counter``. Initialised by every css_alloc, walked only on v1.
    memsw: PageCounter = field(default_factory=PageCounter)
    kmem_counter: PageCounter = field(default_factory=PageCounter)
    online: bool = False
    css_refcnt: int = 0  # references held by stock slots (css_get/css_put)
    kmem: int = 0  # the MEMCG_KMEM stat: pages charged through objcgs
    obj_pages: int = 0  # simulation: pages objcgs hold in this memcg's own counter
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
