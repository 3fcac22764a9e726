"""Hand-worked behaviour of cgroup v1's kmem and memsw counters (memcglab.kernel.memcontrol_v1).

Each expected value was worked out from the kernel functions the port cites before it
was run; the reasoning is beside it. The machine is ``multi`` (7 slots, batch 64)
unless a test says otherwise, so a page charge that misses the memcg stock walks the
memory counter once with the batch of 64 and stocks the surplus. Log entries:
``walk`` (the memory counter), ``kmem_walk`` and ``memsw_walk`` (the v1 counters),
each ``(kind, memcg, nr_pages, page_counter function)``.
"""

from __future__ import annotations

import pytest

from memcglab.kernel.memcontrol import GFP_KERNEL, MemcgEvent
from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import ENOMEM
from memcglab.models import build_model
from memcglab.replay import dumps, replay
from memcglab.trace import parse_text

WALKS = ("walk", "kmem_walk", "memsw_walk")


def walks(obs: Observer) -> list[tuple]:
    out = [e for e in obs.log if e[0] in WALKS]
    obs.log.clear()
    return out


def two_level(cgroup_version: int = 1, swap: bool = False, obj_stock: str | None = None):
    """Root, memcg 1, memcg 2 under it; observer with a log."""
    obs = Observer(log=[])
    m = build_model("multi", nr_cpus=2, observer=obs, obj_stock=obj_stock,
                    cgroup_version=cgroup_version, swap=swap)
    parent = m.mem_cgroup_css_alloc(1, m.root_mem_cgroup)
    m.mem_cgroup_css_online(parent)
    child = m.mem_cgroup_css_alloc(2, parent)
    m.mem_cgroup_css_online(child)
    obs.log.clear()
    return m, obs, child


def kmem(m) -> list[int]:
    return [m.memcgs[i].kmem_counter.usage for i in (0, 1, 2)]


def memsw(m) -> list[int]:
    return [m.memcgs[i].memsw.usage for i in (0, 1, 2)]


def test_slab_page_charge_walks_memory_through_the_stock_and_kmem_every_time():
    """v6.16 obj_cgroup_charge_pages(): try_charge_memcg(), then memcg1_account_kmem().

    obj_charge 200 B: a miss of the byte stock charges one page. try_charge_memcg misses
    the memcg stock and walks memory with the batch of 64 (63 stocked);
    memcg1_account_kmem(memcg, +1) is page_counter_charge(&memcg->kmem, 1): one walk
    through 2, 1 and the root. A 4000 B object no longer fits the 3896 bytes left, so it
    charges one more page: consume_stock serves the memory side (no walk), but kmem has
    no stock and walks again. kmem is 2 at every level; memory is 64 (pages in the
    stock are charged).
    """
    m, obs, child = two_level()
    objcg = m.obj.objcg(child, 0)
    assert m.obj.obj_cgroup_charge(objcg, GFP_KERNEL, 200, 0) == 0
    assert walks(obs) == [("walk", 2, 64, "try_charge"), ("kmem_walk", 2, 1, "charge")]
    assert m.obj.obj_cgroup_charge(objcg, GFP_KERNEL, 4000, 0) == 0
    assert walks(obs) == [("kmem_walk", 2, 1, "charge")]
    assert kmem(m) == [2, 2, 2]
    assert [m.memcgs[i].memory.usage for i in (0, 1, 2)] == [64, 64, 64]
    assert obs.calls["kmem_walks"] == 2 and obs.walks == 1  # kmem is not in ``walks``


def test_obj_stock_refill_whole_pages_uncharge_kmem_directly():
    """refill_obj_stock() above a page: obj_cgroup_uncharge_pages().

    obj_charge 5000 B charges PAGE_ALIGN(5000) >> 12 = 2 pages (memory: one batch walk,
    62 stocked; kmem: one charge walk of 2) and refills the 3192 B remainder. Freeing
    the 5000 B makes 8192 > PAGE_SIZE: 2 whole pages go to obj_cgroup_uncharge_pages,
    which runs memcg1_account_kmem(memcg, -2) (one kmem uncharge walk: 0 at every
    level) and refill_stock(memcg, 2): the memcg stock goes 62 -> 64, not above the
    batch, so memory does not walk.
    """
    out = replay(parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncgroup 2 1\n"
                            "obj_charge 0 2 5000\nobj_uncharge 0 2 5000\n"),
                 cgroup_version=1, check=True)
    assert out["counters"]["walks"] == 1
    assert out["stocks"][0][0] == [2, 64]
    assert out["v1_counters"] == {"kmem_walks": 2, "memsw_walks": 0}
    assert out["v1_memcgs"]["2"] == {"kmem_usage": 0, "kmem_watermark": 2}
    assert out["v1_memcgs"]["0"] == {"kmem_usage": 0, "kmem_watermark": 2}
    assert out["cgroup_version"] == 1 and out["swap"] is False


def test_swap_stock_refill_charges_memsw_by_the_batch_at_each_level():
    """try_charge_memcg() with do_memsw_account(): memsw, then memory, per batch.

    charge 1 page: consume_stock misses; page_counter_try_charge(&memcg->memsw, 64) and
    then (&memcg->memory, 64) both fit; done_restock stocks 63. memsw is 64 at 2, 1 and
    the root, as memory. drain_all then drains CPU 0's slot: drain_stock() ->
    memcg_uncharge(2, 63): memory and memsw uncharged by 63, one walk each.
    """
    m, obs, child = two_level(swap=True)
    assert m.try_charge(child, GFP_KERNEL, 1, 0) == 0
    assert walks(obs) == [("memsw_walk", 2, 64, "try_charge"), ("walk", 2, 64, "try_charge")]
    assert memsw(m) == [64, 64, 64]
    m.drain_all_stock(m.root_mem_cgroup, 0)
    assert walks(obs) == [("walk", 2, 63, "uncharge"), ("memsw_walk", 2, 63, "uncharge")]
    assert memsw(m) == [1, 1, 1]
    assert kmem(m) == [0, 0, 0]  # a user page: no kmem


def test_swap_never_fitting_charge_walks_memsw_twice_per_memory_walk():
    """A charge over memory.max with swap: the contract's 19 memory walks (the batch, then
    18 exact passes), each between a memsw charge that fits (memsw.max is
    PAGE_COUNTER_MAX) and the memsw uncharge of the kernel's ``if (do_memsw_account())
    page_counter_uncharge(&memcg->memsw, batch)``: 38 memsw walks. mem_cgroup_margin is
    min(10, memsw's margin) = 10 < 20 every pass. memsw ends at 0 but its watermark kept
    the speculative batch of 64 at memcg 1 and the root; memory's refused at memcg 1
    before its watermark moved (0), 18 MEMCG_MAX events as on v2."""
    out = replay(parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0 max=10\ncharge 0 1 20\n"),
                 cgroup_version=1, swap=True, check=True)
    assert out["counters"]["walks"] == 19 and out["failed_charges"] == 1
    assert out["v1_counters"] == {"kmem_walks": 0, "memsw_walks": 38}
    assert out["v1_memcgs"]["1"] == {"kmem_usage": 0, "kmem_watermark": 0, "memsw_usage": 0,
                                     "memsw_watermark": 64}
    assert out["memcgs"]["1"]["watermark"] == 0 and out["memcgs"]["1"]["max_events"] == 18


def test_memsw_refusal_names_the_memsw_counter_over_its_limit():
    """memsw refuses first (a memsw.max no trace can set, given here directly): memory is
    never tried, mem_over_limit is the owner of the failing memsw counter (memcg 1),
    which gets the MEMCG_MAX events, and the charge fails after the retries."""
    m, obs, child = two_level(swap=True)
    m.memcgs[1].memsw.max = 10
    assert m.try_charge(child, GFP_KERNEL, 20, 0) == -ENOMEM
    log = walks(obs)
    assert {e[0] for e in log} == {"memsw_walk"}  # no memory walk at all
    assert len(log) == 19  # the batch, then 18 exact passes
    assert m.memcgs[1].memory_events_local[MemcgEvent.MEMCG_MAX] == 18
    assert m.memcgs[2].memory_events_local[MemcgEvent.MEMCG_MAX] == 0


def test_v5_eras_charge_kmem_with_try_charge_after_try_charge():
    """v5.9's __memcg_kmem_charge (and v5.13's obj_cgroup_charge_pages): try_charge, then
    page_counter_try_charge(&memcg->kmem, nr_pages); the v5.9 drain's
    __memcg_kmem_uncharge: page_counter_uncharge(&memcg->kmem) and the direct memory
    uncharge. memcg-caches (v5.8): the same charge form per slab page."""
    m, obs, child = two_level(obj_stock="v5.9")
    assert m.obj.obj_cgroup_charge(m.obj.objcg(child, 0), GFP_KERNEL, 264, 0) == 0
    assert walks(obs) == [("walk", 2, 64, "try_charge"), ("kmem_walk", 2, 1, "try_charge")]
    m, obs, child = two_level(obj_stock="memcg-caches")
    assert m.obj.obj_cgroup_charge(m.obj.objcg(child, 0), GFP_KERNEL, 264, 0) == 0
    assert walks(obs) == [("walk", 2, 64, "try_charge"), ("kmem_walk", 2, 1, "try_charge")]
    assert kmem(m) == [1, 1, 1]


def test_v2_is_unchanged():
    """cgroup v2 (the default): no kmem or memsw walk, no new output key, and the same
    bytes as before the option existed."""
    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\nobj_charge 0 1 5000\n"
                   "charge 0 1 3\nobj_uncharge 0 1 5000\n")
    obs = Observer(log=[])
    out = replay(t, observer=obs)
    assert dumps(out) == dumps(replay(t, cgroup_version=2))
    assert not {"cgroup_version", "swap", "v1_counters", "v1_memcgs"} & set(out)
    assert not [e for e in obs.log if e[0] in ("kmem_walk", "memsw_walk")]
    assert "kmem_walks" not in obs.calls


@pytest.mark.parametrize("kwargs, message", [
    ({"cgroup_version": 3}, "cgroup_version=3"),
    ({"swap": True}, "swap=True"),
    ({"cgroup_version": 1, "model": "pcstock"}, "page_counter-stock"),
    ({"cgroup_version": 1, "model": "pcstock-v4"}, "page_counter-stock"),
])
def test_options_are_checked(kwargs, message):
    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\n")
    with pytest.raises(ValueError, match=message):
        replay(t, **kwargs)


def test_single_v615_kmem_and_memsw():
    """``single`` (v6.15): obj_charge 5000 B charges 2 pages (one kmem charge walk) and
    leaves 3192 B; the free makes 8192 B > PAGE_SIZE, and obj_cgroup_uncharge_pages()
    uncharges kmem by 2 (one walk) before refill_stock. With swap, memsw equals memory
    at the end (64: the stocked pages are charged to both)."""
    out = replay(parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\nobj_charge 0 1 5000\n"
                            "obj_uncharge 0 1 5000\n"), model="single", cgroup_version=1,
                 swap=True, check=True)
    assert out["v1_counters"]["kmem_walks"] == 2
    assert out["v1_memcgs"]["1"]["kmem_usage"] == 0
    assert out["v1_memcgs"]["1"]["memsw_usage"] == out["memcgs"]["1"]["usage"] == 64


def test_force_charges_memsw_too():
    """The ``force:`` label (a PF_MEMALLOC task over its limit): page_counter_charge of
    memory and, with do_memsw_account(), of memsw: both 20 at memcg 1 and the root,
    past memory.max = 10. The failed memory walks (batch, exact) each uncharged memsw
    again first."""
    m, obs, child = two_level(swap=True)
    m.memcgs[1].memory.max = 10
    m.current.pf_memalloc = True
    assert m.try_charge(child, GFP_KERNEL, 20, 0) == 0
    assert memsw(m) == [20, 20, 20]
    assert [m.memcgs[i].memory.usage for i in (0, 1, 2)] == [20, 20, 20]
    assert walks(obs)[-2:] == [("walk", 2, 20, "charge"), ("memsw_walk", 2, 20, "charge")]


def test_v5_kmem_refusal_cancels_the_charge():
    """__memcg_kmem_charge when memcg->kmem refuses (a limit no trace can set, given here
    directly): cancel_charge() uncharges memory and memsw (one walk each) and the
    charge fails; kmem is back to 0 below the refusing level."""
    m, obs, child = two_level(swap=True, obj_stock="v5.9")
    m.memcgs[1].kmem_counter.max = 0
    assert m.obj.obj_cgroup_charge(m.obj.objcg(child, 0), GFP_KERNEL, 264, 0) == -ENOMEM
    assert walks(obs) == [("memsw_walk", 2, 64, "try_charge"), ("walk", 2, 64, "try_charge"),
                          ("kmem_walk", 2, 1, "try_charge"), ("walk", 2, 1, "uncharge"),
                          ("memsw_walk", 2, 1, "uncharge")]
    assert kmem(m) == [0, 0, 0]
    assert m.memcgs[2].memory.usage == 63  # the batch's surplus stays in the stock
