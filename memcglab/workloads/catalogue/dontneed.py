"""What MADV_DONTNEED frees, and when, in v6.18.19: the mmu_gather, the folio batches and
the per-CPU ``lru_add`` batch that holds back the last faulted folios.

:func:`memcglab.workloads.madvise.fault_release_ops` gives the loop's schedule (each
iteration of a job: ``pages`` faults, then the zap). The kernel (6952350/linux-6.18.y
at 312d9602fe3e) frees the zapped folios in a finer pattern, which :func:`v618_release`
replays:

* ``do_anonymous_page`` -> ``folio_add_lru_vma`` -> ``__folio_batch_add_and_move``
  takes a reference and puts the new folio in the CPU's ``lru_add`` folio batch
  (``PAGEVEC_SIZE`` = 31); the 31st addition moves the batch to the LRU and drops
  those references (``folio_batch_move_lru`` -> ``folios_put``).
* ``madvise_dontneed_single_vma`` -> ``zap_page_range_single_batched`` gathers the
  pages in the mmu_gather: its on-stack batch takes ``MMU_GATHER_BUNDLE - 1`` = 7
  pages (``__tlb_remove_folio_pages_size`` moves on at ``max - 1``), each further
  batch page ``MAX_GATHER_BATCH - 1`` = 509, at most ``MAX_GATHER_BATCH_COUNT`` = 19
  of them before a forced flush. There is no ``lru_add_drain`` on this path in
  v6.18 (v6.1's ``zap_page_range_single`` drained first), so a folio still in the
  ``lru_add`` batch keeps a reference through the zap.
* ``tlb_finish_mmu`` -> ``tlb_batch_pages_flush`` frees each gather batch with
  ``free_pages_and_swap_cache``, in ``folio_batch``es of 31: ``folios_put_refs``
  frees the folios whose count reaches zero and uncharges them with one
  ``uncharge_batch`` per memcg run (``__mem_cgroup_uncharge_folios``), a direct
  ``memcg_uncharge``. A batch holding only held-back folios uncharges nothing.
* The held-back folios are freed, and uncharged directly, when the CPU's
  ``lru_add`` batch next fills: during the following iteration's faults.
* With ``CONFIG_PT_RECLAIM`` (default y, x86-64 selects
  ``ARCH_SUPPORTS_PT_RECLAIM``) the zap also frees a PTE page whose whole 2 MiB
  range it emptied (``zap_pte_range`` with ``reclaim_pt_is_enabled``); the page goes
  through ``tlb_remove_table`` and an RCU callback to ``__free_pages`` ->
  ``__memcg_kmem_uncharge_page`` -> ``obj_cgroup_uncharge_pages`` ->
  ``refill_stock``. The next fault in that range allocates a new one
  (``pte_alloc`` -> ``pte_alloc_one`` -> ``GFP_PGTABLE_USER``, ``__GFP_ACCOUNT``), a
  kmem page charge before the folio's. A region whose length is a multiple of
  2 MiB is PMD-aligned (``__get_unmapped_area``: ``thp_get_unmapped_area_vmflags``);
  any other starts at a page offset drawn per job.

Modelling choices: the RCU callback runs on the zapping CPU in softirq (its
default, no ``rcu_nocbs``), placed right after the zap; THP stays off for the
region (``THP never``/``madvise``, or a region too small for a PMD folio).

Forty faults from an empty ``lru_add`` batch: the 31st moves the first 31 to the
LRU, the last 9 are still held when the zap frees 7 (the on-stack batch) and 24 of
the next 31; the next iteration's 22nd fault fills the batch and frees those 9.

>>> import numpy as np
>>> one = [0] * 40 + [1, 1]
>>> kind, cpu, task, nr, at = v618_release(
...     np.array(one * 2, dtype=np.uint8), np.zeros(84, np.int64), np.zeros(84, np.int64),
...     40, 2, np.zeros(1, np.int64), np.zeros(1, np.int64), 1)
>>> [(int(k), int(n), int(a)) for k, n, a in zip(kind, nr, at) if k != FAULT]
[(3, 1, 0), (1, 7, 40), (1, 24, 40), (2, 9, 63), (1, 7, 82), (1, 15, 82)]
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["FAULT", "ZAP", "LRU_DRAIN", "PTE_ALLOC", "PTE_FREE", "LRU_BATCH",
           "GATHER_LOCAL", "GATHER_BATCH", "GATHER_BATCHES", "PMD_PAGES", "pmd_offsets",
           "v618_release"]

#: kinds of the rows v618_release makes
FAULT, ZAP, LRU_DRAIN, PTE_ALLOC, PTE_FREE = 0, 1, 2, 3, 4
#: include/linux/pagevec.h: PAGEVEC_SIZE, the folio_batch of lru_add and of the frees
LRU_BATCH = 31
#: include/asm-generic/tlb.h: MMU_GATHER_BUNDLE - 1 pages in the on-stack batch
GATHER_LOCAL = 8 - 1
#: MAX_GATHER_BATCH - 1: (PAGE_SIZE - sizeof(struct mmu_gather_batch)) / 8 - 1
GATHER_BATCH = (4096 - 16) // 8 - 1
#: MAX_GATHER_BATCH_COUNT: 10000 / MAX_GATHER_BATCH batch pages before a forced flush
GATHER_BATCHES = 10000 // ((4096 - 16) // 8)
#: pages one PTE page maps (PMD_SIZE / PAGE_SIZE)
PMD_PAGES = 512


def pmd_offsets(jobs: int, pages: int, rng: np.random.Generator) -> np.ndarray:
    """Per job: pages from the region's start to its first 2 MiB boundary.

    0 for a region of whole PMDs (aligned by ``__get_unmapped_area``), else drawn.

    >>> pmd_offsets(2, 1024, np.random.default_rng(0)).tolist()
    [0, 0]
    """
    if pages % PMD_PAGES == 0:
        return np.zeros(jobs, dtype=np.int64)
    return rng.integers(0, PMD_PAGES, jobs).astype(np.int64)


@numba.njit(cache=True)
def _emit(out, n, kind, cpu, task, nr, at):  # pragma: no cover - jitted
    if n == out.shape[0]:
        grown = np.zeros((2 * out.shape[0], 5), dtype=np.int64)
        grown[:n] = out
        out = grown
    out[n, 0] = kind
    out[n, 1] = cpu
    out[n, 2] = task
    out[n, 3] = nr
    out[n, 4] = at
    return out, n + 1


@numba.njit(cache=True)
def _release(op, cpu, task, pages, per_zap, memcg, offset, ncpus):  # pragma: no cover
    ntask = len(memcg)
    # the iteration of the folio at each position that sits in an lru_add batch, or -1
    in_lru = np.full((ntask, pages), -1, dtype=np.int64)
    it = np.zeros(ntask, dtype=np.int64)          # the job's current iteration
    seen = np.zeros(ntask, dtype=np.int64)        # base zap rows seen
    nfault = np.zeros(ntask, dtype=np.int64)      # faults of the current iteration
    slots = pages // PMD_PAGES + 2
    has_pte = np.zeros((ntask, slots), dtype=np.int8)
    b_task = np.zeros((ncpus, LRU_BATCH), dtype=np.int64)
    b_pos = np.zeros((ncpus, LRU_BATCH), dtype=np.int64)
    b_it = np.zeros((ncpus, LRU_BATCH), dtype=np.int64)
    b_n = np.zeros(ncpus, dtype=np.int64)
    out = np.zeros((max(16, 2 * len(op)), 5), dtype=np.int64)
    n = 0
    for r in range(len(op)):
        k = task[r]
        c = cpu[r]
        if op[r] == 0:  # a fault at position pos of the job's region
            pos = nfault[k]
            nfault[k] += 1
            slot = (pos - offset[k] + PMD_PAGES) // PMD_PAGES  # 0: before the 1st boundary
            if has_pte[k, slot] == 0:
                has_pte[k, slot] = 1
                out, n = _emit(out, n, PTE_ALLOC, c, k, 1, r)
            out, n = _emit(out, n, FAULT, c, k, 1, r)
            j = b_n[c]
            b_task[c, j] = k
            b_pos[c, j] = pos
            b_it[c, j] = it[k]
            in_lru[k, pos] = it[k]
            b_n[c] = j + 1
            if b_n[c] == LRU_BATCH:  # folio_batch_move_lru -> folios_put
                run_task, run_nr = -1, 0
                for e in range(LRU_BATCH):
                    t = b_task[c, e]
                    if in_lru[t, b_pos[c, e]] == b_it[c, e]:
                        in_lru[t, b_pos[c, e]] = -1
                    if b_it[c, e] == it[t]:  # still mapped: only the reference drops
                        continue
                    if run_nr and memcg[t] != memcg[run_task]:
                        out, n = _emit(out, n, LRU_DRAIN, c, run_task, run_nr, r)
                        run_nr = 0
                    if run_nr == 0:
                        run_task = t
                    run_nr += 1
                if run_nr:
                    out, n = _emit(out, n, LRU_DRAIN, c, run_task, run_nr, r)
                b_n[c] = 0
            continue
        seen[k] += 1
        if (seen[k] - 1) % per_zap:  # the rest of the base pattern's zap rows
            continue
        # the zap of iteration it[k]: gather batches of 7, then 509 (19 of them per
        # flush), each freed in folio_batches of 31
        pos = 0
        while pos < pages:
            cap = GATHER_LOCAL
            b = 0
            while pos < pages and b <= GATHER_BATCHES:
                end = min(pages, pos + cap)
                while pos < end:
                    stop = min(end, pos + LRU_BATCH)
                    freed = 0
                    for q in range(pos, stop):
                        if in_lru[k, q] != it[k]:  # not held back by an lru_add batch
                            freed += 1
                    if freed:
                        out, n = _emit(out, n, ZAP, c, k, freed, r)
                    pos = stop
                cap = GATHER_BATCH
                b += 1
        s = 1  # the slot of the first whole PMD, which starts at offset[k]
        start = offset[k]
        while start + PMD_PAGES <= pages:
            if has_pte[k, s]:
                has_pte[k, s] = 0
                out, n = _emit(out, n, PTE_FREE, c, k, 1, r)
            start += PMD_PAGES
            s += 1
        it[k] += 1
        nfault[k] = 0
    return out[:n]


def v618_release(op: np.ndarray, cpu: np.ndarray, task: np.ndarray, pages: int,
                 per_zap: int, memcg: np.ndarray, offset: np.ndarray,
                 ncpus: int) -> tuple[np.ndarray, ...]:
    """Replay a schedule of faults (``op`` 0) and zap rows (``op`` 1, ``per_zap`` per
    iteration) through v6.18's batches; returns (kind, cpu, task, nr, base row) per
    row made, in order. ``memcg`` gives each task's memcg (runs of one memcg are
    uncharged together), ``offset`` each job's pages before its first 2 MiB boundary.
    """
    got = _release(np.ascontiguousarray(op, dtype=np.uint8),
                   np.ascontiguousarray(cpu, dtype=np.int64),
                   np.ascontiguousarray(task, dtype=np.int64), int(pages), int(per_zap),
                   np.ascontiguousarray(memcg, dtype=np.int64),
                   np.ascontiguousarray(offset, dtype=np.int64), int(ncpus))
    return tuple(got[:, k] for k in range(5))
