"""The profile's events (memcglab.events.PROFILE_EVENT_NAMES), hand-worked per CPU and memcg.

The trace, on two CPUs with memcg 2 below memcg 1 (every walk visits 3 counters):
``charge 0 2 3`` calls try_charge_memcg on CPU 0 (one page_counter_try_charge walk of
the batch, then refill_stock of 61 pages); ``uncharge 1 2 3`` calls refill_stock on
CPU 1; ``drain_all 0 1`` drains one slot on each CPU (drain_stock, and one
page_counter_uncharge walk each, run on the slot's CPU); ``obj_charge 0 2 100`` calls
obj_cgroup_charge, misses, charges a page through try_charge_memcg (a walk and a
refill_stock on CPU 0) and refills the 3996-byte remainder; ``obj_uncharge 1 2 100``
refills CPU 1's obj stock (no page to flush).
"""

from __future__ import annotations

from memcglab.engine import replay_compiled
from memcglab.events import ALL_EVENT_NAMES, EVENT_NAMES, PROFILE_EVENT_NAMES
from memcglab.replay import replay
from memcglab.trace import parse_text

TRACE = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncgroup 2 1\ncharge 0 2 3\n"
                   "uncharge 1 2 3\ndrain_all 0 1\nobj_charge 0 2 100\nobj_uncharge 1 2 100\n")

#: event -> (per CPU, per dense memcg: root, 1, 2)
WANT = {
    "try_charge_memcg": ([2, 0], [0, 0, 2]),
    "page_counter_try_charge": ([2, 0], [0, 0, 2]),
    "page_counter_try_charge_levels": ([6, 0], [0, 0, 6]),
    "page_counter_uncharge": ([1, 1], [0, 0, 2]),
    "page_counter_uncharge_levels": ([3, 3], [0, 0, 6]),
    "refill_stock": ([2, 1], [0, 0, 3]),
    "drain_stock": ([1, 1], [0, 0, 2]),
    "obj_cgroup_charge": ([1, 0], [0, 0, 1]),
    "obj_cgroup_uncharge": ([0, 1], [0, 0, 1]),
    "obj_hits": ([0, 0], [0, 0, 0]),
    "obj_misses": ([1, 0], [0, 0, 1]),
    "obj_refills": ([1, 1], [0, 0, 2]),
    "obj_drains": ([0, 0], [0, 0, 0]),
    "obj_evictions": ([0, 0], [0, 0, 0]),
    "obj_flushes": ([0, 0], [0, 0, 0]),
    "obj_charges": ([1, 0], [0, 0, 1]),
    "obj_uncharges": ([0, 1], [0, 0, 1]),
}


def test_profile_events_per_cpu_and_memcg() -> None:
    _, ev = replay_compiled(TRACE, "multi", events=True)
    got = {n: (ev.per_cpu[n].tolist(), ev.per_memcg[n].tolist()) for n in PROFILE_EVENT_NAMES}
    assert got == WANT
    assert set(ev.per_cpu) == set(ALL_EVENT_NAMES) == set(EVENT_NAMES) | set(WANT)
    assert ev.profile_totals()["page_counter_uncharge"] == 2


def test_the_faithful_replay_counts_the_same_calls() -> None:
    counts: dict[str, int] = {}
    replay(TRACE, "multi", counts=counts)
    for name, (per_cpu, _) in WANT.items():
        if name in counts:
            assert counts[name] == sum(per_cpu), name
    assert counts["charges"] == 1 and counts["uncharges"] == 1 and counts["obj_uncharges"] == 1
