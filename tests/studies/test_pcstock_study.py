"""Study 3: the RFC's page_counter stock vs the multi stock, on a small problem."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from memcglab.engine import replay_compiled
from memcglab.studies import CLAIM_KEYS, check_claims
from memcglab.studies import pcstock_study as study
from memcglab.workloads import madvise_fault

SMALL = study.PcstockParams(cgroups=(1, 4), trials=3, iterations=2, region_pages=64,
                            clients=(6,), seeds=2, messages=2000)


@pytest.fixture(scope="module")
def done():
    df = study.run(SMALL)
    return df, study.verdict(df, SMALL)


@pytest.mark.parametrize("kwargs, match", [
    ({"trials": 1}, "trials=1: the equivalence test needs at least 2"),
    ({"seeds": 1}, "seeds=1"),
    ({"fault_cycles": -5.0}, "fault_cycles=-5.0"),
    ({"margin_pct": 0.0}, "margin_pct=0.0"),
])
def test_params_name_the_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        study.PcstockParams(**kwargs)


def test_trials_add_up_to_one_whole_replay(done):
    df, _ = done
    mad = df[df["workload"] == study.MADVISE]
    assert len(mad) == len(SMALL.cgroups) * 2 * SMALL.trials
    for (cgroups, model), g in mad.groupby(["cgroups", "model"]):
        _, ev = replay_compiled(madvise_fault(SMALL.madvise_spec(cgroups)), model=model,
                                events=True)
        walks = (g["walks_per_op"] * g["charges"]).sum()
        assert g["charges"].sum() == ev.total("charges")
        assert walks == pytest.approx(ev.total("walks"))


def test_trial_time_is_cycles_and_fault_work(done):
    df, _ = done
    mad = df[df["workload"] == study.MADVISE]
    expect = (mad["cycles_per_op"] + SMALL.fault_cycles) * mad["charges"] / SMALL.cpu_hz * 1e3
    assert mad["trial_ms"].to_numpy() == pytest.approx(expect.to_numpy())


def test_verdict_has_every_source_and_unit(done):
    _, v = done
    assert list(v["source"].unique()) == ["published (seed 003)", "simulated madvise_fault",
                                          "simulated netperf_rx"]
    assert list(v[v["source"] == "simulated madvise_fault"]["cgroups"]) == [1, 4]
    assert (v.groupby("source")["unit"].nunique() == 1).all()


def test_equivalent_means_the_interval_is_inside_the_margin(done):
    _, v = done
    iv = study.intervals(v)
    assert ((iv["low"] <= iv["delta_pct"]) & (iv["delta_pct"] <= iv["high"])).all()
    inside = (iv["low"] > -SMALL.margin_pct) & (iv["high"] < SMALL.margin_pct)
    assert (inside == iv["equivalent"]).all()


def test_pages_freed_on_another_cpu_make_the_page_counter_stock_walk(done):
    df, _ = done
    net = df[df["workload"] == study.NETPERF].groupby("model")["walks_per_op"].mean()
    assert net["pcstock"] > 2 * net["multi"]


def test_summary_claims_and_conclusion_agree(done):
    df, v = done
    s = study.summary(df, v, SMALL)
    for key in ("delta_pct_madvise_4", "equivalent_published_32", "all_equivalent_netperf",
                "walks_per_op_pcstock_netperf", "netperf_cycles_change_pct",
                "pcstock_loses_netperf"):
        assert key in s
    claims = check_claims(study.claims(df, v, SMALL))
    assert [tuple(c) for c in claims] == [CLAIM_KEYS] * 2
    assert (claims[1]["verdict"] == "not negligible: pcstock loses") == s["pcstock_loses_netperf"]
    text = study.conclusion(df, v, SMALL)
    assert text.startswith(("On seed 003's madvise loop (4 cgroups)",))
    assert ("Yes: " in text) == s["pcstock_loses_netperf"]


def test_figures(done):
    df, v = done
    fig = study.figure(df, SMALL)
    assert len(fig.axes) == 4 and all(a.get_ylabel() for a in fig.axes)
    plt.close(fig)
    fig = study.figure_equivalence(v, SMALL)
    assert len(fig.axes[0].get_yticklabels()) == len(v)
    plt.close(fig)
