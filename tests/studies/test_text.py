"""Conclusion sentences: every result-dependent word follows the numbers."""

from __future__ import annotations

import pandas as pd
import pytest

from memcglab.studies import text as T

NETPERF = {"max_clients": 36, "walks_per_op_single_max_clients": 0.96,
           "walks_per_op_multi_max_clients": 0.11, "hit_rate_single_max_clients": 0.65,
           "hit_rate_multi_max_clients": 0.95, "transfers_per_op_single_max_clients": 1.55,
           "transfers_per_op_multi_max_clients": 0.29, "cycles_per_op_single_max_clients": 460.0,
           "cycles_per_op_multi_max_clients": 149.0, "mape_without_fit_pct": 15.4,
           "mape_with_pct": 23.0, "band_mape_with_low_pct": 12.2,
           "band_mape_with_high_pct": 54.8, "predicted_improvement_increasing": True,
           "published_improvement_increasing": True, "fit_at_bound": "none",
           "predicted_improvement_max_clients_pct": 208.0,
           "published_improvement_max_clients_pct": 145.0}


def test_netperf_words_follow_the_numbers():
    s = T.netperf_conclusion(NETPERF, 36, 66.0, 10.0)
    assert "0.11 times per packet against 0.96" in s and "8.7x fewer" in s
    assert "MAPE of 23.0%, outside the pre-registered 10%" in s
    assert "grows with every added client, as in the published table" in s
    assert "an overestimate" in s and "bound" not in s and "round-robin" not in s
    good = NETPERF | {"mape_with_pct": 8.0, "predicted_improvement_increasing": False,
                      "predicted_improvement_max_clients_pct": 100.0, "fit_at_bound": "other",
                      "cycles_per_op_multi_rr_max_clients": 140.0}
    s = T.netperf_conclusion(good, 36, -9.0, 10.0)
    assert "MAPE of 8.0%, within the pre-registered 10%" in s
    assert "does not grow steadily with clients, unlike the published table" in s
    assert "an underestimate" in s and "bound of zero" in s
    assert "140 cycles per packet at 36 clients (-6.0% against the random victim)" in s


def _policy_summary(**over):
    s = {"policy": "lru", "slots": 7, "tp_change_vs_random_netperf_pct": -6.0,
         "tp_change_vs_random_synthetic_pct": 0.4, "one_line_slots": 7, "two_line_slots": 14,
         "walks_per_1000_netperf_random": 100.0, "walks_per_1000_netperf_lru": 100.0,
         "lru_writes_per_op_netperf_lru": 2.0, "cycles_per_op_netperf_lru": 156.0,
         "cycles_per_op_netperf_random": 147.0}
    for mix in ("uniform", "bursty"):
        for cpus in (1, 16):
            s[f"second_line_pays_from_{mix}_{cpus}cpu"] = 8 if mix == "uniform" else None
            s[f"second_line_gain_max_active_{mix}_{cpus}cpu_pct"] = 12.0
    for w in ("netperf", "synthetic"):
        s |= {f"lru_verdict_{w}": "inside the claimed 1-3%",
              f"lru_mean_advantage_pct_{w}": 2.0, f"lru_ci_low_{w}": 1.5,
              f"lru_ci_high_{w}": 2.5}
    return s | over


NEEDS = pd.DataFrame({"policy": ["rr", "random", "lru"],
                      "slots_needed": pd.array([5, 6, pd.NA], dtype="Int64"),
                      "cost_at_need": [146.4, 147.3, float("nan")], "best_slots": [6, 7, 6],
                      "best_cost": [146.1, 147.2, 156.2]})


def test_policy_words_follow_the_numbers():
    s = T.policy_conclusion(_policy_summary(), NEEDS, ("uniform", "bursty"), (1, 4, 16), 36,
                            1.0)
    assert "rr needs the fewest slots: 5" in s and "rr 5, random 6, lru never" in s
    assert "lru changes the predicted throughput by -6.00% against random" in s
    assert "from 8 (uniform), never (bursty)" in s and "With 16 CPUs and remote releases" in s
    assert "walks 100.0 times per 1000 charges against random's 100.0 (as many)" in s
    assert "holds on both workloads" in s
    s = T.policy_conclusion(_policy_summary(policy="random", lru_verdict_synthetic="LRU better"),
                            NEEDS, ("uniform", "bursty"), (1,), 36, 1.0)
    assert "changes the predicted throughput" not in s and "16 CPUs" not in s
    assert "does not hold on every workload" in s


@pytest.mark.parametrize("words, expect", [
    (["inside the claimed 1-3%", "inside the claimed 1-3%"], "holds on both"),
    (["LRU better", "below the claimed 1-3%"], "does not hold on either"),
    (["consistent with 1-3% (the interval overlaps it)", "above the claimed 1-3%"],
     "does not hold on every"),
    (["consistent with 1-3% (the interval overlaps it)"], "is not settled"),
])
def test_the_claim_judgement(words, expect):
    assert T._holds(words).startswith(expect)


def _pcstock_summary(**over):
    s = {"madvise_max_cgroups": 32, "netperf_max_cgroups": 36, "fault_cycles": 2500.0,
         "all_equivalent_madvise": True, "all_equivalent_published": True,
         "all_equivalent_netperf": False, "netperf_cycles_change_pct": 139.0,
         "pcstock_loses_netperf": True}
    for model, w, c, t in (("multi", 0.05, 69.0, 0.1), ("pcstock", 0.04, 61.0, 0.08)):
        s |= {f"walks_per_op_{model}_madvise": w, f"cycles_per_op_{model}_madvise": c,
              f"transfers_per_op_{model}_madvise": t}
    for model, w, c, t in (("multi", 0.11, 149.0, 0.29), ("pcstock", 0.88, 356.0, 1.28)):
        s |= {f"walks_per_op_{model}_netperf": w, f"cycles_per_op_{model}_netperf": c,
              f"transfers_per_op_{model}_netperf": t}
    for key, vals in (("madvise", (-0.05, -0.2, -0.3)), ("published", (-1.2, -0.58, 0.06))):
        s |= {f"delta_pct_{key}_{c}": v for c, v in zip((1, 4, 32), vals, strict=True)}
    s |= {"delta_pct_netperf_36": 139.0}
    return s | over


def test_pcstock_words_follow_the_numbers():
    s = T.pcstock_conclusion(_pcstock_summary(), (1, 4, 32), (36,), 2.0)
    assert "equivalent in every row within +-2% (TOST), as seed 003's own table does" in s
    assert "walks 0.88 times per packet against 0.11 (8.0x more)" in s
    assert s.endswith("in this run.") and "Yes: " in s
    s = T.pcstock_conclusion(_pcstock_summary(pcstock_loses_netperf=False,
                                              all_equivalent_netperf=True,
                                              all_equivalent_madvise=False), (1, 4, 32),
                             (36,), 2.0)
    assert "No: " in s and "unlike seed 003's own table" in s
    s = T.pcstock_conclusion(_pcstock_summary(pcstock_loses_netperf=False), (1, 4, 32), (36,),
                             2.0)
    assert "Not shown: " in s


def test_small_helpers():
    assert T.series([1.0, -2.4], ["a", "b"]) == "+1% at a, -2% at b"
    assert T.trend([0.0, 1.0]) == "not monotonic"
    assert T.times(0.0, 1.0) == "none of" and T.times(1.0, 0.0) == "infinitely more"
    assert T.advantage_word(-2.0, -0.1, "rr") == "rr better than random"
