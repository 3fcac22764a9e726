"""The proper-rule table of a scoreboard (``rules_addendum_2026-12-02_proper_scoring.md``).

:func:`change_draws` makes the change draws of ``memcglab predict`` for a case (the same
draws, weights and functions as :func:`memcglab.scenario.predict.predict_scenario`, whose
band keeps only their quantiles); :func:`proper_frame` scores memcglab and every fair
baseline (:mod:`memcglab.validation.baselines`) on every case with
:func:`memcglab.validation.scoring.case_scores`, and checks that memcglab's draws give the
band the scoreboard printed; :func:`proper_summary` averages per source, then over the
sources, beside the secondary columns; :func:`write_tables` writes both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from memcglab.calibration.files import CalibrationFile
from memcglab.scenario.predict import scenario_draws, weighted_quantiles
from memcglab.scenario.spec import PROFILE_NAMES, Measured
from memcglab.validation.baselines import BASELINES, predictive
from memcglab.validation.dataset import CaseModel
from memcglab.validation.scoring import ALPHA, case_scores, per_source

__all__ = ["METHODS", "SCORES", "change_draws", "code_commit", "proper_frame", "proper_run",
           "proper_summary", "proper_text", "write_tables"]

#: memcglab without [base.measured], memcglab with it (where the source prints the base
#: run: rules_addendum_2026-12-02b, section 4), then the fair baselines
MEASURED = "memcglab+measured"
METHODS: tuple[str, ...] = ("memcglab", MEASURED, *(b.name for b in BASELINES))
#: the registered scores, lower is better
SCORES: tuple[str, ...] = ("interval_score", "crps")


def change_draws(model: CaseModel, points: int, seed: int,
                 calibration: CalibrationFile | None) -> np.ndarray:
    """The change in % at every point ``memcglab predict`` prices for the case."""
    return scenario_draws(model.model, points, seed, calibration,
                          with_profile=False).change_pct


def base_measured(model: CaseModel) -> Measured | None:
    """What the case's source prints of the base run, as ``[base.measured]``: its
    throughput (network benchmarks in Mbps) and, where printed, its perf shares (the
    children shares, or the self shares of a source that prints only those)."""
    from memcglab.validation.devset import case_profile

    rate = model.measured_base_rate()
    if rate is None:
        return None
    prof = case_profile(model.case).get("base", {}) if model.case.profile else {}
    kind = "children" if "children" in prof else "self"
    shares = {fn: v for fn, v in prof.get(kind, {}).items() if fn in PROFILE_NAMES}
    return Measured(throughput=rate, unit="ops/s", per="total",
                    profile=tuple(sorted(shares.items())), profile_kind=kind)


def measured_draws(model: CaseModel, points: int, seed: int,
                   calibration: CalibrationFile | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The change draws and weights with the source's base run given (or without it,
    where the source prints none)."""
    measured = base_measured(model)
    if measured is None:
        return change_draws(model, points, seed, calibration), None
    sd = scenario_draws(model.model.with_measured(measured), points, seed, calibration,
                        with_profile=False)
    return sd.change_pct, sd.weights


def _row(method, r, draws_pct, weights, lo, hi, med) -> dict:
    s = case_scores(draws_pct, r.measured_change_pct, r.noise_pct, weights)
    m, noise = r.measured_change_pct, r.noise_pct
    return {"method": method, "source": r.source, "case": r.case, "measured_change_pct": m,
            "noise_pct": noise, "median": med, "low": lo, "high": hi,
            "interval_score": s["interval_score"], "crps": s["crps"],
            "inside": bool(hi >= m - noise and lo <= m + noise),
            "sign_right": bool(np.sign(med) == np.sign(m)), "error_pp": abs(med - m),
            "width_pp": hi - lo}


def proper_frame(frame: pd.DataFrame, folds: Mapping, models: Mapping[str, CaseModel],
                 points: int, seed: int) -> pd.DataFrame:
    """One row per (method, case): the two scores and the secondary columns (module doc)."""
    rows = []
    for r in frame.itertuples():
        fold = folds[r.source]
        x = change_draws(models[r.case], points, seed, fold.calibration)
        lo, med, hi = np.quantile(x, [ALPHA / 2, 0.5, 1 - ALPHA / 2])
        # predict prints a change rounded to 0.01 points
        if not np.allclose([lo, med, hi], [r.low, r.median, r.high], rtol=0, atol=0.0051):
            raise AssertionError(f"{r.case}: the scored draws are not predict's "
                                 f"({lo}, {med}, {hi} against {r.low}, {r.median}, {r.high})")
        rows.append(_row("memcglab", r, x, None, float(lo), float(hi), float(med)))
        mx, mw = measured_draws(models[r.case], points, seed, fold.calibration)
        mlo, mmed, mhi = weighted_quantiles(mx, mw, [ALPHA / 2, 0.5, 1 - ALPHA / 2])
        rows.append(_row(MEASURED, r, mx, mw, float(mlo), float(mhi), float(mmed)))
        for b in BASELINES:
            fp = fold.baselines[b.name]
            point = float(fp.point[fp.cases.index(r.case)])
            d, w, blo, bhi = predictive(point, fp, ALPHA)
            pct = np.expm1(d) * 100.0
            rows.append(_row(b.name, r, pct, w, float(np.expm1(blo) * 100),
                             float(np.expm1(bhi) * 100), float(np.expm1(point) * 100)))
    return pd.DataFrame(rows)


def proper_summary(pf: pd.DataFrame) -> pd.DataFrame:
    """Per method: each source's mean interval score and CRPS, their means over the
    sources, and the secondary columns over the cases."""
    out = []
    for method in METHODS:
        sel = pf[pf["method"] == method]
        means, overall = per_source(sel, SCORES)
        row = {"method": method, "cases": len(sel), "sources": len(means),
               "interval_score": float(overall["interval_score"]),
               "crps": float(overall["crps"])}
        for src, v in means.iterrows():
            row[f"interval_score:{src}"] = float(v["interval_score"])
        for src, v in means.iterrows():
            row[f"crps:{src}"] = float(v["crps"])
        row.update({"coverage": float(sel["inside"].mean()),
                    "median_width_pp": float(sel["width_pp"].median()),
                    "median_abs_error_pp": float(sel["error_pp"].median()),
                    "sign_accuracy": float(sel["sign_right"].mean())})
        out.append(row)
    return pd.DataFrame(out).set_index("method")


def proper_run(frame: pd.DataFrame, folds: Mapping, points: int,
               seed: int, terms=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`proper_frame` and :func:`proper_summary` of a scoreboard's run (its model's
    ``terms``, :data:`memcglab.scenario.terms.DEFAULT_TERMS` by default)."""
    from memcglab.scenario.terms import DEFAULT_TERMS
    from memcglab.validation.dataset import case_models

    models = {m.case.case_id: m for m in case_models(terms=terms or DEFAULT_TERMS)}
    pf = proper_frame(frame, folds, models, points, seed)
    return pf, proper_summary(pf)


def code_commit() -> str:
    """The checkout's commit (with ``+dirty`` if tracked files differ), or the version."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain",
                                "--untracked-files=no"], check=True, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        from memcglab.cli import version

        return f"version {version()}"


def proper_text(table: pd.DataFrame) -> str:
    """The table as Markdown: the mean scores over sources, each source's interval score,
    then the secondary columns."""
    from memcglab.validation.cli import markdown_table

    cols = ["sources", "cases", "interval_score", "crps",
            *[c for c in table.columns if c.startswith("interval_score:")],
            "coverage", "median_width_pp", "median_abs_error_pp", "sign_accuracy"]
    t = table[cols].rename(columns=lambda c: c.replace("interval_score:", "IS "))
    return markdown_table(t.round(3))


def write_tables(out: Path, pf: pd.DataFrame, table: pd.DataFrame, atomic,
                 points: int, seed: int) -> None:
    """``proper_scores.parquet`` (per method and case), ``proper_summary.csv`` and
    ``run.json`` (the code's commit, points and seed: issue 22, item 8)."""
    import json

    atomic(out / "proper_scores.parquet", lambda p: pf.to_parquet(p, index=False))
    atomic(out / "proper_summary.csv", lambda p: table.to_csv(p))
    run = {"commit": code_commit(), "points": points, "seed": seed,
           "rules": ["data/validation/rules.md",
                     "data/validation/rules_addendum_2026-12-02_proper_scoring.md"]}
    atomic(out / "run.json", lambda p: p.write_text(json.dumps(run, indent=1) + "\n"))
