"""Study 1: single vs multi stock on seed 000's netperf mix, on a small problem."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pytest

from memcglab.studies import CLAIM_KEYS, check_claims
from memcglab.studies import netperf_study as study

SMALL = study.NetperfParams(seeds=2, messages=2000)


@pytest.fixture(scope="module")
def done():
    df = study.run(SMALL)
    return df, study.verdict(df, SMALL)


def test_params_name_the_bad_input():
    with pytest.raises(ValueError, match="must include 'single' and 'multi'"):
        study.NetperfParams(models=("multi", "multi-rr"))
    with pytest.raises(ValueError, match="unknown multi-fifo; valid: single"):
        study.NetperfParams(models=("single", "multi", "multi-fifo"))
    with pytest.raises(ValueError, match=r"missing \[36\]"):
        study.NetperfParams(clients=(6, 12, 18, 24, 30))
    with pytest.raises(ValueError, match="seeds=0"):
        study.NetperfParams(seeds=0)


def test_notebook_parameters():
    p = study.NetperfParams.from_notebook(quick=False, seeds=4, messages=5000,
                                          models="single, multi")
    assert (p.seeds, p.messages, p.models) == (4, 5000, ("single", "multi"))
    assert study.NetperfParams.from_notebook(quick=True, messages=50_000).messages == 20_000


def test_prereg_names_the_trace_and_changes_with_it():
    a, b = study.prereg(SMALL), study.prereg(dataclasses.replace(SMALL, messages=3000))
    assert "netperf_rx cpus=72 messages=2000" in a.trace
    assert a.digest() != b.digest() and a.digest() == study.prereg(SMALL).digest()
    assert a.mbit_per_op == pytest.approx(10 * 1024 * 8 / 1e6)


def test_one_row_per_replay(done):
    df, _ = done
    assert len(df) == len(SMALL.clients) * SMALL.seeds * len(SMALL.models)
    assert df["hit_rate"].between(0, 1).all() and (df["walks_per_op"] >= 0).all()
    # one 3-page charge per message
    assert (df["charges"] == SMALL.messages).all()


def test_the_single_stock_walks_more_as_clients_grow(done):
    df, _ = done
    walks = df.groupby(["model", "clients"])["walks_per_op"].mean()
    assert walks["single"].iloc[-1] > walks["single"].iloc[0]
    assert (walks["single"] > walks["multi"]).all()


def test_throughput_is_the_verdicts_fit_and_prediction(done):
    df, v = done
    tp = study.throughput(df, v).set_index(["model", "source", "clients"]).sort_index()["mbps"]
    np.testing.assert_allclose(tp.loc["single", "fitted"].to_numpy(), v.rows["fitted_without"])
    np.testing.assert_allclose(tp.loc["multi", "predicted"].to_numpy(), v.rows["predicted_with"])
    np.testing.assert_allclose(tp.loc["multi", "published"].to_numpy(), v.rows["published_with"])


def test_summary_claims_and_conclusion_agree(done):
    df, v = done
    s = study.summary(df, v)
    for key in ("mape_with_pct", "mape_without_fit_pct", "shape_reproduced", "mape_ok",
                "walks_per_op_single_max_clients", "cycles_per_op_multi_rr_max_clients"):
        assert key in s
    assert s["mape_ok"] == (s["mape_with_pct"] <= study.MAPE_OK_PCT)
    claims = check_claims(study.claims(df, v))
    assert [tuple(c) for c in claims] == [CLAIM_KEYS] * 2
    assert claims[0]["verdict"] == ("shape reproduced" if s["shape_reproduced"]
                                    else "shape not reproduced")
    assert f"MAPE {s['mape_with_pct']:.1f}%" in claims[1]["simulated"]
    text = study.conclusion(df, v)
    assert f"a MAPE of {s['mape_with_pct']:.1f}%" in text


def test_figure_has_four_panels(done):
    df, v = done
    fig = study.figure(df, v)
    assert len(fig.axes) == 4
    assert all(a.get_ylabel() and a.get_xlabel() for a in fig.axes)
    plt.close(fig)
