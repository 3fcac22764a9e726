"""Hand-worked exact event logs of the obj stock in each era (kernel notes §11, ported).

Each scenario is worked out from the ported source before it is run: a hit, a miss
whose remainder refills the stock, a free that flushes whole pages, a switch that
drains the old objcg, the five-slot round-robin victim, v4's direct uncharge,
v6.15's hand-off of drained pages to ``__refill_stock``, and the per-node objcgs of
the 2026 tree. Log entries: ``(event, cpu, memcg, n)`` for obj events,
``("walk", memcg, pages, kind)``, ``("refill", cpu, memcg, pages)`` for the memcg
stock, ``("consume", cpu, memcg, pages, hit)``, ``("evict", cpu, slot, memcg, pages)``.
"""

from __future__ import annotations

import pytest

from memcglab.kernel.memcontrol import GFP_KERNEL
from memcglab.kernel.observer import Observer
from memcglab.models import build_model


def machine(model: str, cpus: int = 2, nodes: int = 1, ids: tuple[int, ...] = (1,)):
    obs = Observer(log=[])
    m = build_model(model, nr_cpus=cpus, observer=obs, nodes=nodes)
    memcgs = []
    for i in ids:
        memcg = m.mem_cgroup_css_alloc(i, m.root_mem_cgroup)
        m.mem_cgroup_css_online(memcg)
        memcgs.append(memcg)
    obs.log.clear()
    return m, obs, memcgs


def take(obs: Observer) -> list[tuple]:
    log = list(obs.log)
    obs.log.clear()
    return log


MISS_200 = [("obj_cgroup_charge", 0, 1, 200), ("obj_misses", 0, 1, 200),
            ("consume", 0, 1, 1, False), ("walk", 1, 64, "try_charge"), ("refill", 0, 1, 63),
            ("obj_refills", 0, 1, 3896)]


@pytest.mark.parametrize("model", ["multi", "multi-lru", "multi-rr"])
def test_hit_miss_and_page_flush(model: str) -> None:
    m, obs, (a,) = machine(model)
    o = m.obj.objcg(a, 0)
    # A miss: one page through try_charge_memcg (the batch of 64 walks, 63 stocked);
    # the 4096 - 200 = 3896 byte remainder refills the empty stock (a switch with
    # nothing to drain).
    assert m.obj.obj_cgroup_charge(o, GFP_KERNEL, 200, 0) == 0
    assert take(obs) == MISS_200
    # A hit: 3896 >= 300, no page moves.
    m.obj.obj_cgroup_charge(o, GFP_KERNEL, 300, 0)
    assert take(obs) == [("obj_cgroup_charge", 0, 1, 300), ("obj_hits", 0, 1, 300)]
    # A free of 4000: 3596 + 4000 = 7596 > PAGE_SIZE, so one page goes back through
    # obj_cgroup_uncharge_pages -> refill_stock (63 + 1 = 64 pages, not over the
    # batch) and 7596 & 4095 = 3500 bytes stay.
    m.obj.obj_cgroup_uncharge(o, 4000, 0)
    assert take(obs) == [("obj_cgroup_uncharge", 0, 1, 4000), ("obj_refills", 0, 1, 4000),
                         ("obj_flushes", 0, 1, 1), ("refill", 0, 1, 1)]
    assert m.obj.slots(0)[0] == (o, 3500)
    assert o.kmem_pages == 0 and a.kmem == 0 and a.memory.usage == 64


def test_a_free_of_exactly_a_page_is_not_flushed() -> None:
    # refill_obj_stock flushes only above PAGE_SIZE (strict >).
    m, obs, (a,) = machine("multi")
    o = m.obj.objcg(a, 0)
    m.obj.obj_cgroup_charge(o, GFP_KERNEL, 4095, 0)  # 1 page, remainder 1 byte
    take(obs)
    m.obj.obj_cgroup_uncharge(o, 4095, 0)
    assert take(obs) == [("obj_cgroup_uncharge", 0, 1, 4095), ("obj_refills", 0, 1, 4095)]
    assert m.obj.slots(0)[0] == (o, 4096)


def test_single_slot_switch_drains_the_old_objcg() -> None:
    m, obs, (a, b) = machine("multi", ids=(1, 2))
    oa, ob = m.obj.objcg(a, 0), m.obj.objcg(b, 0)
    m.obj.obj_cgroup_charge(oa, GFP_KERNEL, 200, 0)
    take(obs)
    # b misses; its page charge walks; its refill finds a's objcg cached: drain_obj_stock
    # of 3896 bytes, no whole page, so all 3896 go to a's nr_charged_bytes.
    m.obj.obj_cgroup_charge(ob, GFP_KERNEL, 100, 0)
    assert take(obs) == [("obj_cgroup_charge", 0, 2, 100), ("obj_misses", 0, 2, 100),
                         ("consume", 0, 2, 1, False), ("walk", 2, 64, "try_charge"),
                         ("refill", 0, 2, 63), ("obj_refills", 0, 2, 3996),
                         ("obj_drains", 0, 1, 3896)]
    assert oa.nr_charged_bytes == 3896 and m.obj.slots(0)[0] == (ob, 3996)
    # Back on a: the switch pulls a's 3896 shared bytes into the stock.
    m.obj.obj_cgroup_uncharge(oa, 200, 0)
    assert m.obj.slots(0)[0] == (oa, 4096) and oa.nr_charged_bytes == 0
    assert ob.nr_charged_bytes == 3996


def test_contended_refill_sends_pages_back_and_the_rest_to_nr_charged_bytes() -> None:
    # An interrupt inside this CPU's obj stock section (nested): v6.16's trylock fails.
    m, obs, (a,) = machine("multi")
    o = m.obj.objcg(a, 0)
    m.obj.obj_cgroup_charge(o, GFP_KERNEL, 200, 0)
    take(obs)
    for lock in m.stock_locks(0):
        lock.acquired += 1
    m.obj.obj_cgroup_uncharge(o, 5000, 0)
    assert take(obs) == [("obj_cgroup_uncharge", 0, 1, 5000), ("obj_refills", 0, 1, 5000),
                         ("obj_flushes", 0, 1, 1), ("walk", 1, 1, "uncharge")]
    assert o.nr_charged_bytes == 5000 - 4096 and m.obj.slots(0)[0] == (o, 3896)


def test_five_slot_round_robin_victim() -> None:
    m, obs, memcgs = machine("multi-rr", cpus=1, ids=(1, 2, 3, 4, 5, 6, 7))
    objcgs = [m.obj.objcg(x, 0) for x in memcgs]
    for o in objcgs[:5]:
        m.obj.obj_cgroup_charge(o, GFP_KERNEL, 64, 0)
    assert [s[0] for s in m.obj.slots(0)] == objcgs[:5]
    take(obs)
    # The sixth objcg finds no match and no empty slot: victim drain_idx 0, then 1.
    m.obj.obj_cgroup_uncharge(objcgs[5], 8, 0)
    assert take(obs) == [("obj_cgroup_uncharge", 0, 6, 8), ("obj_refills", 0, 6, 8),
                         ("obj_evictions", 0, 1, 0), ("obj_drains", 0, 1, 4032)]
    m.obj.obj_cgroup_uncharge(objcgs[6], 8, 0)
    assert take(obs)[2:] == [("obj_evictions", 0, 2, 1), ("obj_drains", 0, 2, 4032)]
    assert [s[0] for s in m.obj.slots(0)] == [objcgs[5], objcgs[6], *objcgs[2:5]]
    assert m.obj.obj_stock[0].drain_idx == 2
    assert objcgs[0].nr_charged_bytes == 4032


def test_five_slot_u16_flush() -> None:
    # total > U16_MAX flushes whole pages even with allow_uncharge false: a charge-path
    # refill can only reach it through pulled-in nr_charged_bytes.
    m, obs, (a, b) = machine("multi-rr", cpus=1, ids=(1, 2))
    oa = m.obj.objcg(a, 0)
    oa.nr_charged_bytes = 65000  # as if left by drains on other CPUs
    oa.kmem_pages = 16  # bookkeeping only: this test checks the flush arithmetic
    m.obj.refill_obj_stock(oa, 600, False, 0)
    # switch: 65000 + 600 = 65600 > U16_MAX: 16 pages out, 65600 & 4095 = 64 stay
    assert m.obj.slots(0)[0] == (oa, 64)
    assert ("obj_flushes", 0, 1, 16) in take(obs)


def test_v4_page_flush_is_a_direct_walk() -> None:
    m, obs, (a,) = machine("pcstock-v4")
    o = m.obj.objcg(a, 0)
    m.obj.obj_cgroup_charge(o, GFP_KERNEL, 200, 0)
    assert take(obs) == [("obj_cgroup_charge", 0, 1, 200), ("obj_misses", 0, 1, 200),
                         ("walk", 1, 64, "try_charge"), ("refill", 0, 1, 63),
                         ("obj_refills", 0, 1, 3896)]
    m.obj.obj_cgroup_uncharge(o, 4000, 0)
    # v4 4/5: obj_cgroup_uncharge_pages() -> memcg_uncharge(): one walk, the page
    # counter stock untouched (63 pages stay).
    assert take(obs) == [("obj_cgroup_uncharge", 0, 1, 4000), ("obj_refills", 0, 1, 4000),
                         ("obj_flushes", 0, 1, 1), ("walk", 1, 1, "uncharge")]
    assert a.memory.stock[0].nr_pages == 63 and a.memory.usage == 63


def test_v615_drained_pages_go_to_this_cpus_memcg_stock() -> None:
    m, obs, (a, b) = machine("single", ids=(1, 2))
    oa, ob = m.obj.objcg(a, 0), m.obj.objcg(b, 0)
    m.obj.obj_cgroup_charge(oa, GFP_KERNEL, 4100, 0)  # 2 pages, remainder 4092 stocked
    m.obj.obj_cgroup_charge(oa, GFP_KERNEL, 5000, 0)  # 4092 < 5000: 2 more pages
    assert m.obj.slots(0)[0] == (oa, 4092 + 3192)  # allow_uncharge false: no flush
    take(obs)
    # b's charge: its page charge replaces a in the one memcg stock (an eviction that
    # drains a's 60 pages); then its refill switches objcgs: drain_obj_stock hands a's
    # whole page to __refill_stock of this CPU, which evicts b (63 pages) to cache a.
    m.obj.obj_cgroup_charge(ob, GFP_KERNEL, 8, 0)
    assert take(obs) == [
        ("obj_cgroup_charge", 0, 2, 8), ("obj_misses", 0, 2, 8), ("consume", 0, 2, 1, False),
        ("walk", 2, 64, "try_charge"), ("evict", 0, 0, 1, 60), ("drain", 0, 0, 1, 60),
        ("walk", 1, 60, "uncharge"), ("refill", 0, 2, 63), ("obj_refills", 0, 2, 4088),
        ("obj_drains", 0, 1, 7284), ("evict", 0, 0, 2, 63), ("drain", 0, 0, 2, 63),
        ("walk", 2, 63, "uncharge"), ("refill", 0, 1, 1)]
    assert m.memcg_stock[0].cached is a and m.memcg_stock[0].nr_pages == 1
    assert oa.nr_charged_bytes == 7284 - 4096


def test_per_node_objcgs_thrash_the_single_slot() -> None:
    # The RFC's base tree (E4-1): one memcg's objects charged on node 1 and freed on a
    # node-0 CPU switch that CPU's only slot back and forth.
    m, obs, (a,) = machine("pcstock", cpus=2, nodes=2)
    o0, o1 = m.obj.objcg(a, 0), m.obj.objcg(a, 1)
    assert o0 is not o1 and (o0.node, o1.node) == (0, 1)
    m.obj.obj_cgroup_charge(o0, GFP_KERNEL, 100, 0)
    m.obj.obj_cgroup_charge(o1, GFP_KERNEL, 100, 1)
    take(obs)
    m.obj.obj_cgroup_uncharge(o1, 100, 0)  # freed on CPU 0: a switch
    assert take(obs) == [("obj_cgroup_uncharge", 0, 1, 100), ("obj_refills", 0, 1, 100),
                         ("obj_drains", 0, 1, 3996)]
    m.obj.obj_cgroup_uncharge(o0, 100, 0)  # and back
    assert ("obj_drains", 0, 1, 100) in take(obs)
    # The five-slot stock keeps both per-node objcgs side by side: no drain.
    m, obs, (a,) = machine("multi-rr", cpus=2, nodes=2)
    o0, o1 = m.obj.objcg(a, 0), m.obj.objcg(a, 1)
    m.obj.obj_cgroup_charge(o0, GFP_KERNEL, 100, 0)
    m.obj.obj_cgroup_charge(o1, GFP_KERNEL, 100, 1)
    take(obs)
    m.obj.obj_cgroup_uncharge(o1, 100, 0)
    m.obj.obj_cgroup_uncharge(o0, 100, 0)
    assert not [e for e in take(obs) if e[0] == "obj_drains"]


def test_offline_reparents_and_its_drain_finds_no_obj_slot() -> None:
    # memcg_reparent_objcgs() runs before the offline's drain_all_stock: the slot that
    # caches the dying memcg's objcg is not in its subtree any more and stays.
    m, obs, (a,) = machine("multi", ids=(1,))
    child = m.mem_cgroup_css_alloc(2, a)
    m.mem_cgroup_css_online(child)
    o = m.obj.objcg(child, 0)
    m.obj.obj_cgroup_charge(o, GFP_KERNEL, 100, 0)
    take(obs)
    m.mem_cgroup_css_offline(child)
    assert o.memcg is a and m.obj.slots(0)[0] == (o, 3996)
    assert not [e for e in take(obs) if e[0] == "obj_drains"]
    # A later drain of the parent's subtree finds it, and the bytes are the parent's.
    m.drain_all_stock(a, 0)
    assert m.obj.slots(0)[0] == (None, 0) and o.nr_charged_bytes == 3996


@pytest.mark.parametrize(("model", "memcg_slot_left"), [("multi", True), ("multi-fix2", False),
                                                         ("single", False)])
def test_drain_all_of_the_obj_half(model: str, memcg_slot_left: bool) -> None:
    # CPU 0 caches memcg 2's pages in the memcg stock and memcg 1's objcg in the obj
    # stock. drain_all_stock(1): from v6.16 on the obj stock has its own decision and
    # drain; in v6.15 and mm-unstable April 2025 one decision drains both halves.
    m, obs, (a, b) = machine(model, ids=(1, 2))
    m.try_charge(b, GFP_KERNEL, 1, 0)  # 63 pages of memcg 2 stocked on CPU 0
    m.obj.obj_cgroup_charge(m.obj.objcg(a, 1), GFP_KERNEL, 4096, 1)  # pages on CPU 1
    m.obj.obj_cgroup_uncharge(m.obj.objcg(a, 0), 8, 0)  # CPU 0 caches memcg 1's objcg
    take(obs)
    m.drain_all_stock(a, 0)
    log = take(obs)
    assert ("obj_drains", 0, 1, 8) in log
    stocked = m.stocked_pages()
    assert (stocked.get(2, 0) == 63) == memcg_slot_left
