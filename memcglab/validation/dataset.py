"""The development set as calibration data: each case's model and the observations it gives.

A :class:`CaseModel` pairs a development case (:mod:`memcglab.validation.devset`) with
its scenario's pricing model (:class:`memcglab.scenario.model.ScenarioModel`, counts
replayed once) and prices it at the hardware priors' typical values for any values of
the calibrated unknowns. :func:`observations` turns cases into what
:func:`memcglab.validation.calibrate.fit` reads:

* every case's measured change (with its noise: ``data/validation/rules.md``);
* the base kernel's absolute operations per second, where the source prints the
  throughput of a network benchmark (per instance, so times the instances); not the
  madvise times, whose region size the source does not give;
* the contended-line calibration point: the hold time of the line every CPU writes on
  that machine, ``s = 1 / (k X)`` (:class:`memcglab.validation.devset.CalibrationRow`),
  against the model's hold time for its family and sockets.

:func:`unknowns` lists the parameters a set of cases constrains, with their priors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from memcglab.calibration.posterior import Param
from memcglab.cost import CostParams
from memcglab.hardware.families import profile_from_facts
from memcglab.pricing.profile import FUNCTIONS
from memcglab.scenario.errors import error_params
from memcglab.scenario.model import ScenarioModel, unpriced
from memcglab.scenario.predict import SELF_FUNCTIONS, SHARE_FLOOR
from memcglab.scenario.space import PRIORS, TAU_PARAM, TAU_PRIOR, derived, unknown_params
from memcglab.scenario.spec import load_scenario
from memcglab.scenario.terms import DEFAULT_TERMS, Terms
from memcglab.scenario.work import busiest_share_prior
from memcglab.validation.calibrate import Observation
from memcglab.validation.devset import Case, calibration_point, load_cases

__all__ = ["SIGMA_PRIORS", "CaseModel", "case_models", "declared_noise", "hyperpriors",
           "observations", "priced_cases", "share_observations", "unknowns", "unpriced_cases"]

#: the model's own errors: relative on an effect's size, and on absolute rates (log)
SIGMA_PRIORS: dict[str, Param] = {
    "sigma_rel": Param("sigma_rel", "fraction", 0.3, 0.7,
                       "my inference: a structural model of a kernel path misses an effect's "
                       "size by tens of percent; the development set says by how much"),
    "sigma_abs": Param("sigma_abs", "log", 0.3, 0.6,
                       "my inference: the work outside memcg differs between machines, "
                       "kernels and builds by tens of percent"),
}
#: a hold time's calibration point: log-scale noise (the updates per operation, 1.75 or 2,
#: and the machine's unknown clock)
CALIBRATION_POINT_NOISE = 0.15


def declared_noise(case: Case) -> float:
    """The case's noise in percentage points of the change (``data/validation/rules.md``)."""
    if case.noise_pct is not None:
        return float(case.noise_pct)
    return 2.0 * (1.0 + case.measured_change_pct / 100.0)


def typical_values(model: ScenarioModel, n: int) -> dict[str, np.ndarray]:
    """The hardware priors' typical values (and the machine's clock), ``n`` points."""
    p = model.profile
    v = {name: np.full(n, p.priors[name].typical) for name in CostParams.names()
         if name != "c2c_transfer"}
    v["cpu_ghz"] = np.full(n, p.ghz)
    v["smt_gain"] = np.full(n, p.priors["smt_gain"].typical if "smt_gain" in p.priors
                            else 0.25)
    v["busiest_cpu_share"] = np.full(n, busiest_share_prior(model.tasks).typical)
    v["socket_growth"] = np.zeros(n)
    return v


@dataclass
class CaseModel:
    """A development case and its scenario's pricing model (counts replayed once)."""

    case: Case
    model: ScenarioModel
    #: the last pricing (:meth:`_priced`), not part of the case's identity
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def family(self) -> str:
        """The machine family of the case's scenario."""
        return self.model.profile.family

    def _priced(self, theta: Mapping[str, np.ndarray], with_profile: bool = False):
        """Both kernels at every point and alternative in one batch (points ordered
        alternative-major: alternative ``k``'s points are ``k * n ... k * n + n - 1``).

        The last pricing is kept: a fit asks for the change and every perf share of a
        case at the same points, one observation after another."""
        key = tuple((k, np.asarray(x, dtype=float).tobytes()) for k, x in sorted(theta.items()))
        memo = self._memo
        if memo.get("key") == key and (memo["profile"] or not with_profile):
            return memo["value"]
        value = self._price(theta, with_profile)
        memo.update(key=key, profile=with_profile, value=value)
        return value

    def _price(self, theta: Mapping[str, np.ndarray], with_profile: bool):
        n = np.size(next(iter(theta.values())))
        k = len(self.model.combos)
        v = typical_values(self.model, n * k)
        # an unknown the caller does not vary sits at its prior's median
        for p in unknown_params(self.model.cost_family, self.model.unit, self.model.terms):
            v[p.name] = np.full(n * k, p.prior_median)
        v.update({name: np.tile(np.broadcast_to(np.asarray(x, dtype=float), (n,)), k)
                  for name, x in theta.items()})
        v.setdefault(f"hold_dev:{self.family}", np.zeros(n * k))
        v = derived(self.model.profile, self.model.cost_family, v, self.model.terms)
        return self.model.evaluate(v, np.repeat(np.arange(k), n), with_profile=with_profile), k, n

    def rates(self, theta: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Base and new ops/s, (alternatives, points)."""
        p, k, n = self._priced(theta)
        return p.base_rate.reshape(k, n), p.new_rate.reshape(k, n)

    def log_ratios(self, theta: Mapping[str, np.ndarray]) -> np.ndarray:
        """log(new / base) per alternative and point, (alternatives, points)."""
        base, new = self.rates(theta)
        return np.log(new / base)

    def log_ratio(self, theta: Mapping[str, np.ndarray]) -> np.ndarray:
        """log(new / base) per point, the mean over the priced alternatives."""
        return self.log_ratios(theta).mean(axis=0)

    def log_share(self, kernel: str, function: str) -> Callable[[Mapping[str, np.ndarray]],
                                                                np.ndarray]:
        """The model's log share of ``function`` (% of cycles) on ``kernel`` per point,
        the mean share over the alternatives."""

        def f(theta: Mapping[str, np.ndarray]) -> np.ndarray:
            p, k, n = self._priced(theta, with_profile=True)
            prof = p.base_profile if kernel == "base" else p.new_profile
            share = prof[function].reshape(k, n).mean(axis=0)
            return np.log(np.maximum(share, 1e-9))

        return f

    def change_pct(self, theta: Mapping[str, np.ndarray]) -> np.ndarray:
        """The predicted change in % per point."""
        return np.expm1(self.log_ratio(theta)) * 100.0

    def log_base_rate(self, theta: Mapping[str, np.ndarray]) -> np.ndarray:
        """log of the base kernel's operations per second (all instances)."""
        return np.log(self.rates(theta)[0]).mean(axis=0)

    def measured_base_rate(self) -> float | None:
        """The source's base throughput in operations per second (all instances), or
        None where it prints none the model can read (``measured_log_base_rate``)."""
        r = self.measured_log_base_rate()
        return None if r is None else float(np.exp(r))

    def measured_log_base_rate(self) -> float | None:
        """The source's base throughput as log operations per second, or None."""
        c = self.case
        if c.unit != "Mbps" or not self.model.units:
            return None
        per_instance = c.base_value * 1e6 / 8.0 / self.model.units
        return float(np.log(per_instance * self.model.instances))


def unpriced_cases(cases: Sequence[Case] | None = None) -> tuple[tuple[Case, str], ...]:
    """The development cases (all by default) whose valid scenario the model refuses to
    price yet (:func:`memcglab.scenario.model.unpriced`), each with the refusal. They stay
    in the development set and are reported, not scored: a case enters the scoreboard
    when the model can price it, under the addendum in force at scoring time."""
    out = []
    for c in (cases if cases is not None else load_cases()):
        refused = unpriced(load_scenario(c.scenario))
        if refused is not None:
            out.append((c, str(refused)))
    return tuple(out)


def priced_cases(cases: Sequence[Case] | None = None) -> tuple[Case, ...]:
    """The development cases (all by default) the model can price, in the set's order."""
    every = tuple(cases if cases is not None else load_cases())
    refused = {c.case_id for c, _ in unpriced_cases(every)}
    return tuple(c for c in every if c.case_id not in refused)


@lru_cache(maxsize=256)
def _case_model(case_id: str, terms: Terms) -> CaseModel:
    case = next(c for c in load_cases() if c.case_id == case_id)
    return CaseModel(case, ScenarioModel(load_scenario(case.scenario), seed=0, terms=terms))


def case_models(cases: Sequence[Case] | None = None, terms: Terms = DEFAULT_TERMS
                ) -> list[CaseModel]:
    """A model per case (every case the model can price, by default), cached across calls."""
    return [_case_model(c.case_id, terms)
            for c in (cases if cases is not None else priced_cases())]


def _terms_of(models: Sequence[CaseModel]) -> Terms:
    return models[0].model.terms if models else DEFAULT_TERMS


def unknowns(models: Sequence[CaseModel]) -> list[Param]:
    """The calibrated parameters the cases read, with their priors (names once each)."""
    terms = _terms_of(models)
    out: dict[str, Param] = {}
    for m in models:
        for p in unknown_params(m.model.cost_family, m.model.unit, terms):
            out.setdefault(p.name, p)
    if terms.family_deviation:
        families = sorted({m.family for m in models} | {_point_family()})
        for f in families:
            out[f"hold_dev:{f}"] = Param(f"hold_dev:{f}", "log", 0.0, TAU_PRIOR,
                                         "the family's deviation from the pooled hold "
                                         "scale: normal, its sd the fitted hold_tau",
                                         positive=False)
        out[TAU_PARAM.name] = TAU_PARAM
    out.update({p.name: p for p in error_params(terms.error)})
    out["sigma_abs"] = SIGMA_PRIORS["sigma_abs"]
    out["hold_scale"] = PRIORS["hold_scale"]
    return list(out.values())


def hyperpriors(params: Sequence[Param]) -> dict[str, str]:
    """Each family deviation's prior sd is the fitted spread (``hold_tau``)."""
    names = {p.name for p in params}
    if TAU_PARAM.name not in names:
        return {}
    return {n: TAU_PARAM.name for n in names if n.startswith("hold_dev:")}


def _point_family() -> str:
    return str(calibration_point().machine["family"])


def _hold_observation(terms: Terms = DEFAULT_TERMS) -> Observation:
    point = calibration_point()
    m = point.machine
    profile = profile_from_facts(int(m["cpus"]), int(m["sockets"]),
                                 int(m["threads_per_core"]), str(m["family"]))
    # threads spread over both sockets: half of consecutive writers on the other socket
    cross = 1.0 - 1.0 / profile.sockets
    holds = [h for r in point.rows if r.use == "hold_time" and r.hold_time_ns for h in
             r.hold_time_ns]
    measured = float(np.log(np.mean(holds)))
    family = profile.family

    def predict(v: Mapping[str, np.ndarray]) -> np.ndarray:
        n = np.size(v["hold_scale"])
        vals = {k: np.broadcast_to(np.asarray(x, float), (n,)) for k, x in v.items()}
        vals.setdefault(f"hold_dev:{family}", np.zeros(n))
        vals["cpu_ghz"] = np.full(n, profile.priors["cpu_ghz"].typical)
        vals.setdefault("fixed_cycles:tcp_stream", np.ones(n))
        vals.setdefault("unit_cycles:byte", np.ones(n))
        d = derived(profile, "tcp_stream", vals, terms)
        cycles = (1 - cross) * d["hold_cycles"] + cross * d["hold_cycles_cross"]
        return np.log(cycles / vals["cpu_ghz"])

    return Observation(f"{point.source_id}/hold_time", point.source_id, "log_rate",
                       measured, CALIBRATION_POINT_NOISE, predict)


def share_observations(m: CaseModel) -> list[Observation]:
    """The perf shares the case's source prints, as observations of the model's
    (rules_addendum_2026-12-02b, section 3)."""
    from memcglab.validation.devset import case_profile

    c = m.case
    if not c.profile:
        return []
    out = []
    for kernel, kinds in case_profile(c).items():
        for kind, shares in kinds.items():
            for fn, share in shares.items():
                if fn not in FUNCTIONS or (kind == "self" and fn not in SELF_FUNCTIONS):
                    continue
                rel = _share_noise(c, kernel, kind, fn)
                upper = share <= 0.0
                measured = np.log(SHARE_FLOOR if upper else share)
                out.append(Observation(f"{c.case_id}/{kernel}/{kind}/{fn}", c.source,
                                       "log_share", float(measured), rel,
                                       m.log_share(kernel, fn), upper=upper))
    return out


def _share_noise(case: Case, kernel: str, kind: str, fn: str) -> float:
    """A printed share's noise in log units: its ``± x%`` as x / 100, else 0.05."""
    from memcglab.validation.devset import case_profile_noise

    pct = case_profile_noise(case).get(kernel, {}).get(kind, {}).get(fn)
    return 0.05 if pct is None else float(pct) / 100.0


def observations(models: Sequence[CaseModel], hold_point: bool = True) -> list[Observation]:
    """What a calibration on ``models`` reads (module doc)."""
    obs: list[Observation] = []
    terms = _terms_of(models)
    for m in models:
        c = m.case
        noise = declared_noise(c) / (100.0 + c.measured_change_pct)
        if terms.perf_shares:  # first: the case's one pricing with profiles serves all
            obs.extend(share_observations(m))
        obs.append(Observation(c.case_id, c.source, "log_ratio",
                               float(np.log1p(c.measured_change_pct / 100.0)), noise,
                               m.log_ratios, error=terms.error))
        rate = m.measured_log_base_rate()
        if rate is not None:
            obs.append(Observation(f"{c.case_id}/base_rate", c.source, "log_rate", rate, 0.0,
                                   m.log_base_rate))
    if hold_point:
        obs.append(_hold_observation(terms))
    return obs
