"""page_counter: hand-worked cases per ported function (mm/page_counter.c, 2026 + RFC)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import (
    EBUSY,
    EINVAL,
    PAGE_COUNTER_MAX,
    PageCounter,
    effective_protection,
    memparse,
    page_counter_calculate_protection,
    page_counter_cancel,
    page_counter_charge,
    page_counter_init,
    page_counter_memparse,
    page_counter_set_low,
    page_counter_set_max,
    page_counter_set_min,
    page_counter_try_charge,
    page_counter_uncharge,
)
from memcglab.kernel.page_counter_stock import (
    page_counter_disable_stock,
    page_counter_drain_cpu,
    page_counter_drain_stock,
    page_counter_enable_stock,
)
from memcglab.kernel.percpu import local_lock, local_unlock


def tree(*maxes: int, protection: bool = True) -> tuple[Observer, list[PageCounter]]:
    """A chain root -> c1 -> c2 ...; maxes apply from c1 down."""
    obs = Observer(log=[])
    root = PageCounter(owner=0, observer=obs)
    page_counter_init(root, None, protection)
    chain = [root]
    for i, m in enumerate(maxes, start=1):
        c = PageCounter(owner=i, observer=obs)
        page_counter_init(c, chain[-1], protection)
        c.max = m
        chain.append(c)
    return obs, chain


def test_page_counter_max_is_long_max_over_page_size():
    assert PAGE_COUNTER_MAX == 2**51 - 1


def test_charge_ignores_limits_and_updates_both_watermarks():
    obs, (root, a) = tree(5)
    page_counter_charge(a, 8)
    assert (a.usage, root.usage, a.watermark, a.local_watermark) == (8, 8, 8, 8)
    assert obs.log == [("walk", 1, 8, "charge")]


def test_try_charge_fails_at_the_ancestor_and_rolls_back_below_it():
    obs, (root, a, b) = tree(10, 100)
    assert page_counter_try_charge(b, 6) == (True, None)
    ok, fail = page_counter_try_charge(b, 6)  # b: 12 <= 100, a: 12 > 10 -> fail at a
    assert not ok and fail is a
    assert (b.usage, a.usage, root.usage) == (6, 6, 6)
    assert b.watermark == 12  # b was charged and then cancelled: the peak stays
    assert a.failcnt == 0  # track_failcnt is off on cgroup v2
    assert [e[0] for e in obs.log] == ["walk", "walk"]  # the rollback is part of the walk


def test_try_charge_counts_failcnt_only_when_the_leaf_tracks_it():
    _, (root, a) = tree(1)
    a.track_failcnt = True
    page_counter_try_charge(a, 2)
    assert a.failcnt == 1


def test_cancel_underflow_warns_and_clamps_to_zero():
    obs, (root, a) = tree(10)
    page_counter_charge(a, 2)
    page_counter_cancel(a, 5)
    assert a.usage == 0 and root.usage == 2
    assert obs.warnings == 1 and obs.log[-1] == ("warn", 1, -3, 5)


def test_uncharge_walks_once_over_every_ancestor():
    obs, (root, a, b) = tree(100, 100)
    page_counter_charge(b, 7)
    page_counter_uncharge(b, 7)
    assert (root.usage, a.usage, b.usage) == (0, 0, 0)
    assert obs.walks == 2 and obs.warnings == 0


def test_set_max_refuses_below_usage_and_raising_always_succeeds():
    _, (root, a) = tree(100)
    page_counter_charge(a, 50)
    assert page_counter_set_max(a, 49) == -EBUSY and a.max == 100
    assert page_counter_set_max(a, 50) == 0 and a.max == 50
    assert page_counter_set_max(a, 2**64 - 1) == 0 and a.max == 2**64 - 1


def test_set_min_and_low_propagate_protected_usage_to_the_parent():
    _, (root, a, b) = tree(100, 100)
    page_counter_charge(b, 30)
    page_counter_set_min(b, 20)
    page_counter_set_low(b, 50)
    assert (b.min_usage, a.children_min_usage) == (20, 20)
    assert (b.low_usage, a.children_low_usage) == (30, 30)  # min(usage, low)
    page_counter_uncharge(b, 25)  # usage 5: protected usage follows it down
    assert (b.min_usage, a.children_min_usage, a.children_low_usage) == (5, 5, 5)


@pytest.mark.parametrize("text, expect", [
    ("max", (0, PAGE_COUNTER_MAX)),
    ("4096", (0, 1)),
    ("4095", (0, 0)),
    ("1k", (0, 0)),
    ("8K", (0, 2)),
    ("1M", (0, 256)),
    ("1g", (0, 262144)),
    ("1T", (0, 2**28)),
    ("1P", (0, 2**38)),
    ("1E", (0, 2**48)),  # 2^60 bytes
    ("16383E", (0, PAGE_COUNTER_MAX)),  # wraps mod 2^64 to 2^64 - 2^60, then capped
    ("0x1000", (0, 1)),
    ("010000", (0, 1)),  # octal 010000 = 4096
    ("1MB", (-EINVAL, 0)),
    ("12 ", (-EINVAL, 0)),
    ("Max", (-EINVAL, 0)),
])
def test_page_counter_memparse(text, expect):
    assert page_counter_memparse(text) == expect


def test_memparse_wraps_on_overflow_like_the_kernel():
    value, rest = memparse("16E")  # 16 << 60 == 2^64: wraps to 0
    assert (value, rest) == (0, "")


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40),
       st.integers(0, 2**40), st.integers(1, 2**40), st.booleans())
def test_effective_protection_never_exceeds_usage_or_setting(usage, parent_usage, setting,
                                                             parent_eff, siblings, rec):
    ep = effective_protection(usage, parent_usage, setting, parent_eff, siblings, rec)
    if not rec or siblings > parent_eff:
        assert ep <= min(usage, setting)
    assert ep >= 0


def test_calculate_protection_top_down():
    _, (root, a, b) = tree(1000, 1000)
    page_counter_charge(b, 100)
    page_counter_set_min(a, 60)
    page_counter_set_min(b, 80)
    page_counter_calculate_protection(root, a, False)
    page_counter_calculate_protection(root, b, False)
    # a is a top-level child: emin = min. b: min(100, 80) capped by a's 60 via overcommit.
    assert a.emin == 60
    assert b.emin == 80 * 60 // 80


# ------------------------------------------------------------ RFC page_counter stock

def stocked_tree(max_pages: int = PAGE_COUNTER_MAX, batch: int = 64, cpus: int = 2):
    obs, (root, a) = tree(max_pages)
    page_counter_enable_stock(a, batch, cpus)
    return obs, root, a


def test_stock_try_charge_takes_the_batch_and_keeps_the_surplus():
    obs, root, a = stocked_tree()
    assert page_counter_try_charge(a, 1, cpu=1) == (True, None)
    assert (a.usage, a.stock[1].nr_pages, a.stock[0].nr_pages) == (64, 63, 0)
    assert page_counter_try_charge(a, 63, cpu=1) == (True, None)  # served by the stock
    assert a.stock[1].nr_pages == 0 and obs.stock_hits == 1 and obs.walks == 1


def test_stock_try_charge_retries_at_the_exact_size():
    obs, root, a = stocked_tree(max_pages=10)
    assert page_counter_try_charge(a, 4) == (True, None)
    assert a.usage == 4 and a.stock[0].nr_pages == 0
    assert [e[2] for e in obs.log] == [64, 4]  # a failed batch walk, then the exact one


def test_stock_uncharge_keeps_up_to_the_batch_and_cancels_the_excess():
    obs, root, a = stocked_tree()
    page_counter_charge(a, 100)
    page_counter_uncharge(a, 30)  # 30 <= 64: stays in the stock, no walk
    assert (a.usage, a.stock[0].nr_pages, obs.walks) == (100, 30, 1)
    page_counter_uncharge(a, 50)  # 80 > 64: keep 64, cancel 16
    assert (a.usage, a.stock[0].nr_pages) == (84, 64)
    assert obs.log[-1] == ("walk", 1, 16, "cancel")


def test_stock_trylock_failure_falls_back_to_the_hierarchy():
    obs, root, a = stocked_tree()
    local_lock(a.stock[0].lock)  # an interrupted holder on CPU 0
    page_counter_try_charge(a, 1)  # the surplus cannot be stocked: it is uncharged
    local_unlock(a.stock[0].lock)
    assert (a.usage, a.stock[0].nr_pages) == (1, 0)
    assert [e[3] for e in obs.log] == ["try_charge", "cancel"]


def test_stock_drains_and_disable():
    obs, root, a = stocked_tree()
    page_counter_try_charge(a, 1, cpu=0)
    page_counter_try_charge(a, 1, cpu=1)
    page_counter_drain_cpu(a, 1)
    assert (a.usage, a.stock[1].nr_pages) == (65, 0)
    page_counter_drain_stock(a, range(2))
    assert (a.usage, a.stock[0].nr_pages) == (2, 0)
    a.stock[1].nr_pages = 5  # pages left behind on a CPU the drain did not reach
    a.usage += 5
    root.usage += 5
    page_counter_disable_stock(a)
    assert (a.usage, a.batch) == (2, 0)
    assert a.stock[1].nr_pages == 5  # the RFC does not zero the per-CPU values
