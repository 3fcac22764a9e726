"""Hand-worked page-level kmem charges on cgroup v1: the trace's ``kmem`` word.

Expected values were worked out from the kernel functions before running: the default
model (``multi``, batch 64), a root, memcg 1 and memcg 2 under it, one CPU.

* ``charge ... kmem`` (6.x): ``__memcg_kmem_charge_page`` -> ``obj_cgroup_charge_pages``
  = ``try_charge_memcg`` then ``memcg1_account_kmem(memcg, +nr)``: the memory side goes
  through the memcg stock, ``memcg->kmem`` is walked every time (no stock).
* v5.x obj-stock eras: ``__memcg_kmem_charge`` (torvalds/linux 5458985533ba) =
  ``try_charge``, then ``page_counter_try_charge(&memcg->kmem)``: the same walks.
* ``uncharge_direct ... kmem=K``: ``uncharge_batch`` uncharges memory, then K pages of
  ``memcg->kmem`` (``ug->nr_kmem``).
"""

from __future__ import annotations

import pytest

from memcglab.replay import Replayer, conservation_violation, dumps, replay
from memcglab.trace import OP_CHARGE, Trace, TraceError, make_ops, parse_text, to_text, validate

HEAD = "memcglab-trace 1\ncpus 1\ncgroup 1 0\ncgroup 2 1\n"


def run(body: str, **kw):
    return replay(parse_text(HEAD + body), check=True, **kw)


def kmem_usage(out) -> list[int]:
    return [out["v1_memcgs"][str(i)]["kmem_usage"] for i in (0, 1, 2)]


@pytest.mark.parametrize("obj_stock", [None, "v5.9", "memcg-caches", "v5.14"])
def test_three_kmem_pages_then_a_munmap_batch(obj_stock):
    """charge 1 kmem x3: the first misses the memcg stock (one walk of memory with 64,
    63 stocked), the next two are stock hits; each walks memcg->kmem once (3 walks;
    kmem 3 at 2, 1 and the root). charge 2 (user pages): a stock hit, no kmem walk.
    uncharge_direct 5 kmem=3: one direct walk of memory (5 pages) then one walk of
    memcg->kmem by 3: kmem 0 at every level, watermark 3. v5.x: the same walks."""
    out = run("charge 0 2 1 kmem\ncharge 0 2 1 kmem\ncharge 0 2 1 kmem\n"
              "charge 0 2 2\nuncharge_direct 0 2 5 kmem=3\n",
              cgroup_version=1, obj_stock=obj_stock)
    assert out["counters"] == {"walks": 2, "stock_hits": 3, "evictions": 0}
    assert out["v1_counters"] == {"kmem_walks": 4, "memsw_walks": 0}
    assert kmem_usage(out) == [0, 0, 0]
    assert [out["v1_memcgs"][str(i)]["kmem_watermark"] for i in (0, 1, 2)] == [3, 3, 3]
    assert out["short_uncharges"] == 0
    # memory: 64 charged, 59 stocked after the hits, 5 released directly
    assert out["memcgs"]["2"]["usage"] == 59
    assert out["memcgs"]["1"]["usage"] == 59


def test_kmem_counter_holds_at_each_level_until_uncharged():
    """After charge 2 kmem + charge 1 kmem the kmem counter is 3 at memcg 2, at memcg 1
    and at the root (page_counter_charge walks every level); uncharge 1 kmem
    (obj_cgroup_uncharge_pages: memcg1_account_kmem(-1), then refill_stock) leaves 2."""
    out = run("charge 0 2 2 kmem\ncharge 0 2 1 kmem\n", cgroup_version=1)
    assert kmem_usage(out) == [3, 3, 3]
    out = run("charge 0 2 2 kmem\ncharge 0 2 1 kmem\nuncharge 0 2 1 kmem\n",
              cgroup_version=1)
    assert kmem_usage(out) == [2, 2, 2]
    assert out["v1_counters"]["kmem_walks"] == 3
    # the page went to the memcg stock: 61 stocked after the charges, 62 now
    assert out["stocks"][0][0] == [2, 62]


def test_uncharging_more_kmem_than_held_clips_and_counts():
    """The brief's case: three kmem pages held, ``uncharge_direct 3 kmem=1``: one kmem
    page is released, the two user pages asked for are not held (all three held pages
    are kmem), so they are clipped into short_uncharges; the direct walk is of 1 page."""
    out = run("charge 0 2 1 kmem\ncharge 0 2 1 kmem\ncharge 0 2 1 kmem\n"
              "uncharge_direct 0 2 3 kmem=1\n", cgroup_version=1)
    assert out["short_uncharges"] == 2
    assert kmem_usage(out) == [2, 2, 2]
    assert out["v1_counters"]["kmem_walks"] == 4
    # a plain uncharge cannot release kmem pages; uncharge kmem beyond them clips
    out = run("charge 0 2 2 kmem\nuncharge 0 2 2\nuncharge 0 2 3 kmem\n", cgroup_version=1)
    assert out["short_uncharges"] == 2 + 1
    assert kmem_usage(out) == [0, 0, 0]
    assert out["v1_counters"]["kmem_walks"] == 2


def test_v2_and_the_root_ignore_the_word():
    body = ("charge 0 2 1 kmem\ncharge 0 1 3 kmem irq\nuncharge 0 2 1 kmem\n"
            "uncharge_direct 0 1 3 kmem=2\nuncharge 0 0 4 kmem\nuncharge_direct 0 0 2 kmem=1\n")
    plain = body.replace(" kmem=2", "").replace(" kmem=1", "").replace(" kmem", "")
    for model in ("multi", "single", "pcstock"):
        assert dumps(run(body, model=model)) == dumps(run(plain, model=model))
    v1 = run(body, cgroup_version=1)
    assert v1["v1_counters"]["kmem_walks"] == 4  # the root's two never walk


def test_invariant_counts_held_kmem_pages():
    """--check: kmem(M) = MEMCG_KMEM(M) + held kmem pages(M) + children; breaking the
    kmem counter behind the replay's back is found."""
    r = Replayer(1, check=True, cgroup_version=1)
    r.run(parse_text(HEAD + "charge 0 2 3 kmem\n"))
    assert conservation_violation(r.machine, r.held, r.held_kmem) is None
    r.machine.memcgs[2].kmem_counter.usage += 1
    problem = conservation_violation(r.machine, r.held, r.held_kmem)
    # creation order: the root still adds up (3 = children 3), memcg 1 (3) does not
    assert problem == "memcg 1: kmem counter 3 != MEMCG_KMEM 0 + children 4"
    r.machine.memcgs[2].kmem_counter.usage -= 2
    problem = conservation_violation(r.machine, r.held, r.held_kmem)
    assert problem == "memcg 1: kmem counter 3 != MEMCG_KMEM 0 + children 2"
    r.machine.memcgs[1].kmem_counter.usage -= 1
    problem = conservation_violation(r.machine, r.held, r.held_kmem)
    assert problem.startswith("memcg 0:")
    r.machine.memcgs[0].kmem_counter.usage -= 1
    problem = conservation_violation(r.machine, r.held, r.held_kmem)
    assert problem == "memcg 2: kmem counter 2 != MEMCG_KMEM 0 + held kmem pages 3 + children 0"


def test_syntax_errors_name_the_line_and_what_is_valid():
    for bad, what in (("uncharge_direct 0 2 3 kmem=4", "kmem=4 exceeds NR 3"),
                      ("uncharge_direct 0 2 3 kmem", "expected kmem=K"),
                      ("charge 0 2 3 kmem=1", "takes no value"),
                      ("charge 0 2 3 irq kmem", r"NR \[kmem\] \[irq\] \[nested\]"),
                      ("charge 0 2 3 kmem kmem", "right after NR"),
                      ("obj_charge 0 2 3 kmem", "valid only on charge"),
                      ("drain_all 0 2 kmem", "valid only on charge")):
        with pytest.raises(TraceError, match=what) as info:
            parse_text(HEAD + bad + "\n", "t")
        assert info.value.line == 5
    ops = make_ops([(OP_CHARGE, 0, 1, 3)], kmem=2)
    with pytest.raises(TraceError, match="must be 0 or NR 3"):
        validate(Trace(1, ops))


def test_writer_round_trips_the_word():
    text = HEAD + ("charge 0 2 3 kmem irq nested\nuncharge 0 2 1 kmem\n"
                   "uncharge_direct 0 2 2 kmem=1 irq\nuncharge_direct 0 2 2\n")
    t = parse_text(text)
    assert to_text(t) == text
    assert t.ops["kmem"].tolist() == [0, 0, 3, 1, 1, 0]
