"""One replay measured and priced: the rows every study table is made of."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.cost import CostParams, cycles_per_op
from memcglab.engine import replay_compiled
from memcglab.events import EVENT_NAMES, ChargeEvents
from memcglab.studies.common.measure import (
    lookup_slots,
    measure,
    metrics,
    price,
    scan_lines,
    totals_between,
    trial_counts,
)
from memcglab.trace import parse_text

counts = st.fixed_dictionaries({n: st.integers(0, 10**6) for n in EVENT_NAMES}).map(
    lambda d: d | {"charges": d["charges"] + 1})
costs = st.builds(CostParams, **{n: st.floats(0, 500) for n in CostParams.names()})


@settings(max_examples=60, deadline=None)
@given(counts, st.sampled_from([1, 2, 3]), st.integers(1, 16), costs)
def test_price_is_the_cost_model(totals, lines, slots, params):
    expect = cycles_per_op(totals, params, lines_per_scan=lines, slots=slots)
    assert price(totals, lines, slots, params) == pytest.approx(expect, rel=1e-9, abs=1e-9)


TRACE = """memcglab-trace 1
cpus 2
cgroup 1 0
cgroup 5 1
charge 0 5 1
charge 0 5 1
charge 1 5 1
uncharge 1 5 1
"""


def test_metrics_of_a_hand_worked_trace():
    # cpu 0: a miss (walk, 63 stocked) then a hit; cpu 1: a miss (walk), then the
    # uncharge goes to cpu 1's stock.
    row = measure(parse_text(TRACE), "multi", slots=7)
    assert row["charges"] == 3
    assert row["walks_per_op"] == pytest.approx(2 / 3)
    assert row["walks_per_1000"] == pytest.approx(2000 / 3)
    assert row["hit_rate"] == pytest.approx(1 / 3)
    assert row["walk_levels_per_op"] == pytest.approx(6 / 3)  # memcg 5, memcg 1 and the root
    assert row["evictions_per_op"] == 0.0 and row["lru_writes_per_op"] == 0.0
    _, ev = replay_compiled(parse_text(TRACE), model="multi", events=True)
    assert row["cycles_per_op"] == pytest.approx(cycles_per_op(ev, lines_per_scan=1))


def test_single_and_pcstock_do_not_scan_slots():
    assert lookup_slots("single", 7) == lookup_slots("pcstock", 64) == 1
    assert lookup_slots("multi-rr", 9) == 9
    one = measure(parse_text(TRACE), "single", slots=1)
    assert measure(parse_text(TRACE), "single", slots=12) == one
    with pytest.raises(ValueError, match="model='lifo': unknown; valid: single"):
        lookup_slots("lifo", 7)


def test_scan_lines_grow_with_slots():
    lines = [scan_lines(s) for s in range(1, 33)]
    assert lines[0] == 1 and lines == sorted(lines) and lines[-1] > 1


def test_totals_between_two_moments_of_a_replay():
    ev = ChargeEvents.zeros(2, 1)
    ev.per_cpu["walks"][:] = [3, 4]
    got = totals_between({"walks": 5}, ev)
    assert got["walks"] == 2 and set(got) == set(EVENT_NAMES)


def test_no_charges_is_a_clear_error():
    zero = {n: 0 for n in EVENT_NAMES}
    with pytest.raises(ValueError, match="no charges"):
        metrics(zero, "multi")
    with pytest.raises(ValueError, match="no charges"):
        price(zero, 1, 7)


@pytest.mark.parametrize("model", ["multi", "pcstock", "pcstock-v4"])
def test_trial_counts_add_up_to_the_whole_replay(model):
    from memcglab.workloads import MadviseFaultSpec, madvise_fault

    spec = MadviseFaultSpec(cpus=4, cgroups=3, region_pages=16, iterations=2, trials=3)
    per_trial = list(trial_counts(spec, model))
    whole = replay_compiled(madvise_fault(spec), model=model, events=True)[1].totals()
    assert len(per_trial) == 3 and all(t["charges"] > 0 for t in per_trial)
    for name in EVENT_NAMES:  # the cgroup lines before the first trial count no events
        assert sum(t[name] for t in per_trial) == whole[name]
