"""What drives a ``memcglab predict`` band, found at the very points predict priced.

A predicted band (the change, or a kernel's rate) is the 5-95% of a quantity over the
points of one scrambled Sobol design (:func:`memcglab.scenario.space.draw`). Its driver
is the input whose coordinate has the largest total Sobol index on that quantity, with
predict's own design as the estimators' first matrix
(:func:`memcglab.uncertainty.sensitivity.design_sobol`), so the driver explains the band
that was printed, not a fresh sample's. A calibrated coordinate moves, through the
posterior's Cholesky factor, every calibrated parameter after it; it is named after the
parameter it leads (as :mod:`memcglab.scenario.band` counts it). The model's own error
(its calibrated spreads and standard variates) is one input, :data:`MODEL_ERROR`, as the
contract's ``band`` groups it.

Its reach is what it would take: the quantity's median over the same points with the
driver pinned at each of :data:`REACH_GRID` values and every other input as drawn,
out to :data:`REACH` times past what the points drew (a fraction stays in [0, 1]).
:meth:`BandDriver.would_take` reads where that median meets a target. A discrete
driver (which modelling alternative a point prices) is pinned to each option instead;
the model's error is pinned through its standard variate, in sd.

The quantity functions price through predict's own functions
(:func:`memcglab.scenario.predict.price_points`, :func:`~memcglab.scenario.predict.y_of`) for
a scenario without ``[base.measured]``; the tests pin each against predict's printed band.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcglab.calibration.files import CalibrationFile
from memcglab.scenario.band import group_of
from memcglab.scenario.model import ScenarioModel
from memcglab.scenario.predict import points_of, price_points, y_of
from memcglab.scenario.space import Draws, unknown_params
from memcglab.stats import Take
from memcglab.uncertainty.sensitivity import crossing, design_sobol, top_driver

__all__ = ["CHANGE_PCT", "DRIVER_COLUMNS", "MODEL_ERROR", "NEW_RATE", "REACH", "REACH_GRID",
           "BandDriver", "Quantity", "band_driver", "inputs_of", "predict_draws"]

#: values the reach pins the driver at, and how far past the drawn range it looks
REACH_GRID = 49
REACH = 10.0
#: the columns :meth:`BandDriver.columns` writes into a prediction table
DRIVER_COLUMNS: tuple[str, ...] = ("driver", "driver_st", "driver_unit", "driver_low",
                                   "driver_high", "driver_median", "reach_values",
                                   "reach_medians")
#: the model's own error, one input: its calibrated spreads and standard variates
MODEL_ERROR = "model_error"
_VARIATES = ("z_change", "z_rate", "z_add")


@dataclass(frozen=True)
class Quantity:
    """A priced quantity: the model and the points -> one value per point; ``variate``
    is the standard variate of the model's error on it (what pinning the error pins)."""

    name: str
    at: Callable[[ScenarioModel, Draws], np.ndarray]
    variate: str


def predict_draws(m: ScenarioModel, points: int, seed: int,
                  calibration: CalibrationFile | None, unit: np.ndarray | None = None
                  ) -> Draws:
    """The points ``memcglab predict`` prices ``m`` at (``unit``: the same inputs at other
    points of the unit cube)."""
    return points_of(m, points, seed, calibration, unit)


def _priced(m: ScenarioModel, d: Draws) -> tuple[Any, dict[str, np.ndarray]]:
    if m.scenario.measured is not None:
        raise ValueError(f"{m.scenario.name}: a scenario with [base.measured] is priced "
                         "conditioned on it; its drivers are not computed here")
    priced, v, _ = price_points(m, d, None, False)
    return priced, v


def _change(m: ScenarioModel, d: Draws) -> np.ndarray:
    p, v = _priced(m, d)
    y = y_of(m, p, v, d)
    with np.errstate(over="ignore"):  # a pinned error far out overflows to inf: fine
        return np.expm1(y) * 100.0


def _new_rate(m: ScenarioModel, d: Draws) -> np.ndarray:
    p, v = _priced(m, d)
    with np.errstate(over="ignore"):
        return p.new_rate * np.exp(v["sigma_abs"] * d.z_rate)


#: the change in ops/s, in %, the model's error included (the contract's ``change_pct``)
CHANGE_PCT = Quantity("change_pct", _change, "z_change")
#: the new kernel's ops/s widened by the model's error on rates (``new.ops_per_s``)
NEW_RATE = Quantity("new.ops_per_s", _new_rate, "z_rate")


def inputs_of(columns: tuple[str, ...]) -> tuple[str, ...]:
    """Each coordinate's input: the model's error coordinates are one, :data:`MODEL_ERROR`
    (the contract's ``band`` group, :func:`memcglab.scenario.band.group_of`)."""
    return tuple(MODEL_ERROR if group_of(c) == "model_error" else c for c in columns)


@dataclass(frozen=True)
class BandDriver:
    """A band's driver: the input, its total Sobol index, its unit, where the points drew
    it (5-95%; None for a discrete one), the printed median, and the quantity's median
    with the driver pinned (``reach_values``: the values, or for a discrete driver each
    option's index). ``inputs`` is the band's parameter space, in the design's order."""

    name: str
    st: float
    unit: str
    drawn: tuple[float, float] | None
    median: float
    reach_values: tuple[float, ...]
    reach_medians: tuple[float, ...]
    inputs: tuple[str, ...] = ()

    def would_take(self, target: float, what: str = "the median", unit: str = "") -> str:
        """What it would take for ``what`` (in ``unit``) to meet ``target``: the driver's
        value (a :class:`memcglab.stats.Take`'s text), or for a discrete driver how many of
        its options put the median past it."""
        ys = self.reach_medians
        if self.drawn is None:
            past = sum((y - target) * (self.median - target) <= 0 for y in ys)
            spread = f"(their medians {min(ys):.3g} to {max(ys):.3g}{unit})"
            if not past:
                return (f"{self.name}: none of its {len(ys)} options brings {what} to "
                        f"{target:g}{unit} {spread}")
            return (f"{self.name}: {past} of its {len(ys)} options bring {what} to "
                    f"{target:g}{unit} or past {spread}")
        near = 0.5 * (self.drawn[0] + self.drawn[1])
        at = crossing(self.reach_values, ys, target, near)
        return Take(self.name, self.unit, at, self.drawn, "",
                    (self.reach_values[0], self.reach_values[-1])).text()

    def columns(self, scale: float = 1.0) -> dict[str, Any]:
        """The prediction table's :data:`DRIVER_COLUMNS` (medians times ``scale``)."""
        lo, hi = self.drawn if self.drawn is not None else (np.nan, np.nan)
        return {"driver": self.name, "driver_st": self.st, "driver_unit": self.unit,
                "driver_low": lo, "driver_high": hi, "driver_median": self.median * scale,
                "reach_values": list(self.reach_values),
                "reach_medians": [y * scale for y in self.reach_medians]}

    @classmethod
    def from_columns(cls, row: Mapping[str, Any]) -> BandDriver:
        """Back from a table row's :data:`DRIVER_COLUMNS` (a parquet round trip)."""
        lo, hi = float(row["driver_low"]), float(row["driver_high"])
        return cls(str(row["driver"]), float(row["driver_st"]), str(row["driver_unit"]),
                   (lo, hi) if np.isfinite(lo) else None, float(row["driver_median"]),
                   tuple(map(float, row["reach_values"])),
                   tuple(map(float, row["reach_medians"])))


def _units(m: ScenarioModel, calibration: CalibrationFile | None) -> dict[str, str]:
    out = {p.name: p.unit for p in unknown_params(m.cost_family, m.unit, m.terms)}
    out.update({n: p.unit for n, p in m.profile.priors.items()})
    if calibration is not None:
        out.update({p.name: p.unit for p in calibration.calibration.params})
    return {**out, "busiest_cpu_share": "fraction", MODEL_ERROR: "sd"}


def _pinned(d: Draws, name: str, x: float) -> Draws:
    full = np.full(d.which.shape, x, dtype=float)
    if name in _VARIATES:
        return dataclasses.replace(d, **{name: full})
    if name == "alternative":
        return dataclasses.replace(d, which=full.astype(np.int64))
    return dataclasses.replace(d, values={**d.values, name: full})


def _grid(drawn: np.ndarray, unit: str) -> np.ndarray:
    lo, hi = float(drawn.min()), float(drawn.max())
    if unit.startswith("fraction"):
        return np.linspace(0.0, 1.0, REACH_GRID)
    if lo > 0:
        return np.geomspace(lo / REACH, hi * REACH, REACH_GRID)
    pad = (REACH - 1.0) / 2.0 * (hi - lo)
    return np.linspace(lo - pad, hi + pad, REACH_GRID)


def band_driver(m: ScenarioModel, calibration: CalibrationFile | None, points: int,
                seed: int, quantity: Quantity) -> BandDriver | None:
    """The driver of ``quantity``'s band at predict's ``points`` (module doc); None when
    the quantity is the same at every point (a band of zero width has nothing to explain)."""
    d = predict_draws(m, points, seed, calibration)
    if d.unit is None or not d.columns:
        raise ValueError("memcglab.scenario.space.draw returned no unit-cube design; the "
                         "driver is found at predict's own points")
    inputs = inputs_of(tuple(d.columns))
    _, total = design_sobol(
        lambda u: quantity.at(m, predict_draws(m, points, seed, calibration, u)),
        d.unit, inputs, seed)
    top = top_driver(total)
    if top is None:
        return None
    name, st = top
    median = float(np.median(quantity.at(m, d)))
    pin = quantity.variate if name == MODEL_ERROR else name
    if pin == "alternative":
        xs = np.arange(len(m.combos), dtype=float)
        drawn = None
    else:
        values = np.asarray(getattr(d, pin) if pin in _VARIATES else d.values[pin], float)
        q = np.quantile(values, [0.05, 0.95])
        xs, drawn = _grid(values, _units(m, calibration).get(name, "")), (float(q[0]),
                                                                         float(q[1]))
    medians = [float(np.median(quantity.at(m, _pinned(d, pin, float(x))))) for x in xs]
    return BandDriver(name, st, _units(m, calibration).get(name, ""), drawn, median,
                      tuple(float(x) for x in xs), tuple(medians), tuple(dict.fromkeys(inputs)))
