"""Named stock models and the kernel each one ports.

Every result a sweep writes carries, per row, the kernel version its model ports
(``memcglab.sweep`` reads :data:`KERNEL_VERSIONS`), so that a table read months
later still says which ``mm/memcontrol.c`` a number is about. The eras are those of
``reference/kernel-notes.md`` §0.1.

>>> KERNEL_VERSIONS["multi"]
'v6.16 (6.18.y 312d9602fe3e)'
>>> sorted(KERNEL_VERSIONS)[:2]
['multi', 'multi-fix2']
"""

from __future__ import annotations

__all__ = ["KERNEL_VERSIONS"]

# model name -> the kernel (release, tree or patch series) whose charge path it ports
KERNEL_VERSIONS: dict[str, str] = {
    # E1: one cached memcg per CPU, local_trylock_t
    "single": "v6.15",
    # E3: NR_MEMCG_STOCK=7 slots, random victim (6952350/linux-6.18.y at 312d9602fe3e)
    "multi": "v6.16 (6.18.y 312d9602fe3e)",
    # E4: round-robin victim via drain_idx (linux-mm/linux-mm at 030321517fd4)
    "multi-rr": "linux-mm 2026 (030321517fd4)",
    # the LRU variant discussed in the seed-000 thread; it never reached a tree
    "multi-lru": "v6.16 + LRU victim (Shakeel Butt's 2025 LRU variant, never merged)",
    # E2 with fix 2 applied but not fix 3: stocks an unassigned nr_pages
    "multi-fix2": "mm-unstable 2025-04-25 (fix 2, before fix 3)",
    # E5: per-page_counter stock, seed 003
    "pcstock": "RFC 2026-04-10 (Joshua Hahn, patches 1-8)",
}
