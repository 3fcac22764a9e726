"""Stocked pages sampled through the chunked engine, against hand counts."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.engine import replay_compiled
from memcglab.studies.s06_page_counter_stock_v4 import stale as v4_stale
from memcglab.studies.s06_page_counter_stock_v4.staleness import (
    PAGE_MIB,
    bound_pages,
    occupancy,
    summary,
)
from memcglab.trace import parse_text
from tests.engine.tracegen import random_trace

# CPU 0 charges a page of memcg 1 (a walk of the batch: 63 pages left in a stock), CPU 1
# frees it (multi: refill_stock puts it in CPU 1's stock; v4: a walk, no stock), then
# CPU 0 goes offline (both drain CPU 0's stock).
TINY = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 1\n"
                  "uncharge 1 1 1\ncpu_dead 0\n")


@pytest.mark.parametrize("model, stocked, usage", [
    ("multi", [63, 64, 1], [64, 64, 1]),
    ("pcstock-v4", [63, 63, 0], [64, 63, 0]),
])
def test_occupancy_matches_the_hand_count(model, stocked, usage):
    occ = occupancy(TINY, model, samples=3)
    assert occ.total["stocked"].tolist() == stocked
    assert occ.total["op"].tolist() == [2, 3, 4]
    # usage: the batch charged (1 page held + 63 stocked), less what walks returned
    mine = occ.memcg[occ.memcg["memcg"] == 1].set_index("sample")
    assert mine["stocked"].reindex(range(3), fill_value=0).tolist() == stocked
    assert mine["usage"].reindex(range(3), fill_value=0).tolist() == usage
    assert occ.total["usage"].tolist() == usage  # the root's counter: the same pages


def test_the_last_sample_is_the_whole_replay():
    for model in ("multi", "pcstock", "pcstock-v4"):
        occ = occupancy(TINY, model, samples=2)
        stocks = replay_compiled(TINY, model)["stocks"]
        if model.startswith("pcstock"):
            held = sum(sum(cpu.values()) for cpu in stocks)
        else:
            held = sum(slot[1] for cpu in stocks for slot in cpu if slot)
        assert occ.total["stocked"].iloc[-1] == held


def test_summary_shares_and_the_close_rule():
    s = summary(occupancy(TINY, "multi", samples=3), "multi", cpus=2, cgroups=1,
                memory_max_mib=1.0)
    assert s["bound_pages"] == 128 and s["peak_pages"] == 64
    assert s["peak_fraction_of_bound"] == 0.5 and s["close_to_bound"] is True
    assert s["peak_mib"] == pytest.approx(64 * PAGE_MIB)
    assert s["memcg_max_share_of_max"] == pytest.approx(64 * PAGE_MIB / 1.0)
    # samples before the last: 63 of 64 pages, then 64 of 64 (the last is left out)
    assert s["memcg_median_share_of_usage"] == pytest.approx((63 / 64 + 1) / 2)
    v4 = summary(occupancy(TINY, "pcstock-v4", samples=3), "pcstock-v4", 2, 1, 1.0)
    assert v4["peak_pages"] == 63 and v4["close_to_bound"] is False
    assert v4["final_pages"] == 0


def test_bounds_and_errors():
    assert bound_pages("multi", 72, 3) == 72 * 3 * 64
    assert bound_pages("multi", 72, 300) == 72 * 7 * 64
    assert bound_pages("pcstock-v4", 72, 300) == 72 * 300 * 64
    assert bound_pages("single", 4, 9) == 4 * 64
    with pytest.raises(ValueError, match="model='nope'"):
        bound_pages("nope", 1, 1)
    with pytest.raises(ValueError, match="cgroups=0"):
        bound_pages("multi", 1, 0)
    with pytest.raises(ValueError, match="samples=0"):
        occupancy(TINY, "multi", samples=0)
    with pytest.raises(ValueError, match="memory_max_mib=0"):
        summary(occupancy(TINY, "multi", samples=1), "multi", 2, 1, 0)


def test_stale_configs_validate_and_count_migrations():
    c = v4_stale.StaleConfig("netperf_migrating", rate=0.01, cgroups=4, cpus=8,
                             operations=1000)
    assert c.tasks == 8 and c.migrations_per_task == pytest.approx(2.5)
    with pytest.raises(ValueError, match="workload='x'"):
        v4_stale.StaleConfig("x", 0.1, 4)
    with pytest.raises(ValueError, match="cgroups=10: many_cgroups needs a multiple"):
        v4_stale.StaleConfig("many_cgroups", 0.1, 10, cpus=4)
    with pytest.raises(ValueError, match="cgroups=9: netperf_migrating"):
        v4_stale.StaleConfig("netperf_migrating", 0.1, 9, cpus=8)


def test_moving_tasks_strand_more_in_v4_than_staying_ones():
    cfgs = v4_stale.grid("sched_migration", [0.0, 1.0], [16], cpus=8, operations=4000)
    runs, series = v4_stale.sweep(cfgs, samples=5, memory_max_mib=64)
    v4 = runs[runs["model"] == "pcstock-v4"].set_index("migration_rate")
    assert v4.loc[1.0, "peak_pages"] > 3 * v4.loc[0.0, "peak_pages"]
    assert len(series) == 4 * 5
    assert (runs["peak_pages"] <= runs["bound_pages"]).all()


def test_thresholds_pick_the_first_close_rate():
    runs = pd.DataFrame({
        "workload": "w", "cgroups": 8, "model": "pcstock-v4",
        "migration_rate": [0.0, 0.1, 1.0], "peak_fraction_of_bound": [0.1, 0.6, 0.7],
        "close_to_bound": [False, True, True], "migrations_per_task": [0.0, 10.0, 100.0],
        "peak_mib": [1.0, 5.0, 6.0]})
    t = v4_stale.thresholds(runs).iloc[0]
    assert t["first_close_rate"] == 0.1 and t["migrations_per_task_there"] == 10.0
    assert t["max_fraction"] == 0.7
    never = v4_stale.thresholds(runs.assign(close_to_bound=False)).iloc[0]
    assert pd.isna(never["first_close_rate"])


def test_per_memcg_leaves_out_the_ancestor_and_sums_to_the_total():
    cfg = v4_stale.StaleConfig("sched_migration", 0.5, 6, cpus=4, operations=600)
    per = v4_stale.per_memcg(cfg, models=("pcstock-v4",), samples=3)
    assert set(per["memcg"]) <= set(range(2, 8))  # tenants 2..7 below ancestor 1
    total = occupancy(cfg.trace(), "pcstock-v4", samples=3).total
    assert per.groupby("sample")["stocked"].sum().tolist() == total["stocked"].tolist()
    assert per["stocked_mib"].tolist() == pytest.approx((per["stocked"] * PAGE_MIB).tolist())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), samples=st.integers(1, 7),
       model=st.sampled_from(["single", "multi", "multi-rr", "pcstock", "pcstock-v4"]))
def test_sampling_in_chunks_ends_where_the_whole_replay_ends(seed, samples, model):
    trace = random_trace(seed, nested=model != "single")  # single refuses 'nested'
    occ = occupancy(trace, model, samples=samples)
    final = replay_compiled(trace, model)
    stocks = final["stocks"]
    if model.startswith("pcstock"):
        held = sum(v for cpu in stocks for k, v in cpu.items() if k != "0")
    else:
        held = sum(slot[1] for cpu in stocks for slot in cpu if slot)
    assert occ.total["stocked"].iloc[-1] == held
    assert occ.total["op"].iloc[-1] == len(trace.ops)
    last = occ.memcg[occ.memcg["sample"] == samples - 1].set_index("memcg")
    for memcg, row in last.iterrows():
        assert row["usage"] == final["memcgs"][str(memcg)]["usage"]
    # a memcg's stocked pages are charged to it: never more than its usage
    assert (occ.memcg["stocked"] <= occ.memcg["usage"]).all()
