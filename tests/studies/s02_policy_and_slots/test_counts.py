"""Study 2's exact counts: sliding-window distinct memcgs, per CPU, against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.studies import check_counts
from memcglab.studies.s02_policy_and_slots import counts as pc
from memcglab.trace import OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, Trace, make_ops


@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 12))
def test_window_distinct_is_the_brute_force_count(values, window):
    v = np.array(values, dtype=np.int64)
    expect = [len(set(values[i - window + 1:i + 1])) for i in range(window - 1, len(values))]
    assert pc.window_distinct(v, window).tolist() == expect


@pytest.mark.parametrize("window", [0, -3, 2.5, True])
def test_window_must_be_a_positive_integer(window):
    with pytest.raises(ValueError, match=f"window={window!r}: must be an integer >= 1"):
        pc.window_distinct(np.arange(5), window)


def _trace(rows) -> Trace:
    return Trace(cpus=2, ops=make_ops(rows))


def test_active_windows_per_cpu_count_stock_operations_only():
    # CPU 0 cycles through memcgs 1..4; CPU 1 sees memcg 1 and a direct uncharge of 9,
    # which bypasses the stock
    rows = [(OP_CHARGE, 0, m, 1) for m in (1, 2, 3, 4, 1, 2)]
    rows += [(OP_UNCHARGE, 1, 1, 1), (OP_UNCHARGE_DIRECT, 1, 9, 1), (OP_CHARGE, 1, 1, 1)]
    t = pc.active_windows(_trace(rows), windows=(2, 4), slots=2)
    cpu0 = t[t["cpu"] == 0].set_index("window")
    assert cpu0.loc[4, "windows"] == 3 and cpu0.loc[4, "over"] == 3
    assert cpu0.loc[4, "max_active"] == 4 and cpu0.loc[2, "over"] == 0
    cpu1 = t[t["cpu"] == 1].set_index("window")
    assert cpu1.loc[2, "max_active"] == 1 and cpu1.loc[4, "windows"] == 0
    s = pc.active_summary(t)
    row = s.set_index("window").loc[4]
    assert row["over_pct"] == 100.0 and row["cpu_windows_over"] == 1


def test_active_windows_refuse_a_bad_slot_count():
    with pytest.raises(ValueError, match="slots=0: each must be between 1 and 255"):
        pc.active_windows(_trace([(OP_CHARGE, 0, 1, 1)]), (4,), 0)


def test_active_windows_over_several_slot_counts():
    rows = [(OP_CHARGE, 0, m, 1) for m in (1, 2, 3, 4, 1, 2)]
    t = pc.active_windows(_trace(rows), windows=(4,), slots=range(1, 5))
    assert t.set_index("slots")["over"].to_dict() == {1: 3, 2: 3, 3: 3, 4: 0}


def _runs() -> pd.DataFrame:
    base = {"ev_charges": 1000, "ev_walks": 50, "ev_evictions": 10, "ev_stock_hits": 950,
            "ev_lru_writes": 0}
    rows = []
    for pol, writes in (("random", 0), ("lru", 2040)):
        rows.append({"workload": "netperf", "mix": "netperf", "active": np.nan, "slots": 7,
                     "policy": pol, "default": True, **base, "ev_lru_writes": writes})
        rows.append({"workload": "netperf", "mix": "netperf", "active": np.nan, "slots": 7,
                     "policy": pol, "default": False, **base, "ev_walks": 999})
        for active in (4, 12):
            rows.append({"workload": "synthetic", "mix": "zipf", "active": active, "slots": 7,
                         "policy": pol, "default": True, **base,
                         "ev_walks": 10 * active, "ev_lru_writes": writes})
    return pd.DataFrame(rows)


def test_event_counts_keep_the_default_alternative_and_the_overflowing_mixes():
    ev = pc.event_counts(_runs()).set_index(["mix", "policy", "slots"])
    assert ev.loc[("netperf", "lru", 7), "walks_per_1000"] == 50.0
    assert ev.loc[("netperf", "lru", 7), "recency_writes_per_charge"] == 2.04
    assert ev.loc[("zipf", "random", 7), "walks_per_1000"] == 120.0  # active 12 only
    assert ev.loc[("zipf", "random", 7), "replays"] == 1


def test_count_rows_put_the_windows_first():
    active = pd.DataFrame({"window": [64], "slots": [7], "windows": [1000], "over": [3],
                           "over_pct": [0.3], "cpu_windows_over": [1], "max_active": [9],
                           "mean_active": [2.5]})
    rows = check_counts(pc.counts(pc.event_counts(_runs()), active, 7, (), 36))
    assert rows[0]["value"] == 0.3 and "W = 64" in rows[0]["configuration"]
    lru = [r for r in rows if r["quantity"] == "recency writes per charge"]
    assert [r["value"] for r in lru] == [2.04, 2.04]
