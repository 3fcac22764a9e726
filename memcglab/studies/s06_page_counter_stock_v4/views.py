"""Study 6's figures: counts, predictions, stranded pages, the madvise TOST.

Every function returns a matplotlib Figure; the notebook saves each with its caption
through :func:`memcglab.plots.finish`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from memcglab.studies.common.figures import MODEL_PALETTE, new_figure
from memcglab.studies.s06_page_counter_stock_v4.staleness import CLOSE_FRACTION, PAGE_MIB

__all__ = ["counts_figure", "memcg_figure", "predictions_figure", "stale_figure",
           "stale_series_figure", "tost_figure"]

_PALETTE = {m: MODEL_PALETTE[m] for m in ("multi", "pcstock", "pcstock-v4")}


def counts_figure(rates: pd.DataFrame):
    """Walks per 1000 charges and shared-line transfers per message, per workload."""
    machines = list(dict.fromkeys(rates["machine"]))
    fig, ax = new_figure(2, len(machines), width=6.5, height=3.8, squeeze=False)
    for j, machine in enumerate(machines):
        sub = rates[rates["machine"] == machine]
        for i, (col, label) in enumerate((("walks_per_1000", "page_counter walks\nper 1000 "
                                           "charges"),
                                          ("shared_per_message", "shared usage-line "
                                           "transfers\nper message"))):
            a = ax[i, j]
            sns.barplot(sub, x="workload", y=col, hue="model", palette=_PALETTE, ax=a,
                        legend=i == j == 0, errorbar=None)
            a.set(xlabel="workload" if i else "", ylabel=label, title=machine)
            a.tick_params(axis="x", rotation=35, labelsize="small")
    fig.suptitle("Event counts of each workload under the multi stock, the RFC (pcstock) and "
                 "v4 (default placement, mean over seeds)", fontsize="medium")
    return fig


def predictions_figure(pred: pd.DataFrame):
    """Forest plot: each regenerated scenario file's change with its 90% interval."""
    machines = list(dict.fromkeys(pred["machine"]))
    fig, ax = new_figure(1, len(machines), width=6.5, height=0.33 * len(pred) /
                         max(1, len(machines)) + 1.8, squeeze=False)
    for j, machine in enumerate(machines):
        sub = pred[pred["machine"] == machine].reset_index(drop=True)
        a = ax[0, j]
        y = np.arange(len(sub))[::-1]
        for yy, (_, r) in zip(y, sub.iterrows(), strict=True):
            a.errorbar(r["change_pct"], yy,
                       xerr=[[r["change_pct"] - r["low"]], [r["high"] - r["change_pct"]]],
                       fmt="o", color=_PALETTE[r["baseline"]], ms=4, capsize=2)
        a.axvline(0, color="k", lw=1)
        a.set_yticks(y, sub["workload"] + ": v4 vs " + sub["baseline"], fontsize="x-small")
        a.set_xscale("symlog", linthresh=1.0)
        a.set(xlabel="throughput change, % of the baseline (90% interval; symlog)",
              title=machine, xlim=(-110, max(10.0, 1.5 * float(pred["high"].max()))))
    fig.suptitle("Study 6's scenario files regenerated through memcglab predict (median, 90% "
                 "interval at the default calibration); a loss is negative", fontsize="medium")
    return fig


def stale_figure(runs: pd.DataFrame, memory_max_mib: float):
    """Peak stranded MiB and its share of the bound against the migration rate."""
    workloads = list(dict.fromkeys(runs["workload"]))
    fig, ax = new_figure(2, len(workloads), width=5.2, height=3.8, squeeze=False)
    df = runs.assign(rate=runs["migration_rate"].clip(lower=1e-4),
                     memcgs=runs["cgroups"].astype(str))
    for j, w in enumerate(workloads):
        sub = df[df["workload"] == w]
        a = ax[0, j]
        sns.lineplot(sub, x="rate", y="peak_mib", hue="model", style="memcgs",
                     palette=_PALETTE, markers=True, ax=a, errorbar=None)
        cpus = int(sub["cpus"].iloc[0])
        a.axhline(cpus * 7 * 64 * PAGE_MIB, color="#555555", ls=":", lw=1.2,
                  label="old bound (cpus x 7 x 64)")
        a.axhline(memory_max_mib, color="0.6", ls="--", lw=1,
                  label=f"a memory.max of {memory_max_mib:g} MiB")
        a.set(xscale="log", yscale="log", title=w, ylabel="peak pages in stocks (MiB)",
              xlabel="migration rate per own operation (0 drawn at 1e-4)")
        a.legend(fontsize="x-small")
        b = ax[1, j]
        sns.lineplot(sub, x="migrations_per_task", y="peak_fraction_of_bound", hue="model",
                     style="memcgs", palette=_PALETTE, markers=True, ax=b, legend=False,
                     errorbar=None)
        b.axhline(CLOSE_FRACTION, color="#d62728", ls="--", lw=1)
        b.set(xscale="symlog", ylim=(0, 1.05), ylabel="peak / the model's bound",
              xlabel="migrations per task over the trace (symlog)",
              xlim=(0, 2 * max(1.0, float(sub["migrations_per_task"].max()))))
    fig.suptitle("Pages stranded in per-CPU stocks when tasks migrate (72 CPUs): top, the "
                 "peak in MiB; bottom, as a share of each model's bound (red: 'close', "
                 f"{CLOSE_FRACTION:.0%})", fontsize="medium")
    return fig


def stale_series_figure(series: pd.DataFrame, workload: str = "sched_migration"):
    """Total stocked MiB over the trace, one line per (model, rate), at each memcg count."""
    if workload not in set(series["workload"]):
        raise ValueError(f"workload={workload!r}: not in the series; has "
                         f"{sorted(set(series['workload']))}")
    sub = series[series["workload"] == workload]
    counts = sorted(sub["cgroups"].unique())
    fig, ax = new_figure(1, len(counts), width=5.0, height=3.6, squeeze=False)
    for j, c in enumerate(counts):
        part = sub[sub["cgroups"] == c]
        part = part.assign(rate=part["migration_rate"].map("{:g}".format))
        sns.lineplot(part, x="op_fraction", y="stocked_mib", hue="rate", style="model",
                     ax=ax[0, j], palette="viridis", errorbar=None)
        ax[0, j].set(yscale="symlog", title=f"{workload}, {c} memcgs",
                     xlabel="share of the trace replayed", ylabel="pages in stocks (MiB)")
        ax[0, j].legend(fontsize="x-small", ncol=2)
    return fig


def memcg_figure(m: pd.DataFrame, cpus: int, memory_max_mib: float, title: str):
    """Per memcg: stocked MiB over the trace (median and 5-95% band over memcgs), and the
    distribution of its stocked share of its usage (every sample but the last)."""
    fig, ax = new_figure(1, 2, width=5.6, height=3.8)
    sns.lineplot(m, x="sample", y="stocked_mib", hue="model", palette=_PALETTE, ax=ax[0],
                 estimator="median", errorbar=("pi", 90))
    ax[0].axhline(cpus * 64 * PAGE_MIB, color="#555555", ls=":", lw=1.2,
                  label=f"one memcg's bound ({cpus} CPUs x 64 pages)")
    ax[0].set(xlabel="sample (equal shares of the trace)", ylabel="pages in stocks per memcg (MiB)",
              title=f"{title}; memory.max {memory_max_mib:g} MiB")
    ax[0].legend(fontsize="x-small")
    running = m[m["sample"] < m["sample"].max()]
    sns.ecdfplot(running, x="share_of_usage", hue="model", palette=_PALETTE, ax=ax[1])
    ax[1].set(xlabel="stocked share of the memcg's usage", ylabel="fraction of (memcg, sample)",
              xlim=(0, 1))
    return fig


def tost_figure(v: pd.DataFrame, margin_pct: float):
    """Forest plot of the madvise TOST: v4 - multi, % of multi, with 90% CIs."""
    # TOST's (1 - 2 alpha) interval reaches min_equiv_margin_pct at its far end.
    half = v["min_equiv_margin_pct"] - v["delta_pct"].abs()
    iv = pd.DataFrame({"label": v["iterations"].astype(str) + " iterations, "
                       + v["cgroups"].astype(str) + " cgroups",
                       "delta_pct": v["delta_pct"], "low": v["delta_pct"] - half,
                       "high": v["delta_pct"] + half, "equivalent": v["equivalent"]})
    iv = iv.iloc[::-1].reset_index(drop=True)
    fig, ax = new_figure(1, 1, width=7.5, height=0.45 * len(iv) + 1.5)
    ax.axvspan(-margin_pct, margin_pct, color="0.88", label=f"margin +-{margin_pct:g}%")
    for y, r in iv.iterrows():
        ax.errorbar(r["delta_pct"], y, xerr=[[r["delta_pct"] - r["low"]],
                                             [r["high"] - r["delta_pct"]]],
                    fmt="o", color="#2ca02c" if r["equivalent"] else "#d62728", capsize=3)
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(iv.index, iv["label"], fontsize="small")
    ax.set(xlabel="pcstock-v4 - multi, % of multi CPU ms per trial (90% CI)",
           title="madvise loop, TOST: green = shown equivalent, red = not",
           xlim=(-2 * margin_pct, 2 * margin_pct))
    ax.legend(loc="upper right", fontsize="small")
    return fig
