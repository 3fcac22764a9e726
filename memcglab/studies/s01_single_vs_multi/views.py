"""Study 1's figures and conclusion, built from one run's counts and verdict.

* :func:`figure`: walks and shared-line transfers per message (counts, per model);
  the fit on "without" and the written "with" prediction with its 90% band against
  the published columns; the miss over the registered variants;
* :func:`sensitivity`: :func:`memcglab.uncertainty.sensitivity_figure` of the MAPE;
* :func:`conclusion`: the sentences, every number from this run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from memcglab.studies.common.figures import MODEL_PALETTE, new_figure
from memcglab.studies.s01_single_vs_multi.score import Study01Verdict, diagnosis
from memcglab.uncertainty import sensitivity_figure

__all__ = ["figure", "sensitivity", "conclusion"]


def figure(df: pd.DataFrame, v: Study01Verdict):
    """Four panels: walks and shared-line transfers per message; throughput; the miss."""
    fig, ax = new_figure(2, 2)
    r = v.prediction.model.prereg
    d = df[(df["release"] == r.variants["release"][0])
           & (df["ancestors"] == r.variants["ancestors"][0])]
    for a, (col, label) in zip(ax[0], [("walks_per_op", "page_counter walks per message"),
                                       ("shared_transfers_per_op",
                                        "shared usage-line transfers per message")],
                               strict=True):
        sns.lineplot(d, x="clients", y=col, hue="model", style="model", markers=True,
                     palette=MODEL_PALETTE, errorbar=None, ax=a)
        a.set(ylabel=label, xlabel="netperf clients (memcgs)")
    rows, a = v.rows, ax[1, 0]
    a.fill_between(rows["clients"], rows["low"], rows["high"], color=MODEL_PALETTE["multi"],
                   alpha=0.15, label="'with': 90% band (written before comparison)")
    a.plot(rows["clients"], rows["predicted_with"], "o-", color=MODEL_PALETTE["multi"],
           label="'with': median prediction")
    a.plot(rows["clients"], rows["fitted_without"], "o--", color=MODEL_PALETTE["single"],
           label="'without': fit")
    a.plot(rows["clients"], rows["published_with"], "X", ms=10, ls="",
           color=MODEL_PALETTE["multi"], mec="k", label="'with': published")
    a.plot(rows["clients"], rows["published_without"], "X", ms=10, ls="",
           color=MODEL_PALETTE["single"], mec="k", label="'without': published (fitted)")
    a.set(ylabel="per-flow throughput (Mbit/s)", xlabel="netperf clients (memcgs)")
    a.legend(fontsize="x-small", loc="lower left")
    a = ax[1, 1]
    m = v.variants["mape_with_pct"]
    sns.histplot(m, bins=min(24, len(m)), ax=a, color="0.5")
    a.axvline(v.summary["goal_mape_pct"], color="k", ls=":", label="registered goal")
    a.axvline(v.summary["mape_with_pct"], color=MODEL_PALETTE["multi"],
              label="median prediction (joint)")
    a.set(xlabel="MAPE on 'with' per variant (%)", ylabel="variants")
    a.legend(fontsize="x-small")
    fig.suptitle("netperf on 72 CPUs (multi-memcg percpu charge cache, Shakeel Butt, April "
                 "2025): counts per message, then the contention model fitted on 'without' "
                 "and its prediction of 'with'", fontsize="medium")
    return fig


def sensitivity(v: Study01Verdict):
    """The MAPE's tornado and Sobol bars; returns ``(Figure, caption)``."""
    return sensitivity_figure(v.results["mape"], "MAPE of the 'with' prediction")


def _rows_missed(rows: pd.DataFrame) -> str:
    missed = rows.loc[~rows["covered"], "clients"].tolist()
    return ", ".join(str(c) for c in missed) if missed else "none"


def _curve(s: dict, rows: pd.DataFrame, which: str) -> str:
    return "/".join(f"{s[f'normalised_gain_{which}_{c}']:.2f}" for c in rows["clients"][:-1])


def conclusion(df: pd.DataFrame, v: Study01Verdict) -> str:
    """The conclusion, every number from this run (see the module doc)."""
    s, rows = v.summary, v.rows
    g = diagnosis(df, v)
    r = v.prediction.model.prereg.variants
    df = df[(df["release"] == r["release"][0]) & (df["ancestors"] == r["ancestors"][0])]
    worst = rows.loc[rows["error_pct"].abs().idxmax()]
    fit_err = 100 * (rows["fitted_without"] / rows["published_without"] - 1)
    first = rows.iloc[0]
    top = int(rows["clients"].iloc[-1])
    walks = {m: float(df[(df["clients"] == top) & (df["model"] == m)]["walks_per_op"].mean())
             for m in df["model"].unique()}
    met = ("The registered goal is **met**" if s["goal_met"] else
           "The registered goal (every row inside its 90% band, MAPE at most "
           f"{s['goal_mape_pct']:g}%) is **missed**")
    drv = v.results["mape"].as_claim_columns()["driver"]
    return (
        f"At {top} clients (default trace) the single stock walks the page_counter "
        f"{walks.get('single', np.nan):.2f} times per message and the multi stock "
        f"{walks.get('multi', np.nan):.2f}. Fitted on 'without' alone, the contention model "
        f"leaves a MAPE of {s['fit_mape_without_median_pct']:.1f}% on that column (median "
        f"over the sample; at {int(first['clients'])} clients the fit is {fit_err.iloc[0]:+.0f}% "
        f"off) with a contended transfer of {s['fit_hold_cycles_median']:.0f} cycles "
        f"({100 * s['fit_hold_at_bound_share']:.0f}% of points at a bound, "
        f"{100 * s['fit_hold_at_upper_share']:.0f}% at the upper one, "
        f"{v.prediction.model.prereg.upper[1]:.0f} cycles). Its prediction of "
        f"'with', written before the comparison, has a MAPE of {s['mape_with_pct']:.1f}% "
        f"(worst {worst['error_pct']:+.0f}% at {int(worst['clients'])} clients); "
        f"{s['rows_covered']} of {s['rows']} published values lie in their 90% band "
        f"(missed at {_rows_missed(rows)} clients). {met}. Over the {s['variants']} "
        f"registered variants the MAPE runs from {s['variant_mape_min_pct']:.0f}% to "
        f"{s['variant_mape_max_pct']:.0f}% (median {s['variant_mape_median_pct']:.0f}%; "
        f"{s['variants_within_goal']} within the goal); the input that drives it is {drv}. "
        f"The predicted gain reaches {s['predicted_gain_last_pct']:+.0f}% at {top} clients "
        f"against the published {s['published_gain_last_pct']:+.0f}%; at "
        f"{int(first['clients'])} clients the model predicts {first['predicted_gain_pct']:+.1f}% "
        f"where the thread measured {first['published_gain_pct']:+.0f}%. Normalised by the gain "
        f"at {top} clients, the published curve is {_curve(s, rows, 'published')} and the "
        f"model's {_curve(s, rows, 'predicted')}: its shape {s['shape_verdict']} (the check "
        f"passes for {100 * s['shape_power']:.1f}% of the model's draws; the monotonicity "
        f"check it replaces passed {100 * s['shape_monotonic_share']:.1f}%). "
        f"After the verdict, as a diagnosis (no fit "
        f"uses it): at {g['diagnostic_clients']} clients the published columns imply that the "
        f"multi stock saves {g['diagnostic_published_saving_ns']:.0f} ns of a flow's time per "
        f"message, the model {g['diagnostic_model_saving_ns']:.0f} ns; the multi stock avoids "
        f"{g['diagnostic_avoided_walks_per_message']:.3f} walks per message there, so "
        f"{g['diagnostic_needed_ns_per_avoided_walk']:.0f} ns per avoided walk would be "
        f"needed where the model has {g['diagnostic_model_ns_per_avoided_walk']:.0f} ns: "
        "either a walk costs far more than its counted line transfers and atomics, or the "
        "real mix switches the stock's memcg far more often at few clients than the "
        "registered trace does.")
