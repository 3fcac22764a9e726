"""The v4 page_counter stock (``pcstock-v4``), hand-worked: exact event logs.

Log entries: ``("walk", memcg, pages, kind)`` for each hierarchy walk,
``("refill", cpu, memcg, pages)`` for a surplus put into a stock,
``("hit", cpu, memcg, pages)`` for a charge served by the stock,
``("drain", cpu, memcg, pages)`` for a stock taken by atomic_xchg, and
``("event", memcg, name, allow_spinning)`` for __memcg_memory_event().
"""

from __future__ import annotations

import pytest

from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import PageCounter
from memcglab.kernel.page_counter_stock_v4 import (
    page_counter_alloc_stock,
    page_counter_drain_stock,
    page_counter_free_stock,
    page_counter_try_charge_stock,
)
from tests.kernel.scenario import run_log, walks

V4 = {"model": "pcstock-v4"}
MAX_EVENT = ("event", 1, "MEMCG_MAX", True)


def test_a_stock_hit_walks_nothing_and_changes_no_watermark():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 3\ncharge 0 1 61\n", **V4)
    assert log == [("walk", 1, 64, "try_charge"), ("refill", 0, 1, 61), ("hit", 0, 1, 61)]
    assert out["stocks"] == [{}] and out["counters"]["stock_hits"] == 1
    assert out["memcgs"]["1"]["usage"] == out["memcgs"]["1"]["watermark"] == 64


def test_the_greedy_batch_charge_stocks_the_surplus_on_the_charging_cpu():
    log, out = run_log("cpus 3\ncgroup 1 0\ncharge 2 1 10\n", **V4)
    assert log == [("walk", 1, 64, "try_charge"), ("refill", 2, 1, 54)]
    assert out["stocks"] == [{}, {}, {"1": 54}]


def test_a_charge_of_the_batch_or_more_walks_once_at_the_exact_size():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 64\ncharge 0 1 65\n", **V4)
    assert log == [("walk", 1, 64, "try_charge"), ("walk", 1, 65, "try_charge")]
    assert out["stocks"] == [{}]


def test_when_the_batch_does_not_fit_the_exact_size_is_charged_in_the_same_pass():
    # CPU 0 charges 64 (63 stocked; usage 64 of 70). CPU 1's stock is empty: the batch
    # would reach 128 (refused), exactly 1 page reaches 65. No MEMCG_MAX, no drain.
    log, out = run_log("cpus 2\ncgroup 1 0 max=70\ncharge 0 1 1\ncharge 1 1 1\n", **V4)
    assert log[2:] == [("walk", 1, 64, "try_charge"), ("walk", 1, 1, "try_charge")]
    assert out["stocks"] == [{"1": 63}, {}] and out["memcgs"]["1"]["max_events"] == 0
    # the refused batch is rolled back on memcg 1 itself: no mark of 128; the 1 page is
    assert out["memcgs"]["1"]["watermark"] == 65


def test_the_retry_loop_drain_makes_room_and_the_next_pass_falls_back_to_nr():
    log, out = run_log("cpus 1\ncgroup 1 0 max=70\ncharge 0 1 10\ncharge 0 1 60\n", **V4)
    assert log[2:] == [("walk", 1, 64, "try_charge"), ("walk", 1, 60, "try_charge"),
                       MAX_EVENT, ("drain", 0, 1, 54), ("walk", 1, 54, "uncharge"),
                       ("walk", 1, 64, "try_charge"), ("walk", 1, 60, "try_charge")]
    assert out["memcgs"]["1"]["usage"] == 70 and out["stocks"] == [{}]


def test_a_refused_batch_records_the_watermark_below_the_failing_ancestor():
    log, out = run_log("cpus 1\ncgroup 1 0 max=50\ncgroup 2 1\ncharge 0 2 10\n", **V4)
    assert [w[2] for w in walks(log)] == [64, 10]
    assert out["memcgs"]["2"]["watermark"] == 64 and out["memcgs"]["1"]["watermark"] == 10


@pytest.mark.parametrize("nested", ["", " nested"])
def test_both_uncharge_kinds_walk_and_leave_every_stock_alone(nested):
    body = (f"cpus 2\ncgroup 1 0\ncharge 0 1 3\nuncharge 1 1 2{nested}\n"
            f"uncharge_direct 0 1 1{nested}\n")
    log, out = run_log(body, **V4)
    assert log == [("walk", 1, 64, "try_charge"), ("refill", 0, 1, 61),
                   ("walk", 1, 2, "uncharge"), ("walk", 1, 1, "uncharge")]
    assert out["stocks"] == [{"1": 61}, {}] and out["memcgs"]["1"]["usage"] == 61


def test_an_uncharge_of_nothing_held_walks_nothing():
    log, out = run_log("cpus 1\ncgroup 1 0\nuncharge 0 1 5\n", **V4)
    assert log == [] and out["short_uncharges"] == 5


def test_drain_all_takes_every_stock_of_the_subtree_in_pre_order_then_cpu_order():
    body = ("cpus 3\ncgroup 1 0\ncgroup 2 1\ncgroup 3 0\ncharge 0 1 1\ncharge 1 2 1\n"
            "charge 2 2 1\ncharge 0 3 1\ndrain_all 2 1\n")
    log, out = run_log(body, **V4)
    assert log[8:] == [("drain", 0, 1, 63), ("walk", 1, 63, "uncharge"),
                       ("drain", 1, 2, 63), ("walk", 2, 63, "uncharge"),
                       ("drain", 2, 2, 63), ("walk", 2, 63, "uncharge")]
    assert out["stocks"] == [{"3": 63}, {}, {}]  # memcg 3 is outside the subtree


def test_cpu_dead_drains_that_cpu_of_every_memcg_only():
    body = "cpus 2\ncgroup 1 0\ncgroup 2 0\ncharge 0 1 1\ncharge 1 1 1\ncharge 0 2 2\ncpu_dead 0\n"
    log, out = run_log(body, **V4)
    assert log[6:] == [("drain", 0, 1, 63), ("walk", 1, 63, "uncharge"),
                       ("drain", 0, 2, 62), ("walk", 2, 62, "uncharge")]
    assert out["stocks"] == [{}, {"1": 63}]


def test_creating_a_child_leaves_the_parents_stock_alone():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncgroup 2 1\n", **V4)
    assert log == [("walk", 1, 64, "try_charge"), ("refill", 0, 1, 63)]
    assert out["stocks"] == [{"1": 63}]


def test_offline_drains_and_keeps_the_counters_stock():
    log, out = run_log("cpus 2\ncgroup 1 0\ncharge 1 1 1\noffline 1\n", **V4)
    assert log[2:] == [("drain", 1, 1, 63), ("walk", 1, 63, "uncharge")]
    assert out["memcgs"]["1"] == {"usage": 1, "watermark": 64, "max_events": 0,
                                  "online": False}


@pytest.mark.parametrize("nr, sizes", [(20, [64, 20]), (100, [100])])
def test_a_charge_that_never_fits_makes_18_passes(nr, sizes):
    log, out = run_log(f"cpus 2\ncgroup 1 0 max=10\ncharge 1 1 {nr}\n", **V4)
    assert [w[2] for w in walks(log)] == sizes * 18  # 36 walks below the batch, else 18
    assert [e for e in log if e[0] == "event"] == [MAX_EVENT] * 18
    assert out["failed_charges"] == 1 and out["memcgs"]["1"]["usage"] == 0


def test_a_never_fitting_charge_also_walks_once_per_stock_its_drain_empties():
    # batch 8, max 10: 7 pages charge 8 (1 stocked on CPU 0); 2 pages on CPU 1 fit
    # exactly (held 9, usage 10). 2 more never fit, even after the drain frees 1 page.
    body = "cpus 2\ncgroup 1 0 max=10\ncharge 0 1 7\ncharge 1 1 2\ncharge 1 1 2\n"
    log, out = run_log(body, batch=8, **V4)
    last = log[log.index(("walk", 1, 2, "try_charge")) + 1:]
    assert last[:7] == [("walk", 1, 8, "try_charge"), ("walk", 1, 2, "try_charge"),
                        MAX_EVENT, ("drain", 0, 1, 1), ("walk", 1, 1, "uncharge"),
                        ("walk", 1, 8, "try_charge"), ("walk", 1, 2, "try_charge")]
    assert len(walks(last)) == 36 + 1
    assert out["memcgs"]["1"]["max_events"] == 18 and out["memcgs"]["1"]["usage"] == 9


def test_batch_one_never_fills_a_stock():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 1\n", batch=1, **V4)
    assert log == [("walk", 1, 1, "try_charge")] * 2 and out["stocks"] == [{}]


def test_page_counter_api_alloc_drain_free():
    obs = Observer(log=[])
    root = PageCounter(observer=obs)
    c = PageCounter(parent=root, observer=obs, max=100, owner=None)
    assert page_counter_alloc_stock(c, 16, nr_cpus=2) == 0 and c.batch == 16
    assert page_counter_try_charge_stock(c, 5, cpu=0) == (True, None, 16)
    assert page_counter_try_charge_stock(c, 11, cpu=0) == (True, None, 0)
    assert page_counter_try_charge_stock(c, 90, cpu=1) == (False, c, 0)
    page_counter_drain_stock(c, 0)  # empty: nothing walks
    assert [s.nr_pages for s in c.stock] == [0, 0] and c.usage == 16
    page_counter_try_charge_stock(c, 1, cpu=1)
    page_counter_free_stock(c)
    assert c.stock is None and c.usage == 17 and root.usage == 17
    # 90 >= batch: the exact size only; free drains CPU 1's 15 pages
    assert [e[2] for e in obs.log if e[0] == "walk"] == [16, 90, 16, 15]
