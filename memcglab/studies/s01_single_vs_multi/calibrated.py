"""Study 1's second prediction: "with" from the development-set calibration, scored.

``data/preregistration/study01_addendum_2026-12-01_calibrated.md`` registers it: each
client count's case of the development set (``data/validation/scenarios/multi_memcg_stock``)
predicted by ``memcglab predict``'s model with parameters calibrated on the development set
without the multi-memcg thread's change observations
(:func:`memcglab.validation.study01.calibrate`), its new kernel's rate in Mbps per client
written to :data:`PREDICTIONS_FILE` (:func:`predict`), and only then scored against the
published "with" column as the registration scores its own (:func:`score`): the MAPE of
the medians, the rows inside the band, :func:`memcglab.stats.judge`'s words per row, the
goal. :func:`claims`, :func:`figure` and :func:`conclusion` show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa

from memcglab.calibration.files import CalibrationFile
from memcglab.results import write_parquet_atomic
from memcglab.stats import Measurement, Verdict, judge, load_rules
from memcglab.studies import claim_row
from memcglab.studies.common.figures import MODEL_PALETTE, new_figure
from memcglab.studies.common.sources import MULTI, name
from memcglab.validation import study01

__all__ = ["ADDENDUM", "PREDICTIONS_FILE", "CalibratedPrediction", "CalibratedVerdict",
           "claims", "conclusion", "figure", "predict", "score"]

#: where the prediction is written, in the study's output directory, before it is scored
PREDICTIONS_FILE = "predictions_calibrated.parquet"
#: the registration of this prediction
ADDENDUM = "data/preregistration/study01_addendum_2026-12-01_calibrated.md"


@dataclass(frozen=True)
class CalibratedPrediction:
    """The written prediction (one row per client count) and its calibration."""

    table: pd.DataFrame
    calibration: CalibrationFile
    points: int


@dataclass(frozen=True, eq=False)
class CalibratedVerdict:
    """The rows scored (per client count), the summary scalars and the verdicts
    (``"with_6"`` .. ``"with_36"``, ``"goal"``)."""

    rows: pd.DataFrame
    summary: dict
    verdicts: dict[str, Verdict]
    prediction: CalibratedPrediction


def predict(quick: bool, output_dir: str | Path) -> CalibratedPrediction:
    """Calibrate without the "with" column, predict it, and write :data:`PREDICTIONS_FILE`
    in ``output_dir`` ("" writes nothing): a quick run at
    :data:`~memcglab.validation.study01.QUICK_POINTS` points, else the registered 512."""
    points = study01.QUICK_POINTS if quick else study01.POINTS
    cf = study01.calibrate()
    table = study01.predict(cf, points=points, seed=0)
    if output_dir:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(Path(output_dir) / PREDICTIONS_FILE,
                             pa.Table.from_pandas(table, preserve_index=False))
    return CalibratedPrediction(table, cf, points)


def _interval(row: pd.Series) -> SimpleNamespace:
    sources = {"parameters"} | ({"alternatives"} if int(row["alternatives"]) > 1 else set())
    return SimpleNamespace(low=float(row["low"]), high=float(row["high"]),
                           sources=frozenset(sources), coverage=0.9)


def score(pred: CalibratedPrediction, with_mbps: np.ndarray, goal_mape_pct: float = 10.0
          ) -> CalibratedVerdict:
    """Score the written prediction against the published "with" column (client order)."""
    t = pred.table
    w = np.asarray(with_mbps, dtype=float)
    if w.shape != (len(t),):
        raise ValueError(f"with_mbps has {w.size} values; the prediction has {len(t)} rows")
    med, lo, hi = (t[k].to_numpy(float) for k in ("predicted_with_mbps", "low", "high"))
    inside = (lo <= w) & (w <= hi)
    err = 100.0 * (med / w - 1.0)
    mape = float(np.mean(np.abs(err)))
    verdicts: dict[str, Verdict] = {}
    for j, (_, row) in enumerate(t.iterrows()):
        verdicts[f"with_{int(row['clients'])}"] = judge(
            "measured", measured=Measurement.point(float(w[j]), unit="Mbps"),
            interval=_interval(row), tolerance=goal_mape_pct / 100.0 * float(w[j]))
    met = bool(inside.all() and mape <= goal_mape_pct)
    verdicts["goal"] = judge(
        "goal", met=met,
        goal=f"every published 'with' value inside its 90% band and a MAPE of the median at "
             f"most {goal_mape_pct:g}% (registered in {ADDENDUM.rsplit('/', 1)[1]})")
    rows = pd.DataFrame({
        "clients": t["clients"].to_numpy(), "published_with": w, "predicted_with": med,
        "low": lo, "high": hi, "error_pct": err, "inside": inside,
        "verdict": [verdicts[f"with_{int(c)}"].word for c in t["clients"]],
        "predicted_without": t["predicted_without_mbps"].to_numpy(),
        "change_pct": t["change_pct"].to_numpy(), "new_bottleneck": t["new_bottleneck"]})
    summary = {"calibrated_mape_with_pct": mape, "calibrated_rows_inside": int(inside.sum()),
               "calibrated_rows": len(t), "calibrated_goal_met": met,
               "calibrated_points": pred.points,
               "calibrated_sha256": str(t["calibration_sha256"].iloc[0])[:12],
               "calibrated_max_abs_error_pct": float(np.abs(err).max())}
    return CalibratedVerdict(rows, summary, verdicts, pred)


def claims(v: CalibratedVerdict) -> list[dict]:
    """One row per client count (rule ``measured``) and the registered goal (``goal``)."""
    src, rules = name(MULTI), load_rules()
    drivers = v.prediction.table.set_index("clients")
    out = []
    for _, r in v.rows.iterrows():
        c = int(r["clients"])
        drive = study01.driver_cells(drivers.loc[c], float(r["published_with"]),
                                     v.verdicts[f"with_{c}"].word == "misses")
        out.append(claim_row(
            f"'with' per-flow throughput at {c} clients, predicted by memcglab predict "
            "calibrated without the 'with' column", src,
            f"{r['published_with']:.0f} Mbit/s per flow with the multi stock",
            f"{r['predicted_with']:.0f} Mbit/s [{r['low']:.0f}, {r['high']:.0f}] (90%), "
            f"new kernel's bottleneck: {r['new_bottleneck']}", v.verdicts[f"with_{c}"],
            measurement=Measurement.point(float(r["published_with"]), unit="Mbps").text(rules),
            estimate=float(r["predicted_with"]), low=float(r["low"]), high=float(r["high"]),
            unit="Mbps", **drive))
    s = v.summary
    out.append(claim_row(
        "'with' column predicted from the development-set calibration (registered goal)",
        src, ", ".join(f"{x:.0f}" for x in v.rows["published_with"]) + " Mbit/s",
        f"MAPE {s['calibrated_mape_with_pct']:.1f}% of the median; "
        f"{s['calibrated_rows_inside']} of {s['calibrated_rows']} rows in the band",
        v.verdicts["goal"], estimate=s["calibrated_mape_with_pct"]))
    return out


def figure(v: CalibratedVerdict, without_mbps: np.ndarray, registered: pd.DataFrame | None = None):
    """Per-flow throughput: the published columns, the new band and, when given, the
    registered prediction's band (``registered``: study 1's scored rows)."""
    fig, ax = new_figure(1, 1, width=7.5, height=4.6)
    r = v.rows
    colour = MODEL_PALETTE["multi"]
    ax.fill_between(r["clients"], r["low"], r["high"], color=colour, alpha=0.2,
                    label="'with': 90% band, memcglab predict calibrated without 'with'")
    ax.plot(r["clients"], r["predicted_with"], "o-", color=colour, label="'with': its median")
    if registered is not None:
        ax.plot(registered["clients"], registered["low"], ":", color="0.4")
        ax.plot(registered["clients"], registered["high"], ":", color="0.4",
                label="'with': the registered prediction's 90% band (fitted on 'without')")
    ax.plot(r["clients"], r["published_with"], "X", ms=10, ls="", color=colour, mec="k",
            label="'with': published")
    ax.plot(r["clients"], without_mbps, "X", ms=10, ls="", color=MODEL_PALETTE["single"],
            mec="k", label="'without': published (calibrated on)")
    ax.set(xlabel="netperf clients (memcgs)", ylabel="per-flow throughput (Mbit/s)",
           title="multi-memcg percpu charge cache (Shakeel Butt, April 2025): 'with' from the "
                 "development-set calibration", ylim=(0, None))
    ax.title.set_fontsize("medium")
    ax.legend(fontsize="x-small", loc="upper right")
    return fig


def conclusion(v: CalibratedVerdict) -> str:
    """The second prediction's sentences, every number from this run."""
    s, r = v.summary, v.rows
    missed = r.loc[~r["inside"], "clients"].tolist()
    worst = r.loc[r["error_pct"].abs().idxmax()]
    words = ", ".join(f"{int(c)}: {w}" for c, w in zip(r["clients"], r["verdict"], strict=True))
    met = "met" if s["calibrated_goal_met"] else "missed"
    return (
        "Calibrated on the development set without the thread's 'with' column (its "
        "'without' throughputs kept), memcglab predict puts 'with' at "
        + "; ".join(f"{int(x['clients'])} clients {x['predicted_with']:.0f} "
                    f"[{x['low']:.0f}, {x['high']:.0f}]" for _, x in r.iterrows())
        + f" Mbit/s per flow ({s['calibrated_points']} points). Against the published "
        f"column its MAPE is {s['calibrated_mape_with_pct']:.1f}% (worst "
        f"{worst['error_pct']:+.0f}% at {int(worst['clients'])} clients), "
        f"{s['calibrated_rows_inside']} of {s['calibrated_rows']} values lie in the band"
        + (f" (missed at {', '.join(map(str, missed))} clients)" if missed else "")
        + f"; per row, {words}. The registered goal of this addendum is **{met}**.")
