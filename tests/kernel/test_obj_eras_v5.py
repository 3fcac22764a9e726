"""Hand-worked behaviour of the older obj-stock eras (memcg-caches, v5.9, v5.14-*).

Each scenario was worked out from the kernel code the ports cite (memcglab/kernel/
obj_stock_v5.py, obj_memcg_caches.py) before it was run; the reasoning is in each
test's docstring. The machine is ``multi`` (7 slots, batch 64) on one memcg, so a
page charge that misses the memcg stock walks once with the batch of 64 and stocks 63.
``PAGE`` lines name the page-level events: ``walk`` (a page_counter walk),
``refill`` (pages into the memcg stock), ``obj_flushes`` (obj_cgroup_uncharge_pages).
"""

from __future__ import annotations

import pytest

from memcglab.kernel.memcontrol import GFP_KERNEL
from memcglab.kernel.observer import Observer
from memcglab.models import build_model, check_obj_stock, obj_stock_era
from memcglab.registry import obj_era_models
from memcglab.replay import replay
from memcglab.trace import parse_text

PAGE_EVENTS = ("walk", "refill", "obj_flushes", "obj_drains", "slab_page_charges",
               "slab_page_uncharges")


def machine(era: str, cpus: int = 1, model: str = "multi"):
    obs = Observer(log=[])
    m = build_model(model, nr_cpus=cpus, observer=obs, obj_stock=era)
    memcg = m.mem_cgroup_css_alloc(1, m.root_mem_cgroup)
    m.mem_cgroup_css_online(memcg)
    obs.log.clear()
    return m, obs, m.obj.objcg(memcg, 0)


def page_log(obs: Observer) -> list[tuple]:
    out = [e for e in obs.log if e[0] in PAGE_EVENTS]
    obs.log.clear()
    return out


def run(m, objcg, ops, cpu: int = 0) -> None:
    for op, size in ops:
        if op == "alloc":
            assert m.obj.obj_cgroup_charge(objcg, GFP_KERNEL, size, cpu) == 0
        else:
            m.obj.obj_cgroup_uncharge(objcg, size, cpu)


LOOP = [("alloc", 264), ("alloc", 520), ("free", 264), ("free", 520)]
FIRST_CHARGE = [("walk", 1, 64, "try_charge"), ("refill", 0, 1, 63)]


@pytest.mark.parametrize("era", ["v5.14-vmstat", "v5.14-refill"])
def test_balanced_264_520_loop_charges_one_page_and_never_uncharges(era):
    """A balanced 264 B + 520 B alloc/free loop on one CPU, three rounds.

    Worked from obj_cgroup_charge / refill_obj_stock (68ac5b3c8db2, 5387c90490f7):

    * alloc 264: the stock caches no objcg, consume_obj_stock misses; 264 >> 12 = 0
      pages plus one for the 264 sub-page bytes: obj_cgroup_charge_pages(1), which
      misses the empty memcg stock: one walk of the batch, 63 pages stocked. The
      remainder 4096 - 264 = 3832 refills the stock: the objcg changes, so it drains
      nothing, takes nr_charged_bytes (0), and holds 3832. 3832 is not above a page.
    * alloc 520: 3832 >= 520, a hit: 3312 left.
    * free 264, free 520: refill_obj_stock(.., true): 3576, then 4096. The test is
      ``nr_bytes > PAGE_SIZE``, strictly: 4096 is not above it, so neither era drains
      (v5.14-vmstat) nor uncharges (v5.14-refill).
    * every later round starts from 4096 with the objcg cached: 3832, 3312, 3576, 4096,
      all hits, no page moves.

    So both eras charge exactly one page for the whole loop and uncharge none: Waiman
    Long's refill change only acts when a stock goes above a page, which a balanced
    loop whose live bytes stay under one page (784 B here) never makes happen. The
    stat side differs from v5.9 only: the cached stat bytes peak at 784, below a page,
    so neither era writes the memcg's stats (0 memcg_stat_updates) once the loop runs.
    """
    m, obs, objcg = machine(era)
    run(m, objcg, LOOP)
    assert page_log(obs) == FIRST_CHARGE
    run(m, objcg, LOOP * 2)
    assert page_log(obs) == []
    assert m.obj.slots(0) == [(objcg, 4096)]
    assert obs.calls["obj_hits"] == 5 and obs.calls["obj_misses"] == 1  # six allocs
    assert obs.calls["mod_objcg_state"] == 12
    assert "memcg_stat_updates" not in obs.calls
    assert m.obj.obj_stock[0].nr_slab_unreclaimable_b == 0


@pytest.mark.parametrize("era,want", [
    ("v5.14-vmstat", [("obj_drains", 0, 1, 7144), ("obj_flushes", 0, 1, 1),
                      ("refill", 0, 1, 1)]),
    ("v5.14-refill", []),
])
def test_charge_remainder_above_a_page(era, want):
    """The refill commit's second case: a charge whose remainder overflows the stock.

    After alloc 264 and alloc 520 the stock holds 3312 bytes. alloc 4360 (= 4096 + 264)
    misses (3312 < 4360): two pages are charged (a memcg-stock hit: 63 >= 2), and the
    remainder 8192 - 4360 = 3832 is refilled, making 7144.

    * v5.14-vmstat (68ac5b3c8db2's refill_obj_stock): 7144 > 4096, drain_obj_stock:
      7144 >> 12 = 1 page to obj_cgroup_uncharge_pages (refill_stock: the memcg stock
      gets it back), 3048 bytes to objcg->nr_charged_bytes, the stock empty and its
      objcg dropped: a page uncharged right after two were charged. Then
      memcg_slab_post_alloc_hook's mod_objcg_state(+4360) finds no objcg cached: it
      switches the stock back to this objcg, taking the 3048 shared bytes with it, and
      caches the 4360 stat bytes (a first value is always cached once).
    * v5.14-refill: allow_uncharge is false for a charge's remainder and the objcg did
      not change, so the 7144 bytes stay: no uncharge.
    """
    m, obs, objcg = machine(era)
    run(m, objcg, LOOP[:2])
    obs.log.clear()
    run(m, objcg, [("alloc", 4360)])
    assert page_log(obs) == want
    if era == "v5.14-vmstat":
        assert m.obj.slots(0) == [(objcg, 3048)] and objcg.nr_charged_bytes == 0
        assert m.obj.obj_stock[0].nr_slab_unreclaimable_b == 4360
    else:
        assert m.obj.slots(0) == [(objcg, 7144)] and objcg.nr_charged_bytes == 0


@pytest.mark.parametrize("era", ["v5.9", "v5.14-refill"])
def test_overflow_v59_drains_into_nr_charged_bytes(era):
    """Two 3000 B objects charged and freed on one CPU.

    alloc 3000: one page (the batch walk), stock 1096. alloc 3000: 1096 < 3000, a
    miss: one more page (a memcg-stock hit), refill 1096 more: 2192 (allow_uncharge
    false in v5.14-refill; v5.9 has no flag and 2192 is below a page anyway).
    free 3000: 5192 > 4096.

    * v5.9 (5458985533ba refill_obj_stock): drain_obj_stock(): 5192 >> 12 = 1 page to
      __memcg_kmem_uncharge, which in v5.9 is page_counter_uncharge (a walk, no
      stock); the 1096 leftover goes to the shared objcg->nr_charged_bytes and the stock
      forgets the objcg. The last free refills an empty stock: it takes the objcg and
      atomic_xchg's the 1096 shared bytes back, 1096 + 3000 = 4096, not above a page.
    * v5.14-refill: 1 page to obj_cgroup_uncharge_pages (refill_stock into the memcg
      stock), the 1096 stay on the CPU; the last free makes 4096 too.
    """
    m, obs, objcg = machine(era)
    run(m, objcg, [("alloc", 3000), ("alloc", 3000)])
    obs.log.clear()
    run(m, objcg, [("free", 3000)])
    if era == "v5.9":
        assert page_log(obs) == [("obj_drains", 0, 1, 5192), ("walk", 1, 1, "uncharge")]
        assert m.obj.slots(0) == [(None, 0)] and objcg.nr_charged_bytes == 1096
    else:
        assert page_log(obs) == [("obj_flushes", 0, 1, 1), ("refill", 0, 1, 1)]
        assert m.obj.slots(0) == [(objcg, 1096)] and objcg.nr_charged_bytes == 0
    run(m, objcg, [("free", 3000)])
    assert page_log(obs) == []
    assert m.obj.slots(0) == [(objcg, 4096)] and objcg.nr_charged_bytes == 0


def test_v59_stat_updates_per_object_and_threshold_flush():
    """v5.9's mod_objcg_state is mod_memcg_lruvec_state on every object: one
    memcg_stat_updates per alloc and per free. The per-CPU counters flush up the
    hierarchy only past MEMCG_CHARGE_BATCH << PAGE_SHIFT bytes: with --batch 1 that is
    4096, so a 4000 B object (x = 4000) does not flush and a second one (x = 8000)
    flushes both the memcg counter and the lruvec counter, each walking memcg 1 and the
    root (2 levels)."""
    obs = Observer(log=[])
    m = build_model("multi", nr_cpus=1, batch=1, observer=obs, obj_stock="v5.9")
    memcg = m.mem_cgroup_css_alloc(1, m.root_mem_cgroup)
    m.mem_cgroup_css_online(memcg)
    objcg = m.obj.objcg(memcg, 0)
    run(m, objcg, [("alloc", 4000)])
    assert obs.calls["memcg_stat_updates"] == 1 and "memcg_stat_flushes" not in obs.calls
    obs.log.clear()
    run(m, objcg, [("alloc", 4000)])
    assert [e for e in obs.log if e[0] == "memcg_stat_flushes"] == [
        ("memcg_stat_flushes", 0, 1, 2), ("memcg_stat_flushes", 0, 1, 2)]
    assert m.obj.vmstats_percpu[(0, 1)] == 0


def test_v514_task_and_irq_stocks():
    """v5.14: get_obj_stock() picks task_obj in task context, irq_obj otherwise.

    A task alloc of 264 charges a page (stock task 3832). An irq alloc of 264 finds
    the irq stock empty: a miss, a second page (a memcg-stock hit), irq stock 3832. An
    irq free of 264 goes to the irq stock (4096); the task stock keeps 3832. With one
    stock (v5.14-refill) the irq alloc would have hit. drain_all of the memcg drains
    the irq stock, then the task stock: 4096 + 3832 bytes, 1 + 0 whole pages, the
    3832 and 0 leftovers to nr_charged_bytes.
    """
    m, obs, objcg = machine("v5.14")
    run(m, objcg, [("alloc", 264)])
    m.in_task = False
    run(m, objcg, [("alloc", 264), ("free", 264)])
    m.in_task = True
    assert obs.calls["obj_misses"] == 2 and "obj_hits" not in obs.calls
    assert m.obj.slots(0) == [(objcg, 3832), (objcg, 4096)]
    obs.log.clear()
    m.drain_all_stock(objcg.memcg, 0)
    drains = [e for e in obs.log if e[0] in ("obj_drains", "obj_flushes")]
    assert drains == [("obj_drains", 0, 1, 4096), ("obj_flushes", 0, 1, 1),
                      ("obj_drains", 0, 1, 3832)]
    assert m.obj.slots(0) == [(None, 0), (None, 0)] and objcg.nr_charged_bytes == 3832


def test_memcg_caches_charges_per_slab_page():
    """memcg-caches: 264 B comes from the memcg's kmalloc-512 (8 per page), 520 B from
    kmalloc-1024 (4 per page). The first alloc of each cache needs a slab: one page
    charged each (the first through a batch walk, the second a memcg-stock hit). The
    balanced loop then never charges: each cache keeps its one empty slab. Eight more
    264 B objects fill the kmalloc-512 slab and need a second slab page; freeing them
    leaves one empty slab beyond the kept one: it is uncharged, directly (v5.8's
    __memcg_kmem_uncharge: page_counter_uncharge)."""
    m, obs, objcg = machine("memcg-caches")
    run(m, objcg, LOOP * 3)
    assert page_log(obs) == [*FIRST_CHARGE, ("slab_page_charges", 0, 1, 1),
                             ("slab_page_charges", 0, 1, 1)]
    run(m, objcg, [("alloc", 264)] * 9)
    assert page_log(obs) == [("slab_page_charges", 0, 1, 1)]
    run(m, objcg, [("free", 264 * 9)])
    assert page_log(obs) == [("slab_page_uncharges", 0, 1, 1), ("walk", 1, 1, "uncharge")]
    assert m.obj.slots(0) == [] and m.obj.violation() is None
    assert "mod_objcg_state" not in obs.calls


def test_eras_registry_and_model_rules():
    """Each era is a registry entry: the name gives its port; eras that cannot stand
    beside a model's own obj half are refused by name."""
    assert obj_stock_era("v5.9").kernel_version.startswith("v5.9")
    assert "single" not in obj_era_models("v5.14") and "multi" in obj_era_models("v5.14")
    assert obj_era_models("v6.15") == ("single",)
    with pytest.raises(ValueError, match="valid models"):
        check_obj_stock("single", "v5.9")
    with pytest.raises(ValueError, match="unknown"):
        obj_stock_era("v5.10")


@pytest.mark.parametrize("era", ["memcg-caches", "v5.9", "v5.14-vmstat", "v5.14-refill",
                                 "v5.14"])
@pytest.mark.parametrize("model", ["multi", "multi-rr", "pcstock", "pcstock-v4"])
def test_replay_with_check_conserves(era, model):
    """A mixed trace with irq, nested, drains, cpu_dead and offline replays under --check
    (kernel notes §11.11 identities) with each era beside each model, and the output
    names the era."""
    text = ("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncgroup 2 1\n"
            "obj_charge 0 2 3000\nobj_charge 0 2 3000\nobj_charge 1 2 264 irq\n"
            "obj_uncharge 0 2 3000\nobj_charge 0 1 520 nested\ndrain_all 1 1\n"
            "obj_uncharge 1 2 3264 irq\ncpu_dead 0\nobj_charge 1 2 9000\n"
            "obj_uncharge 1 1 520\noffline 2\n")
    out = replay(parse_text(text), model, check=True, obj_stock=era)
    assert out["obj_stock"] == era
    assert out["objcgs"]["2"]["live_bytes"] == [9000]


@pytest.mark.parametrize("era", ["memcg-caches", "v5.9", "v5.14-vmstat", "v5.14-refill",
                                 "v5.14"])
def test_random_obj_traces_conserve(era):
    """Random traces of every operation (obj_charge / obj_uncharge with irq and nested,
    page charges, drains, cpu_dead, set_max, offline; memcglab.tracegen) replay under
    --check with each era beside multi and pcstock-v4: every page and byte adds up
    after every operation (InvariantViolation otherwise), and without object operations
    an era changes nothing at all (the model's own output, byte for byte, but the
    ``obj_stock`` key)."""
    from memcglab.replay import dumps
    from memcglab.tracegen import random_obj_trace, random_trace

    for seed in range(12):
        trace = random_obj_trace(seed)
        for model in ("multi", "pcstock-v4"):
            replay(trace, model, check=True, obj_stock=era)
        pages = random_trace(seed)
        out = replay(pages, "multi", obj_stock=era)
        assert out.pop("obj_stock") == era
        assert dumps(out) == dumps(replay(pages, "multi"))
