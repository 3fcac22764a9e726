"""Random's priced advantage over LRU on hand-made event counts, where the answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memcglab.events import EVENT_NAMES
from memcglab.hardware import load_profile
from memcglab.studies.s02_policy_and_slots import pricing as pp
from memcglab.uncertainty import CoefficientTable

PROFILE = load_profile("butt-netperf-72cpu")
ALTS = {"placement": ("spread",), "release": ("task",)}


def _totals(walks: int, writes: int, evictions: int = 0) -> dict[str, int]:
    t = {n: 0 for n in EVENT_NAMES}
    t.update(charges=1000, uncharges=1000, stock_hits=1000 - walks, miss_absent=walks,
             walks=walks, walk_levels=2 * walks, slots_scanned=4000, lru_writes=writes,
             evictions=evictions)
    return t


def _runs(lru_walks: int = 50, evictions: int = 0) -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for pol, t in (("random", _totals(100, 0, evictions)),
                       ("lru", _totals(lru_walks, 2000, evictions))):
            rows.append({"policy": pol, "slots": 7, "seed": seed, "placement": "spread",
                         "release": "task", **{f"ev_{k}": v for k, v in t.items()}})
    return pd.DataFrame(rows)


def _typ(name: str) -> float:
    return PROFILE.priors[name].typical


_SAVED = (3 * _typ("call") + 2 * (_typ("atomic_rmw") + _typ("l1_hit")) + _typ("stock_lock")
          + _typ("l1_hit"))


def test_the_advantage_is_the_cycle_difference_over_the_whole_packet():
    space = pp.pricing_space(PROFILE, ALTS, seeds=[0, 1])
    d = space.at({"recency_layout": "after cached[]"})
    fn = pp.advantage_fn(_runs(), pp.FACTORS["netperf"])
    # LRU: 50 fewer walks and misses per 1000 charges (three calls, two atomic levels and
    # the refill's second lookup each) but 50 more hits (a write each); 2 recency writes
    # per charge, each touching one more line
    saved = 0.05 * (_SAVED - _typ("percpu_rmw"))
    extra = 2 * (_typ("percpu_rmw") + _typ("l1_hit"))
    rand = CoefficientTable.from_frame(
        pp.coefficient_frame(_runs(), "random", pp.FACTORS["netperf"]), pp.FACTORS["netperf"])
    c_rand = float(rand.cycles(d)[0])
    other = space["other_cycles"].typical  # the published throughput's constraint
    expect = 100 * ((c_rand + extra - saved + other) / (c_rand + other) - 1)
    assert float(fn(d)[0]) == pytest.approx(expect)


def test_lru_does_not_draw_a_random_number_but_compares_every_stamp():
    runs = _runs(lru_walks=100, evictions=100)
    f = pp.coefficient_frame(runs, "lru", pp.FACTORS["netperf"], layout=None)
    g = pp.coefficient_frame(runs, "random", pp.FACTORS["netperf"])
    assert (f["random_u32"] == 0).all() and (g["random_u32"] == 0.1).all()
    np.testing.assert_allclose(f["slot_compare"] - g["slot_compare"], 7 * 0.1)


def test_break_even_of_a_recency_write():
    be = pp.recency_break_even(_runs(), "netperf", PROFILE, ALTS, seeds=[0, 1])
    # 2 writes + 0.05 more hits, each percpu_rmw, against 0.05 walks' worth of savings
    assert be["writes only"].value == pytest.approx(0.05 * _SAVED / 2.05, abs=1e-6)
    assert be["writes only"].at_free < 0 < be["writes only"].at_high
    # with the extra line LRU would need a write cheaper than free: no crossing >= 0
    for lay in ("after cached[]", "beside nr_pages[]"):
        assert be[lay].value is None and be[lay].at_free > 0
        assert be[lay].describe().startswith("none in 0-20 cycles (random ahead by +")


def test_price_mix_carries_every_source_of_uncertainty():
    alts = {"placement": ("spread", "random"), "release": ("task",)}
    runs = pd.concat([_runs(), _runs().assign(placement="random")], ignore_index=True)
    res = pp.price_mix(runs, "netperf", PROFILE, alts, seeds=[0, 1], n=64)
    assert res.sources == {"parameters", "alternatives", "seeds"}
    assert res.low < res.median < res.high and res.unit == "%"
    with pytest.raises(ValueError, match="workload='tpcc': must be one of netperf"):
        pp.price_mix(runs, "tpcc", PROFILE, alts, seeds=[0, 1])


def test_missing_policy_is_named():
    with pytest.raises(ValueError, match="no replay of policy='lru'"):
        pp.coefficient_frame(_runs().query("policy == 'random'"), "lru", ("seed",))


def test_the_claims_band_is_reached_at_a_recency_write_cost_past_the_prior():
    runs = _runs()
    ends = {t: pp.recency_break_even(runs, "netperf", PROFILE, ALTS, seeds=[0, 1],
                                     high=pp.CLAIM_SEARCH_HIGH, threshold=t)
            for t in pp.CLAIM_BAND}
    one, three = (ends[t]["after cached[]"].value for t in pp.CLAIM_BAND)
    if one is not None and three is not None:
        assert one < three  # more cost per write, more of random's advantage
        assert three > PROFILE.priors["percpu_rmw"].high


def test_other_cycles_is_set_by_the_data_not_the_wide_prior():
    from memcglab.studies.common.constraints import other_cycles_for

    other = pp.pricing_priors(PROFILE)[-1]
    wide = PROFILE.priors["other_cycles_per_packet"]
    assert other.name == "other_cycles" and other.high < wide.high
    assert other == other_cycles_for(PROFILE, "netperf_rx", wide)
    assert other.source.startswith(("development-set calibration", "memcg: multi-memcg"))


def test_the_pricing_core_prices_the_lone_flow_as_its_cpu_ratio():
    """Differential: the core's lone flow on one CPU against the ratio of CPU time."""
    space = pp.pricing_space(PROFILE, ALTS, seeds=[0, 1])
    d = space.sample(64)
    runs, factors = _runs(), pp.FACTORS["netperf"]
    rand = CoefficientTable.from_frame(pp.coefficient_frame(runs, "random", factors), factors)
    lru = [CoefficientTable.from_frame(pp.coefficient_frame(runs, "lru", factors, lay), factors)
           for lay in pp.RECENCY_LAYOUT.options]
    which = d.index[pp.RECENCY_LAYOUT.name]
    cl = np.stack([t.cycles(d) for t in lru])[which, np.arange(d.n)]
    other = np.asarray(d["other_cycles"], dtype=float)
    want = 100.0 * ((cl + other) / (rand.cycles(d) + other) - 1.0)
    np.testing.assert_allclose(pp.advantage_fn(runs, factors)(d), want, rtol=1e-12, atol=1e-12)
