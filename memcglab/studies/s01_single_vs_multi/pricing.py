"""Study 1's prediction: the contention model fitted on "without", "with" predicted.

:class:`ContentionModel` evaluates the registered model
(``data/preregistration/study01.md``) at any batch of input points
(:class:`~memcglab.uncertainty.Draws` of the registration's
:class:`~memcglab.uncertainty.Space`: priors, variants, seeds): for each point it takes
the single stock's load of that point's trace (release, ancestors, seed), fits
``other_cycles`` and the within-socket hold time ``hold_cycles`` (the registration names
it otherwise: :data:`~memcglab.studies.s01_single_vs_multi.prereg.FITTED`) on the
published "without" column (:func:`memcglab.stats.netperf_fit.fit_without`), and
predicts the multi stock's per-flow Mbps with the same parameters, all through the
pricing core (:func:`memcglab.pricing.price_flows`). Results are cached by input point, so the
quantities a study summarises (one per row, the MAPE, the gain) share one fit per point.

:func:`predict_with` samples the space, takes the median and the central 90% band per
client count, and :func:`write_predictions` writes them to ``predictions.parquet``:
all before anything reads the "with" column.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from memcglab.pricing import FlowLoad, group_points
from memcglab.results import write_parquet_atomic
from memcglab.stats.netperf_fit import PER_SHARER, fit_without, predict, price
from memcglab.studies.s01_single_vs_multi.prereg import FITTED, REGISTERED_FIT, Study01Prereg
from memcglab.uncertainty import Draws, Space

__all__ = ["ContentionModel", "Evaluation", "Prediction", "loads_from_table",
           "predict_with", "write_predictions", "PREDICTIONS"]

#: the file the prediction is written to, in the study's output directory
PREDICTIONS = "predictions.parquet"
_LINE = "line:"


def loads_from_table(table: pd.DataFrame) -> dict[tuple[Any, ...], FlowLoad]:
    """The pricing core's load per (release, ancestors, seed, model), from the counts
    table of :func:`memcglab.studies.s01_single_vs_multi.study.run` (its ``line:*`` columns)."""
    lines = [c for c in table.columns if c.startswith(_LINE)]
    out = {}
    for key, g in table.groupby(["release", "ancestors", "seed", "model"], sort=False):
        g = g.sort_values("clients")
        shared = g[lines].fillna(0.0).to_numpy(float)
        used = shared.sum(axis=0) > 0
        out[(key[0], int(key[1]), int(key[2]), key[3])] = FlowLoad(
            flows=tuple(g["clients"].to_numpy(int).tolist()),
            memcg_cycles=g["memcg_cycles_per_op"].to_numpy(float),
            shared_names=tuple(c[len(_LINE):] for c, u in zip(lines, used, strict=True) if u),
            shared=shared[:, used], private=g["private_transfers_per_op"].to_numpy(float))
    return out


@dataclass(frozen=True)
class Evaluation:
    """Per input point (n): fitted parameters, fitted "without" and predicted "with"
    Mbps ``(n, P)``, and the fit's MAPE on "without"."""

    other_cycles: np.ndarray
    hold_cycles: np.ndarray
    fitted_without: np.ndarray
    predicted_with: np.ndarray
    fit_mape_pct: np.ndarray
    at_bound: np.ndarray

    @property
    def gain_pct(self) -> np.ndarray:
        """Predicted gain per row: ``with / fitted without - 1``, in %."""
        return 100.0 * (self.predicted_with / self.fitted_without - 1.0)


class ContentionModel:
    """The registered model over a counts table and the "without" column (see module)."""

    def __init__(self, prereg: Study01Prereg, table: pd.DataFrame,
                 without_mbps: np.ndarray) -> None:
        # the registered start and bounds are in the registration's order; the fit's is
        # (other_cycles, hold_cycles)
        fitted = tuple(FITTED[n] for n in prereg.fit_names)
        if fitted != ("other_cycles", "hold_cycles"):
            raise ValueError(f"fit.parameters={list(prereg.fit_names)}: the fit takes "
                             f"{', then '.join(REGISTERED_FIT)} (the hold time)")
        self.prereg = prereg
        self.loads = loads_from_table(table)
        self.without = np.asarray(without_mbps, dtype=float)
        self._cache: dict[str, Evaluation] = {}

    def params(self, d: Draws) -> dict[str, np.ndarray]:
        """The pricing core's inputs at each point but the two fitted ones, from the
        priors and the variants, and the registered per-sharer cost
        (:func:`memcglab.stats.netperf_fit.registered_inputs`)."""
        cpf = np.asarray(d["cpus_per_flow"], dtype=float)
        even = np.asarray(d["busiest_cpu_share"]) == "even"
        topo = [self.prereg.topology[str(t)] for t in d["topology"]]
        return {"cpu_ghz": d["cpu_ghz"], "hold_cycles_cross": d["c2c_transfer_cross_socket"],
                PER_SHARER: d["contended_rmw_per_sharer"],
                "smt_gain": d["smt_gain"], "cpus_per_flow": cpf,
                "busiest_cpu_share": np.where(even, 1.0 / cpf, np.maximum(1.0 / cpf, 2 / 3)),
                "cpus": np.full(d.n, float(self.prereg.trace["cpus"])),
                "smt": np.array([float(t["smt"]) for t in topo]),
                "cross_socket_fraction": np.array([float(t["cross_socket_fraction"])
                                                   for t in topo])}

    def _key(self, d: Draws) -> str:
        h = hashlib.sha256()
        for k in sorted(d.values):
            h.update(k.encode())
            h.update(np.asarray(d.values[k]).astype(str).tobytes() if d.values[k].dtype == object
                     else np.ascontiguousarray(d.values[k]).tobytes())
        return h.hexdigest()

    def evaluate(self, d: Draws) -> Evaluation:
        """Fit and predict at every point of ``d`` (cached by the points' values)."""
        key = self._key(d)
        if key in self._cache:
            return self._cache[key]
        p = self.params(d)
        n, nc = d.n, len(self.prereg.clients)
        out = {k: np.empty((n, nc)) for k in ("fitted_without", "predicted_with")}
        other, hold, mape = np.empty(n), np.empty(n), np.empty(n)
        bound = np.zeros((n, 2), dtype=bool)
        r = self.prereg
        for (release, anc, seed), idx in group_points(d, ("release", "ancestors", "seed")):
            sub = {k: v[idx] for k, v in p.items()}
            trace = (str(release), int(anc), int(seed))
            fit = fit_without(self.loads[(*trace, r.without_model)], sub, self.without, r.x0,
                              r.lower, r.upper)
            out["fitted_without"][idx] = fit.fitted_mbps
            out["predicted_with"][idx] = predict(self.loads[(*trace, r.with_model)], sub,
                                                 fit.other_cycles, fit.hold_cycles)
            other[idx], hold[idx], mape[idx], bound[idx] = (fit.other_cycles, fit.hold_cycles,
                                                            fit.mape_pct, fit.at_bound)
        ev = Evaluation(other, hold, out["fitted_without"], out["predicted_with"], mape, bound)
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[key] = ev
        return ev

    def memcg_share(self, d: Draws, model: str, column: int) -> np.ndarray:
        """The share of a flow's time per message spent in memcg accounting, at client
        count index ``column`` for stock ``model``, with each point's fitted parameters:
        the charge path's share of the CPU time (its cycles over all the flow's cycles)
        plus the time on private and shared usage lines, queueing included, over the
        whole time per message (the network's residence times)."""
        ev, p = self.evaluate(d), self.params(d)
        out = np.empty(d.n)
        for (release, anc, seed), idx in group_points(d, ("release", "ancestors", "seed")):
            load = self.loads[(str(release), int(anc), int(seed), model)]
            sub = {k: v[idx] for k, v in p.items()}
            res = price(load, sub, ev.other_cycles[idx], ev.hold_cycles[idx])
            r = res.residence[:, column, :]
            memcg = float(np.asarray(load.memcg_cycles, dtype=float).reshape(-1)[column])
            cpu_share = memcg / (memcg + ev.other_cycles[idx])
            out[idx] = (r[:, 0] * cpu_share + r[:, 1:].sum(axis=1)) / r.sum(axis=1)
        return 100.0 * out


@dataclass(frozen=True)
class Prediction:
    """What is stated before the comparison: per client count the median and 90% band
    of predicted "with" Mbps, the sample behind them, and the per-variant predictions
    at the typical priors."""

    model: ContentionModel
    space: Space
    table: pd.DataFrame
    sample: Evaluation
    variants: pd.DataFrame
    n: int
    #: the points of the joint sample (``space.sample(n, seed=0)``), in ``sample``'s order
    draws: Draws


def predict_with(model: ContentionModel, seeds: tuple[int, ...], n: int) -> Prediction:
    """Sample the registered space (``n`` scrambled Sobol points, seed 0) and each
    variant at the typical priors; fit and predict at every point."""
    r = model.prereg
    space = r.space(seeds)
    draws = space.sample(n, seed=0)
    ev = model.evaluate(draws)
    cov = float(r.scoring["coverage"])
    q = np.quantile(ev.predicted_with, [(1 - cov) / 2, 0.5, (1 + cov) / 2], axis=0)
    gq = np.quantile(ev.gain_pct, [(1 - cov) / 2, 0.5, (1 + cov) / 2], axis=0)
    table = pd.DataFrame({"clients": list(r.clients), "predicted_with_mbps": q[1],
                          "low": q[0], "high": q[2],
                          "fitted_without_mbps": np.median(ev.fitted_without, axis=0),
                          "predicted_gain_pct": gq[1], "gain_low_pct": gq[0],
                          "gain_high_pct": gq[2]})
    grid = r.variant_grid()
    fixed = {k: [g[k] for g in grid for _ in seeds] for k in grid[0]}
    fixed["seed"] = list(seeds) * len(grid)
    vev = model.evaluate(space.at(fixed, n=len(grid) * len(seeds)))
    shape = (len(grid), len(seeds), len(r.clients))
    pred = vev.predicted_with.reshape(shape).mean(axis=1)
    fitted = vev.fitted_without.reshape(shape).mean(axis=1)
    variants = pd.DataFrame(grid)
    variants["fit_mape_without_pct"] = vev.fit_mape_pct.reshape(shape[:2]).mean(axis=1)
    for j, c in enumerate(r.clients):
        variants[f"with_{c}"] = pred[:, j]
        variants[f"gain_{c}"] = 100 * (pred[:, j] / fitted[:, j] - 1)
    return Prediction(model, space, table, ev, variants, n, draws)


def write_predictions(pred: Prediction, output_dir: str | Path) -> Path | None:
    """Write ``predictions.parquet`` (clients, predicted_with_mbps, low, high, and the
    predicted gain) to ``output_dir``; nothing when it is ""."""
    if not output_dir:
        return None
    path = Path(output_dir) / PREDICTIONS
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet_atomic(path, pa.Table.from_pandas(pred.table, preserve_index=False))
    return path
