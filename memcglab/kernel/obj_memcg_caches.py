"""The ``memcg-caches`` era (v5.8 and before): per-memcg kmem caches, charged per slab page.

Before Roman Gushchin's slab controller (v5.9) a memcg's kmalloc objects came from its
own copy of each kmalloc cache, and memcg charged only when such a cache allocated or
freed a slab page: ``memcg_charge_slab`` / ``memcg_uncharge_slab`` (mm/slab.h), through
``memcg_kmem_charge`` → ``__memcg_kmem_charge`` → ``try_charge`` and
``memcg_kmem_uncharge`` → ``__memcg_kmem_uncharge``, with one ``mod_lruvec_state`` of
the slab's bytes each time. There is no byte stock and no objcg.

Sources: torvalds/linux mm/slab.h at fb2f2b0adb98 (``memcg_charge_slab``,
``memcg_uncharge_slab``, ``charge_slab_page``: the v5.4 form, with
``memcg_kmem_charge_memcg(page, gfp, order, memcg)``); the v5.7 renames and the
byte-sized slab counters of the v5.7/v5.8 patch mails ("mm: kmem: rename
memcg_kmem_(un)charge() into memcg_kmem_(un)charge_page()" context:
``memcg_kmem_charge(memcg, gfp, nr_pages)``; "mm: memcg/slab: ... NR_SLAB_*_B":
``mod_lruvec_state(lruvec, cache_vmstat_idx(s), PAGE_SIZE << order)``); and
``__memcg_kmem_charge`` / ``__memcg_kmem_uncharge`` of torvalds/linux mm/memcontrol.c
at 5458985533ba, whose uncharge's v5.8/v5.9 body (``page_counter_uncharge`` of the
memory counter, no stock) is the "before" side of Roman Gushchin's January 2021 patch
mail that moved it to ``refill_stock``.

How a trace's ``obj_charge CPU MEMCG BYTES`` maps to slab pages (the replay's choice,
docs/trace-extensions.md): BYTES is a kmalloc request. It goes to the memcg's cache of
the kmalloc size class (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192:
``kmalloc_index``; above ``KMALLOC_MAX_CACHE_SIZE`` = 8192, SLUB's ``kmalloc_large``
charges ``1 << get_order(BYTES)`` pages per object through
``__memcg_kmem_charge_page``). A slab is the smallest page order that holds one object
(SLUB's ``calculate_order`` prefers larger slabs on big machines; the order changes
the size of each slab charge, not when it happens), holding ``(PAGE_SIZE << order) //
size`` objects, packed. A new slab is charged when the cache has no free object; after
a free, a slab is uncharged when the cache has two slabs' worth of free objects, so
each memcg cache keeps at most one empty slab (as SLUB keeps its CPU slab and a few
partial ones: the reason a balanced alloc/free loop never charges after its first
object). A free of BYTES releases the memcg's oldest objects, whole; bytes short of
the next whole object wait for the next free.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup, get_order
from memcglab.kernel.memcontrol_v1 import memcg1_account_kmem, memcg1_kmem_try_charge
from memcglab.kernel.objcg import ObjCgroup, ObjCgroupPath
from memcglab.kernel.page_counter import PAGE_SIZE

__all__ = ["KMALLOC_SIZES", "KMALLOC_MAX_CACHE_SIZE", "kmalloc_size", "KmemCache",
           "ObjMemcgCaches"]

#: the kmalloc caches of SLUB on x86-64 (kmalloc_index(), KMALLOC_MIN_SIZE 8)
KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)
#: SLUB: KMALLOC_SHIFT_HIGH = PAGE_SHIFT + 1
KMALLOC_MAX_CACHE_SIZE = 2 * PAGE_SIZE


def kmalloc_size(size: int) -> int:
    """The object size of the kmalloc cache serving ``size`` bytes (``kmalloc_index``).

    >>> kmalloc_size(264), kmalloc_size(520), kmalloc_size(96), kmalloc_size(97)
    (512, 1024, 96, 128)
    """
    for cache_size in KMALLOC_SIZES:
        if size <= cache_size:
            return cache_size
    raise ValueError(f"size={size}: above KMALLOC_MAX_CACHE_SIZE ({KMALLOC_MAX_CACHE_SIZE})")


@dataclass(slots=True)
class KmemCache:
    """One memcg's copy of a kmalloc cache: its slab order, objects per slab, slabs and
    objects in use (``s->memcg_params.memcg`` is the objcg's memcg)."""

    size: int
    order: int
    objects: int  # oo_objects(s->oo)
    nr_slabs: int = 0
    inuse: int = 0


class ObjMemcgCaches(ObjCgroupPath):
    """Per-memcg kmem caches (v5.8): charges per slab page, no byte stock.

    The trace's objcg of a memcg stands for its set of caches; reparenting at offline
    (memcg_offline_kmem's cache reparenting in this era) moves later slab releases to
    the parent, as for objcgs.
    """

    kmem_page_v5 = True  # the page-level kmem charge is v5.x's __memcg_kmem_charge

    nr_obj_stock = 0

    def __init__(self, machine, nodes: int = 1) -> None:
        super().__init__(machine, per_node=False, nodes=nodes)
        self.caches: dict[tuple[ObjCgroup, int], KmemCache] = {}
        self.objects: dict[ObjCgroup, deque[int]] = {}  # live object sizes, oldest first
        self.pending: dict[ObjCgroup, int] = {}  # freed bytes short of a whole object
        self.large_pages: dict[ObjCgroup, int] = {}  # pages of live kmalloc_large objects
        self.obj_stock: list[None] = [None] * machine.nr_cpus

    def cache(self, objcg: ObjCgroup, size: int) -> KmemCache:
        """memcg_kmem_get_cache(): the memcg's copy of the cache (made on first use)."""
        cls = kmalloc_size(size)
        cache = self.caches.get((objcg, cls))
        if cache is None:
            order = get_order(cls)
            cache = KmemCache(cls, order, (PAGE_SIZE << order) // cls)
            self.caches[(objcg, cls)] = cache
        return cache

    # ------------------------------------------------------------ page side

    def memcg_charge_slab(self, objcg: ObjCgroup, gfp: Gfp, nr_pages: int, cpu: int) -> int:
        """Port of memcg_charge_slab() (mm/slab.h, v5.8 form): the root is not charged;
        memcg_kmem_charge() is __memcg_kmem_charge(): try_charge (v2: no kmem counter),
        then mod_lruvec_state() of the slab's bytes."""
        memcg = objcg.memcg  # READ_ONCE(s->memcg_params.memcg), an online ancestor
        if memcg is self.m.root_mem_cgroup:
            return 0  # mod_node_page_state() only
        ret = self.m.try_charge_memcg(memcg, gfp, nr_pages, cpu)
        if ret:
            return ret
        ret = memcg1_kmem_try_charge(self.m, memcg, nr_pages, cpu)  # v1: memcg->kmem
        if ret:
            return ret
        self.m.observer.obj_event("slab_page_charges", cpu, memcg.id, nr_pages)
        self.m.observer.obj_event("memcg_stat_updates", cpu, memcg.id, nr_pages * PAGE_SIZE)
        memcg.kmem += nr_pages
        memcg.obj_pages += nr_pages
        objcg.kmem_pages += nr_pages
        return 0

    def memcg_uncharge_slab(self, objcg: ObjCgroup, nr_pages: int, cpu: int) -> None:
        """Port of memcg_uncharge_slab() (v5.8 form): unless the cache's memcg is the root,
        mod_lruvec_state() and memcg_kmem_uncharge(): __memcg_kmem_uncharge() of v5.8,
        ``page_counter_uncharge(&memcg->memory, nr_pages)`` with no stock."""
        memcg = objcg.memcg
        if memcg is self.m.root_mem_cgroup:
            return
        self.m.observer.obj_event("slab_page_uncharges", cpu, memcg.id, nr_pages)
        self.m.observer.obj_event("memcg_stat_updates", cpu, memcg.id, -nr_pages * PAGE_SIZE)
        memcg.kmem -= nr_pages
        memcg1_account_kmem(self.m, memcg, -nr_pages)  # v1: page_counter_uncharge(kmem)
        memcg.obj_pages -= nr_pages
        objcg.kmem_pages -= nr_pages
        self.m.memcg_uncharge(memcg, nr_pages, cpu)

    # ------------------------------------------------------------ objects

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """The trace's ``obj_charge``: kmalloc(size) from the memcg's cache; a new slab
        (allocate_slab → charge_slab_page) only when no object is free."""
        self.m.observer.obj_event("obj_cgroup_charge", cpu, objcg.memcg.id, size)
        if size > KMALLOC_MAX_CACHE_SIZE:  # kmalloc_large(): __memcg_kmem_charge_page()
            nr_pages = 1 << get_order(size)
            ret = self.memcg_charge_slab(objcg, gfp, nr_pages, cpu)
            if not ret:
                self.large_pages[objcg] = self.large_pages.get(objcg, 0) + nr_pages
                self.objects.setdefault(objcg, deque()).append(size)
            return ret
        cache = self.cache(objcg, size)
        if cache.inuse == cache.nr_slabs * cache.objects:
            ret = self.memcg_charge_slab(objcg, gfp, 1 << cache.order, cpu)
            if ret:
                return ret  # the slab allocation fails: kmalloc returns NULL
            cache.nr_slabs += 1
        cache.inuse += 1
        self.objects.setdefault(objcg, deque()).append(size)
        return 0

    def obj_cgroup_uncharge(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """The trace's ``obj_uncharge``: kfree() of the memcg's oldest whole objects within
        the freed bytes; an empty slab beyond the one kept is freed (uncharge_slab_page)."""
        self.m.observer.obj_event("obj_cgroup_uncharge", cpu, objcg.memcg.id, size)
        live = self.objects.setdefault(objcg, deque())
        freed = self.pending.get(objcg, 0) + size
        while live and freed >= live[0]:
            obj = live.popleft()
            freed -= obj
            self.kfree(objcg, obj, cpu)
        self.pending[objcg] = freed

    def kfree(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """Free one object of ``size`` bytes (its cache, or its kmalloc_large pages)."""
        if size > KMALLOC_MAX_CACHE_SIZE:  # __free_pages → __memcg_kmem_uncharge_page()
            nr_pages = 1 << get_order(size)
            self.large_pages[objcg] -= nr_pages
            self.memcg_uncharge_slab(objcg, nr_pages, cpu)
            return
        cache = self.cache(objcg, size)
        cache.inuse -= 1
        if cache.nr_slabs * cache.objects - cache.inuse >= 2 * cache.objects:
            cache.nr_slabs -= 1  # discard_slab(): a second empty slab is not kept
            self.memcg_uncharge_slab(objcg, 1 << cache.order, cpu)

    # ------------------------------------------------------------ no byte stock

    def obj_stock_flush_required(self, cpu: int, root_memcg: MemCgroup) -> bool:
        """No obj stock in this era: nothing to flush."""
        return False

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """No obj stock in this era: drain_all_stock drains only the memcg stock."""

    def drain_dead_cpu(self, cpu: int) -> None:
        """No obj stock in this era: memcg_hotplug_cpu_dead drains only the memcg stock."""

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        return []

    def violation(self) -> str | None:
        """Every cache holds its objects, and every objcg's kmem pages are its slabs and
        kmalloc_large pages; no bytes are shared (there is no byte stock)."""
        pages: dict[ObjCgroup, int] = dict(self.large_pages)
        for (objcg, _), cache in self.caches.items():
            if not 0 <= cache.inuse <= cache.nr_slabs * cache.objects:
                return (f"kmalloc-{cache.size} of memcg {objcg.owner.id}: {cache.inuse} "
                        f"objects in {cache.nr_slabs} slabs of {cache.objects}")
            pages[objcg] = pages.get(objcg, 0) + (cache.nr_slabs << cache.order)
        for objcg in self._in_order():
            if objcg.memcg is self.m.root_mem_cgroup:
                continue  # slabs of a cache reparented to the root were never charged
            if objcg.kmem_pages != pages.get(objcg, 0) or objcg.nr_charged_bytes:
                return (f"caches of memcg {objcg.owner.id}: {objcg.kmem_pages} kmem pages "
                        f"!= {pages.get(objcg, 0)} slab pages")
        return None
