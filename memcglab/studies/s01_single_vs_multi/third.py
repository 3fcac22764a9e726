"""Study 1's third prediction: the chosen model, with and without the base run, proper-scored.

``data/preregistration/study01_addendum_2026-12-03_chosen_model.md`` registers it (issue 22,
item 9): at the second addendum's calibration (the development set without the thread's
change observations), the model ``memcglab predict`` prices with by default, variant A as
it is and variant B with the thread's printed base run given as ``[base.measured]``
(:func:`memcglab.validation.study01.predict_third`). :func:`predict` writes both variants'
bands to :data:`PREDICTIONS_FILE` and their draws to :data:`DRAWS_FILE` before anything
reads the "with" column; :func:`score` then scores them by the proper rule
(:func:`memcglab.validation.scoring.case_scores`: interval score at 90% and CRPS on
``log(1 + change / 100)``, the 2% noise convolved in) beside the fair baselines of the
scoreboard's fold for this source on the same six rows, and words the registered
verdicts: skill (A's mean interval score below every baseline's) and the original goal.
:func:`claims`, :func:`figure` and :func:`conclusion` show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from memcglab.results import write_parquet_atomic
from memcglab.scenario.predict import weighted_quantiles
from memcglab.scenario.terms import Terms
from memcglab.stats import Verdict, judge
from memcglab.studies import claim_row
from memcglab.studies.common.figures import new_figure
from memcglab.studies.common.sources import MULTI, name
from memcglab.validation import study01
from memcglab.validation.dataset import case_models
from memcglab.validation.scoring import case_scores

__all__ = ["ADDENDUM", "DRAWS_FILE", "PREDICTIONS_FILE", "TERMS", "ThirdPrediction", "ThirdVerdict",
           "claims", "conclusion", "figure", "predict", "score"]

#: the registration of this prediction
ADDENDUM = "data/preregistration/study01_addendum_2026-12-03_chosen_model.md"
#: where its bands and its draws are written, in the study's output directory, before it
#: is scored
PREDICTIONS_FILE = "predictions_third.parquet"
DRAWS_FILE = "predictions_third_draws.parquet"
#: the model the addendum registered (memcglab predict's default when it was written),
#: kept whatever the default becomes
TERMS = Terms(error="student", cpu_slowdown=True, busiest_share=True, socket_growth=True)
#: memcglab's two variants as the tables name them
METHOD = {"A": "memcglab", "B": "memcglab+measured"}


@dataclass(frozen=True)
class ThirdPrediction:
    """The written bands (one row per variant and client count), their draws, the points."""

    table: pd.DataFrame
    draws: pd.DataFrame
    points: int


@dataclass(frozen=True, eq=False)
class ThirdVerdict:
    """Per (method, client count) the scores and secondary columns; per method the means;
    the registered verdicts (``"skill"``, ``"goal"``)."""

    rows: pd.DataFrame
    means: pd.DataFrame
    verdicts: dict[str, Verdict]
    summary: dict
    prediction: ThirdPrediction


def predict(quick: bool, output_dir: str | Path) -> ThirdPrediction:
    """Predict both variants and write :data:`PREDICTIONS_FILE` and :data:`DRAWS_FILE` in
    ``output_dir`` ("" writes nothing): 64 points in a quick run, else the registered 512."""
    points = study01.QUICK_POINTS if quick else study01.POINTS
    models = case_models(terms=TERMS)
    table, draws = study01.predict_third(study01.calibrate(models), points=points, seed=0,
                                         models=models)
    if output_dir:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(out / PREDICTIONS_FILE,
                             pa.Table.from_pandas(table, preserve_index=False))
        write_parquet_atomic(out / DRAWS_FILE, pa.Table.from_pandas(draws, preserve_index=False))
    return ThirdPrediction(table, draws, points)


def _scored(method: str, clients: int, d: pd.DataFrame, m: float) -> dict:
    """One row's registered scores and secondary columns; the source states no noise, so
    the proper-scoring addendum's 2% rule gives its noise in points."""
    noise = 2.0 * (1.0 + m / 100.0)
    x, w = d["change_pct"].to_numpy(float), d["weight"].to_numpy(float)
    s = case_scores(x, m, noise, w)
    # equal weights: numpy's quantiles, as memcglab predict prints them
    lo, med, hi = weighted_quantiles(x, None if np.all(w == w[0]) else w, [0.05, 0.5, 0.95])
    return {"method": method, "clients": clients, "measured_change_pct": m,
            "noise_pct": noise, "median": med, "low": lo, "high": hi,
            "interval_score": s["interval_score"], "crps": s["crps"],
            "inside": bool(hi >= m - noise and lo <= m + noise),
            "sign_right": bool(np.sign(med) == np.sign(m)), "error_pp": abs(med - m),
            "width_pp": hi - lo}


def score(pred: ThirdPrediction, without_mbps: np.ndarray, with_mbps: np.ndarray,
          baselines: pd.DataFrame, goal_mape_pct: float = 10.0) -> ThirdVerdict:
    """Score the written prediction and the fair ``baselines``
    (:func:`memcglab.validation.study01.baseline_draws`) against the published columns
    (client order), as the addendum registers."""
    t, draws = pred.table, pred.draws
    clients = sorted(t["clients"].unique().tolist())
    wo, wi = np.asarray(without_mbps, dtype=float), np.asarray(with_mbps, dtype=float)
    if wo.shape != (len(clients),) or wi.shape != (len(clients),):
        raise ValueError(f"the published columns have {wo.size} and {wi.size} values; the "
                         f"prediction has {len(clients)} client counts")
    measured = dict(zip(clients, 100.0 * (wi / wo - 1.0), strict=True))
    rows = [_scored(METHOD[v], c, g, measured[c])
            for (v, c), g in draws.groupby(["variant", "clients"], sort=True)]
    rows += [_scored(b, c, g, measured[c])
             for (b, c), g in baselines.groupby(["method", "clients"], sort=False)]
    frame = pd.DataFrame(rows)
    order = list(dict.fromkeys([METHOD["A"], METHOD["B"], *baselines["method"]]))
    means = (frame.groupby("method")[["interval_score", "crps", "error_pp", "width_pp"]]
             .mean().reindex(order).reset_index())
    means["inside"] = frame.groupby("method")["inside"].sum().reindex(order).to_numpy()
    mean_is = means.set_index("method")["interval_score"]
    behind = [b for b in order[2:] if not mean_is[METHOD["A"]] < mean_is[b]]
    skill = not behind
    verdicts = {"skill": judge(
        "goal", met=skill,
        goal="the chosen model's mean interval score over the six rows below every fair "
             f"baseline's (registered in {ADDENDUM.rsplit('/', 1)[1]})")}
    a = t[t["variant"] == "A"].sort_values("clients")
    med, lo, hi = (a[k].to_numpy(float) for k in ("predicted_with_mbps", "low", "high"))
    inside = (lo <= wi) & (wi <= hi)
    mape = float(np.mean(np.abs(100.0 * (med / wi - 1.0))))
    met = bool(inside.all() and mape <= goal_mape_pct)
    verdicts["goal"] = judge(
        "goal", met=met,
        goal=f"every published 'with' value inside the chosen model's 90% band and a MAPE "
             f"of the median at most {goal_mape_pct:g}% (registered in "
             f"{ADDENDUM.rsplit('/', 1)[1]})")
    summary = {"third_interval_score": float(mean_is[METHOD["A"]]),
               "third_interval_score_measured": float(mean_is[METHOD["B"]]),
               "third_crps": float(means.set_index("method")["crps"][METHOD["A"]]),
               "third_skill": "skill shown" if skill else "no skill over " + ", ".join(behind),
               "third_mape_with_pct": mape, "third_rows_inside": int(inside.sum()),
               "third_goal_met": met, "third_points": pred.points}
    summary |= {f"third_interval_score_{b}": float(mean_is[b]) for b in order[2:]}
    return ThirdVerdict(frame, means, verdicts, summary, pred)


def claims(v: ThirdVerdict) -> list[dict]:
    """The skill verdict and the registered goal (rule ``goal``); the bands are in the
    tables, the second prediction's rows carry the same 'with' bands' drivers."""
    src, s, m = name(MULTI), v.summary, v.means.set_index("method")
    baselines = ", ".join(f"{b} {m.loc[b, 'interval_score']:.3f}" for b in m.index[2:])
    return [
        claim_row("third prediction (the chosen model, issue 22): mean interval score over "
                  "the six rows against the fair baselines", src,
                  "the thread's 'with' over 'without', six client counts",
                  f"memcglab {s['third_interval_score']:.3f}; {baselines}; with "
                  f"[base.measured] {s['third_interval_score_measured']:.3f} ({s['third_skill']})",
                  v.verdicts["skill"], estimate=s["third_interval_score"]),
        claim_row("third prediction (the chosen model): 'with' column (registered goal)", src,
                  ", ".join(f"{x:.0f}" for x in v.prediction.table.query("variant == 'A'")
                            .sort_values("clients")["predicted_with_mbps"]) + " Mbit/s predicted",
                  f"MAPE {s['third_mape_with_pct']:.1f}% of the median; "
                  f"{s['third_rows_inside']} of 6 rows in the band",
                  v.verdicts["goal"], estimate=s["third_mape_with_pct"]),
    ]


def figure(v: ThirdVerdict):
    """The change per client count on the log-ratio scale: each method's 90% band and
    median, and the measured change."""
    import seaborn as sns

    fig, ax = new_figure(1, 1, width=10.0, height=4.6)
    r = v.rows.copy()
    methods = list(dict.fromkeys(r["method"]))
    colours = dict(zip(methods, sns.color_palette("colorblind", len(methods)), strict=True))
    step = 1.6
    for k, meth in enumerate(methods):
        g = r[r["method"] == meth].sort_values("clients")
        x = g["clients"].to_numpy(float) + (k - (len(methods) - 1) / 2) * step * 0.5
        y = np.log1p(g["median"] / 100.0)
        err = np.vstack([y - np.log1p(g["low"] / 100.0), np.log1p(g["high"] / 100.0) - y])
        ax.errorbar(x, y, yerr=err, fmt="o", ms=4, capsize=2, color=colours[meth],
                    label=f"{meth}: median and 90% band")
    m = r.drop_duplicates("clients").sort_values("clients")
    ax.plot(m["clients"], np.log1p(m["measured_change_pct"] / 100.0), "X", ms=10, ls="",
            color="k", label="published: 'with' over 'without'")
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.set(xlabel="netperf clients (memcgs)",
           ylabel="log(with / without) (natural log of the throughput ratio)",
           title="multi-memcg percpu charge cache (Shakeel Butt, April 2025): the third "
                 "prediction against the fair baselines")
    ax.title.set_fontsize("medium")
    # beside the axes: the bands reach the top-left corner
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def conclusion(v: ThirdVerdict) -> str:
    """The third prediction's sentences, every number from this run."""
    s, m = v.summary, v.means.set_index("method")
    a = v.rows[v.rows["method"] == METHOD["A"]].sort_values("clients")
    base = "; ".join(f"{b} {m.loc[b, 'interval_score']:.3f}" for b in m.index[2:])
    return (
        "Predicted a third time by the chosen model (the terms and error model issue 22's "
        "ablation kept; the model was chosen with this source in the score, so it is out of "
        "sample for the parameters, not for the choice), the change is "
        + "; ".join(f"{int(x['clients'])} clients {x['median']:+.0f}% "
                    f"[{x['low']:+.0f}, {x['high']:+.0f}]" for _, x in a.iterrows())
        + f" ({s['third_points']} points). Its mean interval score over the six rows is "
        f"{s['third_interval_score']:.3f} (CRPS {s['third_crps']:.3f}), against {base} for "
        f"the fair baselines: **{s['third_skill']}**. With the base run given as "
        f"[base.measured] it scores {s['third_interval_score_measured']:.3f}. The 'with' "
        f"column's MAPE is {s['third_mape_with_pct']:.1f}% with {s['third_rows_inside']} of "
        "6 values in the band: the registered goal is "
        f"**{'met' if s['third_goal_met'] else 'missed'}**.")
