"""The fair baselines the scoreboard holds the lab's predictions against (issue 22, item 7).

``data/validation/rules_addendum_2026-12-02_proper_scoring.md`` registers them. Each
predicts ``y = log(new / base)`` of a case from what the case's replay and the priors'
typical values give (:class:`CaseInputs`, :func:`case_inputs`), with constants fitted by
weighted least squares in ``y`` on a fold's training cases (each case weighted by one over
its source's number of training cases):

* :class:`NoChange`: ``y = 0``, nothing fitted;
* :class:`InverseCycles`: throughput inversely proportional to the cycles per operation
  ``A_k + lambda c T_k`` (the work outside memcg and the charge path's instructions, plus
  the line transfers at a price ``c`` scaled by one fitted ``lambda``);
* :class:`BottleneckLaw`: ``X_k = min(N / (Z + w_k s), 1 / (w_k s))`` on both kernels over
  the busiest shared line, ``Z = z W`` (``W`` the work outside memcg in seconds), with
  ``s`` and ``z`` fitted; gains and losses both allowed. Only ``z / s`` bears on a
  ratio of the two kernels' rates (``X_k s`` depends on nothing else), so the fitted
  pair is one direction's worth of information; the fit reports both, as registered.

:func:`fold_predictions` gives a held-out source's point predictions and the residuals of
nested leave-one-source-out fits on its training sources; :func:`predictive` turns a point
and those residuals into weighted draws and a 90% band (split conformal without the
finite-sample correction, which four training sources cannot give: the addendum).

>>> law = BottleneckLaw()
>>> x = CaseInputs("a/1", "a", 0.0, 10, 1e-6, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.5)
>>> round(float(law.predict({"s": 1e-6, "z": 1.0}, [x])[0]), 4)  # 1e7 -> 2e6 ops/s
-1.6094
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from memcglab.validation.dataset import CaseModel, typical_values
from memcglab.validation.scoring import log_change, weighted_quantile

__all__ = ["BASELINES", "BottleneckLaw", "CaseInputs", "FoldPrediction", "InverseCycles",
           "NoChange", "case_inputs", "fold_predictions", "measured_base_rate",
           "predictive", "source_weights"]


@dataclass(frozen=True)
class CaseInputs:
    """What the baselines read of one case (cycles per operation, seconds, counts)."""

    case_id: str
    source: str
    y: float  # the measured log(new / base); read only by fits, never by predictions
    instances: int  # N, the network's customers
    outside_s: float  # W, the work outside memcg per operation in seconds
    compute_base: float  # A_k: cycles per operation without line transfers
    compute_new: float
    transfers_base: float  # T_k: line transfers per operation (shared and private)
    transfers_new: float
    c2c: float  # the profile's typical c2c_transfer, cycles
    ghz: float
    busiest_base: float  # w_k: the busiest shared line's transfers per operation
    busiest_new: float


def measured_base_rate(model: CaseModel) -> float | None:
    """The case's measured base operations per second, all instances (None: not printed)."""
    c = model.case
    if c.unit == "Mbps" and model.model.units:
        return c.base_value * 1e6 / 8.0 / model.model.units * model.model.instances
    if c.unit == "ms":
        return 1000.0 / c.base_value * model.model.instances
    return None


def case_inputs(model: CaseModel) -> CaseInputs:
    """A case's :class:`CaseInputs` from its replay and the priors' typical values, each
    kernel's figure the mean over the case's modelling alternatives."""
    from memcglab.pricing.profile import function_cycles
    from memcglab.scenario.work import FIXED, UNIT

    m = model.model
    v = typical_values(m, 1)
    other = FIXED[m.cost_family].typical + UNIT[m.unit].typical * m.units
    cost = {k: x for k, x in v.items() if k not in ("cpu_ghz", "smt_gain",
                                                     "busiest_cpu_share")}

    def kernel(counts, design) -> tuple[float, float, float]:
        comp, tr, busy = [], [], []
        for c in counts:
            f = function_cycles(c.per_op, cost, 1.0, np.zeros(1), design.model)["total"]
            comp.append(other + float(f[0]))
            tr.append(float(np.sum(c.shared)) + float(c.private))
            busy.append(float(np.max(c.shared)) if np.size(c.shared) else 0.0)
        return float(np.mean(comp)), float(np.mean(tr)), float(np.mean(busy))

    cb, tb, wb = kernel(m.base, m.scenario.base)
    cn, tn, wn = kernel(m.new, m.scenario.new)
    return CaseInputs(model.case.case_id, model.case.source,
                      float(log_change(model.case.measured_change_pct)), int(m.instances),
                      other / (m.profile.ghz * 1e9), cb, cn, tb, tn,
                      float(m.profile.priors["c2c_transfer"].typical), float(m.profile.ghz),
                      wb, wn)


def source_weights(sources: Sequence[str]) -> np.ndarray:
    """One over each case's source's number of cases (every source weighs one)."""
    s = np.asarray(sources)
    counts = {x: int(np.sum(s == x)) for x in set(s.tolist())}
    return np.array([1.0 / counts[x] for x in s.tolist()])


def _wsse(pred: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.sum(w * (y - pred) ** 2, axis=-1)


class NoChange:
    """``y = 0``."""

    name = "no_change"

    def fit(self, cases: Sequence[CaseInputs]) -> dict[str, float]:
        """Nothing to fit."""
        del cases
        return {}

    def predict(self, params: Mapping[str, float], cases: Sequence[CaseInputs]) -> np.ndarray:
        """Zeros."""
        del params
        return np.zeros(len(cases))


class InverseCycles:
    """``y = log(C_base / C_new)``, ``C_k = A_k + lambda c T_k``, one ``lambda`` per fold."""

    name = "inverse_cycles"
    bounds = (1e-3, 1e3)

    @staticmethod
    def _y(lam, cases: Sequence[CaseInputs]) -> np.ndarray:
        lam = np.asarray(lam, dtype=float)[..., None]
        a = np.array([[c.compute_base, c.compute_new, c.c2c * c.transfers_base,
                       c.c2c * c.transfers_new] for c in cases]).T
        return np.log((a[0] + lam * a[2]) / (a[1] + lam * a[3]))

    def predict(self, params: Mapping[str, float], cases: Sequence[CaseInputs]) -> np.ndarray:
        """The log change at the fitted scale."""
        return self._y(params["lambda"], cases)

    def fit(self, cases: Sequence[CaseInputs]) -> dict[str, float]:
        """Weighted least squares on a log grid of ``lambda``, then a bounded search."""
        y = np.array([c.y for c in cases])
        w = source_weights([c.source for c in cases])
        grid = np.linspace(*np.log(self.bounds), 121)
        loss = _wsse(self._y(np.exp(grid), cases), y, w)
        i = int(np.argmin(loss))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        res = optimize.minimize_scalar(
            lambda g: float(_wsse(self._y(np.exp(g), cases), y, w)), bounds=(lo, hi),
            method="bounded")
        best = res.x if res.fun <= loss[i] else grid[i]
        return {"lambda": float(np.exp(best))}


class BottleneckLaw:
    """The bottleneck law on both kernels (module doc), ``s`` and ``z`` per fold."""

    name = "bottleneck_law"
    s_range = (1e-10, 1e-5)
    z_range = (1e-6, 1e3)

    @staticmethod
    def _rates(s, z, n, outside, busiest) -> np.ndarray:
        demand = busiest * s
        open_ = n / (z * outside + demand)
        with np.errstate(divide="ignore"):
            cap = np.where(demand > 0, 1.0 / np.where(demand > 0, demand, 1.0), np.inf)
        return np.minimum(open_, cap)

    def _y(self, s, z, cases: Sequence[CaseInputs]) -> np.ndarray:
        s = np.asarray(s, dtype=float)[..., None]
        z = np.asarray(z, dtype=float)[..., None]
        n = np.array([c.instances for c in cases], dtype=float)
        out = np.array([c.outside_s for c in cases])
        wb = np.array([c.busiest_base for c in cases])
        wn = np.array([c.busiest_new for c in cases])
        return np.log(self._rates(s, z, n, out, wn) / self._rates(s, z, n, out, wb))

    def predict(self, params: Mapping[str, float], cases: Sequence[CaseInputs]) -> np.ndarray:
        """The log change at the fitted ``s`` and ``z``."""
        return self._y(params["s"], params["z"], cases)

    def fit(self, cases: Sequence[CaseInputs]) -> dict[str, float]:
        """Weighted least squares on a log grid of ``(s, z)``, then Nelder-Mead."""
        y = np.array([c.y for c in cases])
        w = source_weights([c.source for c in cases])
        gs = np.linspace(*np.log(self.s_range), 61)
        gz = np.linspace(*np.log(self.z_range), 61)
        ls, lz = np.meshgrid(gs, gz, indexing="ij")
        loss = _wsse(self._y(np.exp(ls), np.exp(lz), cases), y, w)
        i, j = np.unravel_index(int(np.argmin(loss)), loss.shape)
        start = np.array([gs[i], gz[j]])

        def f(p: np.ndarray) -> float:
            p = np.clip(p, [gs[0], gz[0]], [gs[-1], gz[-1]])
            return float(_wsse(self._y(np.exp(p[0]), np.exp(p[1]), cases), y, w))

        res = optimize.minimize(f, start, method="Nelder-Mead",
                                options={"xatol": 1e-4, "fatol": 1e-12})
        best = np.clip(res.x, [gs[0], gz[0]], [gs[-1], gz[-1]]) if res.fun <= loss[i, j] \
            else start
        return {"s": float(np.exp(best[0])), "z": float(np.exp(best[1]))}


#: the fair baselines, in the table's order
BASELINES = (NoChange(), InverseCycles(), BottleneckLaw())


@dataclass(frozen=True)
class FoldPrediction:
    """A baseline's fold: the held-out cases' points, the fit, the residuals' draws."""

    baseline: str
    source: str
    cases: tuple[str, ...]
    point: np.ndarray  # log change per held-out case
    params: dict[str, float]
    residuals: np.ndarray  # out-of-sample, every training case
    weights: np.ndarray  # one over the residual's source's cases, normalised


def fold_predictions(baseline, cases: Sequence[CaseInputs], source: str) -> FoldPrediction:
    """``baseline`` fitted on every source but ``source``, predicting ``source``'s cases,
    with residuals from nested leave-one-source-out fits on the training sources."""
    train = [c for c in cases if c.source != source]
    held = [c for c in cases if c.source == source]
    if not train or not held:
        raise ValueError(f"fold {source}: needs held-out and training cases")
    params = baseline.fit(train)
    res, src = [], []
    for t in sorted({c.source for c in train}):
        inner = [c for c in train if c.source != t]
        out = [c for c in train if c.source == t]
        if not inner:
            continue
        p = baseline.predict(baseline.fit(inner), out)
        res.extend(np.array([c.y for c in out]) - p)
        src.extend(c.source for c in out)
    w = source_weights(src)
    return FoldPrediction(baseline.name, source, tuple(c.case_id for c in held),
                          baseline.predict(params, held), params, np.asarray(res),
                          w / w.sum())


def predictive(point: float, fold: FoldPrediction,
               alpha: float = 0.1) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Draws ``point + r`` with the residuals' weights, and the weighted 5%/95% band."""
    draws = point + fold.residuals
    lo, hi = weighted_quantile(draws, [alpha / 2, 1 - alpha / 2], fold.weights)
    return draws, fold.weights, float(lo), float(hi)
