"""Random's priced advantage over LRU on hand-made event counts, where the answer is known."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from memcglab.events import EVENT_NAMES
from memcglab.hardware import load_profile
from memcglab.stats.verdicts import verdict_lru_random_rules
from memcglab.studies.s02_policy_and_slots import pricing as pp
from memcglab.uncertainty import CoefficientTable

PROFILE = load_profile("seed000-72cpu")
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
    other = _typ("other_cycles_per_packet")
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


def _interval(low: float, high: float, sources=("parameters", "alternatives", "seeds")):
    return SimpleNamespace(median=(low + high) / 2, low=low, high=high, coverage=0.9,
                           sources=frozenset(sources),
                           as_claim_columns=lambda: {"p_holds": 0.5, "driver": "x",
                                                     "break_even": "none"})


def test_rules_verdict_per_mix():
    v = verdict_lru_random_rules({"netperf": _interval(0.02, 0.5), "zipf": _interval(1.2, 2.5),
                                  "uniform": _interval(0.5, 2.0),
                                  "bursty": _interval(1.2, 2.5, sources=("seeds",))})
    assert v.set_index("mix")["verdict"].to_dict() == {
        "netperf": "refuted", "zipf": "reproduced", "uniform": "undetermined",
        "bursty": "undetermined"}
    assert (v["claim_low_pct"] == 1.0).all() and (v["claim_high_pct"] == 3.0).all()
