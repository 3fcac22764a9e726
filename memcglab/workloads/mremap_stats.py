"""How often stress-ng's mremap loop loads ``memcg->vmstats_percpu``, per swap-fail event.

Seed 004 says the statistics paths load ``vmstats_percpu`` while the swap-fail
events write ``memory_events_local[MEMCG_SWAP_FAIL]`` on the same line; how often
they load it sets how many transfers the false sharing costs. This module counts
the loads along the kernel paths one iteration of the stressor takes, and divides
by the swap-fail events of that iteration. Every memcg statistics update
(``mod_memcg_state``, ``mod_memcg_lruvec_state``, ``count_memcg_events``; linux-mm
mm/memcontrol.c, 2026) does ``this_cpu_add(memcg->vmstats_percpu->...)`` and then
``memcg_rstat_updated(memcg, val, cpu)``, which loads ``memcg->vmstats_percpu`` once
more and walks the ancestors through the per-CPU ``statc->parent_pcpu`` links, which
live in ``struct memcg_vmstats_percpu``, not in ``struct mem_cgroup``. So one update
loads the pointer of the task's own memcg only, twice within a few nanoseconds; the
second load hits the line the first fetched, so an update counts as **one** load that
can miss. No ancestor's ``struct mem_cgroup`` is read on the update path.

**The stressor** (ColinIanKing/stress-ng stress-mremap.c and core-madvise.c, read
with the project's look-up tools; the LKP job's exact options are not published, so
the following is an assumption): each instance maps ``256 MiB / instances`` with
``MAP_POPULATE``, applies ``stress_madvise_randomize`` (one advice drawn uniformly from
a list of 16: NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTFORK, DOFORK, MERGEABLE,
UNMERGEABLE, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP, COLD, PAGEOUT, POPULATE_READ,
POPULATE_WRITE; active with ``--mmap-madvise``, which seed 004's "exercises
MADV_PAGEOUT" implies), then halves the mapping with ``mremap`` down to one page
(unmapping the tail each time) and doubles it back, with one random advice after
every step, and unmaps it. With 176 instances that is 372 pages of 4 KiB.

**Loads per kernel path** (:data:`PATHS`; ``lru_lock``: made with the lruvec's
``lru_lock`` held, where a miss stretches the critical section):

====================  ===============================================  =====  ========
path                  functions (stat item)                            loads  lru_lock
====================  ===============================================  =====  ========
fault                 handle_mm_fault: count_memcg_event_mm (PGFAULT)    1      no
fault                 folio_add_new_anon_rmap -> __lruvec_stat_mod_      1      no
                      folio (NR_ANON_MAPPED)
fault                 folio_add_lru_vma -> lru_add -> update_lru_size    1      yes
charge                charge_memcg -> commit_charge                      0      -
                      (memcg1_commit_charge is compiled out with
                      CONFIG_MEMCG_V1=n)
zero-page fault       MADV_POPULATE_READ: handle_mm_fault (PGFAULT)      1      no
pageout (per event)   madvise_cold_or_pageout_pte_range ->               1      yes
                      folio_isolate_lru -> lruvec_del_folio
pageout               shrink_folio_list -> folio_alloc_swap fails ->     0      -
                      __mem_cgroup_try_charge_swap ->
                      memcg_memory_event(MEMCG_SWAP_FAIL): the write
pageout               activate_locked: count_memcg_folio_events          1      no
                      (PGACTIVATE)
pageout               reclaim_folio_list -> folio_putback_lru ->         1      yes
                      lru_add -> update_lru_size
cold                  folio_deactivate -> lru_deactivate: del, add,      3      yes
                      __count_memcg_events(PGDEACTIVATE), active only
unmap                 zap_present_ptes -> folio_remove_rmap_ptes         1      no
                      (NR_ANON_MAPPED)
free                  folios_put_refs -> __page_cache_release ->         1      yes
                      lruvec_del_folio
uncharge              uncharge_batch: page_counter only                  0      -
                      (memcg1_uncharge_batch is v1-only)
mremap                move_page_tables -> move_ptes: no memcg stat       0      -
page table            pagetable_alloc (accounted: MEMCG_KMEM) and the    4      no
                      ctor (NR_PAGETABLE), then both again at free
====================  ===============================================  =====  ========

No reclaim counters (PGSCAN_*, PGSTEAL_*, NR_ISOLATED_*) are touched: MADV_PAGEOUT's
``reclaim_pages`` calls ``shrink_folio_list`` directly, not ``shrink_inactive_list``,
and nothing is stolen. Accounted slab (VMAs) flushes its byte deltas through the
per-CPU object stock about once per 4 KiB, under 0.2 loads per event; left out. The
periodic flush (every 2 s) is in :mod:`memcglab.workloads.mremap` already.

**Per event.** :func:`iteration_counts` takes one iteration's random advice in
expectation (an exact sum over the 16 choices at each of the ~18 steps), and
:func:`loads_per_event` divides its loads by its swap-fail events. Every CPU runs an
instance in the same memcg, so every CPU loads the shared line at this rate per its
own event. :data:`READ_RANGE` gives the ends:

* **low** (about 5.5): every advice is MADV_PAGEOUT (a harness that pages out at
  every step): each page's 5 lifecycle loads are spread over ~2 events;
* **typical** (about 48): the stored stress-ng, 1 advice in 16 is MADV_PAGEOUT, two
  page tables per mremap step (the move and the MREMAP_DONTUNMAP move);
* **high** (about 62): a longer advice list (20 entries, as newer stress-ng versions
  add MADV_COLLAPSE and the guard advices) and four page tables per step (a moved
  region straddling a 2 MiB boundary needs two).

>>> [round(x, 1) for x in READ_RANGE[:3]]
[5.5, 48.1, 62.0]
>>> round(lock_fraction(StressorLoop()), 2)
0.39
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import NamedTuple

from memcglab.workloads.common import PAGE_SIZE, check_float, check_int

__all__ = ["PATHS", "READ_RANGE", "Path", "ReadRange", "StressorLoop", "iteration_counts",
           "loads_per_event", "lock_fraction", "path_table", "read_range"]

DEFAULT_MREMAP_BYTES = 256 * 2**20  # stress-mremap.c


class Path(NamedTuple):
    """One kernel statistics path: its loads of vmstats_percpu per unit it counts."""

    path: str
    functions: str
    unit: str  # what the count in iteration_counts is of
    loads: int
    under_lru_lock: bool


#: the paths of the table in the module docstring (loads are per ``unit``)
PATHS: tuple[Path, ...] = (
    Path("fault: PGFAULT", "handle_mm_fault -> count_memcg_event_mm", "faults", 1, False),
    Path("fault: NR_ANON_MAPPED", "folio_add_new_anon_rmap -> __lruvec_stat_mod_folio",
         "faults", 1, False),
    Path("fault: LRU add", "folio_add_lru_vma -> lru_add -> update_lru_size", "faults", 1,
         True),
    Path("zero-page fault: PGFAULT", "MADV_POPULATE_READ -> handle_mm_fault", "zero_faults",
         1, False),
    Path("pageout: isolate", "madvise_cold_or_pageout_pte_range -> folio_isolate_lru",
         "swap_fail_events", 1, True),
    Path("pageout: PGACTIVATE", "shrink_folio_list activate_locked -> "
         "count_memcg_folio_events", "swap_fail_events", 1, False),
    Path("pageout: putback", "reclaim_folio_list -> folio_putback_lru -> lru_add",
         "swap_fail_events", 1, True),
    Path("cold: deactivate", "folio_deactivate -> lru_deactivate (del, add, PGDEACTIVATE)",
         "deactivations", 3, True),
    Path("unmap: NR_ANON_MAPPED", "zap_present_ptes -> folio_remove_rmap_ptes", "faults", 1,
         False),
    Path("free: LRU del", "folios_put_refs -> __page_cache_release -> lruvec_del_folio",
         "faults", 1, True),
    Path("page tables: MEMCG_KMEM, NR_PAGETABLE", "pagetable_alloc / pagetable_free "
         "(accounted) and the ptdesc ctor/dtor", "page_tables", 4, False),
)


@dataclass(frozen=True)
class StressorLoop:
    """One stress-ng mremap instance's loop; each default says where it comes from."""

    #: stress-mremap.c DEFAULT_MREMAP_BYTES, shared by the instances.
    mremap_bytes: int = DEFAULT_MREMAP_BYTES
    #: instances, one per CPU: seed 004's 176-CPU system.
    instances: int = 176
    #: probability that one random advice is MADV_PAGEOUT: 1 of core-madvise.c's 16.
    pageout_probability: float = 1 / 16
    #: probability of MADV_COLD, MADV_POPULATE_READ and MADV_POPULATE_WRITE (each).
    other_probability: float = 1 / 16
    #: PTE tables allocated (and freed) per mremap step: the move and the DONTUNMAP move.
    tables_per_step: float = 2.0

    def __post_init__(self) -> None:
        check_int("mremap_bytes", self.mremap_bytes, 4096, 2**40)
        check_int("instances", self.instances, 1, 8192)
        check_float("pageout_probability", self.pageout_probability, 0.0, 1.0, low_open=True)
        check_float("other_probability", self.other_probability, 0.0, 1.0)
        if self.pageout_probability + 3 * self.other_probability > 1 + 1e-12:
            raise ValueError(f"pageout_probability={self.pageout_probability!r} and "
                             f"other_probability={self.other_probability!r}: the four "
                             "advices' probabilities must sum to at most 1")
        check_float("tables_per_step", self.tables_per_step, 0.0, 64.0)

    def sizes(self) -> tuple[list[int], list[int]]:
        """Pages of the mapping at each advice: the halving steps, then the doubling steps.

        Follows stress_mremap_child: byte sizes halve while above a page, then double
        while below ``mremap_bytes / instances``; mremap page-aligns each length.

        >>> StressorLoop().sizes()[0]
        [372, 186, 93, 47, 24, 12, 6, 3, 2]
        """
        total = max(self.mremap_bytes // self.instances, PAGE_SIZE)
        size = total & ~(PAGE_SIZE - 1)
        down = [size]
        size >>= 1
        while size > PAGE_SIZE:
            down.append(size)
            size >>= 1
        size <<= 1
        up = []
        while size < total:
            up.append(size)
            size <<= 1
        pages = [-(-b // PAGE_SIZE) for b in down], [-(-b // PAGE_SIZE) for b in up]
        return pages


def iteration_counts(loop: StressorLoop) -> dict[str, float]:
    """Expected counts of one iteration: faults, zero-page faults, swap-fail events,
    deactivations, page tables and mremap steps.

    The state after each advice is (present pages, active pages, zero-mapped pages);
    the expectation sums over the advice drawn at each step exactly. In the halving
    phase every page of the mapping is present (MAP_POPULATE); the doubling phase
    starts with the last halving size present and grows only through
    MADV_POPULATE_WRITE (MADV_POPULATE_READ maps the zero page, which no pageout or
    LRU sees). MADV_PAGEOUT fails for each present page and activates it; MADV_COLD
    deactivates the active ones.
    """
    p, q = loop.pageout_probability, loop.other_probability
    rest = 1.0 - p - 3 * q
    down, up = loop.sizes()
    counts = defaultdict(float)
    counts["faults"] = float(down[0])  # MAP_POPULATE
    state = {(down[0], 0, 0): 1.0}  # (present, active, zero-mapped) -> probability
    for phase, sizes in (("down", down), ("up", up)):
        for i, size in enumerate(sizes):
            if phase == "down" and i:  # the mremap shrink unmapped the tail
                state = _merge(((size, min(a, size), 0), w) for (n, a, z), w in state.items())
            nxt: dict[tuple[int, int, int], float] = defaultdict(float)
            for (n, a, z), w in state.items():
                counts["swap_fail_events"] += w * p * n
                nxt[(n, n, z)] += w * p
                counts["deactivations"] += w * q * a
                nxt[(n, 0, z)] += w * q
                counts["zero_faults"] += w * q * max(size - max(n, z), 0)
                nxt[(n, a, max(z, size))] += w * q
                counts["faults"] += w * q * max(size - n, 0)
                nxt[(max(n, size), a, max(z, size))] += w * q
                nxt[(n, a, z)] += w * rest
            state = nxt
    counts["steps"] = float(len(down) - 1 + len(up))
    counts["page_tables"] = counts["steps"] * loop.tables_per_step
    return dict(counts)


def _merge(pairs) -> dict:
    out: dict = defaultdict(float)
    for k, w in pairs:
        out[k] += w
    return out


def path_table(loop: StressorLoop | None = None) -> list[dict]:
    """One row per :data:`PATHS` entry: its count per iteration, loads per iteration and
    loads per swap-fail event, for ``loop`` (default: the stored stress-ng)."""
    loop = StressorLoop() if loop is None else loop
    c = iteration_counts(loop)
    events = c["swap_fail_events"]
    rows = []
    for p in PATHS:
        loads = p.loads * c[p.unit]
        rows.append({"path": p.path, "functions": p.functions, "per": p.unit,
                     "loads_per_unit": p.loads, "under_lru_lock": p.under_lru_lock,
                     "units_per_iteration": c[p.unit], "loads_per_iteration": loads,
                     "loads_per_event": loads / events})
    return rows


def loads_per_event(loop: StressorLoop) -> float:
    """vmstats_percpu loads per swap-fail event on each CPU: the sum of :func:`path_table`."""
    return sum(r["loads_per_event"] for r in path_table(loop))


def lock_fraction(loop: StressorLoop) -> float:
    """The share of those loads made with the lruvec's ``lru_lock`` held."""
    rows = path_table(loop)
    return sum(r["loads_per_iteration"] for r in rows if r["under_lru_lock"]) / sum(
        r["loads_per_iteration"] for r in rows)


class ReadRange(NamedTuple):
    """Loads per swap-fail event per CPU at the low, typical and high end, and the loops."""

    low: float
    typical: float
    high: float
    loops: tuple[StressorLoop, StressorLoop, StressorLoop]


#: the loops behind each end (reasons in the module docstring)
_ENDS = (StressorLoop(pageout_probability=1.0, other_probability=0.0, tables_per_step=1.0),
         StressorLoop(),
         StressorLoop(pageout_probability=1 / 20, other_probability=1 / 20,
                      tables_per_step=4.0))


def read_range(instances: int = 176) -> ReadRange:
    """:data:`READ_RANGE` for another instance count (one instance per CPU)."""
    loops = tuple(replace(loop, instances=instances) for loop in _ENDS)
    low, typical, high = (loads_per_event(loop) for loop in loops)
    return ReadRange(low, typical, high, loops)


#: seed 004's machine: 176 instances
READ_RANGE: ReadRange = read_range()
