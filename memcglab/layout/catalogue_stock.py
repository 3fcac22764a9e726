"""C text of the per-CPU charge stocks, one definition per era, with sources.

``struct memcg_stock_pcp`` in five eras (kernel notes section 0.1 and 2.2) and
``struct obj_stock_pcp`` in two. ``NR_MEMCG_STOCK`` and ``NR_OBJ_STOCK`` are plain
``#define``s, so a slot-count sweep overrides them (``defines={"NR_MEMCG_STOCK": 8}``).
Sizes on x86-64 without lockdep: 88, 96, 136 (0x88), 104 and 112; obj_stock_pcp 72
and 112.
"""

from __future__ import annotations

from memcglab.layout.kernel_types import EraText

__all__ = ["MEMCG_STOCK", "OBJ_STOCK"]

_E0 = r"""
/* mm/memcontrol.c, <= v6.14 (E0). Field order: torvalds/linux 5458985533ba and the
 * context lines of "[PATCH] memcg: multi-memcg percpu charge cache" (seed 000).
 * static DEFINE_PER_CPU(struct memcg_stock_pcp, memcg_stock); */
struct memcg_stock_pcp {
    local_lock_t stock_lock;
    struct mem_cgroup *cached;
    unsigned int nr_pages;

    struct obj_cgroup *cached_objcg;
    struct pglist_data *cached_pgdat;
    unsigned int nr_bytes;
    int nr_slab_reclaimable_b;
    int nr_slab_unreclaimable_b;

    struct work_struct work;
    unsigned long flags;
#define FLUSHING_CACHED_CHARGE    0
};
"""

_E1 = r"""
/* mm/memcontrol.c, v6.15 (E1): E0 with a local_trylock_t. "locking/local_lock, mm:
 * Replace localtry_ helpers with local_trylock_t type" (Alexei Starovoitov, Apr 2025,
 * merged for v6.15). static DEFINE_PER_CPU(struct memcg_stock_pcp, memcg_stock); */
struct memcg_stock_pcp {
    local_trylock_t stock_lock;
    struct mem_cgroup *cached;
    unsigned int nr_pages;

    struct obj_cgroup *cached_objcg;
    struct pglist_data *cached_pgdat;
    unsigned int nr_bytes;
    int nr_slab_reclaimable_b;
    int nr_slab_unreclaimable_b;

    struct work_struct work;
    unsigned long flags;
#define FLUSHING_CACHED_CHARGE    0
};
"""

_E2 = r"""
/* mm/memcontrol.c, mm-unstable April 2025 (E2, never released): "[PATCH] memcg:
 * multi-memcg percpu charge cache" (Shakeel Butt, 16 Apr 2025,
 * 20250416180229.2902751-1-shakeel.butt@linux.dev; seed 000). DEFINE_PER_CPU until
 * fix 4 (30 Apr 2025) made it DEFINE_PER_CPU_ALIGNED after Vlastimil Babka's review
 * (f3e0c710-0815-44ad-844c-0e8a079bf663@suse.cz). */
#define NR_MEMCG_STOCK 7
struct memcg_stock_pcp {
    local_trylock_t stock_lock;
    uint8_t nr_pages[NR_MEMCG_STOCK];
    struct mem_cgroup *cached[NR_MEMCG_STOCK];

    struct obj_cgroup *cached_objcg;
    struct pglist_data *cached_pgdat;
    unsigned int nr_bytes;
    int nr_slab_reclaimable_b;
    int nr_slab_unreclaimable_b;

    struct work_struct work;
    unsigned long flags;
#define FLUSHING_CACHED_CHARGE    0
};
"""

_E3 = r"""
/* mm/memcontrol.c, v6.16 .. v6.18 (E3): "memcg: completely decouple memcg and obj
 * stocks" (Shakeel Butt, v3 20250506225533.2580386-1-shakeel.butt@linux.dev);
 * read in 6952350/linux-6.18.y mm/memcontrol.c at 312d9602fe3e.
 * static DEFINE_PER_CPU_ALIGNED(struct memcg_stock_pcp, memcg_stock); */
#define NR_MEMCG_STOCK 7
struct memcg_stock_pcp {
    local_trylock_t lock;
    uint8_t nr_pages[NR_MEMCG_STOCK];
    struct mem_cgroup *cached[NR_MEMCG_STOCK];

    struct work_struct work;
    unsigned long flags;
};
"""

_E4 = r"""
/* mm/memcontrol.c, 2026 (E4): "memcg: use round-robin victim selection in
 * refill_stock" (Shakeel Butt, 21 May 2026, 20260521223751.3794625-1-shakeel.butt@linux.dev;
 * upstream c0cafe24d3f6); read in linux-mm/linux-mm mm/memcontrol.c at 030321517fd4.
 * static DEFINE_PER_CPU_ALIGNED(struct memcg_stock_pcp, memcg_stock); */
#define NR_MEMCG_STOCK 7
struct memcg_stock_pcp {
    local_trylock_t lock;
    uint8_t nr_pages[NR_MEMCG_STOCK];
    struct mem_cgroup *cached[NR_MEMCG_STOCK];

    struct work_struct work;
    unsigned long flags;
    uint8_t drain_idx;
};
"""

#: era -> C text, source, summary, per-CPU definition
MEMCG_STOCK: dict[str, EraText] = {
    "v6.14": EraText(_E0, "torvalds/linux mm/memcontrol.c 5458985533ba (field order); the "
                     "multi-memcg patch's context lines", "single memcg, local_lock_t (E0)",
                     "DEFINE_PER_CPU"),
    "v6.15": EraText(_E1, "Alexei Starovoitov, local_trylock_t patch (Apr 2025, v6.15)",
                     "single memcg, local_trylock_t (E1)", "DEFINE_PER_CPU"),
    "2025-04": EraText(_E2, "multi-memcg percpu charge cache: "
                       "20250416180229.2902751-1-shakeel.butt@linux.dev + fix 4",
                       "7-slot multi stock before the memcg/obj split (E2)",
                       "DEFINE_PER_CPU, DEFINE_PER_CPU_ALIGNED from fix 4"),
    "v6.16": EraText(_E3, "6952350/linux-6.18.y mm/memcontrol.c 312d9602fe3e",
                     "7 slots, obj stock split out (E3)", "DEFINE_PER_CPU_ALIGNED"),
    "2026": EraText(_E4, "linux-mm/linux-mm mm/memcontrol.c 030321517fd4 (c0cafe24d3f6)",
                    "7 slots + round-robin drain_idx (E4)", "DEFINE_PER_CPU_ALIGNED"),
}

_OBJ_E3 = r"""
/* mm/memcontrol.c, v6.16 .. v6.18 (E3): 6952350/linux-6.18.y mm/memcontrol.c at
 * 312d9602fe3e. static DEFINE_PER_CPU_ALIGNED(struct obj_stock_pcp, obj_stock); */
struct obj_stock_pcp {
    local_trylock_t lock;
    unsigned int nr_bytes;
    struct obj_cgroup *cached_objcg;
    struct pglist_data *cached_pgdat;
    int nr_slab_reclaimable_b;
    int nr_slab_unreclaimable_b;

    struct work_struct work;
    unsigned long flags;
};
"""

_OBJ_E4 = r"""
/* mm/memcontrol.c, 2026 (E4+): "[PATCH v3 0/4] memcg: shrink obj_stock_pcp and cache
 * multiple objcgs" (Shakeel Butt, 25 May 2026,
 * 20260526033931.1760588-1-shakeel.butt@linux.dev); linux-mm/linux-mm
 * mm/memcontrol.c at 030321517fd4. */
#define NR_OBJ_STOCK 5
struct obj_stock_pcp {
    local_trylock_t lock;
    int8_t index;
    int16_t node_id;
    int16_t nr_slab_reclaimable_b;
    int16_t nr_slab_unreclaimable_b;
#if PAGE_SHIFT > 16
    unsigned int nr_bytes[NR_OBJ_STOCK];
#else
    uint16_t nr_bytes[NR_OBJ_STOCK];
#endif
    struct obj_cgroup *cached[NR_OBJ_STOCK];

    struct work_struct work;
    unsigned long flags;
    uint8_t drain_idx;
};
"""

OBJ_STOCK: dict[str, EraText] = {
    "v6.16": EraText(_OBJ_E3, "6952350/linux-6.18.y mm/memcontrol.c 312d9602fe3e",
                     "single objcg (E3)", "DEFINE_PER_CPU_ALIGNED"),
    "2026": EraText(_OBJ_E4, "linux-mm/linux-mm mm/memcontrol.c 030321517fd4; "
                    "20260526033931.1760588-1-shakeel.butt@linux.dev",
                    "5 objcgs, 16-bit counters (E4+)", "DEFINE_PER_CPU_ALIGNED"),
}
