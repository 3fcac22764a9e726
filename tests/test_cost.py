"""The cost model: hand-priced scenarios, linearity, breakdowns, throughput."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.cost import (
    PRICES,
    CostParams,
    breakdown,
    coefficients,
    cycles_per_op,
    default_scan_lines,
    event_counts,
    throughput,
)
from memcglab.events import EVENT_NAMES, ChargeEvents


def _events(**counts: int) -> ChargeEvents:
    ev = ChargeEvents.zeros(ncpus=2, nmemcgs=2)
    for name, n in counts.items():
        ev.per_cpu[name][0] = n
    return ev


# Single stock, alternating memcgs: 4 charges, all miss; each miss walks 3 levels,
# the usage line comes from another CPU at 2 of them; each refill evicts the other
# memcg (drain: an uncharge walk of 3 levels) and swaps css references.
SWITCHING = dict(charges=4, miss_absent=4, walks=8, walk_levels=24, usage_transfers=8,
                 drains=4, evictions=4, css_ref_ops=8, slots_scanned=8)


def test_switching_scenario_priced_by_hand():
    p = CostParams()
    lookups = 4 + 4  # the charge's consume_stock, and the refill after each miss
    total = (4 * p.call                         # charges
             + lookups * (p.stock_lock + 1 * p.l1_hit)
             + 4 * 2 * p.call                   # misses: try_charge + refill_stock
             + 8 * p.call                       # walks
             + 24 * (p.atomic_rmw + p.l1_hit)   # walk levels
             + 8 * p.c2c_transfer
             + 4 * (p.call + p.percpu_rmw)      # drains
             + 4 * (p.random_u32 + 2 * p.percpu_rmw)  # evictions
             + 8 * p.percpu_rmw                 # css refs
             + 8 * p.slot_compare)
    got = cycles_per_op(_events(**SWITCHING), p, slots=1)
    assert got == pytest.approx(total / 4)
    # with the default figures: a number a reader can check with a pencil
    assert got == pytest.approx(639.0)


def test_hits_only_cost_a_lookup_and_a_write():
    p = CostParams()
    ev = _events(charges=7, stock_hits=7, slots_scanned=7 * 7)
    assert cycles_per_op(ev, p, slots=7) == pytest.approx(
        p.call + p.stock_lock + p.l1_hit + 7 * p.slot_compare + p.percpu_rmw)
    # two lines per lookup when the slots straddle lines
    assert cycles_per_op(ev, p, lines_per_scan=2) - cycles_per_op(ev, p, lines_per_scan=1) == \
        pytest.approx(p.l1_hit)


def test_per_counts_operations_by_the_named_event():
    ev = _events(charges=10, uncharges=20, stock_hits=10)
    assert cycles_per_op(ev, per="uncharges") == pytest.approx(cycles_per_op(ev) / 2)
    with pytest.raises(ValueError, match="per='packets'"):
        cycles_per_op(ev, per="packets")
    with pytest.raises(ValueError, match="no such events were counted"):
        cycles_per_op(ev, per="walks")


def test_default_scan_lines_rule():
    assert [default_scan_lines(s) for s in (1, 6, 7, 8, 13, 14, 15, 16)] == \
        [1, 1, 1, 2, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="slots=0: must be between 1 and 255"):
        default_scan_lines(0)


def test_event_counts_accepts_a_mapping_and_names_what_is_missing():
    counts = dict.fromkeys(EVENT_NAMES, 0) | {"charges": 3, "miss_short": 1, "uncharges": 2}
    assert event_counts(counts)["lookups"] == 6
    del counts["walks"]
    with pytest.raises(ValueError, match="event counts lack walks"):
        event_counts(counts)


def test_every_event_has_a_price_and_prices_name_real_parameters():
    assert set(EVENT_NAMES) <= set(PRICES)
    for mix in PRICES.values():
        assert set(mix) <= set(CostParams.names())


def test_failed_charges_cost_nothing_reclaim_is_outside_the_model():
    base = _events(charges=5, stock_hits=5)
    assert cycles_per_op(_events(charges=5, stock_hits=5, failed_charges=3)) == \
        cycles_per_op(base)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 10_000), min_size=len(EVENT_NAMES),
                       max_size=len(EVENT_NAMES)),
       costs=st.lists(st.floats(0, 1000), min_size=8, max_size=8),
       k=st.floats(0.1, 10))
def test_linear_in_parameters_and_breakdowns_sum_to_the_total(counts, costs, k):
    c = dict(zip(EVENT_NAMES, counts, strict=True))
    c["charges"] += 1
    p = CostParams().from_vector(costs)
    total = cycles_per_op(c, p)
    assert cycles_per_op(c, p.scaled(k)) == pytest.approx(k * total, rel=1e-9, abs=1e-9)
    assert float(coefficients(c) @ p.to_vector()) == pytest.approx(total, rel=1e-9, abs=1e-9)
    for by in ("event", "parameter"):
        b = breakdown({"x": c}, p, by=by)
        assert b["cycles"].sum() == pytest.approx(total, rel=1e-9, abs=1e-6)
        assert (b["cycles"] >= 0).all()


def test_breakdown_is_tidy_and_shows_where_the_multi_stock_saves():
    single = _events(**SWITCHING)
    multi = _events(charges=4, stock_hits=4, slots_scanned=28)
    b = breakdown({"single": single, "multi": multi}, slots={"single": 1, "multi": 7})
    assert list(b.columns) == ["config", "component", "cycles"]
    wide = b.pivot(index="component", columns="config", values="cycles")
    assert wide.loc["usage_transfers", "single"] == pytest.approx(2 * 150.0)
    assert wide.loc["usage_transfers", "multi"] == 0.0
    assert wide["multi"].sum() < wide["single"].sum()
    by_param = breakdown({"single": single}, slots=1, by="parameter")
    assert set(by_param["component"]) == set(CostParams.names())
    with pytest.raises(ValueError, match="by='cpu'"):
        breakdown({"single": single}, by="cpu")


def test_params_validate_and_round_trip():
    with pytest.raises(ValueError, match="c2c_transfer=-1: must be a finite number of cycles"):
        CostParams(c2c_transfer=-1)
    with pytest.raises(ValueError, match="atomic_rmw=nan"):
        CostParams(atomic_rmw=float("nan"))
    p = CostParams()
    assert p.from_vector(p.to_vector()) == p
    q = p.from_vector([1.0, 2.0], ["l1_hit", "call"])
    assert (q.l1_hit, q.call, q.atomic_rmw) == (1.0, 2.0, p.atomic_rmw)
    with pytest.raises(ValueError, match="unknown parameters \\['cache_miss'\\]"):
        p.from_vector([1.0], ["cache_miss"])
    with pytest.raises(ValueError, match="2 values for 1 names"):
        p.from_vector([1.0, 2.0], ["l1_hit"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.l1_hit = 3.0  # type: ignore[misc]


def test_throughput():
    assert throughput(100.0, 900.0, cpu_hz=2e9, cpus=4) == pytest.approx(8e6)
    t = throughput(np.array([0.0, 1000.0]), 1000.0, cpu_hz=1e9, cpus=1)
    assert t.tolist() == [1e6, 5e5]
    with pytest.raises(ValueError, match="cpu_hz=0"):
        throughput(1.0, 1.0, cpu_hz=0, cpus=1)
    with pytest.raises(ValueError, match="must be > 0 per operation"):
        throughput(0.0, 0.0, cpu_hz=1e9, cpus=1)
