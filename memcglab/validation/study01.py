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
  take (the driver's value at which the median meets the published value).

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

import pandas as pd

from memcglab.calibration.files import CalibrationFile, dump_calibration, read_calibration
from memcglab.scenario.predict import DEFAULT_POINTS, predict_scenario
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

__all__ = ["CACHE_KEY", "LEFT_OUT", "POINTS", "QUICK_POINTS", "SOURCE", "calibrate",
           "calibration_sha256", "check_no_change", "driver_cells",
           "observations_without_changes", "predict"]

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
    cf = cached_fold(devset_sha256(), CACHE_KEY, lambda: _fit(ms))
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
    ms = [m for m in (models if models is not None else case_models())
          if m.case.source == SOURCE]
    if sorted(m.case.case_id for m in ms) != sorted(LEFT_OUT):
        raise ValueError(f"study 1 predicts {', '.join(LEFT_OUT)}; got "
                         f"{sorted(m.case.case_id for m in ms)}")
    digest = calibration_sha256(cf)
    rows = []
    for m in sorted(ms, key=lambda x: x.model.instances):
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
