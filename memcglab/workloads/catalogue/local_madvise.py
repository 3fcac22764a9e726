"""The page_counter-stock RFC's madvise loop: fault anonymous pages, release them with
MADV_DONTNEED, ``iterations`` times, in each of ``cgroups`` jobs.

The schedule is :func:`memcglab.workloads.madvise.fault_release_ops`, the one that
:func:`~memcglab.workloads.madvise.madvise_fault` (the RFC's own layout) uses too; the
catalogue gives it the scheduler placement and the contract's cgroup layouts, and
replays its releases through v6.18.19's batches
(:func:`memcglab.workloads.catalogue.dontneed.v618_release`). One operation is one
iteration of one job: ``pages`` base-page faults, each ``do_anonymous_page`` ->
``alloc_anon_folio`` -> ``folio_prealloc`` -> ``mem_cgroup_charge(folio, mm,
GFP_KERNEL)`` -> ``try_charge_memcg(memcg, gfp, 1)``, then the zap, whose
``tlb_finish_mmu`` -> ``free_pages_and_swap_cache`` frees the folios in
``folio_batch``es of 31 after the mmu_gather's on-stack 7: one ``uncharge_batch`` ->
``memcg_uncharge`` per batch with a freed folio. The folios still in the CPU's
``lru_add`` batch are uncharged when it next fills, during the next iteration; a PTE
page whose 2 MiB the zap emptied is freed into the stock and charged again at the
next fault there. The RFC's mail gives no region size; ``pages`` defaults to 256
(1 MiB: no whole PMD), the project's choice. A job's own CPU's ``lru_add`` batch
is its alone unless jobs outnumber CPUs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memcglab.trace import OP_CHARGE
from memcglab.workloads.catalogue.dontneed import (
    FAULT,
    LRU_DRAIN,
    PTE_ALLOC,
    PTE_FREE,
    ZAP,
    pmd_offsets,
    v618_release,
)
from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.rows import FOLIO_FREE, KMEM_PAGE, AccountingRow, kcite
from memcglab.workloads.madvise import MadviseFaultSpec, fault_release_ops

__all__ = ["MADVISE_ROWS", "madvise_events", "madvise_bound"]

_GATHER = kcite("mm/mmu_gather.c", "__tlb_remove_folio_pages_size / tlb_batch_pages_flush")
_LRU = kcite("mm/swap.c", "__folio_batch_add_and_move / folio_batch_move_lru")
_PT = kcite("mm/pt_reclaim.c", "reclaim_pt_is_enabled / try_to_free_pte")

MADVISE_ROWS: dict[str, AccountingRow] = {
    "pte_alloc": AccountingRow(
        "pte_alloc", "page_charge",
        "page fault -> do_anonymous_page -> pte_alloc -> __pte_alloc -> pte_alloc_one -> "
        "__pte_alloc_one_noprof(GFP_PGTABLE_USER) -> pagetable_alloc_noprof -> alloc_pages "
        "-> __memcg_kmem_charge_page -> obj_cgroup_charge_pages -> try_charge_memcg",
        "GFP_PGTABLE_USER (GFP_KERNEL | __GFP_ZERO | __GFP_ACCOUNT)", "memcg stock", "job",
        "job", "task", "1 page",
        (kcite("mm/memory.c", "do_anonymous_page / __pte_alloc"),
         kcite("include/asm-generic/pgalloc.h", "__pte_alloc_one_noprof"), KMEM_PAGE),
        per_op="1 per 2 MiB range the last zap emptied (CONFIG_PT_RECLAIM), at its first "
               "fault"),
    "fault": AccountingRow(
        "fault", "page_charge",
        "page fault -> handle_mm_fault -> do_anonymous_page -> alloc_anon_folio (order 0) "
        "-> folio_prealloc -> mem_cgroup_charge -> __mem_cgroup_charge -> charge_memcg -> "
        "try_charge_memcg", "GFP_KERNEL (the folio itself: GFP_HIGHUSER_MOVABLE | "
        "__GFP_ZERO)", "memcg stock", "job", "job", "task", "1 page",
        (kcite("mm/memory.c", "do_anonymous_page / folio_prealloc"),
         kcite("mm/memcontrol.c", "__mem_cgroup_charge / charge_memcg")),
        per_op="pages"),
    "zap": AccountingRow(
        "zap", "folio_uncharge",
        "madvise(MADV_DONTNEED) -> madvise_dontneed_single_vma -> "
        "zap_page_range_single_batched -> zap_pte_range -> __tlb_remove_folio_pages; "
        "madvise_finish_tlb -> tlb_finish_mmu -> tlb_batch_pages_flush -> "
        "free_pages_and_swap_cache -> folios_put_refs -> mem_cgroup_uncharge_folios -> "
        "uncharge_batch -> memcg_uncharge",
        "-", "direct folio uncharge", "job", "job", "task",
        "the folios of one folio_batch (up to 31; the first 7 in the mmu_gather's "
        "on-stack batch) not held by the lru_add batch",
        (kcite("mm/madvise.c", "madvise_dontneed_single_vma"), _GATHER,
         kcite("mm/swap_state.c", "free_pages_and_swap_cache"),
         kcite("mm/swap.c", "folios_put_refs"), FOLIO_FREE),
        per_op="1 + ceil((pages - 7) / 31) when pages <= 9678, less a batch of held folios"),
    "lru_drain": AccountingRow(
        "lru_drain", "folio_uncharge",
        "the next fault on the job's CPU -> folio_add_lru_vma -> __folio_batch_add_and_move "
        "(the 31st folio) -> folio_batch_move_lru -> folios_put -> folios_put_refs -> "
        "mem_cgroup_uncharge_folios -> uncharge_batch -> memcg_uncharge",
        "-", "direct folio uncharge", "job", "job", "task",
        "the zapped folios the CPU's lru_add batch still held (up to 30)",
        (_LRU, kcite("mm/swap.c", "folios_put_refs"), FOLIO_FREE),
        per_op="1 when the zap found folios in the lru_add batch"),
    "pte_free": AccountingRow(
        "pte_free", "kmem_uncharge",
        "zap_pte_range (reclaim_pt_is_enabled) -> free_pte / try_to_free_pte -> "
        "pte_free_tlb -> ___pte_free_tlb -> tlb_remove_ptdesc -> tlb_remove_table; RCU "
        "callback tlb_remove_table_rcu -> __tlb_remove_table -> pagetable_dtor_free -> "
        "__free_pages -> __memcg_kmem_uncharge_page -> obj_cgroup_uncharge_pages -> "
        "refill_stock",
        "-", "memcg stock", "job", "job", "softirq", "1 page",
        (_PT, kcite("arch/x86/mm/pgtable.c", "___pte_free_tlb"),
         kcite("mm/mmu_gather.c", "tlb_remove_table_free / tlb_remove_table_rcu"),
         kcite("mm/memcontrol.c", "__memcg_kmem_uncharge_page / obj_cgroup_uncharge_pages")),
        per_op="1 per whole 2 MiB range of the region, if it has one"),
}

_KEY = {FAULT: "fault", ZAP: "zap", LRU_DRAIN: "lru_drain", PTE_ALLOC: "pte_alloc",
        PTE_FREE: "pte_free"}


def madvise_bound(keys: dict[str, Any]) -> int:
    """Trace rows one iteration can make: a charge and an uncharge per folio, a PTE
    page's charge and free per 2 MiB (and one more for a partial range)."""
    pages = keys["pages"]
    return 2 * pages + 2 * (pages // 512 + 2)


def madvise_events(ev: Events, ninst: int, nops: int, keys: dict[str, Any],
                   alternatives: dict[str, Any], rng: np.random.Generator) -> None:
    """Add ``nops`` iterations of every job, in turns as ``fault_release_ops`` orders
    them, with the releases v6.18 makes of them."""
    cpus = ev.roles.cpu["job"][:, 0]
    spec = MadviseFaultSpec(cpus=int(cpus.max()) + 1, cgroups=ninst, region_pages=keys["pages"],
                            iterations=nops, trials=1, placement="pinned", migration_rate=0.0)
    op, cpu, task, nr = fault_release_ops(spec, rng, pinned=cpus)
    per_zap = spec.ops_per_iteration - spec.region_pages
    memcg = ev.roles.memcg["job"]
    offset = pmd_offsets(ninst, spec.region_pages, rng)
    kind, _cpu, job, pages, at = v618_release(np.where(op == OP_CHARGE, 0, 1), cpu, task,
                                              spec.region_pages, per_zap, memcg, offset,
                                              spec.cpus)
    # each row at its schedule row's time, in the order made (one base row can make
    # a PTE page's charge, the fault and an lru_add drain)
    sub = np.arange(len(at)) - np.searchsorted(at, at)
    time = (at // ninst) / spec.ops_per_iteration + sub * 1e-9
    for k, key in _KEY.items():
        sel = kind == k
        ev.add(key, time[sel], job[sel], arg=pages[sel])
