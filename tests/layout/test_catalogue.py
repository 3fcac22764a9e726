"""The kernel struct catalogue against the sizes and offsets worked out from the sources.

Expected values are the kernel notes' hand computations (section 7 and 2.2) and the
seed threads: 0x88 for the April 2025 stock, 112 -> 24 for struct vmpressure.
"""

from __future__ import annotations

import itertools

import pytest

from memcglab.layout.catalogue import (
    CATALOGUE,
    KNOWN_CONFIGS,
    CatalogueError,
    relevant_configs,
    resolve_config,
    struct_layout,
)


@pytest.mark.parametrize("name, era, size", [
    ("memcg_stock_pcp", "v6.14", 88),
    ("memcg_stock_pcp", "v6.15", 96),
    ("memcg_stock_pcp", "2025-04", 0x88),
    ("memcg_stock_pcp", "v6.16", 104),
    ("memcg_stock_pcp", "2026", 112),
    ("obj_stock_pcp", "v6.16", 72),
    ("obj_stock_pcp", "2026", 112),
    ("page_counter", "v5.10", 112),
    ("page_counter", "v5.11", 112),
    ("page_counter", "v5.12", 112),
    ("page_counter", "aligned", 192),
    ("page_counter", "v6.1", 192),
    ("page_counter", "v6.16", 192),
    ("page_counter", "rfc-2026-04", 192),
    ("page_counter", "2026", 192),
    ("page_counter_stock", "rfc-2026-04", 16),
    ("page_counter_stock", "2026", 4),
    ("vmpressure", "v6.12", 120),
    ("vmpressure", "parent", 112),
    ("vmpressure", "blamed", 24),
])
def test_sizes_per_era(name, era, size):
    assert struct_layout(name, era).size == size


def test_0x88_offsets_match_the_hand_worked_table():
    lay = struct_layout("memcg_stock_pcp", "2025-04")
    got = {f.path: (f.offset, f.size) for f in lay.fields}
    assert got == {
        "stock_lock": (0, 1), "nr_pages": (1, 7), "cached": (8, 56),
        "cached_objcg": (64, 8), "cached_pgdat": (72, 8), "nr_bytes": (80, 4),
        "nr_slab_reclaimable_b": (84, 4), "nr_slab_unreclaimable_b": (88, 4),
        "work": (96, 32), "flags": (128, 8),
    }
    assert [(h.offset, h.size) for h in lay.holes] == [(92, 4)]


def test_lock_width_decides_whether_0x88_holds():
    # 0x88 needs a lock of at most 1 byte; the int-acquired revision gives 0x90.
    lay = struct_layout("memcg_stock_pcp", "2025-04")
    assert lay.locate("stock_lock").size == 1
    debug = struct_layout("memcg_stock_pcp", "2025-04", ["CONFIG_DEBUG_LOCK_ALLOC"])
    assert debug.locate("stock_lock").size == 56  # lockdep_map 40 + owner 8 + acquired
    assert debug.locate("cached").offset == 64   # the slots leave the lock's line
    stat = struct_layout("memcg_stock_pcp", "2025-04", ["LOCK_STAT"])
    assert stat.locate("stock_lock").size == 64
    rt = struct_layout("memcg_stock_pcp", "v6.16", ["PREEMPT_RT"])
    assert rt.locate("lock").size == 32 and rt.locate("cached").offset == 40


def test_page_counter_groups_start_on_their_own_lines():
    lay = struct_layout("page_counter", "2026")
    offs = {f.path: f.offset for f in lay.fields}
    assert (offs["usage"], offs["failcnt"], offs["emin"], offs["local_watermark"]) == (
        0, 8, 64, 120)
    assert (offs["protection_support"], offs["min"], offs["parent"]) == (128, 136, 168)
    assert (offs["stock"], offs["batch"], lay.align) == (176, 184, 64)
    # Without SMP the padding vanishes: 16 + 64 + 2 bytes of bools, 6 of hole, 40.
    assert struct_layout("page_counter", "v6.16", ["SMP=n"]).size == 128


def test_obj_stock_2026_budget():
    offs = {f.path: f.offset for f in struct_layout("obj_stock_pcp", "2026").fields}
    assert offs == {"lock": 0, "index": 1, "node_id": 2, "nr_slab_reclaimable_b": 4,
                    "nr_slab_unreclaimable_b": 6, "nr_bytes": 8, "cached": 24, "work": 64,
                    "flags": 96, "drain_idx": 104}


def test_vmpressure_112_needs_the_24_byte_mutex():
    old = struct_layout("vmpressure", "v6.12")
    assert old.locate("events_lock").size == 32 and old.size == 120
    assert struct_layout("vmpressure", "parent").locate("events_lock").size == 24
    assert struct_layout("vmpressure", "blamed", ["MEMCG_V1"]).size == 112


def _pair_shares_line(era, cfg):
    lay = struct_layout("mem_cgroup", era, cfg)
    a, b = lay.locate("memory_events_local[8]"), lay.locate("vmstats_percpu")
    return a.offset // 64 == b.offset // 64


@pytest.mark.parametrize("zswap, wb, lru", list(itertools.product([False, True], repeat=3)))
def test_seed004_line_sharing_appears_with_the_blamed_commit_and_goes_with_the_fix(
        zswap, wb, lru):
    cfg = {"CONFIG_ZSWAP": zswap, "CONFIG_CGROUP_WRITEBACK": wb,
           "CONFIG_LRU_GEN_WALKS_MMU": lru, "CONFIG_MEMCG_V1": False}
    assert not _pair_shares_line("parent", cfg)
    assert _pair_shares_line("blamed", cfg)
    assert not _pair_shares_line("fixed", cfg)
    fixed = struct_layout("mem_cgroup", "fixed", cfg)
    assert fixed.locate("vmstats_percpu").offset % 64 == 0
    if wb:  # cgwb_list fills the gap in front of the aligned pointer
        assert fixed.locate("cgwb_list").offset == fixed.locate("kmemcg_id").offset + 8


def test_v1_builds_never_had_the_problem():
    # With CONFIG_MEMCG_V1 the v1 vmpressure fields stay, so the blamed commit moves
    # nothing (same layout as the parent).
    cfg = ["MEMCG_V1"]
    p = struct_layout("mem_cgroup", "parent", cfg)
    b = struct_layout("mem_cgroup", "blamed", cfg)
    assert [(f.path, f.offset) for f in p.fields] == [(f.path, f.offset) for f in b.fields]


def test_errors_name_the_valid_choices():
    with pytest.raises(CatalogueError, match="the catalogue has: memcg_stock_pcp"):
        struct_layout("memcg_stock")
    with pytest.raises(CatalogueError, match=r"valid: v6\.14, v6\.15, 2025-04, v6\.16, 2026"):
        struct_layout("memcg_stock_pcp", era="v7.0")
    with pytest.raises(CatalogueError, match="valid: CONFIG_CGROUP_WRITEBACK, .*CONFIG_ZSWAP"):
        struct_layout("memcg_stock_pcp", config=["CONFIG_NOPE"])
    with pytest.raises(CatalogueError, match="must be y or n"):
        resolve_config(["MEMCG_V1=maybe"])


def test_resolve_config_applies_kconfig_selects_and_disables():
    cfg = resolve_config(["LOCK_STAT", "CONFIG_ZSWAP=n"])
    assert {"CONFIG_LOCK_STAT", "CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_LOCKDEP"} <= cfg
    assert "CONFIG_ZSWAP" not in cfg
    assert resolve_config({"MEMCG_V1": True}) >= {"CONFIG_MEMCG_V1", "CONFIG_SMP"}


def test_relevant_configs_are_found_by_toggling():
    assert relevant_configs("page_counter_stock", "2026") == []  # a lone atomic_t
    assert "CONFIG_DEBUG_LOCK_ALLOC" in relevant_configs("memcg_stock_pcp", "v6.16")
    assert "CONFIG_MEMCG_V1" in relevant_configs("vmpressure", "blamed")
    assert "CONFIG_MEMCG_V1" not in relevant_configs("vmpressure", "parent")
    assert set(relevant_configs("mem_cgroup", "blamed")) <= set(KNOWN_CONFIGS)


def test_every_entry_default_era_exists_and_cites_a_source():
    for e in CATALOGUE.values():
        assert e.default_era in e.eras
        for et in e.eras.values():
            assert et.source and et.summary
