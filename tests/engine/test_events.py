"""ChargeEvents from the compiled engine: hand-worked counts and consistency with the JSON."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.engine import replay_compiled
from memcglab.events import EVENT_NAMES
from memcglab.trace import parse_text

from .tracegen import MODELS, random_trace, without_nested


def test_hand_worked_multi_events():
    # cpu 0: charge 3 (miss, 7 slots read, a 2-level walk, refill 61 into slot 0 after
    # reading 7 slots: one css_get); charge 3 again (slot 0 found first: a hit).
    # cpu 1: uncharge 6 (7 slots read, slot 0: css_get). drain_all of the root from
    # cpu 0: both CPUs drained (css_put each), cpu 1's walk writes usages cpu 0 wrote
    # last: two cacheline transfers, one per level.
    t = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 3\ncharge 0 1 3\n"
                   "uncharge 1 1 6\ndrain_all 0 0\n")
    r, ev = replay_compiled(t, events=True)
    cpu = {n: ev.per_cpu[n].tolist() for n in EVENT_NAMES}
    mem = {n: ev.per_memcg[n].tolist() for n in EVENT_NAMES}
    assert ev.memcg_ids.tolist() == [0, 1]
    assert cpu["charges"] == [2, 0] and cpu["uncharges"] == [0, 1]
    assert cpu["stock_hits"] == [1, 0] and cpu["miss_absent"] == [1, 0]
    assert cpu["slots_scanned"] == [15, 7]
    assert cpu["walks"] == [2, 1] and cpu["walk_levels"] == [4, 2]
    assert cpu["drains"] == [1, 1] and cpu["css_ref_ops"] == [2, 2]
    assert cpu["usage_transfers"] == [0, 2] and mem["usage_transfers"] == [1, 1]
    assert mem["walks"] == [0, 3] and cpu["evictions"] == [0, 0]
    assert r["counters"] == {"walks": 3, "stock_hits": 1, "evictions": 0}


def test_hand_worked_pcstock_and_lru_events():
    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 70\ncharge 0 1 1\n"
                   "charge 0 1 1 nested\n")
    _, ev = replay_compiled(t, "pcstock", events=True)
    # 70 pages: empty stock (absent), one walk of max(64, 70) = 70 and no surplus; 1 page:
    # still empty (absent), a walk of 64, 63 stocked; nested: bypass, a walk of 64 and
    # a direct uncharge walk of the 63 surplus (the trylock fails again).
    assert ev.totals()["miss_absent"] == 2 and ev.totals()["miss_bypass"] == 1
    assert ev.totals()["walks"] == 4 and ev.totals()["slots_scanned"] == 2
    t2 = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\n"
                    "charge 0 1 1\ncharge 0 2 1\ncharge 0 1 1\ncharge 0 3 1\n")
    _, ev2 = replay_compiled(t2, "multi-lru", slots=2, events=True)
    # inserts of 1, 2, 3 and the hit on 1: four slots made most recent; one eviction of 2
    assert ev2.totals()["lru_writes"] == 4
    assert ev2.per_memcg["evictions"].tolist() == [0, 0, 1, 0]


@pytest.mark.parametrize("model", MODELS)
def test_event_totals_agree_with_the_contract_counters(model):
    for number in range(30):
        trace = random_trace(number)
        if model == "single":
            trace = without_nested(trace)
        plain = replay_compiled(trace, model, 2, number)
        r, ev = replay_compiled(trace, model, 2, number, events=True)
        assert r == plain
        totals = ev.totals()
        assert totals["walks"] == r["counters"]["walks"]
        assert totals["stock_hits"] == r["counters"]["stock_hits"]
        assert totals["evictions"] == r["counters"]["evictions"]
        assert totals["failed_charges"] == r["failed_charges"]
        for name in EVENT_NAMES:
            assert int(ev.per_memcg[name].sum()) == totals[name], name
        charges = int(np.count_nonzero(trace.ops["op"] == 1))
        assert totals["charges"] == charges
        assert totals["stock_hits"] + totals["miss_absent"] + totals["miss_short"] \
            + totals["miss_bypass"] >= charges
        if model != "multi-lru":
            assert totals["lru_writes"] == 0
        if model in ("pcstock", "pcstock-v4"):
            assert totals["css_ref_ops"] == 0 and totals["evictions"] == 0
        if model == "pcstock-v4":  # no lock and no size cap: never a bypass
            assert totals["miss_bypass"] == 0
            assert totals["slots_scanned"] == totals["stock_hits"] + totals["miss_absent"] \
                + totals["miss_short"]


def test_hand_worked_pcstock_v4_events():
    # cpu 0: 3 pages (empty stock: absent; a 2-level walk of 64, 61 stocked), 3 pages
    # (a hit), 70 pages (58 left: short; one walk of 70). cpu 1: uncharge 6 (a walk,
    # whose two levels cpu 0 wrote last). drain_all from cpu 1: cpu 0's 58 pages are
    # taken by atomic_xchg on cpu 1 (one drain and one walk, counted on cpu 1).
    t = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 3\ncharge 0 1 3\n"
                   "charge 0 1 70\nuncharge 1 1 6\ndrain_all 1 1\n")
    r, ev = replay_compiled(t, "pcstock-v4", events=True)
    cpu = {n: ev.per_cpu[n].tolist() for n in EVENT_NAMES}
    assert cpu["slots_scanned"] == [3, 0] and cpu["stock_hits"] == [1, 0]
    assert cpu["miss_absent"] == [1, 0] and cpu["miss_short"] == [1, 0]
    assert cpu["walks"] == [2, 2] and cpu["walk_levels"] == [4, 4]
    assert cpu["drains"] == [0, 1] and cpu["usage_transfers"] == [0, 2]
    assert ev.per_memcg["walks"].tolist() == [0, 4]
    assert r["counters"] == {"walks": 4, "stock_hits": 1, "evictions": 0}
    assert r["stocks"] == [{}, {}] and r["memcgs"]["1"]["usage"] == 70


@pytest.mark.parametrize("model", ["pcstock", "pcstock-v4"])
def test_per_memcg_walks_and_drains_agree_with_the_faithful_event_log(model):
    # The faithful port logs each walk with its memcg and each drained stock: the
    # engine's per-memcg counts must be the same numbers.
    from memcglab.kernel.observer import Observer
    from memcglab.replay import replay

    for number in range(40):
        trace = random_trace(number, batch=8, bursts=True)
        obs = Observer(log=[])
        replay(trace, model, batch=8, observer=obs)
        _, ev = replay_compiled(trace, model, batch=8, events=True)
        ids = ev.memcg_ids.tolist()
        walked = [sum(1 for e in obs.log if e[0] == "walk" and e[1] == i) for i in ids]
        assert ev.per_memcg["walks"].tolist() == walked, number
        if model == "pcstock-v4":
            drained = [sum(1 for e in obs.log if e[0] == "drain" and e[2] == i) for i in ids]
            assert ev.per_memcg["drains"].tolist() == drained, number
            hits = [sum(1 for e in obs.log if e[0] == "hit" and e[2] == i) for i in ids]
            assert ev.per_memcg["stock_hits"].tolist() == hits, number


def test_events_need_events_true():
    from memcglab.engine import Engine

    engine = Engine(1)
    with pytest.raises(ValueError, match="events=True"):
        engine.events()
