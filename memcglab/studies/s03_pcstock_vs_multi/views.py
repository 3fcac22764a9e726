"""Study 3's figures: the counts, the TOST forest, and the priced changes with intervals.

Each function takes :mod:`memcglab.studies.s03_pcstock_vs_multi.study`'s outputs and returns a
matplotlib Figure; files and captions are :func:`memcglab.plots.finish`'s job.
"""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from memcglab.studies.common.figures import MODEL_PALETTE, new_figure
from memcglab.studies.s03_pcstock_vs_multi.study import MADVISE, NETPERF, PcstockParams, intervals
from memcglab.uncertainty import UncertainResult

__all__ = ["figure_counts", "figure_equivalence", "figure_predictions"]


def figure_counts(df: pd.DataFrame, p: PcstockParams):
    """Exact counts per stock: the madvise loop's walks by cgroups, and the netperf
    scenarios' walks, shared-line transfers and drains at the largest client count."""
    fig, ax = new_figure(2, 2, width=6.5, height=3.8)
    mad = df[df["workload"] == MADVISE].assign(
        walks_per_1000=lambda d: 1000.0 * d["walks_per_op"])
    sns.barplot(mad, x="cgroups", y="walks_per_1000", hue="model", palette=MODEL_PALETTE,
                errorbar="sd", ax=ax[0, 0])
    ax[0, 0].set(xlabel="cgroups (madvise loop, 40 CPUs)", ylabel="walks per 1000 charges",
                 title="madvise loop: charged and freed on one CPU")
    net = df[(df["workload"] == NETPERF) & (df["cgroups"] == max(p.clients))]
    for a, col, what in ((ax[0, 1], "walks_per_1000", "walks per 1000 charges"),
                         (ax[1, 0], "shared_per_msg", "shared-line transfers per message"),
                         (ax[1, 1], "drains_per_1000", "drains per 1000 charges")):
        sns.barplot(net, y="scenario", x=col, hue="model", palette=MODEL_PALETTE,
                    errorbar="sd", ax=a, legend=False, orient="h")
        a.set(ylabel="release / placement / migrate", xlabel=what,
              title=f"netperf {max(p.clients)} clients: {what}")
    fig.suptitle("Exact counts, multi stock vs the RFC's page_counter stock (mean, sd over "
                 "trials or seeds)", fontsize="medium")
    return fig


def figure_equivalence(v: pd.DataFrame, p: PcstockParams):
    """Forest plot: pcstock's difference from multi, in %, against the TOST margin."""
    iv = intervals(v).iloc[::-1].reset_index(drop=True)
    fig, ax = new_figure(1, 1, width=8.0, height=0.45 * len(iv) + 1.5)
    ax.axvspan(-p.margin_pct, p.margin_pct, color="0.88",
               label=f"equivalence margin +-{p.margin_pct:g}%")
    for y, r in iv.iterrows():
        color = "#2ca02c" if r["equivalent"] else "#d62728"
        ax.errorbar(r["delta_pct"], y, xerr=[[r["delta_pct"] - r["low"]],
                                             [r["high"] - r["delta_pct"]]],
                    fmt="o", color=color, capsize=3)
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(iv.index, iv["label"], fontsize="small")
    ax.set_xlim(min(-2 * p.margin_pct, 1.5 * float(iv["low"].min())),
                max(2 * p.margin_pct, 1.5 * float(iv["high"].max())))
    ax.set(xlabel="pcstock - multi, % of multi (90% CI)",
           title="TOST: green = shown equivalent, red = not")
    ax.legend(loc="upper right", fontsize="small")
    return fig


def figure_predictions(preds: dict[str, UncertainResult], p: PcstockParams):
    """Each priced change (median and 90% interval over priors, scenarios and seeds)
    against the +-margin band; the first study's cycles-per-packet measure is left out
    (a different quantity, shown in the table)."""
    keys = [k for k in preds if not k.startswith("netperf cycles")][::-1]
    fig, ax = new_figure(1, 1, width=9.0, height=0.42 * len(keys) + 1.6)
    ax.axvspan(-p.margin_pct, p.margin_pct, color="0.88",
               label=f"negligible: within +-{p.margin_pct:g}%")
    for y, k in enumerate(keys):
        r = preds[k]
        color = "#0173b2" if k.startswith("madvise") else "#de8f05"
        ax.errorbar(r.median, y, xerr=[[r.median - r.low], [r.high - r.median]], fmt="o",
                    color=color, capsize=3)
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(range(len(keys)), keys, fontsize="small")
    ax.set_xscale("symlog", linthresh=max(2 * p.margin_pct, 1.0))
    lo = min(preds[k].low for k in keys) if keys else -p.margin_pct
    hi = max(preds[k].high for k in keys) if keys else p.margin_pct
    ax.set_xlim(min(-2 * p.margin_pct, 1.3 * lo), max(2 * p.margin_pct, 1.3 * hi))
    ax.set(xlabel="pcstock vs multi, % (madvise: trial CPU time, + is slower; netperf: "
                  "throughput per flow, - is a loss); symlog",
           title="Priced changes with 90% intervals")
    ax.legend(loc="lower right", fontsize="small")
    return fig
