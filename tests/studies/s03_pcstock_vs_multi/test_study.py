"""Study 3: the RFC's page_counter stock vs the multi stock, on a small problem."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from memcglab.cost import CostParams
from memcglab.engine import replay_compiled
from memcglab.stats import load_rules
from memcglab.studies import check_claims, check_counts
from memcglab.studies.s03_pcstock_vs_multi import claims as claims_text
from memcglab.studies.s03_pcstock_vs_multi import study as study
from memcglab.studies.s03_pcstock_vs_multi import views as views
from memcglab.workloads import madvise_fault

SMALL = study.PcstockParams(cgroups=(1, 4), trials=3, iterations=2, region_pages=64,
                            clients=(4, 6), seeds=2, messages=2000, placements=("paired",),
                            samples=64)


@pytest.fixture(scope="module")
def done():
    df = study.run(SMALL)
    v = study.verdict(df, SMALL)
    preds = study.predictions(df, SMALL)
    return df, v, preds


@pytest.mark.parametrize("kwargs, match", [
    ({"trials": 1}, "trials=1: the equivalence test needs at least 2"),
    ({"seeds": 1}, "seeds=1"),
    ({"fault_cycles": -5.0}, "fault_cycles=-5.0"),
    ({"margin_pct": 0.0}, "margin_pct=0.0"),
    ({"samples": 100}, "samples=100: must be a power of 2"),
    ({"releases": ("reader",)}, r"releases=\('reader',\): must be a non-empty tuple drawn "
                                r"from \['task', 'softirq'\]"),
    ({"migrates": ()}, "migrates=()"),
])
def test_params_name_the_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        study.PcstockParams(**kwargs)


def test_trials_add_up_to_one_whole_replay(done):
    df, _, _ = done
    mad = df[df["workload"] == study.MADVISE]
    assert len(mad) == len(SMALL.cgroups) * 2 * SMALL.trials
    for (cgroups, model), g in mad.groupby(["cgroups", "model"]):
        _, ev = replay_compiled(madvise_fault(SMALL.madvise_spec(cgroups)), model=model,
                                events=True)
        walks = (g["walks_per_op"] * g["charges"]).sum()
        assert g["charges"].sum() == ev.total("charges")
        assert walks == pytest.approx(ev.total("walks"))


def test_trial_time_is_cycles_and_fault_work(done):
    df, _, _ = done
    mad = df[df["workload"] == study.MADVISE]
    expect = (mad["cycles_per_op"] + SMALL.fault_cycles) * mad["charges"] / SMALL.cpu_hz * 1e3
    assert mad["trial_ms"].to_numpy() == pytest.approx(expect.to_numpy())
    # the coefficients price the same cycles
    vec = SMALL.cost.to_vector()
    priced = [float(np.asarray(c) @ vec) for c in mad["coef"]]
    assert priced == pytest.approx(mad["cycles_per_op"].tolist())


def test_verdict_tests_the_published_table_and_the_simulated_loop(done):
    _, v, _ = done
    assert list(v["source"].unique()) == ["published (the RFC's table)",
                                          "simulated madvise_fault"]
    assert list(v[v["source"] == "simulated madvise_fault"]["cgroups"]) == [1, 4]
    assert (v.groupby("source")["unit"].nunique() == 1).all()


def test_equivalent_means_the_interval_is_inside_the_margin(done):
    _, v, _ = done
    iv = study.intervals(v)
    assert ((iv["low"] <= iv["delta_pct"]) & (iv["delta_pct"] <= iv["high"])).all()
    inside = (iv["low"] > -SMALL.margin_pct) & (iv["high"] < SMALL.margin_pct)
    assert (inside == iv["equivalent"]).all()


def test_only_a_release_on_another_cpu_makes_the_page_counter_stock_walk(done):
    df, _, _ = done
    net = df[df["workload"] == study.NETPERF]
    walks = net.groupby(["scenario", "model"])["walks_per_1000"].mean()
    assert walks[("task/paired/independent", "pcstock")] > \
        3 * walks[("task/paired/independent", "multi")]
    for label in ("softirq/paired/independent", "softirq/paired/together"):
        assert walks[(label, "pcstock")] <= walks[(label, "multi")]


def test_counts_are_exact_rows_per_scenario_and_stock(done):
    df, _, _ = done
    rows = check_counts(study.counts(df, SMALL))
    scenarios = df[df["workload"] == study.NETPERF]["scenario"].nunique()
    assert len(rows) == len(SMALL.cgroups) * 2 * 2 + scenarios * 2 * 4
    net = df[(df["workload"] == study.NETPERF) & (df["model"] == "pcstock")
             & (df["scenario"] == "task/paired/together") & (df["cgroups"] == 6)]
    got = [r["value"] for r in rows if r["quantity"] == "walks per 1000 charges"
           and r["configuration"] == "pcstock, netperf 6 clients, task/paired/together"]
    assert got == [pytest.approx((1000 * net["walks"] / net["charges"]).mean(), abs=1e-4)]


def test_predictions_cover_every_scenario_with_intervals(done):
    _, _, preds = done
    assert list(preds)[:3] == ["madvise, 1 cgroup", "madvise, 4 cgroups",
                               "netperf, all scenarios"]
    assert "netperf, task/paired/together" in preds
    assert "netperf cycles, softirq/paired/independent" in preds
    assert "netperf by clients, 4 clients, task/paired/independent" in preds
    for key, r in preds.items():
        assert r.low <= r.median <= r.high, key
        assert "parameters" in r.sources, key
    table = study.predictions_table(preds)
    assert list(table["quantity"]) == list(preds)


def test_priced_cycles_at_the_study_costs_are_the_measured_ratio(done):
    """Differential: the vectorised cycles change at CostParams() equals the frame's."""
    df, _, preds = done
    r = preds["netperf cycles, task/paired/independent"]
    from memcglab.studies.s03_pcstock_vs_multi.pricing import cycles_change_fn
    from memcglab.uncertainty import at_fixed
    fn = cycles_change_fn(df[df["workload"] == study.NETPERF], 6)
    fixed = {k: getattr(CostParams(), k) for k in CostParams.names()}
    got = float(at_fixed(fn, r.space, fixed)[0])
    net = df[(df["workload"] == study.NETPERF) & (df["scenario"] == "task/paired/independent")
             & (df["cgroups"] == 6)]
    per = net.pivot_table(index="seed", columns="model", values="cycles_per_op")
    assert got == pytest.approx(float(((per["pcstock"] / per["multi"] - 1) * 100).mean()))


def test_priced_madvise_at_the_study_costs_is_the_trial_time_ratio(done):
    df, _, preds = done
    from memcglab.studies.s03_pcstock_vs_multi.pricing import madvise_change_fn
    from memcglab.uncertainty import at_fixed
    fn = madvise_change_fn(df[df["workload"] == study.MADVISE], 4)
    fixed = {k: getattr(CostParams(), k) for k in CostParams.names()}
    got = at_fixed(fn, preds["madvise, 4 cgroups"].space,
                   {**fixed, "fault_cycles": SMALL.fault_cycles})
    mad = df[(df["workload"] == study.MADVISE) & (df["cgroups"] == 4)]
    per = mad.pivot_table(index="sample", columns="model", values="trial_ms")
    assert float(got[0]) == pytest.approx(float(((per["pcstock"] / per["multi"] - 1)
                                                 * 100).mean()))


def test_claims_judge_negligible_the_measured_differences_and_predict_the_rest(done):
    df, v, preds = done
    rows = check_claims(claims_text.claims(v, preds, SMALL, df))
    words = load_rules().words
    assert rows[0]["rule"] == "qualitative" and rows[0]["verdict"] == \
        study.judged(preds, SMALL).word
    assert rows[0]["reason"].startswith("made a number as a change of the trial's CPU time")
    measured = [r for r in rows if r["rule"] == "measured"]
    assert [r["claim"] for r in measured] == ["measured difference at 1 cgroup",
                                              "measured difference at 4 cgroups"]
    assert all(r["verdict"] in words["measured"] and "Welch p" in r["published"]
               for r in measured)
    netperf = [r for r in rows if "beyond the RFC" in r["claim"]]
    assert len(netperf) == 1 + 2 + 4 + 2
    assert all(r["rule"] == "prediction" and "verdict" not in r and r["prediction"]
               and r["low"] <= r["estimate"] <= r["high"] for r in netperf)
    pooled = next(r for r in netperf if r["claim"].endswith("all scenarios"))
    alts = [r["prediction"] for r in netperf if "release=" in r["claim"]]
    if len(set(alts)) > 1:  # the pooled row never hides alternatives that disagree
        assert pooled["prediction"].startswith("no prediction (the alternatives disagree")


def test_the_published_differences_are_judged_as_measured_differences(done):
    df, v, preds = done
    got = study.judged_deltas(preds, v, SMALL, df)
    assert set(got) == set(SMALL.cgroups)
    assert all(j.rule == "measured" and j.word in load_rules().words["measured"]
               for j in got.values())
    pub = v[v["source"].str.startswith("published")].set_index("cgroups")
    for c, j in got.items():  # the measurement is widened by its 90% Welch interval
        half = pub.loc[c, "ci90_half_pct"]
        assert j.band == pytest.approx((pub.loc[c, "delta_pct"] - half,
                                        pub.loc[c, "delta_pct"] + half))
        assert (j.would_take is not None) == (j.word == "misses")


def test_netperf_work_outside_memcg_is_set_by_the_data(done):
    _, _, preds = done
    other = preds["netperf, all scenarios"].space["other_cycles"]
    assert other.source.startswith(("development-set calibration", "memcg: multi-memcg"))
    assert 3000 < other.low < other.high < 80000
    # the madvise rows judge the RFC's own table: nothing fitted to it prices them
    assert preds["madvise, 1 cgroup"].space["fault_cycles"].source.startswith("study 3")


def test_summary_and_conclusion_follow_the_numbers(done):
    df, v, preds = done
    s = study.summary(df, v, preds, SMALL)
    for key in ("delta_pct_madvise_4", "equivalent_published_32", "judged_negligible",
                "judged_published_delta_1",
                "netperf_all_scenarios_median_pct", "netperf_release_task_low_pct",
                "walks_per_1000_pcstock_task_paired_together"):
        assert key in s, key
    text = claims_text.conclusion(df, v, preds, s, SMALL)
    assert text.startswith("On the RFC's madvise loop (4 cgroups)")
    assert "The charging CPU and the softirq CPU are one CPU" in text
    assert f"{preds['netperf, all scenarios'].low:+.1f}" in text


def test_figures(done):
    df, v, preds = done
    fig = views.figure_counts(df, SMALL)
    assert len(fig.axes) == 4 and all(a.get_xlabel() for a in fig.axes)
    plt.close(fig)
    fig = views.figure_equivalence(v, SMALL)
    assert len(fig.axes[0].get_yticklabels()) == len(v)
    plt.close(fig)
    fig = views.figure_predictions(preds, SMALL)
    assert len(fig.axes[0].get_yticklabels()) == len(preds) - 2
    plt.close(fig)
