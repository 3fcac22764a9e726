"""``memcglab predict``: what a kernel performance robot would print for a scenario.

:func:`predict` checks the file (:func:`memcglab.scenario.spec.load_scenario`), counts
both kernels exactly (:class:`memcglab.scenario.model.ScenarioModel`), draws the
uncertain inputs (:func:`memcglab.scenario.space.draw`) and prices both kernels at every
point; the answer is the median and the 90% interval of the change in operations per
second, of each kernel's rate, and of each charge-path function's share of cycles, in
the scenario contract's JSON object (:mod:`memcglab.scenario.output`).

The model's own error on ``y = log(new / base)`` is the calibrated error model's
(:mod:`memcglab.scenario.errors`; which one, and which terms the model has, is
:data:`memcglab.scenario.terms.DEFAULT_TERMS`, chosen by
``data/validation/rules_addendum_2026-12-02b_model_selection.md``). ``sigma_abs`` widens
each rate in log space.

With ``[base.measured]`` (contract revision 2) the prediction is conditioned on the base
run: at each point the work outside memcg is solved so that the base kernel's rate is the
given throughput (:meth:`ScenarioModel.solve_work`), and a given profile weights the
points by the likelihood of its shares (:func:`profile_log_weights`); every quantile is
then weighted. ``band`` is each group of inputs' total Sobol index on ``y``
(:mod:`memcglab.scenario.band`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memcglab.calibration.files import CalibrationFile, load_calibration
from memcglab.scenario.band import variance_shares
from memcglab.scenario.errors import draw_y
from memcglab.scenario.model import Priced, ScenarioModel
from memcglab.scenario.output import PROFILE_FUNCTIONS, kernel_object, scenario_object
from memcglab.scenario.space import Draws, derived, draw
from memcglab.scenario.spec import Measured, Scenario, load_scenario

__all__ = ["DEFAULT_POINTS", "MAX_POINTS", "PROFILE_NOISE", "SHARE_FLOOR", "ScenarioDraws",
           "points_of", "predict", "predict_scenario", "price_points", "profile_log_weights",
           "scenario_draws", "weighted_quantiles", "y_of"]

#: parameter points per scenario: a power of two (Sobol balance) that keeps a scenario
#: well inside 30 s on 2 cores
DEFAULT_POINTS = 512
#: most points a prediction prices (memory grows with points x instances)
MAX_POINTS = 16384
#: a given share's noise in log units, and the bound a printed 0.00 stands for (%)
#: (rules_addendum_2026-12-02b, sections 3 and 4)
PROFILE_NOISE = 0.05
SHARE_FLOOR = 0.005
#: the self shares the model can give: the two page_counter functions, whose work is
#: their own (their callees are inlined atomics)
SELF_FUNCTIONS = ("page_counter_try_charge", "page_counter_uncharge")


@dataclass(frozen=True)
class ScenarioDraws:
    """A prediction's points: the change at each, its weight, the priced kernels."""

    change_pct: np.ndarray
    weights: np.ndarray
    priced: Priced
    #: log(new / base) with the model's error, per point
    y: np.ndarray
    values: dict[str, np.ndarray]
    draws: Draws
    conditioning: str


def weighted_quantiles(x: np.ndarray, w: np.ndarray | None, qs) -> np.ndarray:
    """Quantiles ``qs`` of ``x`` with weights ``w`` (None: numpy's, equal weights); the
    weighted ones interpolate the weighted empirical distribution at mid-weights."""
    x = np.asarray(x, dtype=float)
    if w is None:
        return np.quantile(x, qs)
    order = np.argsort(x)
    xs, ws = x[order], np.asarray(w, dtype=float)[order]
    cdf = (np.cumsum(ws) - 0.5 * ws) / ws.sum()
    return np.interp(qs, cdf, xs)


def profile_log_weights(measured: Measured, profile: Mapping[str, np.ndarray]) -> np.ndarray:
    """log likelihood of the given base shares at each point (addendum b, sections 3-4):
    normal in log share with :data:`PROFILE_NOISE`; a 0 is the bound :data:`SHARE_FLOOR`,
    censored. Self shares count for :data:`SELF_FUNCTIONS` only."""
    from scipy.stats import norm

    out = np.zeros(np.size(next(iter(profile.values()))))
    for fn, share in measured.profile:
        if measured.profile_kind == "self" and fn not in SELF_FUNCTIONS:
            continue
        pred = np.log(np.maximum(profile[fn], 1e-9))
        if share <= 0.0:
            out += norm.logcdf((np.log(SHARE_FLOOR) - pred) / PROFILE_NOISE)
        else:
            out += norm.logpdf((np.log(share) - pred) / PROFILE_NOISE)
    return out


def _target(m: ScenarioModel, measured: Measured) -> float:
    return measured.throughput * (m.instances if measured.per == "instance" else 1)


def points_of(m: ScenarioModel, points: int, seed: int, calibration: CalibrationFile | None,
              unit: np.ndarray | None = None) -> Draws:
    """The points predict prices ``m`` at (``unit``: the same inputs at other points of the
    unit cube)."""
    return draw(m.profile, m.cost_family, m.unit, m.tasks, len(m.combos), points, seed,
                calibration, m.terms, unit_points=unit)


def price_points(m: ScenarioModel, d: Draws, measured: Measured | None, with_profile: bool
                 ) -> tuple[Priced, dict[str, np.ndarray], float]:
    """Both kernels at the draws' points, conditioned on ``measured``'s throughput; the
    model's inputs there; the share of points where the condition could not be met."""
    v = derived(m.profile, m.cost_family, d.values, m.terms)
    unmet = 0.0
    if measured is not None:
        work, miss = m.solve_work(v, d.which, _target(m, measured))
        v["other_cycles"] = work
        unmet = float(np.mean(miss))
    return m.evaluate(v, d.which, with_profile=with_profile), v, unmet


def y_of(m: ScenarioModel, priced: Priced, v: Mapping[str, np.ndarray], d: Draws
         ) -> np.ndarray:
    """log(new / base) at each point with the model's error drawn."""
    log_ratio = np.log(priced.new_rate / priced.base_rate)
    return draw_y(m.terms.error, log_ratio, v, d.z_change, d.z_add)


def scenario_draws(m: ScenarioModel, points: int, seed: int,
                   calibration: CalibrationFile | None, with_profile: bool = True
                   ) -> ScenarioDraws:
    """Every point's change of ``m``'s scenario (conditioned on its ``[base.measured]``)."""
    measured = m.scenario.measured
    d = points_of(m, points, seed, calibration)
    need_profile = with_profile or bool(measured and measured.profile)
    priced, v, unmet = price_points(m, d, measured, need_profile)
    y = y_of(m, priced, v, d)
    weights = np.full(points, 1.0 / points)
    conditioning = "none"
    if measured is not None:
        conditioning = "met"
        if unmet > 0:
            conditioning = (f"unmet: at {unmet:.0%} of the points the charge path alone, "
                            "with no work outside memcg, runs slower than the given "
                            "throughput")
        if measured.profile:
            lw = profile_log_weights(measured, priced.base_profile)
            w = np.exp(lw - lw.max())
            weights = w / w.sum()
    return ScenarioDraws(change_pct=np.expm1(y) * 100.0, weights=weights, priced=priced,
                         y=y, values=v, draws=d, conditioning=conditioning)


def band_shares(m: ScenarioModel, sd: ScenarioDraws, seed: int,
                calibration: CalibrationFile | None) -> dict[str, float]:
    """The contract's ``band``: each input group's total Sobol index on ``y``."""
    d0 = sd.draws
    points = d0.unit.shape[0]

    def y_at(unit: np.ndarray) -> np.ndarray:
        d = points_of(m, points, seed, calibration, unit)
        priced, v, _ = price_points(m, d, m.scenario.measured, False)
        return y_of(m, priced, v, d)

    return variance_shares(y_at, d0.unit, d0.columns, seed)


def _band(x: np.ndarray, w: np.ndarray | None) -> dict[str, float]:
    lo, med, hi = weighted_quantiles(x, w, [0.05, 0.5, 0.95])
    return {"median": float(med), "low": float(lo), "high": float(hi)}


def _mode(labels: list[str], w: np.ndarray | None) -> str:
    if w is None or not labels:
        return Counter(labels).most_common(1)[0][0]
    tally: Counter[str] = Counter()
    for label, weight in zip(labels, w, strict=True):
        tally[label] += float(weight)
    return tally.most_common(1)[0][0]


def _version() -> str:
    from memcglab.cli import version

    return version()


def predict_scenario(scenario: Scenario, points: int = DEFAULT_POINTS, seed: int = 0,
                     calibration: CalibrationFile | None = None,
                     label: str = "none", model: ScenarioModel | None = None,
                     draws_out: list | None = None, draws_file: str | None = None) -> dict:
    """The contract's object for one checked scenario (see the module doc).

    ``draws_out``, when given, receives ``(scenario name, change_pct, weights)``;
    ``draws_file`` is the ``--draws`` file the object names."""
    if not 1 <= points <= MAX_POINTS:
        raise ValueError(f"points={points}: must be between 1 and {MAX_POINTS}")
    m = model or ScenarioModel(scenario, seed=seed)
    sd = scenario_draws(m, points, seed, calibration)
    w = None if scenario.measured is None or not scenario.measured.profile else sd.weights
    v, priced = sd.values, sd.priced
    widen_base = np.exp(v["sigma_abs"] * sd.draws.z_rate)
    widen_new = widen_base
    if scenario.measured is not None and sd.conditioning == "met":
        widen_base = 1.0  # the base rate is the given throughput, not a prediction
    if draws_out is not None:
        draws_out.append((scenario.name, sd.change_pct, sd.weights))

    def kernel(rate, prof, neck, counts, widen):
        per_op = [c.per_op for c in counts]
        walks = float(np.mean([p["walks"] for p in per_op]))
        charges = float(np.mean([p["charges"] + p.get("obj_charges", 0.0) for p in per_op]))
        unch = float(np.mean([p["uncharges"] + p["uncharges_direct"]
                              + p.get("obj_uncharges", 0.0) for p in per_op]))
        return kernel_object(_band(rate * widen, w), walks, charges, unch,
                             {f: _band(prof[f], w) for f in PROFILE_FUNCTIONS},
                             _mode(neck, w))

    band = band_shares(m, sd, seed, calibration)
    base = kernel(priced.base_rate, priced.base_profile, priced.base_bottleneck, m.base,
                  widen_base)
    return scenario_object(
        scenario.name, scenario.file, _band(sd.change_pct, w),
        {"conditioning": sd.conditioning, **base},
        kernel(priced.new_rate, priced.new_profile, priced.new_bottleneck, m.new, widen_new),
        label, points, seed, _version(), band=band, draws=draws_file)


def predict(path: str | Path, points: int = DEFAULT_POINTS, seed: int = 0,
            calibration: str | Path = "default") -> dict:
    """Predict one scenario file (the Python API of ``memcglab predict``)."""
    cal, label = load_calibration(calibration)
    return predict_scenario(load_scenario(path), points, seed, cal, label)
