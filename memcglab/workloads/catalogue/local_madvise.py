"""The page_counter-stock RFC's madvise loop: fault anonymous pages, release them with
MADV_DONTNEED, ``iterations`` times, in each of ``cgroups`` jobs.

The generator is :func:`memcglab.workloads.madvise.fault_release_ops`, the one that
:func:`~memcglab.workloads.madvise.madvise_fault` (the RFC's own layout) uses too; the
catalogue gives it the scheduler placement and the contract's cgroup layouts. One
operation is one iteration of one job: ``pages`` base-page faults, each
``do_anonymous_page`` -> ``alloc_anon_folio`` -> ``mem_cgroup_charge`` ->
``try_charge_memcg(memcg, gfp, 1)``, then the zap, whose ``tlb_flush_mmu`` ->
``free_pages_and_swap_cache`` frees the folios in ``folio_batch``es of
``PAGEVEC_SIZE`` (31): ``folios_put_refs`` -> ``free_unref_folios`` ->
``__mem_cgroup_uncharge_folios`` -> one ``uncharge_batch`` -> ``memcg_uncharge`` per batch.
The RFC's mail gives no region size; ``pages`` defaults to 256 (1 MiB), the
project's choice (4 charge batches, 9 folio batches per iteration).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memcglab.trace import OP_CHARGE
from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.rows import FOLIO_FREE, AccountingRow, kcite
from memcglab.workloads.madvise import FOLIO_BATCH_SIZE, MadviseFaultSpec, fault_release_ops

__all__ = ["MADVISE_ROWS", "madvise_events"]

MADVISE_ROWS: dict[str, AccountingRow] = {
    "fault": AccountingRow(
        "fault", "page_charge",
        "page fault -> handle_mm_fault -> do_anonymous_page -> alloc_anon_folio -> "
        "mem_cgroup_charge -> charge_memcg -> try_charge_memcg",
        "GFP_HIGHUSER_MOVABLE", "memcg stock", "job", "job", "task", "1 page",
        (kcite("mm/memory.c", "do_anonymous_page / alloc_anon_folio"),
         kcite("mm/memcontrol.c", "__mem_cgroup_charge / charge_memcg")),
        per_op="pages"),
    "zap": AccountingRow(
        "zap", "folio_uncharge",
        "madvise(MADV_DONTNEED) -> zap_page_range_single -> tlb_finish_mmu -> tlb_flush_mmu "
        "-> free_pages_and_swap_cache -> folios_put_refs -> free_unref_folios -> "
        "__mem_cgroup_uncharge_folios -> uncharge_batch -> memcg_uncharge",
        "-", "direct folio uncharge", "job", "job", "task",
        f"up to PAGEVEC_SIZE = {FOLIO_BATCH_SIZE} pages",
        (kcite("mm/swap_state.c", "free_pages_and_swap_cache"),
         kcite("mm/swap.c", "folios_put_refs"), FOLIO_FREE),
        per_op=f"pages / {FOLIO_BATCH_SIZE}, rounded up"),
}


def madvise_events(ev: Events, ninst: int, nops: int, keys: dict[str, Any],
                   alternatives: dict[str, Any], rng: np.random.Generator) -> None:
    """Add ``nops`` iterations of every job, in turns as ``fault_release_ops`` orders them."""
    cpus = ev.roles.cpu["job"][:, 0]
    spec = MadviseFaultSpec(cpus=int(cpus.max()) + 1, cgroups=ninst, region_pages=keys["pages"],
                            iterations=nops, trials=1, placement="pinned", migration_rate=0.0)
    op, _cpu, task, nr = fault_release_ops(spec, rng, pinned=cpus)
    per_iteration = spec.ops_per_iteration
    time = (np.arange(len(op)) // ninst) / per_iteration
    charge = op == OP_CHARGE
    ev.add("fault", time[charge], task[charge], arg=nr[charge].astype(np.int64))
    ev.add("zap", time[~charge], task[~charge], arg=nr[~charge].astype(np.int64))
