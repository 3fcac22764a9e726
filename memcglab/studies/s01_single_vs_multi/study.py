"""Study 1: seed 000's "with" column predicted from its "without" column, pre-registered.

Seed 000 ("memcg: multi-memcg percpu charge cache", Shakeel Butt, 2025) measured
netperf over loopback with 6 to 36 clients, each in its own cgroup, on 72 CPUs,
without and with the multi-memcg stock. The registration
(``data/preregistration/study01.md``, committed before any prediction met the "with"
column) fixes a closed queueing model of the charge path: per-flow CPU time with SMT
capacity, and one FCFS station per shared page_counter usage line, fed by the compiled
engine's counts. Its two free parameters are fitted on "without" only; "with" is
predicted with a 90% band over the hardware priors, the modelling variants and the
trace seeds, written to ``predictions.parquet``, and only then compared.

The notebook calls, in this order: :func:`run` (replay and count), :func:`counts`,
:func:`predict` (fit on "without", predict, write), :func:`verdict` (read "with",
score), then :func:`figure`, :func:`sensitivity`, :func:`summary`,
:func:`conclusion` and :func:`claims`.

>>> p = NetperfParams.from_notebook(quick=True)
>>> p.seeds, p.messages, p.samples
((0,), 20000, 128)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memcglab.studies import claim_row, count_row
from memcglab.studies.s01_single_vs_multi.counts import count_traces
from memcglab.studies.s01_single_vs_multi.prereg import Study01Prereg, load_prereg
from memcglab.studies.s01_single_vs_multi.pricing import Prediction, predict_with, write_predictions
from memcglab.studies.s01_single_vs_multi.score import Study01Verdict, diagnosis, score
from memcglab.studies.s01_single_vs_multi.views import conclusion, figure, sensitivity

__all__ = ["NetperfParams", "run", "counts", "published_without", "published_with",
           "predict", "verdict", "diagnosis", "figure", "sensitivity", "summary",
           "conclusion", "claims"]

_TABLE = "seed000_netperf"


@dataclass(frozen=True)
class NetperfParams:
    """Study 1's run: quick (CI-sized) or full, as registered, and where files go."""

    quick: bool = False
    #: where predictions.parquet is written ("" writes nothing)
    output_dir: str = ""
    prereg: Study01Prereg = field(default_factory=load_prereg)

    @classmethod
    def from_notebook(cls, quick: bool = False, output_dir: str = "") -> NetperfParams:
        """From the notebook's parameters; ``quick`` must be True or False.

        >>> NetperfParams.from_notebook(quick="no")
        Traceback (most recent call last):
        ...
        ValueError: quick='no': must be True or False
        """
        if not isinstance(quick, bool | np.bool_):
            raise ValueError(f"quick={quick!r}: must be True or False")
        return cls(quick=bool(quick), output_dir=output_dir)

    @property
    def seeds(self) -> tuple[int, ...]:
        """Trace seeds (registered: 0, 1, 2; quick: 0)."""
        return self.prereg.seeds(self.quick)

    @property
    def messages(self) -> int:
        """Messages per trace (registered: 100,000; quick: 20,000)."""
        return self.prereg.messages(self.quick)

    @property
    def samples(self) -> int:
        """Points of the joint sample (registered: 512; quick: 128)."""
        return self.prereg.samples(self.quick)


def run(p: NetperfParams) -> pd.DataFrame:
    """Replay every registered trace through both stocks; one row of counts per replay."""
    return count_traces(p.prereg, p.quick).table


def _default(df: pd.DataFrame, p: NetperfParams) -> pd.DataFrame:
    v = p.prereg.variants
    return df[(df["release"] == v["release"][0]) & (df["ancestors"] == v["ancestors"][0])]


def counts(df: pd.DataFrame, p: NetperfParams) -> list[dict]:
    """Exact counts per message of the default trace, per model and client count (mean
    over seeds), before any price: walks, hits, evictions, drains, line transfers."""
    d = _default(df, p).groupby(["model", "clients"], sort=False).mean(numeric_only=True)
    what = [("walks_per_op", "page_counter walks per 1000 messages", 1000),
            ("hit_rate", "stock hits per 1000 charges", 1000),
            ("evictions_per_op", "stock evictions per 1000 messages", 1000),
            ("drains_per_op", "stock drains per 1000 messages", 1000),
            ("shared_transfers_per_op", "shared usage-line transfers per 1000 messages", 1000),
            ("private_transfers_per_op", "private usage-line transfers per 1000 messages",
             1000)]
    v = p.prereg.variants
    note = (f"netperf_rx, release {v['release'][0]}, {v['ancestors'][0]} common ancestor, "
            f"{p.messages} messages, mean over seeds {list(p.seeds)}")
    return [count_row("01", label, f"{model}, netperf {n} clients",
                      round(float(d.loc[(model, n), col]) * k, 3), note)
            for model in (p.prereg.without_model, p.prereg.with_model)
            for n in p.prereg.clients for col, label, k in what]


def _table():
    from memcglab.published import load
    return load(_TABLE).frame


def published_without() -> np.ndarray:
    """Seed 000's "without" column (per-flow Mbps), in client order; nothing else."""
    return _table().sort_values("clients")["without_mbps"].to_numpy(float)


def published_with() -> np.ndarray:
    """Seed 000's "with" column: read only by :func:`verdict`, after :func:`predict`."""
    return _table().sort_values("clients")["with_mbps"].to_numpy(float)


def predict(df: pd.DataFrame, p: NetperfParams) -> Prediction:
    """Fit on "without", predict "with" with its band, and write predictions.parquet."""
    from memcglab.studies.s01_single_vs_multi.pricing import ContentionModel
    model = ContentionModel(p.prereg, df, published_without())
    pred = predict_with(model, p.seeds, p.samples)
    write_predictions(pred, p.output_dir)
    return pred


def verdict(df: pd.DataFrame, p: NetperfParams, pred: Prediction) -> Study01Verdict:
    """Only now read "with", and score the written prediction as registered."""
    return score(pred, published_without(), published_with())


def summary(df: pd.DataFrame, v: Study01Verdict) -> dict:
    """Scalars for the sidecar: the registered scores and the largest mix's counts
    (default trace, mean over seeds)."""
    top = int(df["clients"].max())
    out = dict(v.summary)
    r = v.prediction.model.prereg.variants
    df = df[(df["release"] == r["release"][0]) & (df["ancestors"] == r["ancestors"][0])]
    for model in df["model"].unique():
        sel = df[(df["clients"] == top) & (df["model"] == model)]
        for col in ("walks_per_op", "hit_rate", "shared_transfers_per_op"):
            out[f"{col}_{model}_max_clients"] = float(sel[col].mean())
    out["max_clients"] = top
    return out | diagnosis(df, v)


def claims(df: pd.DataFrame, v: Study01Verdict) -> list[dict]:
    """The shape claim, each row's "with" value, the gain at the largest count, the MAPE."""
    r, s = v.rows, v.summary
    out = [claim_row(
        "seed 000: the multi stock's gain grows with clients (table shape)",
        ", ".join(f"{g:+.0f}% at {c}" for g, c in zip(r["published_gain_pct"], r["clients"],
                                                       strict=True)),
        ", ".join(f"{g:+.0f}% at {c}" for g, c in zip(r["predicted_gain_pct"], r["clients"],
                                                       strict=True)) + " (median)",
        "shape reproduced" if s["shape_reproduced"] else "shape not reproduced",
        kind="structural")]
    for _, row in r.iterrows():
        c = int(row["clients"])
        res, ver = v.results[f"with_{c}"], v.verdicts[f"with_{c}"]
        out.append(claim_row(
            f"seed 000: 'with' per-flow Mbps at {c} clients, predicted from 'without'",
            f"{row['published_with']:.0f} Mbps", f"{res.describe('{:.0f}')}",
            ver.word, estimate=res.median, unit="Mbps", **res.as_claim_columns()))
    last = int(r["clients"].iloc[-1])
    res, ver = v.results["gain_last"], v.verdicts["gain_last"]
    out.append(claim_row(
        f"seed 000: gain of the multi stock at {last} clients",
        f"{s['published_gain_last_pct']:+.0f}%", res.describe("{:.0f}"), ver.word,
        estimate=res.median, unit="%", **res.as_claim_columns()))
    res = v.results["mape"]
    goal = s["goal_mape_pct"]
    out.append(claim_row(
        "seed 000: 'with' column predicted out of sample (registered goal: every row in "
        f"the 90% band, MAPE <= {goal:g}%)",
        ", ".join(f"{x:.0f}" for x in r["published_with"]) + " Mbps",
        f"MAPE {s['mape_with_pct']:.1f}% of the median; {s['rows_covered']}/{s['rows']} rows "
        f"in the band; variants {s['variant_mape_min_pct']:.0f}-"
        f"{s['variant_mape_max_pct']:.0f}% (median {s['variant_mape_median_pct']:.0f}%)",
        "goal met" if s["goal_met"] else "goal missed",
        estimate=s["mape_with_pct"], unit="%", **res.as_claim_columns()))
    return out
