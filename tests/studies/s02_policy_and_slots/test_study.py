"""Study 2: victim policies and slot counts, on a small grid and on hand-made tables."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from memcglab import registry
from memcglab.cost import CostParams
from memcglab.events import EVENT_NAMES
from memcglab.kernel import victim
from memcglab.plugins import PluginError
from memcglab.studies import check_claims, check_counts
from memcglab.studies.common.measure import metrics, scan_lines
from memcglab.studies.s02_policy_and_slots import study as study
from memcglab.studies.s02_policy_and_slots import verdict as pv
from memcglab.studies.s02_policy_and_slots import views as views
from memcglab.workloads import SyntheticSpec, synthetic

SMALL = study.PolicyParams(policy="rr", slots=7, actives=(2, 9), mixes=("uniform", "bursty"),
                           cpus=(1, 3), seeds=2, charges_per_cpu=300,
                           slot_counts=(1, 7, 8), netperf_messages=3000, samples=64,
                           windows=(16, 64))


@pytest.fixture(scope="module")
def done():
    df = study.run(SMALL)
    r = pv.analyse(df, SMALL)
    return df, r, pv.verdict(r, SMALL)


def test_policy_names_map_to_models():
    assert {p: study.model_for(p) for p in study.runnable_policies()} == \
        {"random": "multi", "rr": "multi-rr", "lru": "multi-lru"}
    with pytest.raises(ValueError, match="policy='fifo': unknown; .*random"):
        study.model_for("fifo")


def test_a_registered_policy_without_a_compiled_twin_is_refused_by_name():
    registry.register_policy("clock-py", victim.RandomVictim)
    try:
        with pytest.raises(ValueError, match="policy 'clock-py' has no compiled implementation"):
            study.model_for("clock-py")
        with pytest.raises(ValueError, match="study 2 prices the compiled engine's counts"):
            study.PolicyParams(policy="clock-py")
        assert "clock-py" not in study.runnable_policies()
    finally:
        registry.unregister_policy("clock-py")


def test_a_registered_policy_with_a_compiled_twin_joins_every_run():
    # the engine's random victim under another name: its replays must equal random's
    registry.register_policy("random-twin", victim.RandomVictim, compiled="random")
    try:
        assert study.runnable_policies()[-1] == "random-twin"
        assert study.model_for("random-twin") == "multi"
        trace = synthetic(SyntheticSpec(cpus=2, memcgs=16, active_per_cpu=9, seed=1,
                                        charges_per_cpu=300))
        rows = study._replays(trace, ("random", "random-twin"), (7,), 1, {})
        a, b = ({k: v for k, v in r.items() if k != "policy"} for r in rows)
        assert a == b and a["walks_per_1000"] > 0
    finally:
        registry.unregister_policy("random-twin")


def test_a_plugin_that_cannot_be_imported_is_named():
    with pytest.raises(PluginError, match="plugins: cannot import plugin module 'no_such_mod'"):
        study.PolicyParams(plugins="no_such_mod")


@pytest.mark.parametrize("kwargs, match", [
    ({"slots": 0}, "slots=0: must be between 1 and 255"),
    ({"seeds": 1}, "seeds=1: must be between 2"),
    ({"mixes": ("zipf", "pareto")}, "unknown pareto; valid: uniform"),
    ({"profile": "cray-1"},
     "hardware profile 'cray-1': no file .*; shipped profiles: .*butt-netperf-72cpu"),
    ({"samples": 100}, "samples=100: must be a power of 2"),
    ({"windows": (0,)}, r"windows=\(0,\)"),
])
def test_params_name_the_bad_input(kwargs, match):
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        study.PolicyParams(**kwargs)


def test_a_probed_profile_file_prices_the_study(tmp_path):
    from memcglab.hardware import hardware_dir
    copy = tmp_path / "probed.toml"
    text = (hardware_dir() / "profiles" / "generic-x86-64.toml").read_text()
    copy.write_text(text.replace('name = "generic-x86-64"', 'name = "probed"'))
    p = study.PolicyParams(**{**SMALL.__dict__, "profile": str(copy), "mixes": ("uniform",),
                              "actives": (9,), "cpus": (1,)})
    r = pv.analyse(study.run(p), p)
    claim = check_claims(pv.claims(r, pv.verdict(r, p), p))[0]
    assert str(copy) in claim["simulated"] and claim["rule"] == "qualitative"
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\n")
    with pytest.raises(Exception, match="bad.toml: top level: lacks"):
        study.PolicyParams(profile=str(bad))


def test_quick_params_are_small():
    q = study.PolicyParams.from_notebook(quick=True, samples=1024)
    assert q.samples == 256 and q.seeds == 3 and q.netperf_messages <= 10_000


def test_line_capacity_follows_the_layout():
    one, two = study.line_capacity(1), study.line_capacity(2)
    assert scan_lines(one) == 1 < scan_lines(one + 1)
    assert scan_lines(two) == 2 < scan_lines(two + 1)


def test_the_grid_replays_every_pair(done):
    df, _, _ = done
    syn = df[df["workload"] == "synthetic"]
    traces = len(SMALL.mixes) * len(SMALL.actives) * len(SMALL.cpus) * SMALL.seeds
    # rr, random, lru at 7 slots, and rr at 14 (7 is one line's worth already)
    assert len(syn) == traces * 4
    net = df[df["workload"] == study.NETPERF]
    # the default alternative: every policy at every slot count; the three others:
    # random and LRU at the study's slot count
    assert len(net[net["default"]]) == SMALL.seeds * len(SMALL.slot_counts) * 3
    assert len(net[~net["default"]]) == SMALL.seeds * 3 * 2
    assert {f"ev_{n}" for n in EVENT_NAMES} <= set(df.columns)
    np.testing.assert_allclose(df["walks_per_1000"], 1000 * df["ev_walks"] / df["ev_charges"])


def test_lru_pays_its_recency_line_and_stamp_search(done):
    df, _, _ = done
    lru = df[(df["policy"] == "lru") & (df["slots"] == 7)]
    totals = [{n: r[f"ev_{n}"] for n in EVENT_NAMES} for _, r in lru.iterrows()]
    base = np.array([metrics(t, "multi-lru", 7)["cycles_per_op"] for t in totals])
    c = CostParams()
    n = lru["ev_charges"].to_numpy(float)
    writes, ev = lru["ev_lru_writes"] / n, lru["ev_evictions"] / n
    # one more line per recency write and per victim search; stamps compared, no draw
    extra = c.l1_hit * (writes + ev) + (7 * c.slot_compare - c.random_u32) * ev
    np.testing.assert_allclose(lru["cycles_per_op"], base + extra)
    rand = df[df["policy"] == "random"]
    again = [metrics({n: r[f"ev_{n}"] for n in EVENT_NAMES}, "multi", int(r["slots"]))
             for _, r in rand.iterrows()]
    np.testing.assert_allclose(rand["cycles_per_op"], [m["cycles_per_op"] for m in again])


def test_policies_agree_while_every_memcg_has_a_slot(done):
    # One CPU, fewer active memcgs than slots: no victim is ever chosen.
    df, _, _ = done
    fits = df[(df["workload"] == "synthetic") & (df["cpus"] == 1) & (df["active"] <= 7)
              & (df["slots"] == 7)]
    walks = fits.pivot_table(index=["mix", "active", "seed"], columns="policy",
                             values="walks_per_1000")
    assert len(walks) > 0
    np.testing.assert_array_equal(walks["random"], walks["lru"])
    np.testing.assert_array_equal(walks["random"], walks["rr"])
    assert (fits["evictions_per_op"] == 0).all()


def _table(costs: dict[tuple[str, int], float], seeds: int = 2) -> pd.DataFrame:
    return pd.DataFrame([{"workload": study.NETPERF, "mix": study.NETPERF, "active": np.nan,
                          "cpus": 72, "seed": s, "policy": pol, "slots": n, "default": True,
                          "cycles_per_op": c + s}
                         for (pol, n), c in costs.items() for s in range(seeds)])


def test_needs_and_throughput_change_on_a_hand_made_table():
    df = _table({("random", 4): 120.0, ("random", 7): 100.0, ("random", 8): 100.5,
                 ("lru", 4): 110.0, ("lru", 7): 104.0, ("lru", 8): 103.0})
    need = study.needs(df, tol_pct=1.0)
    assert need.to_dict("list")["policy"] == ["random", "lru"]
    assert need.loc[0, "slots_needed"] == 7 and pd.isna(need.loc[1, "slots_needed"])
    # seeds 0 and 1 cost 100/104 and 101/105: random's gain is the mean of both
    expect = np.mean([(100 / 104 - 1) * 100, (101 / 105 - 1) * 100])
    assert study.tp_change(df, "lru", 7, study.NETPERF) == pytest.approx(expect)
    assert study.tp_change(df, "random", 7, study.NETPERF) == 0.0
    # rows of another modelling alternative do not count
    other = df.assign(default=False, cycles_per_op=1.0)
    assert study.needs(pd.concat([df, other])).equals(need)


def test_pays_from_needs_the_gain_to_last():
    line = pd.DataFrame({"mix": "uniform", "cpus": 1, "active": [1, 2, 4, 8],
                         "gain_pct": [0.5, -1.0, 2.0, 3.0]})
    assert study.pays_from(line, "uniform", 1) == 4
    assert study.pays_from(line.assign(gain_pct=1.0), "uniform", 1) == 1
    assert study.pays_from(line.assign(gain_pct=[1.0, 1.0, 1.0, -1.0]), "uniform", 1) is None


def test_every_mix_is_priced_and_judged(done):
    _, r, v = done
    assert list(r.priced) == ["netperf", "uniform", "bursty"]
    assert list(v["mix"]) == list(r.priced)
    assert set(v["verdict"]) <= {"agrees", "misses", "undetermined"}
    for res in r.priced.values():
        assert res.sources == {"parameters", "alternatives", "seeds"}
        assert res.low <= res.median <= res.high
        assert "other_cycles" in res.sobol_total.index
    assert set(r.break_even["netperf"]) == {"after cached[]", "beside nr_pages[]",
                                            "writes only"}
    a = r.active
    assert set(a["slots"]) == set(range(1, 17)) and set(a["window"]) == set(SMALL.windows)
    # more slots are never over more often
    for _, g in a.groupby(["placement", "release", "window"]):
        assert np.all(np.diff(g.sort_values("slots")["over"].to_numpy()) <= 0)


def test_summary_counts_and_claims(done):
    _, r, v = done
    s = pv.summary(r, v, SMALL)
    assert (s["policy"], s["slots"], s["model"]) == ("rr", 7, "multi-rr")
    for key in ("walks_per_1000_netperf_random", "evictions_per_1000_netperf_lru",
                "recency_writes_per_charge_netperf", "netperf_active_over_slots_pct_w64",
                "advantage_median_pct_netperf", "verdict_uniform", "driver_bursty",
                "recency_break_even_netperf_after", "netperf_slots_needed",
                "lru_extra_lines_per_write"):
        assert key in s, key
    assert all(isinstance(x, (int, float, str, bool, type(None))) for x in s.values())
    counts = check_counts(pv.counts(r, SMALL))
    assert counts[0]["quantity"] == "windows with more active memcgs than slots (%)"
    lines = {(c["quantity"], c["configuration"]): c["value"] for c in counts}
    assert lines[("cache lines a slot scan reads", "random, no recency state, 7 slots")] == 1
    assert lines[("cache lines a recency write adds",
                  "lru, recency state after cached[], 7 slots")] == 1
    assert {c["quantity"] for c in counts} >= {"walks per 1000 charges",
                                              "evictions per 1000 charges",
                                              "stock hits per 1000 charges",
                                              "recency writes per charge"}
    claims = check_claims(pv.claims(r, v, SMALL))
    assert len(claims) == 1 and claims[0]["rule"] == "qualitative"
    c = claims[0]
    assert c["verdict"] in ("agrees", "misses", "undetermined")
    assert c["reason"].startswith("made a number as random's throughput advantage")
    assert all(f"{m}" in c["reason"] for m in ("netperf", "uniform", "bursty"))
    if c["verdict"] == "misses":
        assert c["would_take"].startswith("a recency write (percpu_rmw) of")
    text = pv.conclusion(r, v, SMALL)
    assert "active memcgs" in text and "verdict rules and their addendum" in text


def test_figures(done):
    df, r, _ = done
    for fig in (views.figure_policies(df, SMALL), views.figure_slots(df, SMALL, r),
                views.figure_active(r, SMALL)):
        assert all(a.get_ylabel() or a.get_xlabel() for a in fig.axes if a.get_visible())
        plt.close(fig)
    fig, caption = views.figure_sensitivity(r, "netperf")
    assert "drives the spread" in caption
    plt.close(fig)
    with pytest.raises(ValueError, match="mix='zipf': not priced; priced: netperf"):
        views.figure_sensitivity(r, "zipf")
