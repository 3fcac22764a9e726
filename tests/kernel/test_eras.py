"""What distinguishes the eras: the fix-2 leak, v6.15 vs v6.16, and LRU as an LRU cache."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.replay import InvariantViolation, replay
from memcglab.trace import OP_CGROUP, OP_CHARGE, OP_UNCHARGE, Trace, make_ops, parse_text

LEAK = "memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 3\n"


def test_fix2_breaks_conservation_on_a_new_slot_and_multi_does_not():
    """Hugh Dickins' memcg OOM kills: fix 2 stocks an unassigned (here 0) count, so the
    61-page surplus of the batch is charged but sits nowhere."""
    with pytest.raises(InvariantViolation) as exc:
        replay(parse_text(LEAK), model="multi-fix2", check=True)
    assert exc.value.index == 1 and "usage 64 != held 3 + stocked 0" in exc.value.message
    out = replay(parse_text(LEAK), model="multi", check=True)
    assert out["stocks"][0][0] == [1, 61]


def test_fix2_leak_grows_until_charges_fail():
    """Two memcgs taking turns in one slot: every insertion leaks the batch surplus
    under fix 2, until the parent's limit refuses honest charges (the OOM kills)."""
    body = "memcglab-trace 1\ncpus 1\ncgroup 1 0 max=640\ncgroup 2 1\ncgroup 3 1\n" + \
           "".join(f"charge 0 {2 + i % 2} 1\n" for i in range(30))
    fix2 = replay(parse_text(body), model="multi-fix2", slots=1)
    fixed = replay(parse_text(body), model="multi", slots=1)
    assert fixed["failed_charges"] == 0
    assert fixed["memcgs"]["1"]["usage"] == 30 + 63  # held + one stocked surplus
    assert fix2["failed_charges"] > 0
    assert fix2["memcgs"]["1"]["usage"] == 640  # full of pages that nobody holds


def random_trace(rng: np.random.Generator, n: int, cpus: int, memcgs: int, max_nr: int,
                 uncharges: bool) -> Trace:
    rows = [(OP_CGROUP, -1, m, (2**63 - 1) // 4096, 0) for m in range(1, memcgs + 1)]
    held = dict.fromkeys(range(1, memcgs + 1), 0)
    for _ in range(n):
        m = int(rng.integers(1, memcgs + 1))
        cpu = int(rng.integers(0, cpus))
        if uncharges and held[m] and rng.random() < 0.4:
            nr = int(rng.integers(1, min(held[m], max_nr) + 1))
            rows.append((OP_UNCHARGE, cpu, m, nr))
            held[m] -= nr
        else:
            nr = int(rng.integers(1, max_nr + 1))
            rows.append((OP_CHARGE, cpu, m, nr))
            held[m] += nr
    return Trace(cpus, make_ops(rows))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.booleans())
def test_single_and_multi_with_one_slot_agree_without_nested_or_big_refills(seed, uncharges):
    rng = np.random.default_rng(seed)
    trace = random_trace(rng, 60, cpus=2, memcgs=3, max_nr=64, uncharges=uncharges)
    a = replay(trace, model="single")
    b = replay(trace, model="multi", slots=1)
    for key in ("memcgs", "counters", "failed_charges", "short_uncharges", "warnings"):
        assert a[key] == b[key], key
    assert [s for s in a["stocks"]] == [[s[0]] for s in b["stocks"]]


def test_the_one_difference_a_refill_above_the_batch():
    """Jakub Kicinski's review point: v6.15 stocks a >64-page refill and drains the
    whole stock; v6.16 uncharges it directly and keeps the stock."""
    body = "memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 1\ncharge 0 1 100\n" \
           "uncharge 0 1 100\n"
    a = replay(parse_text(body), model="single")
    b = replay(parse_text(body), model="multi", slots=1)
    assert a["stocks"] == [[None]] and b["stocks"] == [[[1, 63]]]
    assert a["memcgs"]["1"]["usage"] == 1 and b["memcgs"]["1"]["usage"] == 64
    assert a["counters"]["walks"] == b["counters"]["walks"] == 3


def lru_cache_misses(seq: list[int], k: int) -> int:
    cache: OrderedDict[int, None] = OrderedDict()
    misses = 0
    for m in seq:
        if m in cache:
            cache.move_to_end(m)
            continue
        misses += 1
        cache[m] = None
        if len(cache) > k:
            cache.popitem(last=False)
    return misses


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 8), st.lists(st.integers(1, 12), min_size=1, max_size=60))
def test_multi_lru_evicts_like_a_k_entry_lru_cache(k, seq):
    # At most 60 one-page charges: no slot is ever consumed down below one page, so
    # every lookup of a cached memcg is a hit and every miss inserts.
    rows = [(OP_CGROUP, -1, m, (2**63 - 1) // 4096, 0) for m in range(1, 13)]
    rows += [(OP_CHARGE, 0, m, 1) for m in seq]
    out = replay(Trace(1, make_ops(rows)), model="multi-lru", slots=k)
    distinct = len(set(seq))
    assert out["counters"]["evictions"] == lru_cache_misses(seq, k) - min(k, distinct)
