"""Seed 000's verdict: calibrate on "Without patch", predict "With patch", out of sample.

The comparison is pre-registered in :class:`NetperfPrereg`: the model form, the trace
that produced the simulated cycles, the rule that sets the machine's capacity, and
what is fitted are fixed before the "with" column is read. The fit sees only
``clients`` and ``without_mbps`` (:func:`fit_without`); the "with" column is read
afterwards, only to score the prediction.

Model. A flow (one netperf instance) gets ``share(c) = min(1, C / c)`` of the CPUs it
needs, with capacity ``C = cpus / cpus_per_flow`` flows at full speed. Each operation
(what the trace calls one charge: a packet's) costs ``w`` cycles outside memcg and
``s * m(c)`` in the charge path, where ``m(c)`` is the simulated cost-model cycles for
``c`` clients and ``s`` scales the cost model's hardware figures. So the per-flow
throughput is ``T(c) = share(c) * K / (w + s * m(c))``, with ``K = cpu_hz *
mbit_per_op`` when the trace's Mbit per operation is known. Seed 000's values are most
likely per-instance averages (aggregate = value x clients; see the sidecar's notes).

>>> p = NetperfPrereg(trace="doctest", mbit_per_op=0.5)
>>> p.capacity, p.fit
(36.0, ('other', 'memcg_scale'))
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import scipy.stats as st

from memcglab.stats.calibration import Fit, calibrate, leave_one_out, mape

__all__ = ["NetperfPrereg", "NetperfVerdict", "fit_without", "predict", "verdict_000"]

_FITS = (("other",), ("other", "memcg_scale"))


@dataclass(frozen=True)
class NetperfPrereg:
    """Everything fixed before the "With patch" column is read.

    ``cpus``: seed 000's "72 CPUs machine". ``cpus_per_flow``: netperf and netserver
    each keep a CPU busy and loopback receive runs in the sender's softirq, so 2.
    ``per_instance``: table values are per-instance averages. ``fit``: what is fitted
    on "without" (``other`` = w; ``memcg_scale`` = s, else s = 1). ``cpu_hz`` and
    ``mbit_per_op`` give K; without ``mbit_per_op`` only ratios are identified and
    ``memcg_scale`` must be fitted (``memcglab.workloads.netperf_rx`` charges once per
    10 KiB message: 0.08192 Mbit per op). ``trace`` names the workload and its parameters.
    ``sensitivity``: (field, values) pairs whose product gives the alternatives.
    """

    trace: str
    cpus: int = 72
    cpus_per_flow: float = 2.0
    per_instance: bool = True
    fit: tuple[str, ...] = ("other", "memcg_scale")
    cpu_hz: float = 2.5e9
    mbit_per_op: float | None = None
    without_model: str = "single"
    with_model: str = "multi"
    sensitivity: tuple[tuple[str, tuple], ...] = (
        ("cpus_per_flow", (1.0, 2.0, 3.0, 4.0)),
        ("per_instance", (True, False)),
    )

    def __post_init__(self) -> None:
        if not self.trace:
            raise ValueError("trace='': name the workload and parameters that made the cycles")
        if tuple(self.fit) not in _FITS:
            raise ValueError(f"fit={self.fit!r}: must be one of {_FITS}")
        if "memcg_scale" not in self.fit and self.mbit_per_op is None:
            raise ValueError("fit=('other',) fixes the cost model's scale, which needs "
                             "mbit_per_op (the trace's Mbit per operation) and cpu_hz")
        if self.cpus <= 0 or self.cpus_per_flow <= 0 or self.cpu_hz <= 0:
            raise ValueError(f"cpus={self.cpus}, cpus_per_flow={self.cpus_per_flow}, "
                             f"cpu_hz={self.cpu_hz}: all must be > 0")
        for name, _ in self.sensitivity:
            if name not in self.__dataclass_fields__ or name in ("trace", "sensitivity"):
                raise ValueError(f"sensitivity field {name!r} is not a pre-registered setting")

    @property
    def capacity(self) -> float:
        """Flows the machine runs at once: ``cpus / cpus_per_flow``."""
        return self.cpus / self.cpus_per_flow

    def digest(self) -> str:
        """Short hash of the whole registration, to print beside the result."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:12]

    def alternatives(self) -> list[NetperfPrereg]:
        """The registration itself, then every combination the sensitivity grid names."""
        names = [n for n, _ in self.sensitivity]
        out = [self]
        for combo in itertools.product(*(v for _, v in self.sensitivity)):
            alt = replace(self, **dict(zip(names, combo, strict=True)))
            if alt != self:
                out.append(alt)
        return out


def _cycles(simulated: pd.DataFrame, model: str, clients: np.ndarray) -> np.ndarray:
    need = {"clients", "model", "cycles_per_op"}
    if not need <= set(simulated.columns):
        raise ValueError(f"simulated needs columns {sorted(need)}; has {list(simulated.columns)}")
    sub = simulated[simulated["model"] == model].groupby("clients")["cycles_per_op"].mean()
    missing = sorted(int(c) for c in set(clients.tolist()) - set(sub.index.tolist()))
    if missing:
        raise ValueError(f"simulated has no {model!r} rows for clients {missing}")
    return sub.loc[clients].to_numpy(dtype=float)


def _share(p: NetperfPrereg, clients: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, p.capacity / clients)


def _k(p: NetperfPrereg, t_ref: float, m_ref: float) -> float:
    # Without Mbit per op, K only normalises: w and s come out in units where the
    # median "without" cycles cost one reference throughput.
    return p.cpu_hz * p.mbit_per_op if p.mbit_per_op is not None else t_ref * m_ref


def predict(p: NetperfPrereg, fit: Fit, clients: np.ndarray, cycles: np.ndarray,
            k: float) -> np.ndarray:
    """Per-flow throughput (Mbps) for ``cycles`` charge-path cycles per op."""
    s = fit["memcg_scale"] if "memcg_scale" in fit.names else 1.0
    return _share(p, clients) * k / (fit["other"] + s * cycles)


def fit_without(p: NetperfPrereg, clients: np.ndarray, without_mbps: np.ndarray,
                m_without: np.ndarray) -> tuple[Fit, float]:
    """Fit the registered parameters on the "without" column alone; returns (fit, K)."""
    per_flow = without_mbps if p.per_instance else without_mbps / clients
    k = _k(p, float(per_flow.max()), float(np.median(m_without)))
    share = _share(p, clients)
    # Start from the linear form share * K / T = w + s * m.
    y = share * k / per_flow
    if "memcg_scale" in p.fit:
        coef = np.linalg.lstsq(np.column_stack([np.ones_like(y), m_without]), y, rcond=None)[0]
        x0 = np.maximum(coef, [1e-6 * y.mean(), 1e-6])
    else:
        x0 = np.array([max(float(np.mean(y - m_without)), 1e-6 * y.mean())])
    names = ("other", "memcg_scale")[: len(x0)]

    def resid(x: np.ndarray) -> np.ndarray:
        s = x[1] if len(x) > 1 else 1.0
        return share * k / (x[0] + s * m_without) / per_flow - 1.0

    fit = calibrate(resid, x0, names, bounds=(np.zeros(len(x0)), np.full(len(x0), np.inf)),
                    x_scale="jac")
    return fit, k


def _one(p: NetperfPrereg, clients: np.ndarray, without: np.ndarray, m0: np.ndarray,
         m1: np.ndarray) -> dict:
    fit, k = fit_without(p, clients, without, m0)
    to_table = 1.0 if p.per_instance else clients
    fitted = predict(p, fit, clients, m0, k) * to_table
    pred = predict(p, fit, clients, m1, k) * to_table
    return {"fit": fit, "k": k, "fitted": fitted, "pred": pred}


@dataclass(frozen=True, eq=False)
class NetperfVerdict:
    """Rows (per client count), summary (metric, value), the alternatives, and the fit."""

    rows: pd.DataFrame
    summary: pd.DataFrame
    alternatives: pd.DataFrame
    fit: Fit
    prereg: NetperfPrereg


def verdict_000(simulated: pd.DataFrame, prereg: NetperfPrereg,
                table: pd.DataFrame | None = None) -> NetperfVerdict:
    """Calibrate on "without", predict "with", score the prediction, show the band.

    ``simulated`` has columns clients, model, cycles_per_op (several rows per
    configuration, e.g. seeds, are averaged); ``model`` values name the registration's
    ``without_model`` and ``with_model``. ``table`` defaults to seed 000's table.
    """
    if table is None:
        from memcglab.published import load
        table = load("seed000_netperf").frame
    clients = table["clients"].to_numpy(dtype=float)
    without = table["without_mbps"].to_numpy(dtype=float)
    m0 = _cycles(simulated, prereg.without_model, clients)
    m1 = _cycles(simulated, prereg.with_model, clients)
    runs = [_one(a, clients, without, m0, m1) for a in prereg.alternatives()]
    main = runs[0]
    # Only now is the "with" column read: to score what was predicted above.
    with_ = table["with_mbps"].to_numpy(dtype=float)
    preds = np.array([r["pred"] for r in runs])
    fit = main["fit"]
    s = fit["memcg_scale"] if "memcg_scale" in fit.names else 1.0
    frac = lambda m: s * m / (fit["other"] + s * m)  # noqa: E731
    rows = pd.DataFrame({
        "clients": clients.astype(int),
        "share": _share(prereg, clients),
        "memcg_cycles_without": m0, "memcg_cycles_with": m1,
        "published_without": without, "fitted_without": main["fitted"],
        "fit_error_pct": (main["fitted"] - without) / without * 100,
        "published_with": with_, "predicted_with": main["pred"],
        "error_pct": (main["pred"] - with_) / with_ * 100,
        "band_low": preds.min(axis=0), "band_high": preds.max(axis=0),
        "published_improvement_pct": (with_ / without - 1) * 100,
        "predicted_improvement_pct": (main["pred"] / main["fitted"] - 1) * 100,
        "memcg_fraction_without": frac(m0), "memcg_fraction_with": frac(m1),
    })
    loo = leave_one_out(
        lambda tr: _loo_predict(prereg, clients, without, m0, tr), without)
    imp = rows["predicted_improvement_pct"].to_numpy()
    # A constant prediction has no rank correlation (and scipy warns); report NaN.
    rho = st.spearmanr(clients, imp).statistic if np.ptp(imp) > 1e-9 else float("nan")
    summary = pd.DataFrame([
        ("mape_with_pct", mape(with_, main["pred"])),
        ("max_abs_error_with_pct", float(rows["error_pct"].abs().max())),
        ("mape_without_fit_pct", mape(without, main["fitted"])),
        ("loo_mape_without_pct", float(loo["error_pct"].abs().mean())),
        ("improvement_spearman_vs_clients", float(rho)),
        ("published_improvement_increasing", bool(np.all(np.diff(rows[
            "published_improvement_pct"]) > 0))),
        ("predicted_improvement_increasing", bool(np.all(np.diff(rows[
            "predicted_improvement_pct"]) > 0))),
        ("band_mape_with_low_pct", min(mape(with_, r["pred"]) for r in runs)),
        ("band_mape_with_high_pct", max(mape(with_, r["pred"]) for r in runs)),
        ("fit_at_bound", ",".join(n for n, b in zip(fit.names, fit.at_bound, strict=True)
                                  if b) or "none"),
        ("prereg_digest", prereg.digest()),
    ], columns=["metric", "value"])
    alts = pd.DataFrame([{
        **{n: getattr(a, n) for n, _ in prereg.sensitivity},
        "primary": i == 0, "other_cycles": _other_cycles(r["fit"]),
        "mape_without_fit_pct": mape(without, r["fitted"]),
        "mape_with_pct": mape(with_, r["pred"]),
    } for i, (a, r) in enumerate(zip(prereg.alternatives(), runs, strict=True))])
    return NetperfVerdict(rows, summary, alts, fit, prereg)


def _other_cycles(fit: Fit) -> float:
    # w / s: the work outside memcg per op, in the cost model's cycles; comparable
    # across alternatives whatever K normalises to.
    s = fit["memcg_scale"] if "memcg_scale" in fit.names else 1.0
    return fit["other"] / s if s > 0 else float("inf")


def _loo_predict(p: NetperfPrereg, clients: np.ndarray, without: np.ndarray, m0: np.ndarray,
                 train: np.ndarray) -> np.ndarray:
    fit, k = fit_without(p, clients[train], without[train], m0[train])
    return predict(p, fit, clients, m0, k) * (1.0 if p.per_instance else clients)
