"""Study 1's calibration: the development set with the multi-memcg thread's "with" column out.

"[PATCH] memcg: multi-memcg percpu charge cache" (Shakeel Butt, April 2025,
``20250416180229.2902751-1-shakeel.butt@linux.dev``) is the development set's source
``multi_memcg_stock``: per client count, the "without" and the "with" throughput per client.
Study 1 predicts its "with" column from a calibration that never saw it, as
``data/preregistration/study01_addendum_2026-12-01_calibrated.md`` registers:

* :func:`observations_without_changes`: everything a calibration on the whole development
  set reads (:func:`memcglab.validation.dataset.observations`) minus the source's change
  observations (:data:`LEFT_OUT`, the improvement column, "with" over "without"), keeping
  its base-rate observations (the "without" column as absolute throughput);
* :func:`calibrate`: the fit on them (the fold cache keeps it), refused if its recorded
  cases name one of the left-out observations (:func:`check_no_change`);
* :func:`predict`: each case's ``memcglab predict`` object at that calibration, its new
  kernel's rate in Mbps per client, and the driver of that band found at the same points
  (:func:`memcglab.validation.drivers.band_driver`). No measured value is read here but
  the "without" rates the calibration fits, through :mod:`memcglab.validation.dataset`;
* :func:`driver_cells`: a row's driver for its claim row, and, for a miss, what it would
  take (the driver's value at which the median meets the published value);
* :func:`predict_third`: the third addendum's two variants
  (``study01_addendum_2026-12-03_chosen_model.md``): the chosen model's draws at that
  calibration, and the same with the source's printed base run given as
  ``[base.measured]``; :func:`baseline_draws`: the fair baselines of the scoreboard's fold
  for this source on the same rows.

A "with" value enters only through a change observation: a base rate is computed from the
case's ``base_value`` alone
(:meth:`memcglab.validation.dataset.CaseModel.measured_log_base_rate`).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memcglab.calibration.files import CalibrationFile, dump_calibration, read_calibration
from memcglab.scenario.predict import DEFAULT_POINTS, predict_scenario, scenario_draws
from memcglab.scenario.space import TAU_PRIOR
from memcglab.validation.calibrate import Observation, fit
from memcglab.validation.dataset import (
    CaseModel,
    case_models,
    hyperpriors,
    observations,
    unknowns,
)
from memcglab.validation.digest import devset_sha256
from memcglab.validation.drivers import NEW_RATE, BandDriver, band_driver
from memcglab.validation.foldcache import cached_fold
from memcglab.validation.scoreboard import LeakError

__all__ = ["CACHE_KEY", "LEFT_OUT", "POINTS", "QUICK_POINTS", "SOURCE", "VARIANTS",
           "baseline_draws", "calibrate", "calibration_sha256", "check_no_change",
           "driver_cells", "observations_without_changes", "predict", "predict_third"]

#: the development set's source whose "with" column study 1 predicts
SOURCE = "multi_memcg_stock"
#: its change observations, left out of the calibration (one per client count)
LEFT_OUT: tuple[str, ...] = tuple(f"{SOURCE}/clients{n:02d}" for n in (6, 12, 18, 24, 30, 36))
#: parameter points of the registered prediction (memcglab predict's default) and of a
#: quick run (memcglab validate --quick's)
POINTS = DEFAULT_POINTS
QUICK_POINTS = 64
#: the fold cache's key (and the calibration file's ``left_out``): the source's changes
CACHE_KEY = f"{SOURCE}:changes"
_RATE = "/base_rate"
#: the third addendum's variants: A the chosen model, B with the printed base run given
VARIANTS = {"A": "chosen model", "B": "chosen model with [base.measured]"}


def observations_without_changes(models: Sequence[CaseModel]) -> list[Observation]:
    """Every observation of ``models`` and the calibration point but :data:`SOURCE`'s
    changes (module doc); :class:`LeakError` if one would remain."""
    obs = [o for o in observations(models)
           if not (o.source == SOURCE and o.kind in ("change_pct", "log_ratio"))]
    check_no_change([o.case for o in obs])
    return obs


def check_no_change(cases_read: Sequence[str]) -> None:
    """Refuse a calibration that read any :data:`SOURCE` observation but a base rate."""
    leaked = sorted(c for c in cases_read
                    if c.startswith(f"{SOURCE}/") and not c.endswith(_RATE))
    if leaked:
        raise LeakError(f"study 1's calibration would read {SOURCE}'s held-out 'with' "
                        f"column through {leaked}; only its {_RATE[1:]} observations may "
                        "enter")


def _fit(models: Sequence[CaseModel]) -> CalibrationFile:
    obs = observations_without_changes(models)
    params = unknowns(models)
    cal = fit(params, obs, hyperpriors(params))
    families = tuple(sorted({m.family for m in models}))
    tau = float(cal.mode.get("hold_tau", TAU_PRIOR))
    cf = CalibrationFile(cal, devset_sha256(), tau, (CACHE_KEY,), families,
                         note="fitted by memcglab.validation.study01.calibrate: the "
                              f"development set without {SOURCE}'s change observations "
                              "(its 'without' base rates kept)")
    # through its file text, so a fresh fit and the fold cache's copy are the same bytes
    with tempfile.TemporaryDirectory(prefix="memcglab-study01-") as d:
        path = Path(d) / "calibration.json"
        path.write_text(dump_calibration(cf))
        return read_calibration(path)


def calibrate(models: Sequence[CaseModel] | None = None) -> CalibrationFile:
    """The calibration without :data:`SOURCE`'s "with" column (cached, checked)."""
    ms = list(models) if models is not None else case_models()
    # one cached fit per model variant: the second addendum predicts with predict's model
    # of the day, the third with the terms it registered
    cf = cached_fold(devset_sha256(), CACHE_KEY, lambda: _fit(ms),
                     variant=ms[0].model.terms.key())
    check_no_change(cf.calibration.cases)
    return cf


def calibration_sha256(cf: CalibrationFile) -> str:
    """SHA-256 of the calibration's file text (what the prediction was made with)."""
    return hashlib.sha256(dump_calibration(cf).encode()).hexdigest()


def _mbps(ops_per_s: float, m: CaseModel) -> float:
    # ops/s over all instances -> bytes per second per instance -> Mbit/s
    return ops_per_s / m.model.instances * m.model.units * 8.0 / 1e6


def predict(cf: CalibrationFile, points: int = POINTS, seed: int = 0,
            models: Sequence[CaseModel] | None = None) -> pd.DataFrame:
    """One row per client count: the new kernel's rate (the "with" column) in Mbps per
    client, median and 90% band (``sigma_abs`` included), beside the base kernel's and
    the change's bands, the bottleneck, the band's driver (its reach in Mbps) and what
    made it. Reads no measured value."""
    digest = calibration_sha256(cf)
    rows = []
    for m in _source_models(models):
        out = predict_scenario(m.model.scenario, points, seed, cf, f"study01:{digest}",
                               model=m.model)
        new, base, change = out["new"]["ops_per_s"], out["base"]["ops_per_s"], \
            out["change_pct"]
        drive = band_driver(m.model, cf, points, seed, NEW_RATE)
        if drive is None:
            raise ValueError(f"{m.case.case_id}: the new kernel's rate is the same at every "
                             "point; a calibrated band cannot be of zero width")
        rows.append({
            "clients": m.model.instances,
            "predicted_with_mbps": _mbps(new["median"], m),
            "low": _mbps(new["low"], m), "high": _mbps(new["high"], m),
            "predicted_without_mbps": _mbps(base["median"], m),
            "without_low": _mbps(base["low"], m), "without_high": _mbps(base["high"], m),
            "change_pct": change["median"], "change_low_pct": change["low"],
            "change_high_pct": change["high"], "new_bottleneck": out["new"]["bottleneck"],
            "alternatives": len(m.model.combos), "scenario": m.case.case_id,
            "points": points, "seed": seed, "calibration_sha256": digest,
            **drive.columns(scale=_mbps(1.0, m))})
    return pd.DataFrame(rows)


def driver_cells(row: Mapping[str, Any], published_mbps: float, missed: bool) -> dict[str, Any]:
    """A :func:`predict` row's ``driver`` and ``driver_st`` for its claim row, and when the
    row ``missed`` the published value, ``would_take``: the driver's value at which the
    median "with" rate meets it (as judge's misses say it)."""
    d = BandDriver.from_columns(row)
    out: dict[str, Any] = {"driver": d.name, "driver_st": d.st}
    if missed:
        take = d.would_take(published_mbps, "the median rate", " Mbit/s")
        out["would_take"] = take if d.drawn is None else \
            f"{published_mbps:.0f} Mbit/s per flow: {take}"
    return out


def _source_models(models: Sequence[CaseModel] | None) -> list[CaseModel]:
    ms = [m for m in (models if models is not None else case_models())
          if m.case.source == SOURCE]
    if sorted(m.case.case_id for m in ms) != sorted(LEFT_OUT):
        raise ValueError(f"study 1 predicts {', '.join(LEFT_OUT)}; got "
                         f"{sorted(m.case.case_id for m in ms)}")
    return sorted(ms, key=lambda x: x.model.instances)


def predict_third(cf: CalibrationFile, points: int = POINTS, seed: int = 0,
                  models: Sequence[CaseModel] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The third addendum's prediction: one row per (variant, client count) of
    :data:`VARIANTS` with ``memcglab predict``'s change band and the "with" band in Mbps
    per client, and the draws behind them (``clients``, ``variant``, ``change_pct``,
    ``weight``). Variant B gives the case's printed base throughput (the "without"
    column, which the calibration read too) as ``[base.measured]``. Reads no "with" value.
    """
    from memcglab.validation.proper import base_measured

    digest = calibration_sha256(cf)
    rows, draws = [], []
    for m in _source_models(models):
        for variant in VARIANTS:
            model = m.model if variant == "A" else m.model.with_measured(base_measured(m))
            out = predict_scenario(model.scenario, points, seed, cf,
                                   f"study01-third:{digest}", model=model)
            sd = scenario_draws(model, points, seed, cf, with_profile=False)
            new, change = out["new"]["ops_per_s"], out["change_pct"]
            n = m.model.instances
            rows.append({
                "clients": n, "variant": variant, "change_pct": change["median"],
                "change_low_pct": change["low"], "change_high_pct": change["high"],
                "predicted_with_mbps": _mbps(new["median"], m),
                "low": _mbps(new["low"], m), "high": _mbps(new["high"], m),
                "conditioning": out["base"]["conditioning"],
                "new_bottleneck": out["new"]["bottleneck"], "scenario": m.case.case_id,
                "terms": model.terms.key(), "points": points, "seed": seed,
                "calibration_sha256": digest})
            draws.append(pd.DataFrame({"clients": n, "variant": variant,
                                       "change_pct": sd.change_pct, "weight": sd.weights}))
    return pd.DataFrame(rows), pd.concat(draws, ignore_index=True)


def baseline_draws(models: Sequence[CaseModel] | None = None) -> pd.DataFrame:
    """The fair baselines of the scoreboard's fold for :data:`SOURCE` (fitted on the other
    sources' changes; they read no base rate) on its cases: per baseline and client count,
    the predictive draws of the change in % with their weights (split conformal)."""
    from memcglab.validation.baselines import predictive
    from memcglab.validation.scoreboard import baseline_folds

    ms = list(models) if models is not None else case_models()
    clients = {m.case.case_id: m.model.instances for m in _source_models(ms)}
    out = []
    for name, fp in baseline_folds(SOURCE, ms).items():
        for case, point in zip(fp.cases, fp.point, strict=True):
            d, w, _, _ = predictive(float(point), fp)
            out.append(pd.DataFrame({"clients": clients[case], "method": name,
                                     "change_pct": np.expm1(d) * 100.0, "weight": w}))
    return pd.concat(out, ignore_index=True)
