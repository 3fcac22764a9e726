"""will-it-scale: hand-worked per-operation counts per era (comparison doc, section 5)."""

from collections import Counter

import pytest

from memcglab.trace import OP_CHARGE
from memcglab.workloads.catalogue import TESTS, BenchmarkSpec, Machine, build
from memcglab.workloads.catalogue.wis import CYCLE, WIS_TESTS, accounting_kernel, munmap_walks

CHARGE, REFILL, DIRECT = OP_CHARGE, 2, 3


def _ops(test, kernel, n, mode="process", layout="lkp", inst=1):
    bt = build(BenchmarkSpec("will-it-scale", test, {"instances": inst, "mode": mode},
                             Machine(4), layout=layout, operations=n, kernel=kernel))
    body = bt.trace.ops[bt.warmup_rows:]
    return Counter((int(o["op"]), int(o["arg"])) for o in body), bt


@pytest.mark.parametrize("kernel", ["v5.9", "v6.1"])
def test_malloc1_takes_two_stock_pages_and_gives_back_one_walk_of_two_up_to_v61(kernel):
    c, _ = _ops("malloc1", kernel, 64)
    assert c == {(CHARGE, 1): 128, (DIRECT, 2): 64}


def test_malloc1_v618_puts_the_pte_page_back_into_the_stock():
    c, _ = _ops("malloc1", "v6.18", 64)
    assert c == {(CHARGE, 1): 128, (DIRECT, 1): 64, (REFILL, 1): 64}


def test_page_fault1_cycle_v61_and_v618():
    # D3: v6.1 flushes of 8 + 19 x 510 pages, one walk per batch: 3 flushes of 20
    # walks, then 8 + 7 x 510 + 161 (the last 96 anon pages and the 65 PTE pages)
    c, _ = _ops("page_fault1", "v6.1", CYCLE)
    assert c[(CHARGE, 1)] == CYCLE + 65
    assert {k: v for k, v in c.items() if k[0] == DIRECT} == {
        (DIRECT, 8): 4, (DIRECT, 510): 64, (DIRECT, 161): 1}
    # v6.18: flushes of 7 + 19 x 509, each batch 16 x 31 + 13 folios; the 64 PTE pages
    # back into the stock; 1098 walks in all
    c, _ = _ops("page_fault1", "v6.18", CYCLE)
    assert c[(CHARGE, 1)] == CYCLE + 64 and c[(REFILL, 1)] == 64
    assert {k: v for k, v in c.items() if k[0] == DIRECT} == {
        (DIRECT, 31): 1029, (DIRECT, 13): 64, (DIRECT, 7): 4, (DIRECT, 9): 1}
    assert munmap_walks(CYCLE, 65, "v6.1") == munmap_walks(CYCLE, 65, "v5.8")


def test_a_trace_shorter_than_a_cycle_holds_munmaps_in_proportion():
    c, _ = _ops("page_fault1", "v6.1", 4096, inst=64)
    walks = sum(v for k, v in c.items() if k[0] == DIRECT)
    # each instance's cycle ends inside 4096 of 32768 operations with probability 1/8
    assert 0 < walks / 69 < 64 / 2


def test_page_fault3_charges_only_page_tables():
    c, _ = _ops("page_fault3", "v5.14", CYCLE)
    assert c == {(CHARGE, 1): 65, (DIRECT, 65): 1}


def test_unix1_is_obj_stock_only_and_nothing_in_v58_lock1_nothing_ever():
    c, _ = _ops("unix1", "v6.1", 64)
    assert c == {(8, 264): 64, (8, 520): 64, (9, 264): 64, (9, 520): 64}
    assert _ops("unix1", "v5.8", 64)[0] == {}
    assert _ops("lock1", "v6.18", 64)[0] == {}


def test_thread_mode_charges_one_memcg_process_mode_one_per_instance():
    _, p = _ops("malloc1", "v6.1", 64, "process", "per-instance", 3)
    _, t = _ops("malloc1", "v6.1", 64, "thread", "per-instance", 3)
    body = lambda bt: set(bt.trace.ops[bt.warmup_rows:]["memcg"].tolist())  # noqa: E731
    assert len(body(p)) == 3 and len(body(t)) == 1


def test_accounting_kernel_by_version_order():
    assert [accounting_kernel(v) for v in ("v5.8", "v5.13", "v5.14", "v6.0", "v6.1",
                                           "v6.15", "v6.16", "v6.18", "6.19.2",
                                           "memcg-caches", "v5.14-vmstat", "pcstock-v4")] == \
        ["v5.8", "v5.9", "v5.14", "v5.14", "v6.1", "v6.1", "v6.1", "v6.18", "v6.18",
         "v5.8", "v5.14", "v6.18"]
    with pytest.raises(ValueError, match="oldest accounting era"):
        accounting_kernel("v4.19")


def test_bounds_name_the_key():
    with pytest.raises(ValueError, match=r"keys.instances: 16385 is invalid \(valid: an "
                                         r"integer from 1 to 16384\)"):
        BenchmarkSpec("will-it-scale", "malloc1", {"instances": 16385}, Machine(4))
    with pytest.raises(ValueError, match="keys.mode"):
        BenchmarkSpec("will-it-scale", "malloc1", {"instances": 1, "mode": "threads"},
                      Machine(4))
    with pytest.raises(ValueError, match="instances=200"):
        build(BenchmarkSpec("will-it-scale", "page_fault1", {"instances": 200}, Machine(4),
                            operations=CYCLE))
    with pytest.raises(ValueError, match="kernel='v4.19'"):
        BenchmarkSpec("will-it-scale", "lock1", {"instances": 1}, Machine(4), kernel="v4.19")


def test_every_record_has_every_fact():
    for (fam, test), t in TESTS.items():
        assert t.keys and t.cost.name and t.unit in ("byte", "page"), (fam, test)
        assert t.operation and t.counted and t.roles and callable(t.generate), (fam, test)
        assert all(k in t.reads for k in t.defaults) and (not t.defaults or t.why)
    assert [k for k in TESTS if k[0] == "will-it-scale"] == [
        ("will-it-scale", t) for t in WIS_TESTS]
