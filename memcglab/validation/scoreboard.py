"""The scoreboard: every development case predicted leave-one-source-out, and scored.

For each source, :func:`run` calibrates on every other source's cases and the
calibration point (:func:`memcglab.validation.calibrate.fit` over
:func:`memcglab.validation.dataset.observations`), predicts that source's cases with
``memcglab predict``'s own function at that calibration, and scores each case by the
rules of ``data/validation/rules.md`` beside the fair baselines' point predictions
(:mod:`memcglab.validation.baselines`, registered by the addendum of 2026-12-02, which
retired ``rules.md``'s three). :func:`summary` gives coverage, median band width,
median absolute error and sign accuracy per method, the baselines as points (``rules.md``);
their bands and the proper scores are :mod:`memcglab.validation.proper`'s.

Leakage is checked, not assumed: each fold's calibration records the cases it read, and
:func:`run` refuses a fold whose calibration read a case of its held-out source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from memcglab.calibration.files import CalibrationFile
from memcglab.scenario.predict import DEFAULT_POINTS, predict_scenario
from memcglab.scenario.space import TAU_PRIOR
from memcglab.scenario.terms import DEFAULT_TERMS, Terms
from memcglab.validation.baselines import (
    BASELINES,
    FoldPrediction,
    case_inputs,
    fold_predictions,
)
from memcglab.validation.calibrate import fit
from memcglab.validation.dataset import (
    CaseModel,
    case_models,
    declared_noise,
    hyperpriors,
    observations,
    priced_cases,
    unknowns,
)
from memcglab.validation.devset import case_profile
from memcglab.validation.digest import devset_sha256
from memcglab.validation.foldcache import cached_fold

__all__ = ["COLUMNS", "METHODS", "Fold", "LeakError", "baseline_folds", "calibrate_on",
           "cases_in_order", "fold", "profile_frame", "run", "summary"]

#: the scoreboard's columns, one row per case (the issue's list first)
COLUMNS: tuple[str, ...] = (
    "source", "scenario", "measured_change_pct", "noise_pct", "median", "low", "high",
    "inside", "sign_right", "error_pp", "case", "noise_origin", "machine_family",
    "base_bottleneck", "new_bottleneck", "no_change", "inverse_cycles", "bottleneck_law",
    "calibrated_on")
#: the methods a summary compares: the lab, then the baselines
METHODS: tuple[str, ...] = ("memcglab", "no_change", "inverse_cycles", "bottleneck_law")


class LeakError(AssertionError):
    """A fold's calibration read a measured value of the source it predicts."""


@dataclass(frozen=True)
class Fold:
    """One leave-one-source-out fold: its held-out source and its calibration."""

    source: str
    calibration: CalibrationFile
    #: each fair baseline's fit, points and residuals for this fold, by name
    baselines: dict[str, FoldPrediction]


def calibrate_on(models: Sequence[CaseModel], left_out: Sequence[str] = ()) -> CalibrationFile:
    """A calibration fitted on ``models`` except the ``left_out`` sources' (and the
    calibration point)."""
    train = [m for m in models if m.case.source not in left_out]
    obs = observations(train)
    for source in left_out:
        leaked = sorted({o.case for o in obs if o.source == source})
        if leaked:
            raise LeakError(f"fold {source}: its calibration would read held-out {leaked}")
    params = unknowns(train)
    cal = fit(params, obs, hyperpriors(params))
    families = tuple(sorted({m.family for m in train}))
    tau = float(cal.mode.get("hold_tau", TAU_PRIOR))
    terms = train[0].model.terms if train else DEFAULT_TERMS
    return CalibrationFile(cal, devset_sha256(), tau, tuple(left_out), families,
                           note="fitted by memcglab.validation.scoreboard.calibrate_on; "
                                f"terms {terms.key()}")


def _inside(low: float, high: float, m: float, noise: float) -> bool:
    return bool(high >= m - noise and low <= m + noise)


def _sign(median: float, m: float) -> bool:
    return bool(np.sign(median) == np.sign(m))


def fold(source: str, models: Sequence[CaseModel]) -> Fold:
    """``source``'s fold for ``models``' terms: its calibration without the source (the
    fold cache keeps it, per variant), checked for leaks, and the fair baselines'."""
    terms = models[0].model.terms
    cf = cached_fold(devset_sha256(), source,
                     lambda: calibrate_on(models, left_out=(source,)), variant=terms.key())
    held = {m.case.case_id for m in models if m.case.source == source}
    read = {"/".join(c.split("/")[:2]) for c in cf.calibration.cases}
    if held & read:
        raise LeakError(f"fold {source}: its calibration read held-out {sorted(held & read)}")
    return Fold(source, cf, baseline_folds(source, models))


def baseline_folds(source: str, models: Sequence[CaseModel]) -> dict[str, FoldPrediction]:
    """Each fair baseline fitted without ``source``'s cases, predicting them, by name."""
    # the baselines read every modelling alternative's counts, whatever memcglab's terms
    # (the proper-scoring addendum: "averaged over the modelling alternatives")
    inputs = [case_inputs(m) for m in _baseline_models(models)]
    return {b.name: fold_predictions(b, inputs, source) for b in BASELINES}


def _baseline_models(models: Sequence[CaseModel]) -> list[CaseModel]:
    terms = replace(models[0].model.terms, alternatives=True)
    return case_models([m.case for m in models], terms)


def _baseline_pct(held: Fold, name: str, case_id: str) -> float:
    f = held.baselines[name]
    return float(np.expm1(f.point[f.cases.index(case_id)]) * 100.0)


def run(points: int = DEFAULT_POINTS, seed: int = 0, sources: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None, terms: Terms = DEFAULT_TERMS
        ) -> tuple[pd.DataFrame, dict[str, Fold]]:
    """Predict every case the model can price leave-one-source-out; one row per case
    (:data:`COLUMNS`). The cases it refuses are :func:`unpriced_cases`'s."""
    cases = priced_cases()
    models = case_models(cases, terms)
    wanted = sorted({c.source for c in cases}) if sources is None else list(sources)
    rows, folds = [], {}
    for source in wanted:
        if progress:
            progress(f"calibrating without {source}")
        folds[source] = this = fold(source, models)
        for m in (m for m in models if m.case.source == source):
            if progress:
                progress(f"predicting {m.case.case_id}")
            out = predict_scenario(m.model.scenario, points, seed, this.calibration,
                                   f"loso:{source}", model=m.model)
            c = m.case
            noise = declared_noise(c)
            band = out["change_pct"]
            rows.append({
                "source": c.source, "scenario": str(c.scenario.relative_to(
                    c.scenario.parents[1])), "measured_change_pct": c.measured_change_pct,
                "noise_pct": noise, "median": band["median"], "low": band["low"],
                "high": band["high"],
                "inside": _inside(band["low"], band["high"], c.measured_change_pct, noise),
                "sign_right": _sign(band["median"], c.measured_change_pct),
                "error_pp": abs(band["median"] - c.measured_change_pct), "case": c.case_id,
                "noise_origin": c.noise_origin if c.noise_pct is not None else "declared",
                "machine_family": m.family, "base_bottleneck": out["base"]["bottleneck"],
                "new_bottleneck": out["new"]["bottleneck"],
                "no_change": _baseline_pct(this, "no_change", c.case_id),
                "inverse_cycles": _baseline_pct(this, "inverse_cycles", c.case_id),
                "bottleneck_law": _baseline_pct(this, "bottleneck_law", c.case_id),
                "calibrated_on": ",".join(sorted({x.case.source for x in models
                                                   if x.case.source != source})),
                "_profile": (c, out)})
    frame = pd.DataFrame(rows)
    return frame, folds


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: coverage, median band width, median absolute error, sign accuracy."""
    out = []
    m, noise = frame["measured_change_pct"], frame["noise_pct"]
    for method in METHODS:
        if method == "memcglab":
            med, lo, hi = frame["median"], frame["low"], frame["high"]
        else:
            med = frame[method].astype(float)
            lo = hi = med
        ok = med.notna()
        inside = [_inside(a, b, x, n) for a, b, x, n in zip(lo[ok], hi[ok], m[ok], noise[ok],
                                                              strict=True)]
        out.append({"method": method, "cases": int(ok.sum()),
                    "coverage": float(np.mean(inside)) if inside else np.nan,
                    "median_width_pp": float(np.median((hi - lo)[ok])),
                    "median_abs_error_pp": float(np.median((med - m).abs()[ok])),
                    "sign_accuracy": float(np.mean([_sign(a, b) for a, b in
                                                    zip(med[ok], m[ok], strict=True)]))})
    return pd.DataFrame(out).set_index("method")


def profile_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured vs predicted shares of cycles, for the cases whose source prints a profile."""
    rows = []
    for case, out in frame["_profile"]:
        if not case.profile:
            continue
        measured = case_profile(case)
        for kernel in ("base", "new"):
            for kind, shares in measured.get(kernel, {}).items():
                for fn, band in out[kernel]["profile"].items():
                    if kind == "self" and fn not in ("page_counter_try_charge",
                                                     "page_counter_uncharge"):
                        continue
                    if fn not in shares:
                        continue
                    rows.append({"case": case.case_id, "kernel": kernel, "kind": kind,
                                 "function": fn, "measured_pct": shares[fn],
                                 "median": band["median"], "low": band["low"],
                                 "high": band["high"]})
    return pd.DataFrame(rows, columns=["case", "kernel", "kind", "function", "measured_pct",
                                       "median", "low", "high"])


def cases_in_order() -> list[str]:
    """Every scored development case's ID (those the model prices), in the set's order."""
    return [c.case_id for c in priced_cases()]
