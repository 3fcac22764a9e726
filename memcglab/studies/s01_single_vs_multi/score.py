"""Study 1's scoring: the written prediction against seed 000's "with" column.

Called only after :func:`memcglab.studies.s01_single_vs_multi.pricing.write_predictions`: the
"with" column enters here and nowhere earlier. Scored as registered
(``data/preregistration/study01.md``): the MAPE of the median prediction, per row
whether the 90% band contains the published value (and
:func:`memcglab.stats.verdict_rules.judge`'s verdict), the size of the gain per row,
the shape of the gain, and the miss over the 48 variants. Each row's prediction, the
MAPE and the gain at the largest client count are priced with
:func:`memcglab.uncertainty.summarise` (interval, P(holds), Sobol driver, break-even).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab.stats.verdict_rules import Verdict, judge
from memcglab.studies.s01_single_vs_multi.pricing import Prediction
from memcglab.uncertainty import UncertainResult, summarise

__all__ = ["Study01Verdict", "diagnosis", "score", "miss_distribution"]


@dataclass(frozen=True, eq=False)
class Study01Verdict:
    """Rows (per client count), scalar summary, per-variant misses, priced results
    (``"with_6"`` .. ``"with_36"``, ``"mape"``, ``"gain_36"``) and their verdicts."""

    rows: pd.DataFrame
    summary: dict
    variants: pd.DataFrame
    results: dict[str, UncertainResult]
    verdicts: dict[str, Verdict]
    prediction: Prediction


def _mape(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return 100.0 * np.abs(pred / truth - 1.0).mean(axis=-1)


def miss_distribution(variants: pd.DataFrame, clients: tuple[int, ...],
                      with_mbps: np.ndarray, goal_pct: float) -> tuple[pd.DataFrame, dict]:
    """Each variant's MAPE on "with" (at the typical priors), and its distribution."""
    pred = variants[[f"with_{c}" for c in clients]].to_numpy(float)
    out = variants.copy()
    out["mape_with_pct"] = _mape(pred, with_mbps)
    m = out["mape_with_pct"].to_numpy()
    stats = {"variants": int(m.size), "variant_mape_median_pct": float(np.median(m)),
             "variant_mape_p5_pct": float(np.percentile(m, 5)),
             "variant_mape_p95_pct": float(np.percentile(m, 95)),
             "variant_mape_min_pct": float(m.min()), "variant_mape_max_pct": float(m.max()),
             "variants_within_goal": int((m <= goal_pct).sum()),
             "default_variant_mape_pct": float(m[0])}
    return out, stats


def score(pred: Prediction, without_mbps: np.ndarray, with_mbps: np.ndarray,
          sobol_n: int | None = None) -> Study01Verdict:
    """Score ``pred`` (already written) against the published columns (see module doc)."""
    model, space = pred.model, pred.space
    r = model.prereg
    clients = r.clients
    goal = float(r.scoring["goal_mape_pct"])
    t = pred.table
    w = np.asarray(with_mbps, dtype=float)
    covered = (t["low"].to_numpy() <= w) & (w <= t["high"].to_numpy())
    results: dict[str, UncertainResult] = {}
    verdicts: dict[str, Verdict] = {}
    kw = {"n": pred.n, "sobol_n": sobol_n or pred.n, "seed": 0,
          "coverage": float(r.scoring["coverage"])}
    for j, c in enumerate(clients):
        pub = float(w[j])
        res = summarise(lambda d, j=j: model.evaluate(d).predicted_with[:, j], space,
                        holds=lambda y, pub=pub: np.abs(y / pub - 1.0) <= goal / 100.0,
                        threshold=pub, unit="Mbps", **kw)
        results[f"with_{c}"] = res
        verdicts[f"with_{c}"] = judge("value", pub, pub, interval=res)
    results["mape"] = summarise(lambda d: _mape(model.evaluate(d).predicted_with, w), space,
                                holds=lambda y: y <= goal, threshold=goal, unit="%", **kw)
    last = len(clients) - 1
    pub_gain = 100.0 * (w / np.asarray(without_mbps, dtype=float) - 1.0)
    results["gain_last"] = summarise(lambda d: model.evaluate(d).gain_pct[:, last], space,
                                     unit="%", **kw)
    verdicts["gain_last"] = judge("difference", float(pub_gain[last]), float(pub_gain[last]),
                                  interval=results["gain_last"])
    rows = pd.DataFrame({
        "clients": list(clients), "published_without": without_mbps,
        "fitted_without": t["fitted_without_mbps"].to_numpy(),
        "fit_error_pct": 100.0 * (t["fitted_without_mbps"].to_numpy()
                                  / np.asarray(without_mbps, dtype=float) - 1.0),
        "published_with": w, "predicted_with": t["predicted_with_mbps"].to_numpy(),
        "low": t["low"].to_numpy(), "high": t["high"].to_numpy(),
        "error_pct": 100.0 * (t["predicted_with_mbps"].to_numpy() / w - 1.0),
        "covered": covered,
        "verdict": [verdicts[f"with_{c}"].word for c in clients],
        "published_gain_pct": pub_gain, "predicted_gain_pct": t["predicted_gain_pct"].to_numpy(),
        "gain_low_pct": t["gain_low_pct"].to_numpy(),
        "gain_high_pct": t["gain_high_pct"].to_numpy(),
    })
    rows["gain_error_pp"] = rows["predicted_gain_pct"] - rows["published_gain_pct"]
    rows["gain_covered"] = (rows["gain_low_pct"] <= pub_gain) & (pub_gain <= rows[
        "gain_high_pct"])
    variants, vstats = miss_distribution(pred.variants, clients, w, goal)
    mape = float(_mape(rows["predicted_with"].to_numpy(), w))
    gain = rows["predicted_gain_pct"].to_numpy()
    fit = pred.sample
    summary = {
        "mape_with_pct": mape, "rows_covered": int(covered.sum()), "rows": len(clients),
        "goal_mape_pct": goal, "goal_met": bool(covered.all() and mape <= goal),
        "max_abs_error_with_pct": float(rows["error_pct"].abs().max()),
        "fit_mape_without_median_pct": float(np.median(fit.fit_mape_pct)),
        "fit_other_cycles_median": float(np.median(fit.other_cycles)),
        "fit_c2c_cycles_median": float(np.median(fit.c2c_cycles)),
        "fit_c2c_at_bound_share": float(fit.at_bound[:, 1].mean()),
        "fit_c2c_at_upper_share": float((fit.at_bound[:, 1]
                                         & (fit.c2c_cycles > np.sqrt(r.lower[1] * r.upper[1])))
                                        .mean()),
        "fit_other_at_bound_share": float(fit.at_bound[:, 0].mean()),
        "predicted_gain_increasing": bool(np.all(np.diff(gain) > 0)),
        "published_gain_increasing": bool(np.all(np.diff(pub_gain) > 0)),
        "published_gain_last_pct": float(pub_gain[last]),
        "predicted_gain_last_pct": float(gain[last]),
        "samples": pred.n, "prereg_sha256": r.sha256[:12],
        **vstats,
    }
    summary["shape_reproduced"] = summary["predicted_gain_increasing"] == summary[
        "published_gain_increasing"]
    return Study01Verdict(rows, summary, variants, results, verdicts, pred)


def diagnosis(df: pd.DataFrame, v: Study01Verdict) -> dict:
    """After the verdict, and used by no fit: what the first row's miss would take.

    The published columns imply that the multi stock saves ``1/without - 1/with`` of a
    flow's time per message at the fewest clients; the model saves its own (fitted
    "without", median "with"). Divided by the walks per message the multi stock avoids
    there (default trace, mean over seeds), each is a time per avoided walk.
    """
    r = v.prediction.model.prereg
    first = v.rows.iloc[0]
    n = int(first["clients"])
    d = df[(df["release"] == r.variants["release"][0])
           & (df["ancestors"] == r.variants["ancestors"][0]) & (df["clients"] == n)]
    walks = d.groupby("model")["walks_per_op"].mean()
    avoided = float(walks[r.without_model] - walks[r.with_model])
    mbit = float(r.trace["message_size"]) * 8 / 1e6
    pub = 1e9 * mbit * (1 / first["published_without"] - 1 / first["published_with"])
    mod = 1e9 * mbit * (1 / first["fitted_without"] - 1 / first["predicted_with"])
    return {"diagnostic_clients": n, "diagnostic_avoided_walks_per_message": avoided,
            "diagnostic_published_saving_ns": float(pub),
            "diagnostic_model_saving_ns": float(mod),
            "diagnostic_needed_ns_per_avoided_walk": float(pub / avoided) if avoided > 0
            else float("inf"),
            "diagnostic_model_ns_per_avoided_walk": float(mod / avoided) if avoided > 0
            else float("inf")}
