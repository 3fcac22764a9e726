"""Hand-worked scenarios for the compiled engine, from the replay contract and the kernel.

Each expectation is worked out by hand from the contract and the kernel code the
engine ports (the numbers are in the comments); the faithful replay is not
consulted here, so these tests stand even where the two could share a mistake.
"""

from __future__ import annotations

import pytest

from memcglab.engine import InvariantViolation, replay_compiled
from memcglab.replay import dumps
from memcglab.trace import parse_text
from tests.contract import EXAMPLE as CONTRACT_EXAMPLE
from tests.contract import EXAMPLE_JSON as CONTRACT_LINE

from .tracegen import MODELS


def run(text: str, model: str = "multi", **kw) -> dict:
    body = "memcglab-trace 1\n" + text
    return replay_compiled(parse_text(body, single=model == "single"), model, **kw)


def test_contract_example_is_the_exact_json_line():
    assert dumps(replay_compiled(parse_text(CONTRACT_EXAMPLE))) == CONTRACT_LINE


@pytest.mark.parametrize("model", ["single", "multi", "multi-rr", "multi-lru"])
def test_charge_that_never_fits_walks_19_times_and_raises_max_18_times(model):
    # Pass 1 tries the batch (64), pass 2 the exact 20 pages and raises MEMCG_MAX,
    # drains, then 16 retries: 19 walks, 18 events, -ENOMEM.
    r = run("cpus 1\ncgroup 1 0 max=10\ncharge 0 1 20\n", model)
    assert r["counters"]["walks"] == 19
    assert r["memcgs"]["1"]["max_events"] == 18
    assert r["failed_charges"] == 1
    assert r["memcgs"]["1"]["usage"] == 0 and r["memcgs"]["0"]["usage"] == 0


def test_pcstock_never_fitting_charge_walks_twice_per_pass():
    # 18 passes, each page_counter_try_charge walks with max(batch, 20) = 64 and then 20.
    r = run("cpus 1\ncgroup 1 0 max=10\ncharge 0 1 20\n", "pcstock")
    assert r["counters"]["walks"] == 36
    assert r["memcgs"]["1"]["max_events"] == 18


@pytest.mark.parametrize("model", ["multi", "pcstock"])
def test_a_charge_of_the_batch_or_more_walks_once_per_pass(model):
    # batch = max(64, 100) = 100: no second size, so 18 passes of one walk each.
    r = run("cpus 1\ncgroup 1 0 max=10\ncharge 0 1 100\n", model)
    assert r["counters"]["walks"] == 18
    assert r["memcgs"]["1"]["max_events"] == 18


def test_the_retry_loop_drain_frees_another_cpus_stock():
    # cpu 0: 1 page charged, 63 stocked (usage 64 = max). cpu 1: the batch fails, the
    # exact page fails (MEMCG_MAX), drain_all_stock(1) returns cpu 0's 63 pages, and the
    # next pass charges 1 page. Walks: 1 + 2 + 1 (drain) + 1 = 5.
    r = run("cpus 2\ncgroup 1 0 max=64\ncharge 0 1 1\ncharge 1 1 1\n")
    assert r["counters"]["walks"] == 5
    assert r["memcgs"]["1"]["max_events"] == 1
    assert r["memcgs"]["1"]["usage"] == 2 and r["memcgs"]["1"]["watermark"] == 64
    assert r["stocks"] == [[None] * 7, [None] * 7]
    assert r["failed_charges"] == 0


def test_failure_on_an_ancestor_blames_the_ancestor():
    r = run("cpus 1\ncgroup 1 0 max=10\ncgroup 2 1\ncharge 0 2 20\n")
    assert r["memcgs"]["1"]["max_events"] == 18 and r["memcgs"]["2"]["max_events"] == 0
    # Every pass rolled back, but the leaf counted first: its watermark keeps the
    # speculative 64 of the first pass, as page_counter_try_charge() leaves it.
    assert r["memcgs"]["2"]["usage"] == 0 and r["memcgs"]["2"]["watermark"] == 64


def test_random_eviction_draws_from_the_shared_stream():
    # Two slots full (1, 2); memcg 3 needs a victim: get_random_u32_below(2) with seed 0
    # takes the top byte of 0xe220a8397b1dcdaf, 0xe2 = 226; 2 * 226 >> 8 = 1.
    text = ("cpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\n"
            "charge 0 1 1\ncharge 0 2 1\ncharge 0 3 1\n")
    r = run(text, slots=2)
    assert r["counters"]["evictions"] == 1
    assert r["stocks"][0] == [[1, 63], [3, 63]]


def test_round_robin_drain_idx_is_a_uint8():
    # 300 slots, 300 memcgs fill them; 258 more evict slots 0..255 and then 0, 1 again.
    n = 300 + 258
    text = "cpus 1\n" + "".join(f"cgroup {i} 0\n" for i in range(1, n + 1))
    text += "".join(f"charge 0 {i} 1\n" for i in range(1, n + 1))
    r = run(text, "multi-rr", slots=300)
    stock = r["stocks"][0]
    assert r["counters"]["evictions"] == 258
    assert stock[0] == [557, 63] and stock[1] == [558, 63]
    assert stock[255] == [556, 63] and stock[256] == [257, 63]


def test_lru_evicts_the_least_recently_found_slot():
    # Slots: 1 then 2. A charge of 1 finds slot 0 (a hit) and makes it most recent,
    # so memcg 3 evicts memcg 2's slot.
    text = ("cpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\n"
            "charge 0 1 1\ncharge 0 2 1\ncharge 0 1 1\ncharge 0 3 1\n")
    r = run(text, "multi-lru", slots=2)
    assert r["stocks"][0] == [[1, 62], [3, 63]]


def test_multi_fix2_stocks_nothing_and_check_names_the_operation():
    text = "cpus 1\ncgroup 7 0\ncharge 0 7 1\n"
    r = run(text, "multi-fix2")
    assert r["stocks"][0][0] == [7, 0] and r["memcgs"]["7"]["usage"] == 64
    with pytest.raises(InvariantViolation) as info:
        run(text, "multi-fix2", check=True)
    assert info.value.index == 1 and info.value.line == 4  # line 1 is the header
    assert "memcg 7: usage 64 != held 1 + stocked 0 + children 0" in str(info.value)


def test_single_stock_pages_wrap_as_an_unsigned_int():
    # 10 pages stocked; uncharging 2^32-1 pages sums to 9 mod 2^32, which stays stocked:
    # the kernel's unsigned int arithmetic loses 2^32 pages, and --check sees it.
    text = ("cpus 1\ncgroup 1 0\ncharge 0 1 54\ncharge 0 1 4294967295\n"
            "uncharge 0 1 4294967295\n")
    r = run(text, "single")
    assert r["stocks"][0] == [[1, 9]]
    assert r["memcgs"]["1"]["usage"] == 64 + 4294967295
    with pytest.raises(InvariantViolation):
        run(text, "single", check=True)


def test_single_refill_replaces_the_cached_memcg_and_counts_an_eviction():
    r = run("cpus 1\ncgroup 1 0\ncgroup 2 0\ncharge 0 1 1\ncharge 0 2 1\n", "single")
    assert r["counters"]["evictions"] == 1 and r["counters"]["walks"] == 3
    assert r["stocks"][0] == [[2, 63]]


def test_nested_charge_fails_every_trylock():
    # The stock is skipped, the batch is charged and its surplus uncharged directly.
    r = run("cpus 1\ncgroup 1 0\ncharge 0 1 1 nested\n")
    assert r["counters"]["walks"] == 2 and r["stocks"][0] == [None] * 7
    p = run("cpus 1\ncgroup 1 0\ncharge 0 1 1 nested\n", "pcstock")
    assert p["counters"]["walks"] == 2 and p["stocks"] == [{}]


def test_pcstock_creation_drains_the_parents_stock():
    r = run("cpus 2\ncgroup 1 0\ncharge 1 1 1\ncgroup 2 1\n", "pcstock")
    assert r["stocks"] == [{}, {}] and r["counters"]["walks"] == 2
    assert r["memcgs"]["1"]["usage"] == 1


def test_uncharge_releases_at_most_what_is_held():
    r = run("cpus 1\ncgroup 1 0\ncharge 0 1 5\nuncharge 0 1 8\nuncharge 0 0 3\n")
    assert r["short_uncharges"] == 6
    assert r["stocks"][0][0] == [1, 64]


def test_set_max_below_usage_is_refused():
    r = run("cpus 1\ncgroup 1 0\ncharge 0 1 5\nset_max 1 63\nset_max 1 64\n")
    assert r["set_max_busy"] == 1


@pytest.mark.parametrize("model", MODELS)
def test_options_are_echoed_and_big_seeds_and_ids_are_exact(model):
    r = run(f"cpus 1\ncgroup {2**63 - 1} 0\ncharge 0 {2**63 - 1} 1\n", model, slots=70000,
            seed=2**64 - 1, batch=100 if model in ("single", "pcstock") else 127)
    assert (r["slots"], r["seed"]) == (70000, 2**64 - 1)
    assert r["memcgs"][str(2**63 - 1)]["usage"] == r["batch"]


def test_bad_options_raise_the_faithful_messages():
    from memcglab.models import check_options

    trace = parse_text(CONTRACT_EXAMPLE)
    for args in [("lru", 7, 0, 64), ("multi", 0, 0, 64), ("multi", 7, -1, 64),
                 ("multi", 7, 0, 128), ("pcstock", 7, 0, 524288)]:
        with pytest.raises(ValueError) as want:
            check_options(*args)
        with pytest.raises(ValueError) as got:
            replay_compiled(trace, *args)
        assert str(got.value) == str(want.value)
