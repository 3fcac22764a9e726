"""Study 1: the multi-memcg stock's "with" column predicted from "without", pre-registered.

"memcg: multi-memcg percpu charge cache" (Shakeel Butt, April 2025) measured
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
score), then :func:`figure`, :func:`sensitivity`; then the second prediction, registered by
the addendum ``study01_addendum_2026-12-01_calibrated.md``: :func:`predict_calibrated`
(``memcglab predict`` calibrated on the development set without the "with" column, written
to ``predictions_calibrated.parquet``) and :func:`verdict_calibrated` (read "with", score);
then the third, registered by ``study01_addendum_2026-12-03_chosen_model.md``:
:func:`predict_third` (the chosen model with and without the base run given, written to
``predictions_third.parquet`` with its draws) and :func:`verdict_third` (read "with", score
by the proper rule beside the fair baselines), :func:`third_figure`; then :func:`summary`,
:func:`conclusion` and :func:`claims`.

>>> p = NetperfParams.from_notebook(quick=True)
>>> p.seeds, p.messages, p.samples
((0,), 20000, 128)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memcglab.hardware import load_profile
from memcglab.studies import count_row
from memcglab.studies.common.text import plural
from memcglab.studies.s01_single_vs_multi import calibrated, third, views
from memcglab.studies.s01_single_vs_multi import claims as claim_rows
from memcglab.studies.s01_single_vs_multi.counts import PROFILE, count_traces
from memcglab.studies.s01_single_vs_multi.prereg import Study01Prereg, load_prereg
from memcglab.studies.s01_single_vs_multi.pricing import Prediction, predict_with, write_predictions
from memcglab.studies.s01_single_vs_multi.score import Study01Verdict, diagnosis, score
from memcglab.studies.s01_single_vs_multi.views import figure, sensitivity
from memcglab.validation import study01

__all__ = ["NetperfParams", "run", "counts", "published_without", "published_with",
           "predict", "verdict", "predict_calibrated", "verdict_calibrated", "predict_third",
           "verdict_third", "third_figure", "diagnosis",
           "figure", "calibrated_figure", "sensitivity", "summary", "conclusion", "claims"]

_TABLE = "seed000_netperf"


@dataclass(frozen=True)
class NetperfParams:
    """Study 1's run: quick (CI-sized) or full, as registered, and where files go."""

    quick: bool = False
    #: where predictions.parquet is written ("" writes nothing)
    output_dir: str = ""
    prereg: Study01Prereg = field(default_factory=load_prereg)
    #: the machine profile whose typical costs price the charge path's own cycles: the
    #: registered butt-netperf-72cpu, a shipped profile's name, or a profile file's path (the
    #: registration's priors and variants stay as registered)
    profile: str = PROFILE

    def __post_init__(self) -> None:
        load_profile(self.profile)  # its error names the file and the field

    @classmethod
    def from_notebook(cls, quick: bool = False, output_dir: str = "",
                      profile: str = PROFILE) -> NetperfParams:
        """From the notebook's parameters; ``quick`` must be True or False.

        >>> NetperfParams.from_notebook(quick="no")
        Traceback (most recent call last):
        ...
        ValueError: quick='no': must be True or False
        """
        if not isinstance(quick, bool | np.bool_):
            raise ValueError(f"quick={quick!r}: must be True or False")
        return cls(quick=bool(quick), output_dir=output_dir, profile=str(profile))

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
    return count_traces(p.prereg, p.quick, profile=p.profile).table


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
    note = (f"netperf_rx, release {v['release'][0]}, "
            f"{plural(int(v['ancestors'][0]), 'common ancestor')}, {p.messages} messages, "
            f"mean over random seeds {list(p.seeds)}")
    return [count_row("01", label, f"{model}, netperf {n} clients",
                      round(float(d.loc[(model, n), col]) * k, 3), note)
            for model in (p.prereg.without_model, p.prereg.with_model)
            for n in p.prereg.clients for col, label, k in what]


def _table():
    from memcglab.published import load
    return load(_TABLE).frame


def published_without() -> np.ndarray:
    """The multi-memcg thread's "without" column (per-flow Mbps), in client order; nothing else."""
    return _table().sort_values("clients")["without_mbps"].to_numpy(float)


def published_with() -> np.ndarray:
    """The thread's "with" column: read only by :func:`verdict`, after :func:`predict`."""
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


def predict_calibrated(p: NetperfParams) -> calibrated.CalibratedPrediction:
    """The second prediction (the addendum): "with" from ``memcglab predict`` calibrated on
    the development set without the "with" column, written before it is scored."""
    return calibrated.predict(p.quick, p.output_dir)


def verdict_calibrated(p: NetperfParams, cpred: calibrated.CalibratedPrediction
                       ) -> calibrated.CalibratedVerdict:
    """Only now read "with", and score the second prediction as registered."""
    return calibrated.score(cpred, published_with(),
                            float(p.prereg.scoring["goal_mape_pct"]))


def calibrated_figure(cv: calibrated.CalibratedVerdict, v: Study01Verdict | None = None):
    """The published columns, the second prediction's band and the registered one's."""
    return calibrated.figure(cv, published_without(), v.rows if v is not None else None)


def predict_third(p: NetperfParams) -> third.ThirdPrediction:
    """The third prediction (its addendum): the chosen model with and without the base run
    given, written before it is scored."""
    return third.predict(p.quick, p.output_dir)


def verdict_third(p: NetperfParams, tp: third.ThirdPrediction) -> third.ThirdVerdict:
    """Only now read "with", and score the third prediction and the fair baselines."""
    return third.score(tp, published_without(), published_with(), study01.baseline_draws(),
                       float(p.prereg.scoring["goal_mape_pct"]))


def third_figure(tv: third.ThirdVerdict):
    """Each method's band of the change against the published one."""
    return third.figure(tv)


def summary(df: pd.DataFrame, v: Study01Verdict,
            cv: calibrated.CalibratedVerdict | None = None,
            tv: third.ThirdVerdict | None = None) -> dict:
    """Scalars for the sidecar: the registered scores, the second and third predictions'
    (when given) and the largest mix's counts (default trace, mean over seeds)."""
    top = int(df["clients"].max())
    out = (dict(v.summary) | (cv.summary if cv is not None else {})
           | (tv.summary if tv is not None else {}))
    r = v.prediction.model.prereg.variants
    df = df[(df["release"] == r["release"][0]) & (df["ancestors"] == r["ancestors"][0])]
    for model in df["model"].unique():
        sel = df[(df["clients"] == top) & (df["model"] == model)]
        for col in ("walks_per_op", "hit_rate", "shared_transfers_per_op"):
            out[f"{col}_{model}_max_clients"] = float(sel[col].mean())
    out["max_clients"] = top
    return out | diagnosis(df, v)


def conclusion(df: pd.DataFrame, v: Study01Verdict,
               cv: calibrated.CalibratedVerdict | None = None,
               tv: third.ThirdVerdict | None = None) -> str:
    """The registered prediction's conclusion, then the second and third predictions'
    (when given)."""
    text = views.conclusion(df, v)
    text += "\n\n" + calibrated.conclusion(cv) if cv is not None else ""
    return text + ("\n\n" + third.conclusion(tv) if tv is not None else "")


def claims(df: pd.DataFrame, v: Study01Verdict, p: NetperfParams | None = None,
           cv: calibrated.CalibratedVerdict | None = None,
           tv: third.ThirdVerdict | None = None) -> list[dict]:
    """The claim rows (:mod:`~memcglab.studies.s01_single_vs_multi.claims`): each "with"
    value, the gain, its shape, the accounting share and the registered goal; then, when
    given, the second prediction's rows
    (:func:`~memcglab.studies.s01_single_vs_multi.calibrated.claims`)."""
    rows = claim_rows.claims(df, v, load_profile(p.profile if p else PROFILE))
    rows += calibrated.claims(cv) if cv is not None else []
    return rows + (third.claims(tv) if tv is not None else [])
