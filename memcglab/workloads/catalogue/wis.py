"""will-it-scale: page_fault1/2/3, malloc1, unix1 and lock1, per kernel accounting era.

The accounting is the settled table of ``docs/audit/will-it-scale-comparison.md``
(section 5, with section 4's settlements), for x86-64 bare metal (the native pv op or
no ``CONFIG_PARAVIRT``: D1), 4 KiB pages, THP off for anonymous faults. One
operation is one counted iteration of antonblanchard/will-it-scale's test loop
(``tests/*.c``): page_fault1/2/3 one write fault to a fresh page of a 128 MiB mapping,
which is unmapped after every 32768 operations (:data:`CYCLE`); malloc1 one
``malloc(128 MiB)`` and ``free`` (a glibc mmap and munmap); unix1 a 1-byte write and
read on the task's own socketpair; lock1 one ``fcntl(F_SETLKW)``.

Each instance is one task (``main.c``: ``fork`` per task, or ``pthread_create`` in
thread mode). In thread mode the tasks are threads of one process: they share one
mm, and a process sits in one cgroup, so every instance charges the memcg of the
first (``mem_cgroup_charge`` charges ``get_mem_cgroup_from_mm``; the page tables of
each thread's own mapping are charged to the same memcg through the task's objcg).

Eras (:func:`accounting_kernel` maps a version to one):

* ``v5.8`` (a): slab objects come from per-memcg cache clones, no per-object charge.
* ``v5.9`` (b), ``v5.14`` (c), ``v6.1`` (d1): slab objects are obj-stock byte charges;
  the page-table pages go into the mmu_gather's page batch with the data pages and are
  uncharged directly in the same ``uncharge_batch`` walk (D1, up to 510 pages per walk,
  D3). The trace of (b) to (d1) is the same; ``MEMCG_CHARGE_BATCH`` (32 to v6.0, 64
  from v6.1) is the replayed kernel's, not the trace's.
* ``v6.18`` (d2): the munmap frees folios in ``folio_batch``es of 31 (one direct walk
  each), page-table pages go back into the stock after RCU (``refill_stock``), the
  128 MiB anonymous mapping of page_fault1 is THP-aligned (64 PTE tables, not 65), and
  unix1's ``sk_buff`` comes from the NAPI skb cache while it holds objects (D5; the
  ``napi_cache`` alternative).

Not in the trace: the ``vm_area_struct``, ``anon_vma_chain`` and ``anon_vma`` of each
mapping. In steady state they are obj-stock byte moves with no page-level traffic
(section 5), their sizes are open (section 6, item 4) and the source does not fix
whether ``anon_vma`` is reused (D14); leaving them out is the conservative reading.
The guest rows of D1 (pv-TLB guests: one direct walk per page-table page after RCU up
to v6.1) are a machine property (section 6, item 3) and are not modelled.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.rows import (
    FOLIO_FREE,
    KMEM_PAGE,
    WILL_IT_SCALE,
    WILL_IT_SCALE_COMMIT,
    AccountingRow,
    Cite,
    kcite,
)
from memcglab.workloads.catalogue.sizes import SKBUFF_HEAD_OBJ, skb_head_kmalloc

__all__ = ["CYCLE", "ERAS", "WIS_TESTS", "accounting_kernel", "munmap_walks", "wis_bound",
           "wis_events", "wis_rows"]

#: the accounting eras the generator implements, oldest first (comparison, section 0)
ERAS = ("v5.8", "v5.9", "v5.14", "v6.1", "v6.18")
WIS_TESTS = ("page_fault1", "page_fault2", "page_fault3", "malloc1", "unix1", "lock1")
#: faults per mapping: 128 MiB of 4 KiB pages (tests/page_fault*.c MEMSIZE)
CYCLE = 32768
#: the folios of one folio_batch (PAGEVEC_SIZE), v6.18's most per walk (D3)
FOLIO_BATCH = 31
#: the head of a 1-byte unix skb: kmalloc-512 plus the objcg pointer (D4)
UNIX_HEAD = skb_head_kmalloc(1) + 8

WIS = Cite(WILL_IT_SCALE, "tests/*.c, main.c", WILL_IT_SCALE_COMMIT,
           "testcase / new_task_affinity")


def _version(v: str) -> tuple[int, int]:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:[.-].*)?", v.strip())
    if m is None:
        raise ValueError(f"kernel={v!r}: not a kernel version (valid: such as 'v6.1', "
                         "'v6.15', '6.18.19')")
    return int(m.group(1)), int(m.group(2))


#: the contract's obj_stock era names that are not versions (Revision 2, "obj_stock"):
#: the per-memcg caches are v5.8's; the two 2025 series apply to the newest tree
_ALIASES = {"memcg-caches": "v5.8", "multi-objcg": "v6.18", "pcstock-v4": "v6.18"}


def accounting_kernel(kernel_version: str) -> str:
    """The accounting era of ``kernel_version``: the newest era in :data:`ERAS` whose
    version is not newer than it (the contract's ``obj_stock`` values are accepted too:
    ``v5.14-vmstat`` is v5.14, ``memcg-caches`` v5.8, ``multi-objcg`` and ``pcstock-v4``
    v6.18).

    v6.2 to v6.17 get v6.1's accounting: when the page-table and folio_batch changes
    of v6.18 arrived is open (comparison, section 6, items 1 and 2), and the
    conservative reading keeps the last era read until a source shows the change.

    >>> [accounting_kernel(v) for v in ("v5.9", "v6.0-rc1", "v6.1", "v6.15", "v6.16", "v7.0")]
    ['v5.9', 'v5.14', 'v6.1', 'v6.1', 'v6.1', 'v6.18']
    """
    if kernel_version in _ALIASES:
        return _ALIASES[kernel_version]
    have = _version(kernel_version)
    ok = [e for e in ERAS if _version(e) <= have]
    if not ok:
        raise ValueError(f"kernel={kernel_version!r}: older than the oldest accounting era "
                         f"(valid: {ERAS[0]} or later)")
    return ok[-1]


def _pte_per_cycle(test: str, era: str) -> int:
    # 128 MiB spans 64 PMD ranges if 2 MiB aligned, 65 if not; v6.18 aligns the
    # anonymous mapping and ext4's thp_get_unmapped_area the file one (D13)
    return 64 if era == "v6.18" else 65


def wis_rows(test: str, era: str) -> dict[str, AccountingRow]:
    """The accounting rows of ``test`` in ``era`` (empty for lock1: nothing is charged)."""
    if test == "lock1":
        return {}
    if test == "unix1":
        if era == "v5.8":
            return {}
        rows = {}
        for what, size in (("skb", SKBUFF_HEAD_OBJ), ("head", UNIX_HEAD)):
            rows[f"{what}_alloc"] = AccountingRow(
                f"{what}_alloc", "obj_charge",
                "write -> unix_stream_sendmsg -> sock_alloc_send_pskb -> alloc_skb_with_frags "
                "-> __alloc_skb (GFP_KERNEL_ACCOUNT from sk->sk_allocation) -> "
                + ("kmem_cache_alloc_node(skbuff_cache)" if what == "skb"
                   else "kmalloc_reserve (kmalloc-cg-512 from v5.14)")
                + " -> obj_cgroup_charge", "GFP_KERNEL_ACCOUNT", "obj stock", "task", "task",
                "task", f"{size} B", (kcite("net/core/skbuff.c", "__alloc_skb"), WIS),
                per_op="1" + (" (while the NAPI skb cache is empty, v6.18)"
                              if what == "skb" and era == "v6.18" else ""))
            rows[f"{what}_free"] = AccountingRow(
                f"{what}_free", "obj_uncharge",
                "read -> unix_stream_read_generic -> consume_skb -> __kfree_skb -> "
                "kfree_skbmem / skb_free_head -> memcg_slab_free_hook -> refill_obj_stock",
                "-", "obj stock", "task", "task", "task", f"{size} B",
                (kcite("net/core/skbuff.c", "consume_skb / kfree_skbmem"),),
                per_op=rows[f"{what}_alloc"].per_op)
        return rows
    late = era == "v6.18"
    rows = {}
    if test in ("page_fault1", "page_fault2", "malloc1"):
        rows["anon"] = AccountingRow(
            "anon", "page_charge",
            ("page fault -> do_cow_fault" if test == "page_fault2" else
             "page fault -> do_anonymous_page") + " -> mem_cgroup_charge -> charge_memcg -> "
            "try_charge_memcg", "GFP_KERNEL", "memcg stock", "task", "task", "task",
            "1 page", (kcite("mm/memory.c", "do_anonymous_page / do_cow_fault"),
                       kcite("mm/memcontrol.c", "charge_memcg"), WIS))
    pte = 1 if test == "malloc1" else None
    rows["pte_alloc"] = AccountingRow(
        "pte_alloc", "page_charge",
        "page fault -> __pte_alloc -> pte_alloc_one (GFP_PGTABLE_USER) -> "
        "__memcg_kmem_charge_page -> obj_cgroup_charge_pages (memcg-based to v5.13) -> "
        "try_charge_memcg", "GFP_KERNEL_ACCOUNT", "memcg stock", "task", "task", "task",
        "1 page", (kcite("mm/memory.c", "__pte_alloc"), KMEM_PAGE),
        per_op="1" if pte else f"when a fault starts a 2 MiB range: "
                                 f"{_pte_per_cycle(test, era)} per {CYCLE}")
    data = "the anon page and " if test == "malloc1" else (
        "" if test == "page_fault3" else "the cycle's anon pages and ")
    rows["unmap"] = AccountingRow(
        "unmap", "folio_uncharge",
        "munmap -> unmap_region -> tlb_finish_mmu -> " + (
            "free_pages_and_swap_cache -> folios_put_refs -> mem_cgroup_uncharge_folios -> "
            "uncharge_batch -> memcg_uncharge" if late else
            "tlb_batch_pages_flush -> free_pages_and_swap_cache -> release_pages -> "
            "mem_cgroup_uncharge_list -> uncharge_batch -> page_counter_uncharge"),
        "-", "direct folio uncharge", "task", "task", "task",
        (f"up to {FOLIO_BATCH} folios" if late else
         f"{data}the page-table pages (D1), up to 510 pages")
        if test != "malloc1" else ("1 page" if late else "2 pages (anon + PTE, D1)"),
        (kcite("mm/mmap.c", "unmap_region"), FOLIO_FREE),
        per_op="1" if test == "malloc1" else "when the 128 MiB cycle ends (every 32768): "
                                             "one per gather or folio batch (D3)")
    if late:
        rows["pte_free"] = AccountingRow(
            "pte_free", "kmem_uncharge",
            "free_pgtables -> ___pte_free_tlb -> tlb_remove_table; RCU -> "
            "__tlb_remove_table -> pagetable_dtor_free -> __free_pages -> "
            "__memcg_kmem_uncharge_page -> obj_cgroup_uncharge_pages -> refill_stock",
            "-", "memcg stock", "task", "task", "softirq", "1 page",
            (kcite("arch/x86/mm/pgtable.c", "___pte_free_tlb"),
             kcite("mm/mmu_gather.c", "tlb_remove_table_rcu")),
            per_op=rows["pte_alloc"].per_op)
    return rows


def munmap_walks(freed: int, pte: int, era: str) -> list[int]:
    """Pages of each direct ``uncharge_batch`` walk of one 128 MiB munmap (D3).

    The mmu_gather holds the cycle's CYCLE data pages in flushes of an on-stack batch
    (8 entries; v6.18: 7) and up to 19 chained batches of 510 (v6.18: 509). Up to v6.1
    each batch is one ``release_pages`` and one walk of the charged pages it frees, and
    the ``pte`` page-table pages join the last batches (D1); page_fault3's file pages
    take batch slots but are not freed (the page cache holds them), so ``freed`` is 0
    there. In v6.18 ``free_pages_and_swap_cache`` splits each batch into folio batches
    of 31, one walk each, and the page tables go to the stock after RCU instead.

    >>> len(munmap_walks(32768, 65, "v6.1")), len(munmap_walks(32768, 64, "v6.18"))
    (69, 1098)
    """
    late = era == "v6.18"
    local, per = (7, 509) if late else (8, 510)
    held = CYCLE - freed
    charged = freed + (0 if late else pte)
    total = held + charged
    walks, at = [], 0
    while at < total:
        for cap in (local, *([per] * 19)):
            n = min(cap, total - at)
            mine = max(0, min(at + n, total) - max(at, held))  # charged pages in the batch
            if mine:
                walks += [FOLIO_BATCH] * (mine // FOLIO_BATCH) + (
                    [mine % FOLIO_BATCH] if mine % FOLIO_BATCH else []) if late else [mine]
            at += n
            if at >= total:
                break
    return walks


def wis_bound(test: str) -> float:
    """Most trace rows one operation makes in any era (page_fault3 and lock1: a loose
    bound, so a default build stays within MAX_OPERATIONS)."""
    return {"page_fault1": 1 + 3 * 65 / CYCLE + 2 * CYCLE / FOLIO_BATCH / CYCLE,
            "page_fault2": 1 + 3 * 65 / CYCLE + 2 * CYCLE / FOLIO_BATCH / CYCLE,
            "page_fault3": 1 / 16,
            "malloc1": 4.0, "unix1": 4.0, "lock1": 1.0}[test]


def wis_events(test: str, era: str, ev: Events, ninst: int, nops: int, keys: dict[str, Any],
               alternatives: dict[str, Any], rng: np.random.Generator) -> None:
    """Add ``nops`` operations of every instance of ``test`` in ``era``'s accounting."""
    if keys.get("mode", "process") == "thread":
        # one process: every thread charges the process's (the first instance's) memcg
        for role, m in ev.roles.memcg.items():
            ev.roles.memcg[role] = np.full_like(m, m[0])
    rows = ev.rows
    insts = np.arange(ninst)
    # each instance starts at a uniformly random page of its 128 MiB cycle (the
    # benchmark's steady state), so a trace shorter than a cycle still holds the
    # munmaps of the instances whose cycle ends inside it, in the right proportion
    start = rng.integers(0, CYCLE, ninst)
    t_op = np.arange(nops, dtype=np.float64)

    def each(key: str, times: np.ndarray, arg: np.ndarray | int = 1) -> None:
        if key not in rows or len(times) == 0:
            return
        t = np.tile(times, ninst)
        i = np.repeat(insts, len(times))
        a = arg if np.isscalar(arg) else np.tile(arg, ninst)
        ev.add(key, t, i, arg=a)

    def own(key: str, times: list[np.ndarray], args: list[np.ndarray] | None = None) -> None:
        # per instance: its own times (and amounts)
        if key not in rows or not sum(len(t) for t in times):
            return
        i = np.concatenate([np.full(len(t), k) for k, t in enumerate(times)])
        a = np.concatenate(args) if args is not None else 1
        ev.add(key, np.concatenate(times), i, arg=a)

    if test == "unix1":
        napi_warm = era == "v6.18" and alternatives.get("napi_cache", "empty") == "warm"
        for what in ("skb", "head"):
            if what == "skb" and napi_warm:
                continue
            size = SKBUFF_HEAD_OBJ if what == "skb" else UNIX_HEAD
            each(f"{what}_alloc", t_op, size)
            each(f"{what}_free", t_op + 0.5, size)
        return
    if test == "lock1":
        return
    if test == "malloc1":
        each("anon", t_op)
        each("pte_alloc", t_op + 0.1)
        if era == "v6.18":
            each("unmap", t_op + 0.5, 1)
            each("pte_free", t_op + 0.9, 1)
        else:
            each("unmap", t_op + 0.5, 2)
        return
    # page faults: one fault per op; a PTE page at the first fault of each 2 MiB range
    # the cycle touches; at the cycle's end the munmap
    pte = _pte_per_cycle(test, era)
    # an unaligned mapping starts mid-range (the middle, the project's choice): 65 ranges
    off = 0 if pte == 64 else 256
    freed = 0 if test == "page_fault3" else CYCLE
    sizes = np.array(munmap_walks(freed, pte, era), dtype=np.int64)
    each("anon", t_op)
    first, walks, walk_args, frees = [], [], [], []
    for k in range(ninst):
        pos = (start[k] + np.arange(nops)) % CYCLE
        first.append(t_op[(pos == 0) | ((pos + off) % 512 == 0)] - 0.1)
        ends = t_op[pos == CYCLE - 1] + 0.5
        walks.append((ends[:, None] + np.arange(len(sizes))[None, :] * 1e-6).ravel())
        walk_args.append(np.tile(sizes, len(ends)))
        frees.append((ends[:, None] + 0.1 + np.arange(pte)[None, :] * 1e-6).ravel())
    own("pte_alloc", first)
    own("unmap", walks, walk_args)
    if era == "v6.18":
        own("pte_free", frees)
