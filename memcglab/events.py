"""Event counts of the charge path: what the engine measures and the cost model prices.

This is the interface between ``memcglab.engine`` (which counts) and
``memcglab.cost`` (which turns counts into cycles). Every count is an integer array
indexed by CPU (``per_cpu``) or by dense memcg index (``per_memcg``); the totals are
their sums. Names say what happened, in the kernel's terms.

>>> ev = ChargeEvents.zeros(ncpus=2, nmemcgs=3)
>>> ev.per_cpu["stock_hits"][1] += 5
>>> ev.total("stock_hits")
5
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["EVENT_NAMES", "EVENT_DOCS", "PROFILE_EVENT_NAMES", "PROFILE_EVENT_DOCS",
           "OBJ_ERA_EVENT_DOCS", "OBJ_ERA_EVENTS", "V1_EVENT_DOCS", "V1_EVENTS",
           "ALL_EVENT_NAMES", "CALL_EVENTS", "ChargeEvents"]

#: name -> what one count means
EVENT_DOCS: dict[str, str] = {
    "charges": "charge operations (try_charge_memcg calls)",
    "uncharges": "uncharge operations through refill_stock "
                 "(pcstock, pcstock-v4: page_counter_uncharge)",
    "uncharges_direct": "memcg_uncharge operations (folio uncharge path)",
    "stock_hits": "charges served by a per-CPU stock without a page_counter walk",
    "miss_absent": "consume_stock found no slot caching the memcg",
    "miss_short": "consume_stock found the memcg but with fewer pages than requested",
    "miss_bypass": "consume_stock returned early (request above the batch, or trylock failed)",
    "evictions": "occupied slots drained to make room for another memcg",
    "walks": "hierarchical page_counter walks (try_charge, charge, uncharge, cancel)",
    "walk_levels": "page_counter levels touched by all walks (sum of walk depths)",
    "drains": "slots (or pcstock and pcstock-v4 per-CPU stocks) drained with pages in them",
    "slots_scanned": "stock slots read by consume_stock and refill_stock lookups",
    "lru_writes": "LRU bookkeeping writes (multi-lru: a slot made most recently used)",
    "usage_transfers": "walk levels whose counter usage was last written by another CPU",
    "css_ref_ops": "css_get/css_put pairs' halves taken by stock slot changes",
    "failed_charges": "charges that returned -ENOMEM",
}
#: the events the cost model prices (``memcglab.cost.PRICES`` has one entry per name)
EVENT_NAMES: tuple[str, ...] = tuple(EVENT_DOCS)

#: name -> what one count means, for the calls of the charge-path functions that
#: `memcglab predict`'s profile reports (scenario contract) and the obj stock
#: (docs/trace-extensions.md); counted alongside, not priced per event
PROFILE_EVENT_DOCS: dict[str, str] = {
    "try_charge_memcg": "try_charge_memcg calls (charges, and obj_cgroup_charge_pages)",
    "page_counter_try_charge": "page_counter_try_charge walks (each retry pass's walk)",
    "page_counter_try_charge_levels": "counters visited by page_counter_try_charge walks",
    "page_counter_uncharge": "page_counter_uncharge walks (page_counter_cancel and the "
                             "RFC's page_counter_cancel_hierarchy included)",
    "page_counter_uncharge_levels": "counters visited by page_counter_uncharge walks",
    "refill_stock": "refill_stock calls (single, multi*; none in pcstock, pcstock-v4)",
    "drain_stock": "drain_stock calls on an occupied memcg stock slot",
    "obj_cgroup_charge": "obj_cgroup_charge calls (obj_charge operations)",
    "obj_cgroup_uncharge": "obj_cgroup_uncharge calls (one per objcg an obj_uncharge frees)",
    "obj_hits": "consume_obj_stock calls served by the byte stock",
    "obj_misses": "consume_obj_stock calls not served (no match, too few bytes, trylock)",
    "obj_refills": "refill_obj_stock calls (locked or contended)",
    "obj_drains": "occupied obj stock slots drained (switch, victim, drain_all, cpu_dead)",
    "obj_evictions": "obj slots drained as the round-robin victim (five-slot stock)",
    "obj_flushes": "obj_cgroup_uncharge_pages calls (whole pages leaving the byte side)",
    "obj_charges": "obj_charge operations",
    "obj_uncharges": "obj_uncharge operations that released bytes",
}
#: the events the faithful replay counts too (its Observer's ``calls``): totals only
CALL_EVENTS: tuple[str, ...] = (
    "try_charge_memcg", "page_counter_try_charge", "page_counter_uncharge", "refill_stock",
    "drain_stock", "obj_cgroup_charge", "obj_cgroup_uncharge", "obj_hits", "obj_misses",
    "obj_refills", "obj_drains", "obj_evictions", "obj_flushes")
PROFILE_EVENT_NAMES: tuple[str, ...] = tuple(PROFILE_EVENT_DOCS)
#: every event ChargeEvents counts: the priced ones, then the profile's
ALL_EVENT_NAMES: tuple[str, ...] = EVENT_NAMES + PROFILE_EVENT_NAMES
_ALL_DOCS = EVENT_DOCS | PROFILE_EVENT_DOCS


@dataclass(slots=True)
class ChargeEvents:
    """Per-CPU and per-memcg event counts of one replay."""

    per_cpu: dict[str, np.ndarray] = field(default_factory=dict)
    per_memcg: dict[str, np.ndarray] = field(default_factory=dict)
    memcg_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def zeros(cls, ncpus: int, nmemcgs: int) -> ChargeEvents:
        """All-zero counts for ``ncpus`` CPUs and ``nmemcgs`` memcgs."""
        return cls(
            per_cpu={n: np.zeros(ncpus, dtype=np.int64) for n in ALL_EVENT_NAMES},
            per_memcg={n: np.zeros(nmemcgs, dtype=np.int64) for n in ALL_EVENT_NAMES},
            memcg_ids=np.arange(nmemcgs, dtype=np.int64),
        )

    def total(self, name: str) -> int:
        """Event ``name`` summed over all CPUs; KeyError names the valid events."""
        if name not in _ALL_DOCS:
            raise KeyError(f"unknown event {name!r}; valid: {', '.join(ALL_EVENT_NAMES)}")
        return int(self.per_cpu[name].sum())

    def totals(self) -> dict[str, int]:
        """Every priced event (:data:`EVENT_NAMES`) summed over all CPUs, by name; the
        profile's events are in :meth:`profile_totals`."""
        return {n: self.total(n) for n in EVENT_NAMES}

    def profile_totals(self) -> dict[str, int]:
        """Every profile event (:data:`PROFILE_EVENT_NAMES`) summed over all CPUs."""
        return {n: self.total(n) for n in PROFILE_EVENT_NAMES}

#: name -> what one count means, for the events only the older obj-stock eras have
#: (memcglab.models.OBJ_STOCK_ERAS: memcg-caches, v5.9, v5.14-vmstat, v5.14-refill,
#: v5.14; docs/trace-extensions.md). The faithful replay counts them in its Observer's
#: ``calls``; they are kept out of :data:`ALL_EVENT_NAMES`, so the compiled engine's
#: event arrays and every earlier output stay as they were.
OBJ_ERA_EVENT_DOCS: dict[str, str] = {
    "mod_objcg_state": "mod_objcg_state calls: the per-object slab stat update of an alloc "
                       "or free (v5.9 on)",
    "memcg_stat_updates": "__mod_memcg_lruvec_state calls: the memcg's and its lruvec's "
                          "per-CPU stat writes (v5.9: per object; v5.14-*: per flush of the "
                          "stock's cached stat bytes; memcg-caches: per slab page)",
    "memcg_stat_flushes": "per-CPU memcg or lruvec stat counters past MEMCG_CHARGE_BATCH "
                          "pages of bytes, added up the hierarchy (v5.9's threshold)",
    "slab_page_charges": "slab pages charged by memcg_charge_slab (memcg-caches)",
    "slab_page_uncharges": "slab pages uncharged by memcg_uncharge_slab (memcg-caches)",
}
OBJ_ERA_EVENTS: tuple[str, ...] = tuple(OBJ_ERA_EVENT_DOCS)

#: name -> what one count means, for the walks of cgroup v1's own counters
#: (``cgroup_version=1``; memcglab.kernel.memcontrol_v1, docs/trace-extensions.md). Like
#: OBJ_ERA_EVENTS they are kept out of :data:`ALL_EVENT_NAMES`, so every cgroup v2 output
#: and the compiled engine's event arrays stay as they were; both engines count totals.
V1_EVENT_DOCS: dict[str, str] = {
    "kmem_walks": "hierarchical walks of memcg->kmem (page_counter_charge, _try_charge or "
                  "_uncharge; cgroup v1 only, no stock): one per page-level kmem charge "
                  "or uncharge",
    "memsw_walks": "hierarchical walks of memcg->memsw (cgroup v1 with swap): each memsw "
                   "charge attempt of try_charge_memcg, its uncharge when memory refuses, "
                   "and each memcg_uncharge",
}
V1_EVENTS: tuple[str, ...] = tuple(V1_EVENT_DOCS)
