"""The charge path, hand-worked: exact event logs per kernel function and era."""

from __future__ import annotations

import pytest

from memcglab.kernel.random import RandomStream
from tests.kernel.scenario import run_log, walks

MULTI = ["multi", "multi-rr", "multi-lru"]


@pytest.mark.parametrize("model", MULTI + ["single"])
def test_one_page_charge_on_an_empty_stock_walks_the_batch_and_stocks_63(model):
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\n", model=model)
    assert log == [("consume", 0, 1, 1, False), ("walk", 1, 64, "try_charge"),
                   ("refill", 0, 1, 63)]
    assert out["stocks"][0][0] == [1, 63]
    assert out["memcgs"]["1"]["usage"] == 64 and out["memcgs"]["0"]["usage"] == 64


def test_consume_stock_hit_and_the_first_matching_slot_only():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 60\ncharge 0 1 4\n")
    assert log[3:] == [("consume", 0, 1, 60, True), ("hit", 0, 1, 60),
                       ("consume", 0, 1, 4, False), ("walk", 1, 64, "try_charge"),
                       ("refill", 0, 1, 60)]
    # the short slot (3 pages) took the 60-page surplus: 63, one slot, no eviction
    assert out["stocks"][0][0] == [1, 63] and out["counters"]["stock_hits"] == 1


def test_consume_stock_bypasses_requests_above_the_batch():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 65\n")
    assert log[3:] == [("walk", 1, 65, "try_charge")]  # no consume, no refill


def test_an_uncharge_that_pushes_a_slot_past_the_batch_drains_that_slot():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 64\nuncharge 0 1 2\n")
    assert log[-3:] == [("refill", 0, 1, 2), ("drain", 0, 0, 1, 65), ("walk", 1, 65, "uncharge")]
    assert out["stocks"][0][0] is None
    assert out["memcgs"]["1"]["usage"] == 63  # 65 held - 2 released


def test_refill_above_the_batch_uncharges_directly_in_v6_16():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 100\nuncharge 0 1 100\n")
    assert log[-1] == ("walk", 1, 100, "uncharge")
    assert out["stocks"][0][0] == [1, 63]  # the stock is left alone


def test_refill_above_the_batch_is_stocked_and_drains_everything_in_v6_15():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 100\nuncharge 0 1 100\n",
                       model="single")
    assert log[-3:] == [("refill", 0, 1, 100), ("drain", 0, 0, 1, 163),
                        ("walk", 1, 163, "uncharge")]
    assert out["stocks"][0] == [None]


def test_a_charge_that_never_fits_walks_19_times_and_raises_max_18_times():
    log, out = run_log("cpus 2\ncgroup 1 0 max=10\ncharge 1 1 20\n")
    assert [w[2] for w in walks(log)] == [64] + [20] * 18
    assert out["memcgs"]["1"]["max_events"] == 18 and out["failed_charges"] == 1
    assert out["memcgs"]["1"]["usage"] == 0 and out["memcgs"]["1"]["watermark"] == 0


def test_pcstock_never_fitting_charge_walks_36_times():
    log, out = run_log("cpus 2\ncgroup 1 0 max=10\ncharge 1 1 20\n", model="pcstock")
    assert [w[2] for w in walks(log)] == [64, 20] * 18
    assert out["memcgs"]["1"]["max_events"] == 18


def test_charge_fails_on_the_ancestor_and_blames_it():
    log, out = run_log("cpus 1\ncgroup 1 0 max=10\ncgroup 2 1\ncharge 0 2 20\n")
    assert out["memcgs"]["1"]["max_events"] == 18 and out["memcgs"]["2"]["max_events"] == 0


def test_the_drain_inside_the_retry_loop_frees_other_cpus_stock():
    # CPU 0 stocks 63 pages of memcg 1 (limit 100); a 40-page charge on CPU 1 fails at
    # the batch and at the exact size, then drain_all_stock(memcg 1) frees the stock.
    log, out = run_log("cpus 2\ncgroup 1 0 max=100\ncharge 0 1 1\ncharge 1 1 40\n")
    assert [w[2] for w in walks(log)] == [64, 64, 40, 63, 40]
    assert out["memcgs"]["1"]["max_events"] == 1 and out["failed_charges"] == 0
    assert out["memcgs"]["1"]["usage"] == 41


def test_random_eviction_uses_the_shared_stream():
    log, out = run_log("cpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\n"
                       "charge 0 1 1\ncharge 0 2 1\ncharge 0 3 1\n", slots=2, seed=0)
    victim = RandomStream(0).get_random_u32_below(2)
    assert victim == 1
    assert ("evict", 0, 1, 2, 63) in log
    assert out["stocks"][0] == [[1, 63], [3, 63]] and out["counters"]["evictions"] == 1


def test_round_robin_evicts_slot_0_then_1():
    body = "cpus 1\n" + "".join(f"cgroup {i} 0\n" for i in range(1, 5))
    body += "".join(f"charge 0 {i} 1\n" for i in range(1, 5))
    log, out = run_log(body, model="multi-rr", slots=2)
    assert [e[2] for e in log if e[0] == "evict"] == [0, 1]
    assert out["stocks"][0] == [[3, 63], [4, 63]]


def test_an_emptied_slot_is_reused_before_any_eviction():
    body = ("cpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\ncharge 0 1 1\ncharge 0 2 1\n"
            "charge 0 1 64\nuncharge 0 1 2\ncharge 0 3 1\n")
    log, out = run_log(body, slots=2)
    assert out["counters"]["evictions"] == 0
    assert out["stocks"][0] == [[3, 63], [2, 63]]  # slot 0 was punched empty by the drain


def test_drain_all_drains_every_slot_of_a_cpu_that_holds_subtree_pages():
    body = ("cpus 2\ncgroup 1 0\ncgroup 2 0\ncharge 0 1 1\ncharge 0 2 1\ncharge 1 2 1\n"
            "drain_all 1 1\n")
    log, out = run_log(body)
    # CPU 0 holds pages of memcg 1: all its slots go, memcg 2's too; CPU 1 is untouched.
    assert out["stocks"][0] == [None] * 7 and out["stocks"][1][0] == [2, 63]
    assert out["memcgs"]["2"]["usage"] == 65


def test_slots_with_zero_pages_do_not_trigger_a_drain_but_stay_cached():
    body = "cpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 63\ndrain_all 0 1\n"
    log, out = run_log(body)
    assert out["stocks"][0][0] == [1, 0]


def test_cpu_dead_drains_fully_including_empty_slots():
    body = "cpus 2\ncgroup 1 0\ncharge 1 1 1\ncharge 1 1 63\ncpu_dead 1\n"
    log, out = run_log(body)
    assert out["stocks"][1][0] is None


def test_offline_drains_the_memcg_and_marks_it_offline():
    body = "cpus 2\ncgroup 1 0\ncharge 1 1 1\nuncharge 1 1 1\noffline 1\n"
    log, out = run_log(body)
    assert out["memcgs"]["1"] == {"usage": 0, "watermark": 64, "max_events": 0, "online": False}


def test_nested_charge_fails_every_trylock_and_uncharges_the_surplus_directly():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1 nested\n")
    assert log == [("walk", 1, 64, "try_charge"), ("walk", 1, 63, "uncharge")]
    assert out["stocks"][0][0] is None and out["memcgs"]["1"]["usage"] == 1


def test_nested_uncharge_goes_direct():
    log, out = run_log("cpus 1\ncgroup 1 0\ncharge 0 1 1\nuncharge 0 1 1 nested\n")
    assert log[-1] == ("walk", 1, 1, "uncharge") and out["stocks"][0][0] == [1, 63]


def test_pcstock_cgroup_creation_drains_the_parents_stock():
    body = "cpus 2\ncgroup 1 0\ncharge 0 1 1\ncharge 1 1 1\ncgroup 2 1\n"
    log, out = run_log(body, model="pcstock")
    assert out["stocks"] == [{}, {}] and out["memcgs"]["1"]["usage"] == 2
    assert [w[2:] for w in walks(log)][-2:] == [(63, "cancel"), (63, "cancel")]


def test_pcstock_uncharges_of_both_kinds_reach_the_stock():
    # stock 54 after the first charge; the 60-page charge misses, walks 64 and stocks 4
    body = ("cpus 1\ncgroup 1 0\ncharge 0 1 10\ncharge 0 1 60\nuncharge 0 1 5\n"
            "uncharge_direct 0 1 5\n")
    log, out = run_log(body, model="pcstock")
    assert out["stocks"] == [{"1": 64}] and out["memcgs"]["1"]["usage"] == 124
    assert [w[2:] for w in walks(log)] == [(64, "try_charge"), (64, "try_charge"),
                                           (4, "cancel")]  # 58 + 5 + 5 = 68: 4 over
