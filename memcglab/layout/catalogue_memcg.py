"""C text of page_counter, the RFC's page_counter_stock, vmpressure and mem_cgroup.

``struct mem_cgroup`` is the part seed 004 is about, in three eras named after the
blamed commit ea928e9e18da ("mm/vmpressure: move v1 userspace eventfd code into
memcontrol-v1.c"): ``parent`` (struct vmpressure with all its fields), ``blamed``
(the v1 fields under ``CONFIG_MEMCG_V1``: 112 -> 24 bytes when it is off) and
``fixed`` (Usama Arif's "mm/memcontrol: avoid false sharing between vmstats and
events": ``cgwb_list`` moved up, ``vmstats_percpu`` ``____cacheline_aligned_in_smp``).

The catalogue's mem_cgroup starts at ``memory``: in the kernel ``css`` (and, in some
trees, ``id_objcg``) come first, but ``struct page_counter`` is
``____cacheline_internodealigned_in_smp``, so whatever precedes ``memory`` shifts
every later member by a whole number of cache lines and changes no line sharing.
Offsets printed for it are therefore relative to ``&memcg->memory``.

Which tree? The member order is intel-lab-lkp/linux 0280fc343c7a's (the kernel notes'
"before the fix" source), with the seed's diff context winning where they differ
(no private ``id`` next to ``kmemcg_id``), plus ``struct irq_work high_irq_work``
before ``high_work`` as in the 2026 linux-mm tree (044c4600b3bd). That member
matters: it moves everything after it by 32 bytes. With it, the model reproduces the
changelog in every non-debug ``CONFIG_MEMCG_V1=n`` config without
``CONFIG_MEMCG_NMI_SAFETY_REQUIRES_ATOMIC``: parent apart, blamed on one line, fixed
apart. Without it the parent would already share the line and the blamed commit
would separate them, the opposite of what the kernel test robot measured.
"""

from __future__ import annotations

from memcglab.layout.catalogue_pc import PAGE_COUNTER_RELAYOUTS, PC_V5_11
from memcglab.layout.kernel_types import EraText

__all__ = ["PAGE_COUNTER", "PAGE_COUNTER_STOCK", "VMPRESSURE", "MEM_CGROUP",
           "PAGE_COUNTER_MODERN", "VMPRESSURE_OLD", "VMPRESSURE_2026"]

#: The modern layout; MEMCGLAB_PC_STOCK adds the E5 stock fields (RFC and v4 alike).
PAGE_COUNTER_MODERN = r"""
/* include/linux/page_counter.h, modern layout (linux-mm/linux-mm 05bbc79d75c3; the
 * stock and batch fields only in Joshua Hahn's page_counter stock series) */
struct page_counter {
    atomic_long_t usage;
    unsigned long failcnt;

    CACHELINE_PADDING(_pad1_);

    unsigned long emin;
    atomic_long_t min_usage;
    atomic_long_t children_min_usage;

    unsigned long elow;
    atomic_long_t low_usage;
    atomic_long_t children_low_usage;

    unsigned long watermark;
    unsigned long local_watermark;

    CACHELINE_PADDING(_pad2_);

    bool protection_support;
    bool track_failcnt;
    unsigned long min;
    unsigned long low;
    unsigned long high;
    unsigned long max;
    struct page_counter *parent;
#ifdef MEMCGLAB_PC_STOCK
    struct page_counter_stock __percpu *stock;
    unsigned int batch;
#endif
} ____cacheline_internodealigned_in_smp;
"""

_PCS_RFC = r"""
/* include/linux/page_counter.h, "[PATCH 1/8 RFC] mm/page_counter: introduce
 * per-page_counter stock" (Joshua Hahn, 10 Apr 2026,
 * 20260410210742.550489-2-joshua.hahnjy@gmail.com; seed 003) */
struct page_counter_stock {
    local_trylock_t lock;
    unsigned long nr_pages;
};
"""

_PCS_V4 = r"""
/* include/linux/page_counter.h, Hahn v4 (23 Jun 2026,
 * 20260623180124.868655-1-joshua.hahnjy@gmail.com); linux-mm/linux-mm 05bbc79d75c3 */
struct page_counter_stock {
    atomic_t nr_pages;
};
"""

_STOCK_DEF = (("MEMCGLAB_PC_STOCK", "1"),)
_RL = PAGE_COUNTER_RELAYOUTS
PAGE_COUNTER: dict[str, EraText] = {
    # v5.10 has v5.11's order (Rtoax/linux-5.10.13, a commented copy of v5.10.13). Until
    # issue 23 this era held torvalds/linux 0d3001e2690a's text, which is the v5.12
    # relayout (parent last): same size, parent on another line.
    "v5.10": EraText(PC_V5_11, "Rtoax/linux-5.10.13 include/linux/page_counter.h "
                     "031a1e46203f (v5.10.13): the field order of v5.11's blob 85bd413e784e",
                     "one flat group, parent after max"),
    "v5.11": _RL["v5.11"],
    "v5.12": _RL["v5.12"],
    "aligned": _RL["aligned"],
    "v6.1": _RL["v6.1"],
    "v6.16": EraText(PAGE_COUNTER_MODERN, "linux-mm/linux-mm include/linux/page_counter.h "
                     "05bbc79d75c3 without the E5 fields", "three cacheline groups"),
    "rfc-2026-04": EraText(_PCS_RFC + PAGE_COUNTER_MODERN, "RFC 1/8 of Joshua Hahn's "
                           "page_counter stock "
                           "(20260410210742.550489-2-joshua.hahnjy@gmail.com)",
                           "modern + per-CPU stock pointer and batch (E5 RFC)",
                           defines=_STOCK_DEF),
    "2026": EraText(_PCS_V4 + PAGE_COUNTER_MODERN, "linux-mm/linux-mm "
                    "include/linux/page_counter.h 05bbc79d75c3 (Hahn v4)",
                    "modern + per-CPU stock pointer and batch (E5 v4)", defines=_STOCK_DEF),
}

PAGE_COUNTER_STOCK: dict[str, EraText] = {
    "rfc-2026-04": EraText(_PCS_RFC, "RFC 1/8 of Joshua Hahn's page_counter stock "
                           "(20260410210742.550489-2-joshua.hahnjy@gmail.com)",
                           "local_trylock_t + unsigned long", "alloc_percpu"),
    "2026": EraText(_PCS_V4, "linux-mm/linux-mm include/linux/page_counter.h 05bbc79d75c3 "
                    "(Hahn v4, 20260623180124.868655-1-joshua.hahnjy@gmail.com)",
                    "a lone atomic_t", "alloc_percpu"),
}

VMPRESSURE_OLD = r"""
/* include/linux/vmpressure.h before ea928e9e18da: every field unconditional
 * (torvalds/linux 0b77b9706662) */
struct vmpressure {
    unsigned long scanned;
    unsigned long reclaimed;

    unsigned long tree_scanned;
    unsigned long tree_reclaimed;
    spinlock_t sr_lock;

    struct list_head events;
    struct mutex events_lock;

    struct work_struct work;
};
"""

VMPRESSURE_2026 = r"""
/* include/linux/vmpressure.h after ea928e9e18da ("mm/vmpressure: move v1 userspace
 * eventfd code into memcontrol-v1.c"); linux-mm/linux-mm 0ffe53f2d13c */
struct vmpressure {
    unsigned long scanned;
    unsigned long reclaimed;
    spinlock_t sr_lock;

#ifdef CONFIG_MEMCG_V1
    unsigned long tree_scanned;
    unsigned long tree_reclaimed;
    struct list_head events;
    struct mutex events_lock;

    struct work_struct work;
#endif
};
"""

_WAIT_LIST = (("MEMCGLAB_MUTEX_WAIT_LIST", "1"),)
VMPRESSURE: dict[str, EraText] = {
    "v6.12": EraText(VMPRESSURE_OLD, "torvalds/linux include/linux/vmpressure.h 0b77b9706662; "
                     "struct mutex with wait_list", "all fields, 32-byte mutex",
                     defines=_WAIT_LIST),
    "parent": EraText(VMPRESSURE_OLD, "torvalds/linux include/linux/vmpressure.h 0b77b9706662 "
                      "with the 2026 first_waiter mutex (torvalds/linux "
                      "include/linux/mutex_types.h 25500ba7e77c)",
                      "all fields, 24-byte mutex: the 112 of Usama Arif's "
                      "changelog"),
    "blamed": EraText(VMPRESSURE_2026, "linux-mm/linux-mm include/linux/vmpressure.h "
                      "0ffe53f2d13c (ea928e9e18da)", "v1 fields under CONFIG_MEMCG_V1"),
}

_MEM_CGROUP = r"""
/* include/linux/memcontrol.h: enum memcg_memory_event and the parts of struct
 * mem_cgroup from memory on, in the field order of intel-lab-lkp/linux 0280fc343c7a;
 * around vmstats_percpu the lines are those of the seed 004 diff (memcontrol.h blob
 * e78bc98ab229b): no private id between kmemcg_id and vmstats_percpu. high_irq_work
 * is in the 2026 member set (linux-mm/linux-mm 044c4600b3bd) but not in 0280fc343c7a;
 * it is kept because without it the model puts the parent, not the blamed commit,
 * on the shared line (see the module docstring). */
enum memcg_memory_event {
    MEMCG_LOW,
    MEMCG_HIGH,
    MEMCG_MAX,
    MEMCG_OOM,
    MEMCG_OOM_KILL,
    MEMCG_OOM_GROUP_KILL,
    MEMCG_SWAP_HIGH,
    MEMCG_SWAP_MAX,
    MEMCG_SWAP_FAIL,
    MEMCG_SOCK_THROTTLED,
    MEMCG_NR_MEMORY_EVENTS,
};

#define MEMCG_CGWB_FRN_CNT    4

struct mem_cgroup {

    /* css (and id_objcg) precede memory in the kernel: elided, see the docstring */
    struct page_counter memory;

    union {
        struct page_counter swap;
        struct page_counter memsw;
    };

    struct list_head memory_peaks;
    struct list_head swap_peaks;
    spinlock_t     peaks_lock;

    struct irq_work high_irq_work;
    struct work_struct high_work;

#ifdef CONFIG_ZSWAP
    unsigned long zswap_max;

    bool zswap_writeback;
#endif

    struct vmpressure vmpressure;

    bool oom_group;

    int swappiness;

    struct cgroup_file events_file;
    struct cgroup_file events_local_file;

    struct cgroup_file swap_events_file;

    struct memcg_vmstats    *vmstats;

    atomic_long_t        memory_events[MEMCG_NR_MEMORY_EVENTS];
    /* memory_events_local[MEMCG_SWAP_FAIL] is the counter seed 004 writes */
    atomic_long_t        memory_events_local[MEMCG_NR_MEMORY_EVENTS];

#ifdef CONFIG_MEMCG_NMI_SAFETY_REQUIRES_ATOMIC
    atomic_t        kmem_stat;
#endif
    u64            socket_pressure;
#if BITS_PER_LONG < 64
    seqlock_t        socket_pressure_seqlock;
#endif
    int kmemcg_id;

#ifndef MEMCGLAB_ARIF_FIX
    struct memcg_vmstats_percpu __percpu *vmstats_percpu;

#endif
#ifdef CONFIG_CGROUP_WRITEBACK
    struct list_head cgwb_list;
#endif
#ifdef MEMCGLAB_ARIF_FIX
    /* seed 004's fix: the read-hot pointer gets a line of its own */
    struct memcg_vmstats_percpu __percpu *vmstats_percpu
        ____cacheline_aligned_in_smp;

#endif
#ifdef CONFIG_CGROUP_WRITEBACK
    struct wb_domain cgwb_domain;
    struct memcg_cgwb_frn cgwb_frn[MEMCG_CGWB_FRN_CNT];
#endif

#ifdef CONFIG_LRU_GEN_WALKS_MMU
    struct lru_gen_mm_list mm_list;
#endif

#ifdef CONFIG_MEMCG_V1
    struct page_counter kmem;
    struct page_counter tcpmem;

    struct memcg1_events_percpu __percpu *events_percpu;

    unsigned long soft_limit;

    bool oom_lock;
    int under_oom;

    int oom_kill_disable;

    struct mutex thresholds_lock;

    struct mem_cgroup_thresholds thresholds;

    struct mem_cgroup_thresholds memsw_thresholds;

    struct list_head oom_notify;

    bool tcpmem_active;
    int tcpmem_pressure;

    struct list_head event_list;
    spinlock_t event_list_lock;
#endif

    struct mem_cgroup_per_node *nodeinfo[];
};
"""

_SEED004 = ("mm/memcontrol: avoid false sharing between vmstats and events (Usama Arif, "
            "17 Aug 2026)")
MEM_CGROUP: dict[str, EraText] = {
    "parent": EraText(PAGE_COUNTER_MODERN + VMPRESSURE_OLD + _MEM_CGROUP,
                      "intel-lab-lkp/linux include/linux/memcontrol.h 0280fc343c7a + "
                      f"{_SEED004} diff context; vmpressure before ea928e9e18da",
                      "before ea928e9e18da: struct vmpressure 112 bytes"),
    "blamed": EraText(PAGE_COUNTER_MODERN + VMPRESSURE_2026 + _MEM_CGROUP,
                      "as parent, with vmpressure of ea928e9e18da (linux-mm/linux-mm "
                      "include/linux/vmpressure.h 0ffe53f2d13c)",
                      "ea928e9e18da: vmpressure 24 bytes without CONFIG_MEMCG_V1"),
    "fixed": EraText(PAGE_COUNTER_MODERN + VMPRESSURE_2026 + _MEM_CGROUP,
                     f"{_SEED004}: cgwb_list moved up, vmstats_percpu "
                     "____cacheline_aligned_in_smp",
                     "after \"mm/memcontrol: avoid false sharing between vmstats and events\"",
                     defines=(("MEMCGLAB_ARIF_FIX", "1"),)),
}
