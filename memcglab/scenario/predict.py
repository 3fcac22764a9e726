"""``memcglab predict``: what a kernel performance robot would print for a scenario.

:func:`predict` checks the file (:func:`memcglab.scenario.spec.load_scenario`), counts
both kernels exactly (:class:`memcglab.scenario.model.ScenarioModel`), draws the
uncertain inputs (:func:`memcglab.scenario.space.draw`) and prices both kernels at every
point; the answer is the median and the 90% interval of the change in operations per
second, of each kernel's rate, and of each charge-path function's share of cycles, in
the scenario contract's JSON object (:mod:`memcglab.scenario.output`).

The model's relative error on the size of an effect (``sigma_rel``, calibrated on the
development set) widens the change: a point's log ratio ``log(new / base)`` is scaled
by ``1 + sigma_rel * z``. ``sigma_abs`` widens each rate the same way in log space.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from memcglab.calibration.files import CalibrationFile, load_calibration
from memcglab.scenario.model import ScenarioModel
from memcglab.scenario.output import PROFILE_FUNCTIONS, kernel_object, scenario_object
from memcglab.scenario.space import derived, draw
from memcglab.scenario.spec import Scenario, load_scenario

__all__ = ["DEFAULT_POINTS", "MAX_POINTS", "predict", "predict_scenario"]

#: parameter points per scenario: a power of two (Sobol balance) that keeps a scenario
#: well inside 30 s on 2 cores
DEFAULT_POINTS = 512
#: most points a prediction prices (memory grows with points x instances)
MAX_POINTS = 16384


def _band(x: np.ndarray) -> dict[str, float]:
    lo, med, hi = np.quantile(x, [0.05, 0.5, 0.95])
    return {"median": float(med), "low": float(lo), "high": float(hi)}


def _mode(labels: list[str]) -> str:
    return Counter(labels).most_common(1)[0][0]


def _version() -> str:
    from memcglab.cli import version

    return version()


def predict_scenario(scenario: Scenario, points: int = DEFAULT_POINTS, seed: int = 0,
                     calibration: CalibrationFile | None = None,
                     label: str = "none", model: ScenarioModel | None = None) -> dict:
    """The contract's object for one checked scenario (see the module doc)."""
    if not 1 <= points <= MAX_POINTS:
        raise ValueError(f"points={points}: must be between 1 and {MAX_POINTS}")
    m = model or ScenarioModel(scenario, seed=seed)
    d = draw(m.profile, m.cost_family, m.unit, m.tasks, len(m.combos), points, seed,
             calibration)
    v = derived(m.profile, m.cost_family, d.values)
    priced = m.evaluate(v, d.which)
    log_ratio = np.log(priced.new_rate / priced.base_rate)
    change = np.expm1(log_ratio * (1.0 + v["sigma_rel"] * d.z_change)) * 100.0
    widen = np.exp(v["sigma_abs"] * d.z_rate)
    base, new = m.base[0], m.new[0]

    def kernel(rate, prof, neck, counts):
        per_op = [c.per_op for c in counts]
        walks = float(np.mean([p["walks"] for p in per_op]))
        charges = float(np.mean([p["charges"] + p.get("obj_charges", 0.0) for p in per_op]))
        unch = float(np.mean([p["uncharges"] + p["uncharges_direct"]
                              + p.get("obj_uncharges", 0.0) for p in per_op]))
        return kernel_object(_band(rate * widen), walks, charges, unch,
                             {f: _band(prof[f]) for f in PROFILE_FUNCTIONS}, _mode(neck))

    del base, new
    return scenario_object(
        scenario.name, scenario.file, _band(change),
        kernel(priced.base_rate, priced.base_profile, priced.base_bottleneck, m.base),
        kernel(priced.new_rate, priced.new_profile, priced.new_bottleneck, m.new),
        label, points, seed, _version())


def predict(path: str | Path, points: int = DEFAULT_POINTS, seed: int = 0,
            calibration: str | Path = "default") -> dict:
    """Predict one scenario file (the Python API of ``memcglab predict``)."""
    cal, label = load_calibration(calibration)
    return predict_scenario(load_scenario(path), points, seed, cal, label)
