"""Study 1: single vs multi-memcg stock under seed 000's multi-tenant receive mix.

Seed 000 ("memcg: multi-memcg percpu charge cache", Shakeel Butt, 2025) measured
netperf over loopback with 6 to 36 clients, each in its own cgroup, on 72 CPUs, with
and without the multi-memcg stock. This study generates the receive mix for each
client count (:func:`memcglab.workloads.netperf_rx`), replays it through the single
stock (v6.15), the multi stock (v6.16, random victim) and optionally the 2026
round-robin stock, prices the event counts with :mod:`memcglab.cost`, and judges the
result with :func:`memcglab.stats.verdict_000`: calibrated on the "without" column
alone (pre-registered in :func:`prereg`), it predicts the "with" column out of sample.

>>> p = NetperfParams.from_notebook(quick=True)
>>> p.clients, p.seeds, p.models
((6, 12, 18, 24, 30, 36), 1, ('single', 'multi', 'multi-rr'))
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from memcglab.cost import CostParams
from memcglab.models import MODELS
from memcglab.stats import NetperfPrereg, NetperfVerdict, verdict_000
from memcglab.stats.netperf import predict
from memcglab.studies import claim_row
from memcglab.studies import text as T
from memcglab.studies.figures import MODEL_PALETTE, new_figure
from memcglab.studies.measure import measure
from memcglab.workloads import NetperfRxSpec, netperf_rx

__all__ = ["MAPE_OK_PCT", "NetperfParams", "prereg", "run", "verdict", "throughput", "figure",
           "conclusion", "summary", "claims"]

#: Pre-registered: an out-of-sample MAPE at or below this "predicts the column".
MAPE_OK_PCT = 10.0
#: seed 000's client counts (the table's rows; the verdict needs every one)
TABLE_CLIENTS = (6, 12, 18, 24, 30, 36)
WITHOUT, WITH = "single", "multi"


@dataclass(frozen=True)
class NetperfParams:
    """The problem size of study 1. Each default says where it comes from."""

    #: client counts: seed 000's table rows.
    clients: tuple[int, ...] = TABLE_CLIENTS
    #: models replayed: the table's two columns ("single" = without the patch,
    #: "multi" = with it) and, beyond the table, the 2026 round-robin stock.
    models: tuple[str, ...] = ("single", "multi", "multi-rr")
    #: generator (and random-victim) seeds per client count: the spread over seeds
    #: is the simulation's own noise.
    seeds: int = 3
    #: messages per trace; each is one 3-page charge and one uncharge.
    messages: int = 100_000
    #: the rest of the workload: NetperfRxSpec's defaults (72 CPUs, loopback, spread).
    workload: NetperfRxSpec = field(default_factory=NetperfRxSpec)
    #: NR_MEMCG_STOCK of the multi models: v6.16's 7.
    slots: int = 7
    cost: CostParams = field(default_factory=CostParams)

    def __post_init__(self) -> None:
        unknown = [m for m in self.models if m not in MODELS]
        if unknown:
            raise ValueError(f"models={','.join(self.models)}: unknown {', '.join(unknown)}; "
                             f"valid: {', '.join(MODELS)}")
        if not {WITHOUT, WITH} <= set(self.models):
            raise ValueError(f"models={','.join(self.models)}: must include {WITHOUT!r} and "
                             f"{WITH!r}, seed 000's 'without' and 'with' columns")
        missing = sorted(set(TABLE_CLIENTS) - set(self.clients))
        if missing:
            raise ValueError(f"clients={self.clients}: the verdict needs seed 000's rows "
                             f"{TABLE_CLIENTS}; missing {missing}")
        if not 1 <= self.seeds <= 1000:
            raise ValueError(f"seeds={self.seeds}: must be between 1 and 1000")
        if not 1000 <= self.messages <= 10_000_000:
            raise ValueError(f"messages={self.messages}: must be between 1000 and 10^7")

    @classmethod
    def from_notebook(cls, quick: bool = False, seeds: int = 3, messages: int = 100_000,
                      models: str = "single,multi,multi-rr") -> NetperfParams:
        """From the notebook's parameters; ``quick`` is one seed of 20,000 messages."""
        names = tuple(m.strip() for m in models.split(",") if m.strip())
        if quick:
            seeds, messages = 1, min(messages, 20_000)
        return cls(models=names, seeds=seeds, messages=messages)

    def spec(self, clients: int, seed: int) -> NetperfRxSpec:
        """The workload spec of one client count and seed."""
        return NetperfRxSpec(**{**_fields(self.workload), "clients": clients,
                                "messages": self.messages, "seed": seed})


def _fields(spec: NetperfRxSpec) -> dict:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__}


def prereg(p: NetperfParams) -> NetperfPrereg:
    """The registration, fixed before the "with" column is read: trace, models, K.

    ``mbit_per_op`` is one message's bits, the trace's unit of work per charge.
    """
    w = p.workload
    trace = (f"netperf_rx cpus={w.cpus} messages={p.messages} seeds={p.seeds} "
             f"message_size={w.message_size} placement={w.placement} release={w.release} "
             f"migration_rate={w.migration_rate} queue_depth={w.queue_depth} "
             f"ancestors={w.ancestors} slots={p.slots}")
    return NetperfPrereg(trace=trace, cpus=w.cpus, mbit_per_op=w.message_size * 8 / 1e6,
                         without_model=WITHOUT, with_model=WITH)


def run(p: NetperfParams) -> pd.DataFrame:
    """Replay every (clients, seed) trace through every model: one row per replay."""
    rows = []
    for clients in p.clients:
        for seed in range(p.seeds):
            trace = netperf_rx(p.spec(clients, seed))
            rows += [{"clients": clients, "seed": seed, "model": model,
                      **measure(trace, model, p.slots, seed, params=p.cost)}
                     for model in p.models]
    return pd.DataFrame(rows)


def verdict(df: pd.DataFrame, p: NetperfParams) -> NetperfVerdict:
    """Seed 000's verdict (:func:`memcglab.stats.verdict_000`) on this run's cycles."""
    return verdict_000(df[["clients", "model", "seed", "cycles_per_op"]], prereg(p))


def throughput(df: pd.DataFrame, v: NetperfVerdict) -> pd.DataFrame:
    """Per-flow Mbps per model and client count: fitted (single), predicted, published.

    Every model is priced with the one fit made on the "without" column.
    """
    p = v.prereg
    k = p.cpu_hz * p.mbit_per_op
    cycles = df.groupby(["model", "clients"])["cycles_per_op"].mean()
    rows = []
    for model in df["model"].unique():
        c = cycles.loc[model]
        mbps = predict(p, v.fit, c.index.to_numpy(float), c.to_numpy(float), k)
        kind = "fitted" if model == p.without_model else "predicted"
        rows += [{"clients": int(n), "model": model, "source": kind, "mbps": float(x)}
                 for n, x in zip(c.index, mbps, strict=True)]
    for model, col in ((p.without_model, "published_without"), (p.with_model, "published_with")):
        rows += [{"clients": int(n), "model": model, "source": "published", "mbps": float(x)}
                 for n, x in zip(v.rows["clients"], v.rows[col], strict=True)]
    return pd.DataFrame(rows)


def figure(df: pd.DataFrame, v: NetperfVerdict):
    """Walks, hit rate and usage-line transfers per packet, and throughput, vs clients."""
    fig, ax = new_figure(2, 2, sharex=True)
    panels = [("walks_per_op", "page_counter walks per packet"),
              ("hit_rate", "stock hit rate (fraction of charges)"),
              ("transfers_per_op", "remote usage lines per packet")]
    for i, (a, (col, label)) in enumerate(zip(ax.flat, panels, strict=False)):
        sns.lineplot(df, x="clients", y=col, hue="model", style="model", palette=MODEL_PALETTE,
                     markers=True, errorbar="sd", ax=a, legend=i == 0)
        a.set(ylabel=label, xlabel="netperf clients (memcgs)")
    tp, a = throughput(df, v), ax[1, 1]
    model = tp[tp["source"] != "published"]
    sns.lineplot(model, x="clients", y="mbps", hue="model", style="model",
                 palette=MODEL_PALETTE, markers=True, ax=a, legend=False)
    pub = tp[tp["source"] == "published"]
    sns.scatterplot(pub, x="clients", y="mbps", hue="model", palette=MODEL_PALETTE,
                    marker="X", s=120, ax=a, legend=False)
    a.fill_between(v.rows["clients"], v.rows["band_low"], v.rows["band_high"],
                   color=MODEL_PALETTE[WITH], alpha=0.12, label="sensitivity band")
    a.set(ylabel="per-flow throughput (Mbit/s)", xlabel="netperf clients (memcgs)")
    a.legend(handles=[
        Line2D([], [], color="k", marker="o", label="model: fitted (single), predicted"),
        Line2D([], [], color="k", marker="X", ls="", ms=9, label="published (seed 000)"),
        Patch(color=MODEL_PALETTE[WITH], alpha=0.12, label="'with' sensitivity band"),
    ], fontsize="small")
    fig.suptitle("Seed 000 netperf mix on 72 CPUs: walks, hit rate and line transfers per "
                 "packet (mean, sd over seeds);\nthroughput calibrated on 'without' "
                 "(single), predicted for the others and compared with 'with' (multi)",
                 fontsize="medium")
    return fig


def _at(df: pd.DataFrame, model: str, clients: int, col: str) -> float:
    sel = (df["model"] == model) & (df["clients"] == clients)
    return float(df.loc[sel, col].mean())


def summary(df: pd.DataFrame, v: NetperfVerdict) -> dict:
    """Scalars for the sidecar: the verdict's metrics and the largest mix's rates."""
    s = dict(zip(v.summary["metric"], v.summary["value"], strict=True))
    top = int(max(df["clients"]))
    last = v.rows.iloc[-1]
    out = {
        "mape_with_pct": float(s["mape_with_pct"]),
        "max_abs_error_with_pct": float(s["max_abs_error_with_pct"]),
        "mape_without_fit_pct": float(s["mape_without_fit_pct"]),
        "loo_mape_without_pct": float(s["loo_mape_without_pct"]),
        "band_mape_with_low_pct": float(s["band_mape_with_low_pct"]),
        "band_mape_with_high_pct": float(s["band_mape_with_high_pct"]),
        "improvement_spearman_vs_clients": float(s["improvement_spearman_vs_clients"]),
        "published_improvement_increasing": bool(s["published_improvement_increasing"]),
        "predicted_improvement_increasing": bool(s["predicted_improvement_increasing"]),
        "shape_reproduced": bool(s["predicted_improvement_increasing"])
        == bool(s["published_improvement_increasing"]),
        "mape_ok": bool(s["mape_with_pct"] <= MAPE_OK_PCT),
        "fit_at_bound": str(s["fit_at_bound"]),
        "prereg_digest": str(s["prereg_digest"]),
        "max_clients": top,
        "published_improvement_max_clients_pct": float(last["published_improvement_pct"]),
        "predicted_improvement_max_clients_pct": float(last["predicted_improvement_pct"]),
    }
    for model in df["model"].unique():
        key = model.replace("-", "_")
        for col in ("walks_per_op", "hit_rate", "transfers_per_op", "cycles_per_op"):
            out[f"{col}_{key}_max_clients"] = _at(df, model, top, col)
    return out


def conclusion(df: pd.DataFrame, v: NetperfVerdict) -> str:
    """The conclusion sentence(s), built from this run's numbers."""
    s = summary(df, v)
    worst = v.rows.loc[v.rows["error_pct"].abs().idxmax()]
    return T.netperf_conclusion(s, int(worst["clients"]), float(worst["error_pct"]),
                                MAPE_OK_PCT)


def claims(df: pd.DataFrame, v: NetperfVerdict) -> list[dict[str, str]]:
    """Seed 000's claims this study addresses: the table's shape, and its "with" column."""
    s = summary(df, v)
    r = v.rows
    pub_imp = r["published_improvement_pct"].to_numpy()
    pred_imp = r["predicted_improvement_pct"].to_numpy()
    clients = r["clients"].to_numpy()
    shape = claim_row(
        "seed 000: the multi stock's gain grows with clients (table shape)",
        f"{T.series(pub_imp, clients)} ({T.trend(np.diff(pub_imp))})",
        f"{T.series(pred_imp, clients)} ({T.trend(np.diff(pred_imp))}; Spearman "
        f"{s['improvement_spearman_vs_clients']:.2f})",
        "shape reproduced" if s["shape_reproduced"] else "shape not reproduced")
    band = f"{s['band_mape_with_low_pct']:.1f}-{s['band_mape_with_high_pct']:.1f}%"
    mape = claim_row(
        "seed 000: 'with patch' Mbps, predicted out of sample from 'without'",
        f"{r['published_with'].iloc[0]:.0f} -> {r['published_with'].iloc[-1]:.0f} Mbps at "
        f"{clients[0]} -> {clients[-1]} clients",
        f"MAPE {s['mape_with_pct']:.1f}% (fit on 'without' {s['mape_without_fit_pct']:.1f}%; "
        f"sensitivity band {band})",
        (f"predicted within {MAPE_OK_PCT:g}%" if s["mape_ok"]
         else f"missed: MAPE {s['mape_with_pct']:.1f}% > {MAPE_OK_PCT:g}%"))
    return [shape, mape]
