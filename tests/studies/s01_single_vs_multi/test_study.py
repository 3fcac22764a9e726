"""Study 1: counts, then the fit on "without", the written prediction, and only then "with"."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

from memcglab.stats import load_rules, netperf_fit
from memcglab.studies import check_claims, check_counts
from memcglab.studies.s01_single_vs_multi import counts as netperf_counts
from memcglab.studies.s01_single_vs_multi import pricing as netperf_contention
from memcglab.studies.s01_single_vs_multi import score as netperf_score
from memcglab.studies.s01_single_vs_multi import study as netperf_study
from memcglab.studies.s01_single_vs_multi.pricing import PREDICTIONS, ContentionModel


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("s01")
    p = netperf_study.NetperfParams.from_notebook(quick=True, output_dir=str(out))
    order = []
    real_with = netperf_study.published_with

    def guarded():
        order.append(("with read", (out / PREDICTIONS).exists()))
        return real_with()

    mp = pytest.MonkeyPatch()
    mp.setattr(netperf_study, "published_with", guarded)
    try:
        df = netperf_study.run(p)
        pred = netperf_study.predict(df, p)
        v = netperf_study.verdict(df, p, pred)
    finally:
        mp.undo()
    return p, df, pred, v, out, order


def test_the_prediction_is_written_before_with_is_read(study):
    p, _, pred, _, out, order = study
    assert order and all(written for _, written in order)
    written = pd.read_parquet(out / PREDICTIONS)
    assert list(written.columns[:4]) == ["clients", "predicted_with_mbps", "low", "high"]
    assert written["clients"].tolist() == list(p.prereg.clients)
    assert np.all(written["low"] <= written["predicted_with_mbps"])
    assert np.all(written["predicted_with_mbps"] <= written["high"])


def test_simulation_modules_never_see_the_with_column():
    for mod in (netperf_contention, netperf_counts, netperf_fit):
        src = inspect.getsource(mod)
        assert '"with_mbps"' not in src and "memcglab.published" not in src, mod.__name__


def test_counts_come_first_and_are_valid_rows(study):
    p, df, *_ = study
    rows = check_counts(netperf_study.counts(df, p))
    assert len(rows) == 2 * len(p.prereg.clients) * 6
    walks = {r["configuration"]: r["value"] for r in rows
             if r["quantity"].startswith("page_counter walks")}
    assert walks["multi, netperf 36 clients"] < walks["single, netperf 36 clients"]


def test_rows_score_every_client_count_with_a_registered_verdict(study):
    p, _, _, v, *_ = study
    r = v.rows
    assert r["clients"].tolist() == list(p.prereg.clients)
    assert set(r["verdict"]) <= set(load_rules().words["measured"])
    covered = (r["low"] <= r["published_with"]) & (r["published_with"] <= r["high"])
    assert (r["covered"] == covered).all()
    assert v.summary["rows_covered"] == int(covered.sum())
    mape = 100 * np.mean(np.abs(r["predicted_with"] / r["published_with"] - 1))
    assert v.summary["mape_with_pct"] == pytest.approx(mape)
    assert v.summary["goal_met"] == (bool(covered.all()) and mape <= 10.0)
    assert len(v.variants) == v.summary["variants"] == 48


def test_claims_are_judged_by_their_rule_and_the_conclusion_quotes_the_run(study):
    p, df, _, v, *_ = study
    rows = check_claims(netperf_study.claims(df, v, p))
    rules = [r["rule"] for r in rows]
    assert rules == ["measured"] * 7 + ["shape", "qualitative", "goal"]
    assert all(r["source"].startswith("memcg: multi-memcg percpu charge cache") for r in rows)
    measured = rows[:7]
    assert all(r["low"] <= r["high"] and r["p_text"] and r["driver"] for r in measured)
    for r in measured:  # a miss says what it would take; nothing else does
        assert (r.get("would_take") is not None) == (r["verdict"] == "misses"), r
    assert rows[-1]["verdict"] == ("goal met" if v.summary["goal_met"] else "goal missed")
    text = netperf_study.conclusion(df, v)
    assert f"{v.summary['mape_with_pct']:.1f}%" in text
    assert ("**met**" in text) == v.summary["goal_met"]


def test_the_model_caches_one_fit_per_set_of_points(study):
    _, _, pred, *_ = study
    m: ContentionModel = pred.model
    d = pred.space.sample(8, seed=5)
    assert m.evaluate(d) is m.evaluate(d)


def test_figures_draw(study):
    _, df, _, v, *_ = study
    fig = netperf_study.figure(df, v)
    sfig, caption = netperf_study.sensitivity(v)
    assert len(fig.axes) >= 4 and caption
    import matplotlib.pyplot as plt
    plt.close(fig)
    plt.close(sfig)


def test_the_diagnosis_divides_the_first_rows_saving_by_the_avoided_walks(study):
    _, df, _, v, *_ = study
    g = netperf_study.summary(df, v)
    first = v.rows.iloc[0]
    saving = 1e9 * 0.08192 * (1 / first["published_without"] - 1 / first["published_with"])
    assert g["diagnostic_published_saving_ns"] == pytest.approx(saving)
    assert g["diagnostic_avoided_walks_per_message"] > 0
    assert g["diagnostic_needed_ns_per_avoided_walk"] == pytest.approx(
        saving / g["diagnostic_avoided_walks_per_message"])


def test_the_registered_priors_are_the_machine_profiles():
    from memcglab.hardware import load_profile
    from memcglab.studies.s01_single_vs_multi.counts import PROFILE
    from memcglab.studies.s01_single_vs_multi.prereg import load_prereg
    prof = load_profile(PROFILE).priors
    for pr in load_prereg().priors:
        hw = prof[pr.name]
        assert (pr.low, pr.typical, pr.high, pr.shape) == (hw.low, hw.typical, hw.high,
                                                           hw.shape), (
            f"{pr.name}: data/hardware now differs from study 1's registration; the study "
            "keeps the registered values until it is registered again")


@pytest.mark.parametrize("quick", ["no", "False", 0, 1, None])
def test_quick_must_be_a_bool(quick):
    with pytest.raises(ValueError, match=f"quick={quick!r}: must be True or False"):
        netperf_study.NetperfParams.from_notebook(quick=quick)


def test_quick_accepts_numpy_bools():
    assert netperf_study.NetperfParams.from_notebook(quick=np.bool_(True)).quick is True


def test_the_shape_is_scored_on_the_normalised_curve_and_states_its_power(study):
    _, _, pred, v, *_ = study
    s = v.summary
    g = pred.sample.gain_pct
    assert s["shape_monotonic_share"] == pytest.approx(
        float(np.all(np.diff(g, axis=1) > 0, axis=1).mean()))
    assert 0.0 <= s["shape_power"] <= 1.0
    assert f"{s['shape_power']:.1%}" in v.verdicts["shape"].reason
    # the published curve is normalised by its last point, which is left out (1 by definition)
    r = v.rows
    pub = (r["published_gain_pct"] / r["published_gain_pct"].iloc[-1]).tolist()[:-1]
    assert [s[f"normalised_gain_published_{c}"] for c in r["clients"][:-1]] == \
        pytest.approx(pub)
    # a curve far from the published one cannot pass on its power
    if s["shape_power"] == 0.0:
        assert v.verdicts["shape"].word != "agrees"


def test_the_accounting_share_is_a_share_and_its_row_says_how_it_was_made_a_number(study):
    p, df, pred, v, *_ = study
    share = netperf_score.memcg_share(pred)
    assert np.all((share.samples > 0) & (share.samples < 100))
    row = [r for r in netperf_study.claims(df, v, p) if r["rule"] == "qualitative"][0]
    assert row["reason"].startswith("made a number as the share of a flow's time")
    assert "net_rx_action" in row["published"]


def test_a_profile_path_prices_the_charge_path_and_a_bad_one_names_its_field(tmp_path):
    from memcglab.hardware import hardware_dir
    src = hardware_dir() / "profiles" / "butt-netperf-72cpu.toml"
    copy = tmp_path / "probed.toml"
    copy.write_text(src.read_text().replace('name = "butt-netperf-72cpu"', 'name = "probed"'))
    p = netperf_study.NetperfParams.from_notebook(quick=True, profile=str(copy))
    assert netperf_counts.cost_params(p.profile) == netperf_counts.cost_params()
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\n")
    with pytest.raises(Exception, match="bad.toml") as e:
        netperf_study.NetperfParams.from_notebook(quick=True, profile=str(bad))
    assert "name" in str(e.value)
