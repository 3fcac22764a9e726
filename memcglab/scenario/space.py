"""The points a prediction is priced at: calibrated unknowns, hardware priors, alternatives.

One scrambled Sobol design (``scipy.stats.qmc``) in the unit cube, one coordinate per
uncertain input, maps to values through the package's one space of inputs
(:class:`memcglab.uncertainty.Space`, built by :func:`scenario_space`):

* the calibrated unknowns (:mod:`memcglab.scenario.model`), jointly, through the
  posterior's normal approximation (:meth:`memcglab.calibration.Calibration.from_unit`);
  those the calibration does not hold (a cost family, or a machine family it has no
  data on) from their priors;
* the charge path's hardware costs, the clock and ``smt_gain`` from the machine
  profile's priors (:data:`memcglab.pricing.SMT_GAIN_FALLBACK` for a profile without
  ``smt_gain``), and the busiest CPU's share
  (:func:`memcglab.scenario.work.busiest_share_prior`);
* the model's relative error on the size of an effect (``sigma_rel``, calibrated) and
  on absolute rates (``sigma_abs``), each with a standard variate
  (:class:`memcglab.uncertainty.Variate`);
* which of the priced modelling-alternative combinations a point uses.

With ``--calibration none`` the unknowns come from :data:`PRIORS` alone and the model's
own error is taken as 0: the spread is the priors'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import qmc

from memcglab.calibration.files import CalibrationFile
from memcglab.calibration.posterior import Param
from memcglab.cost import CostParams
from memcglab.hardware import MachineProfile
from memcglab.pricing.priors import SMT_GAIN_FALLBACK
from memcglab.scenario.terms import DEFAULT_TERMS, Terms
from memcglab.scenario.work import FIXED, UNIT, busiest_share_prior
from memcglab.uncertainty import Alternative, Block, Input, Prior, Space, Variate

__all__ = ["DESIGN", "PRIORS", "TAU_PARAM", "TAU_PRIOR", "Draws", "derived", "draw",
           "scenario_space", "unknown_params"]

#: spread (log units) of a machine family's hold-time deviation from the pooled scale,
#: when no calibration says it
TAU_PRIOR = 0.7
#: that spread as a fitted hyperparameter (rules_addendum_2026-12-02b, M0): the family
#: deviations' normal prior has it as its sd
TAU_PARAM = Param("hold_tau", "log", 0.5, 0.7,
                  "rules_addendum_2026-12-02b: the spread of machine families' hold-time "
                  "deviations, fitted (hierarchical)")


def _lognormal(name: str, unit: str, median: float, sd: float, source: str) -> Param:
    return Param(name, unit, median, sd, source)


#: priors of the unknowns that are not cost families' (those are in scenario.work)
PRIORS: dict[str, Param] = {
    "hold_scale": _lognormal(
        "hold_scale", "x c2c", 1.5, 0.8,
        "my inference: a contended line is held at least one cache-to-cache transfer, and "
        "longer when many CPUs snoop and retry for it; the calibration point of 'mm/memcg: "
        "Reduce kmemcache memory accounting overhead' (Waiman Long, May 2021, "
        "20210506150007.16288-1-longman@redhat.com) measures it on one machine"),
    "socket_growth": Param(
        "socket_growth", "exponent", 0.0, 0.4,
        "my inference: beyond the cross-socket share, a snoop that may visit every socket "
        "lengthens a transfer; 0 means the share says it all", positive=False),
}


def unknown_params(cost_family: str, unit: str, terms: Terms = DEFAULT_TERMS) -> list[Param]:
    """The unknowns a scenario of ``cost_family`` reads, with their priors as Params."""
    out = [PRIORS["hold_scale"]]
    if terms.socket_growth:
        out.append(PRIORS["socket_growth"])
    for prior in (FIXED[cost_family], UNIT[unit]):
        # a log-uniform prior's 5-95% range as a lognormal's 90% interval
        sd = (np.log(prior.high) - np.log(prior.low)) / (2 * 1.645) * 0.9
        out.append(Param(prior.name, prior.unit, prior.typical, float(sd), prior.source))
    return out


#: the coordinates of predict's design that are not inputs of the model: the alternative
#: combination and the error model's variates (:class:`Draws` holds them apart)
DESIGN = ("alternative", "z_change", "z_rate", "z_add")


@dataclass(frozen=True)
class Draws:
    """Values of every input at every point (B), plus each point's alternative index.

    A view of the one space's draws (:func:`scenario_space`, :meth:`Space.draws`): the
    model's inputs in ``values``, the alternative's index and the error variates apart."""

    values: dict[str, np.ndarray]
    which: np.ndarray
    #: the error model's standard variate (a t variate for ``student``)
    z_change: np.ndarray
    z_rate: np.ndarray
    #: the additive error's normal (``lognormal+additive``)
    z_add: np.ndarray
    #: the input each coordinate of the unit cube drives, in column order
    columns: tuple[str, ...] = ()
    #: the unit-cube points the values come from (points, dims)
    unit: np.ndarray | None = None


def scenario_space(profile: MachineProfile, cost_family: str, unit: str, tasks: int,
                   combos: int, calibration: CalibrationFile | None,
                   terms: Terms = DEFAULT_TERMS) -> Space:
    """The space a scenario's price is drawn over, in its design's column order.

    The calibration's unknowns (one :class:`~memcglab.uncertainty.Block`), the free
    unknowns (:class:`~memcglab.calibration.Param`), the hardware priors, the
    ``alternative`` combination, the variates ``z_change`` (Student-t with 4 degrees of
    freedom for ``student``), ``z_rate`` and ``z_add``, and, for an unseen machine
    family whose spread the calibration fitted, that family's standard normal deviation
    (:func:`draw` scales it by ``hold_tau``). Every input owns a coordinate, a point
    prior's and a single combination's too (``own_fixed``): the Sobol design, and so
    every registered prediction, depends on its columns.
    """
    hw = [n for n in CostParams.names() if n != "c2c_transfer"] + ["cpu_ghz", "smt_gain"]
    hw_priors: list[Prior] = [profile.priors[n] for n in hw if n in profile.priors]
    if "smt_gain" not in profile.priors:
        hw_priors.append(SMT_GAIN_FALLBACK)
    if terms.busiest_share:
        hw_priors.append(busiest_share_prior(tasks))
    needed = {p.name: p for p in unknown_params(cost_family, unit, terms)}
    inputs: list[Input] = []
    dev = f"hold_dev:{profile.family}"
    unseen = False
    if calibration is not None:
        names = calibration.calibration.names
        inputs.append(Block(names, calibration.calibration.from_unit))
        for n in names:
            needed.pop(n, None)
        if terms.family_deviation and dev not in names:
            if TAU_PARAM.name in names:
                unseen = True  # the family's deviation: the fitted spread times a normal
            else:
                needed[dev] = Param(dev, "log", 0.0, calibration.tau,
                                    "no data on this machine family: the pooled spread of "
                                    "family deviations", positive=False)
    # equal weights: the alternative's index is floor(u * combos), up to the rounding of
    # k / combos, which a scrambled Sobol point (a multiple of 2**-32) never falls within
    inputs += [*needed.values(), *hw_priors, Alternative("alternative", tuple(range(combos))),
               Variate("z_change", 4 if terms.error == "student" else None),
               Variate("z_rate"), Variate("z_add"), *([Variate(dev)] if unseen else [])]
    return Space(inputs, own_fixed=True)


def draw(profile: MachineProfile, cost_family: str, unit: str, tasks: int, combos: int,
         points: int, seed: int, calibration: CalibrationFile | None,
         terms: Terms = DEFAULT_TERMS, unit_points: np.ndarray | None = None) -> Draws:
    """``points`` quasi-random points of everything a scenario's price depends on:
    :func:`scenario_space`'s draws at a scrambled Sobol design.

    ``unit_points`` (points, dims) replaces the Sobol design: the same inputs at given
    points of the unit cube (how :mod:`memcglab.scenario.band` resamples one group)."""
    s = scenario_space(profile, cost_family, unit, tasks, combos, calibration, terms)
    dims = len(s.varying)
    if unit_points is None:
        u = qmc.Sobol(dims, scramble=True, seed=seed).random(points)
    else:
        u = np.asarray(unit_points, dtype=float)
        if u.shape != (points, dims):
            raise ValueError(f"unit_points has shape {u.shape}: must be ({points}, {dims})")
    d = s.draws(u)
    values = {k: v for k, v in d.values.items() if k not in DESIGN}
    dev = f"hold_dev:{profile.family}"
    if dev in s.names and isinstance(s[dev], Variate):
        values[dev] = values[TAU_PARAM.name] * values[dev]
    if calibration is None:
        for name in ("sigma_rel", "sigma_abs", "sigma_add"):
            values[name] = np.zeros(points)
    return Draws(values=values, which=d.index["alternative"], z_change=d["z_change"],
                 z_rate=d["z_rate"], z_add=d["z_add"], columns=s.varying, unit=u)


def derived(profile: MachineProfile, cost_family: str, values: dict[str, np.ndarray],
            terms: Terms = DEFAULT_TERMS) -> dict[str, np.ndarray]:
    """The model's inputs from the drawn values: hold times, the work outside memcg."""
    out = dict(values)
    dev = values.get(f"hold_dev:{profile.family}", 0.0) if terms.family_deviation else 0.0
    growth = values.get("socket_growth", 0.0) if terms.socket_growth else 0.0
    scale = values["hold_scale"] * np.exp(dev) * (profile.sockets / 2.0) ** growth
    # a transfer takes nanoseconds, whatever the core clock: the family's typical
    # transfer in ns, back in cycles at each point's drawn clock
    ghz = profile.priors["cpu_ghz"].typical
    for key, prior in (("hold_cycles", "c2c_transfer"),
                       ("hold_cycles_cross", "c2c_transfer_cross_socket")):
        out[key] = scale * profile.priors[prior].typical / ghz * values["cpu_ghz"]
    out["fixed_cycles"] = values[f"fixed_cycles:{cost_family}"]
    unit = "unit_cycles:page" if cost_family == "madvise" else "unit_cycles:byte"
    out["unit_cycles"] = values[unit]
    return out

