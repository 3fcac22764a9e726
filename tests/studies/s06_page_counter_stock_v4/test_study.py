"""Study 6: v4's counts, its predictions regenerated from its scenario files, and the madvise
TOST, on small problems."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from memcglab.studies import check_claims, check_counts
from memcglab.studies.s06_page_counter_stock_v4 import claims as v4_claims
from memcglab.studies.s06_page_counter_stock_v4 import madvise as v4_madvise
from memcglab.studies.s06_page_counter_stock_v4 import study as v4_study
from memcglab.studies.s06_page_counter_stock_v4 import views as v4_views
from memcglab.studies.s06_page_counter_stock_v4.counts import CASES, count_runs

MACHINE = "butt-netperf-72cpu"


@pytest.fixture(scope="module")
def small_runs():
    return count_runs(["tcp_rr", "udp_rr"], {MACHINE: 72}, 2000, [0, 1])


@pytest.mark.parametrize("kwargs, match", [
    ({"cases": ("nope",)}, "cases=\\('nope',\\): unknown \\['nope'\\]"),
    ({"machines": ("mars",)}, "hardware profile 'mars': no file .*; shipped profiles"),
    ({"machines": ()}, "machines=\\(\\): name at least one profile"),
    ({"points": 100}, "points=100: must be a power of 2"),
    ({"points": 32768}, "points=32768: must be a power of 2 between 2 and 16384"),
    ({"scenarios": "nope"}, "scenarios='nope': matches no file in data/scenarios/study06"),
    ({"seeds": 0}, "seeds=0"),
    ({"seeds": 2.5}, "seeds=2.5: must be an integer between 1 and 100"),
    ({"memory_max_mib": 0.0}, "memory_max_mib=0.0: must be > 0"),
    ({"memory_max_mib": -1.0}, "memory_max_mib=-1.0: must be > 0"),
    ({"size": 10}, "size=10"),
    ({"margin_pct": 0.0}, "margin_pct=0.0"),
    ({"madvise_trials": 1}, "madvise_trials=1"),
    ({"stale_rates": (0.1, 2.0)}, "stale rates"),
])
def test_params_name_the_bad_input(kwargs, match):
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        v4_study.V4Params(**kwargs)


def test_case_choices_are_checked():
    assert len(CASES["netperf_rx"].choices()) == 4 and CASES["bw_unix"].choices() == [{}]
    with pytest.raises(ValueError, match="tcp_rr: choice release='task' is not valid"):
        CASES["tcp_rr"].trace(8, 10, 0, release="task")


def test_v4_walks_once_per_uncharge_and_per_stock_miss(small_runs):
    # v4's uncharges never touch the stock (one walk each); a charge walks when it misses.
    v4 = small_runs[small_runs["model"] == "pcstock-v4"]
    assert (v4["walks"] == v4["charges"] - v4["stock_hits"] + v4["uncharges"]).all()
    assert (v4["drains"] == 0).all()
    rr = v4[v4["workload"] == "tcp_rr"]
    # two one-page charges per TCP_RR transaction in the eager era (the workload catalogue's
    # derivation from tcp_rcv_established's fast path), less the first transactions' setup
    assert ((rr["charges"] <= 2 * 2000) & (rr["charges"] >= 2 * 2000 - 8)).all()


def test_per_message_rates_by_hand():
    runs = pd.DataFrame({
        "workload": "tcp_rr", "machine": "m", "model": "multi", "seed": [0, 1],
        "choice": "placement=spread", "charges": [400, 600], "walks": [4, 12],
        "stock_hits": [396, 588], "drains": [0, 6], "messages": [100, 100],
        "shared": [(0.5, 0.25), (1.0, 0.25)]})
    r = v4_study.per_message(runs).iloc[0]
    assert r["walks_per_1000"] == pytest.approx((10 + 20) / 2)
    assert r["hits_per_1000"] == pytest.approx((990 + 980) / 2)
    assert r["drains_per_1000"] == pytest.approx(5.0)
    assert r["charges_per_message"] == pytest.approx(5.0)
    assert r["shared_per_message"] == pytest.approx(1.0)
    rows = check_counts(v4_study.count_rows(v4_study.per_message(runs)))
    assert [x["quantity"] for x in rows][:2] == ["page_counter walks per 1000 charges",
                                                 "stock hits per 1000 charges"]
    assert rows[0]["configuration"] == "multi, tcp_rr, m" and rows[0]["value"] == 15.0


def test_setup_only_benchmarks_carry_no_load(small_runs):
    udp = small_runs[small_runs["workload"] == "udp_rr"]
    assert (udp["charges"] > 0).all()  # the first datagram of each socket
    assert all(s == () for s in udp["shared"]) and (udp["private"] == 0).all()


def test_madvise_tost_has_both_iteration_counts():
    df = v4_madvise.run(cgroups=(1, 4), n_trials=3, iterations=(3, 2), region_pages=64)
    assert set(df["iterations"]) == {3, 2} and len(df) == 2 * 2 * 2 * 3
    v = v4_madvise.tost(df, 2.0)
    assert list(v["iterations"]) == [3, 3, 2, 2] and v["equivalent"].dtype == bool
    fig = v4_views.tost_figure(v, 2.0)
    assert fig.axes[0].get_xlabel().startswith("pcstock-v4 - multi")
    plt.close(fig)
    with pytest.raises(ValueError, match="n_trials=1"):
        v4_madvise.run(n_trials=1)


def test_quick_study_end_to_end(tmp_path):
    p = v4_study.V4Params(cases=("tcp_rr", "madvise_fault"), machines=(MACHINE,), size=2000,
                          seeds=1, scenarios="*_rr-72cpu-multi_vs_v4", points=8,
                          stale_rates=(0.0, 1.0), stale_cgroups=(8,), many_per_cpu=(8,),
                          netperf_rates=(0.0, 1.0), stale_operations=4000, stale_samples=4,
                          madvise_trials=3, madvise_iterations=(2,), region_pages=64,
                          stale_cpus=8)
    runs = v4_study.counts(p)
    rates = v4_study.per_message(runs)
    pred = v4_study.regenerate(p, tmp_path)
    assert pred["workload"].tolist() == ["sctp_rr", "tcp_rr", "udp_rr"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / v4_study.PREDICTIONS_FILE), pred)
    stale_runs, series = v4_study.stale(p)
    trials, tost = v4_study.madvise(p)
    claims = check_claims(v4_claims.claims(pred, stale_runs, tost, p))
    # nothing was measured: the regenerated files are predictions with no verdict word
    assert [c["rule"] for c in claims] == ["prediction"] * 3 + ["port"]
    assert all("verdict" not in c and c["prediction"] for c in claims[:3])
    assert claims[1]["prediction"] == "loss beyond 2%"  # TCP_RR: every uncharge walks
    assert claims[2]["prediction"].startswith("no prediction (zero by construction: udp_rr")
    assert claims[3]["verdict"] in ("shown in the port", "not shown in the port")
    tost_rows = check_counts(v4_claims.tost_counts(tost, p))
    assert tost_rows[0]["note"].startswith("TOST +-2%") and "seed noise only" in \
        tost_rows[0]["note"]
    check_counts(v4_study.count_rows(rates, stale_runs))
    text = v4_claims.conclusion(pred, stale_runs, tost, p)
    assert "tcp_rr" in text and "madvise" in text and "loss beyond 2% on" in text
    s = v4_claims.summary(rates, pred, stale_runs, tost)
    assert s["change_pct_tcp_rr_butt_netperf_72cpu_multi_vs_v4"] < 0 and s["predictions"] == 3
    cfg, per = v4_study.memcg_detail(p)
    assert set(per["model"]) == {"multi", "pcstock-v4"} and per["memcg"].min() > 1
    assert v4_claims.comparison(pred, tost, p.margin_pct).empty  # no madvise file chosen
    for fig in (v4_views.counts_figure(rates), v4_views.predictions_figure(pred),
                v4_views.stale_figure(stale_runs, 256.0),
                v4_views.stale_series_figure(series),
                v4_views.memcg_figure(per, cfg.cpus, 256.0, "t")):
        assert all(a.get_xlabel() or a.get_ylabel() for a in fig.axes)
        plt.close(fig)


def test_a_profile_file_names_the_machine(tmp_path):
    from memcglab.hardware import hardware_dir
    copy = tmp_path / "probed.toml"
    text = (hardware_dir() / "profiles" / f"{MACHINE}.toml").read_text()
    copy.write_text(text.replace(f'name = "{MACHINE}"', 'name = "probed"'))
    p = v4_study.V4Params.from_notebook(quick=True, profile=str(copy))
    assert p.machines == (str(copy),) and p.profiles()[str(copy)].name == "probed"
