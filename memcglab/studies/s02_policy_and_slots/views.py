"""Study 2's figures: victim policies over active memcgs, slot counts, the priced advantage.

The numbers come from :mod:`memcglab.studies.s02_policy_and_slots.study` and
:mod:`memcglab.studies.s02_policy_and_slots.verdict`; these functions only draw. The claimed band of
random's advantage over LRU is the published ``claims`` table's.
"""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from memcglab.published import load
from memcglab.studies.common.figures import new_figure, policy_palette
from memcglab.studies.s02_policy_and_slots.study import NETPERF, PolicyParams, second_line
from memcglab.studies.s02_policy_and_slots.verdict import PolicyResults, mix_label
from memcglab.uncertainty import sensitivity_figure

__all__ = ["figure_active", "figure_policies", "figure_slots", "figure_sensitivity"]


def figure_active(r: PolicyResults, p: PolicyParams):
    """Netperf: % of windows with more active memcgs than slots, against the slot count,
    per window length, for each modelling alternative."""
    a = r.active.assign(alternative=r.active["placement"] + " tasks, release in "
                        + r.active["release"])
    a = a.assign(over_pct=a["over_pct"].clip(lower=1e-4))
    fig, ax = new_figure(1, 1, width=6.0, height=3.6)
    sns.lineplot(a, x="slots", y="over_pct", hue="alternative", style="window",
                 markers=True, ax=ax)
    ax.axvline(p.slots, color="k", ls=":", lw=1)
    ax.set_yscale("log")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set(title=f"netperf, {p.netperf_clients} clients", xlabel="slots (NR_MEMCG_STOCK)",
           ylabel="windows with more active\nmemcgs than slots (%, log)")
    ax.legend(fontsize="x-small", bbox_to_anchor=(1.02, 1.0), loc="upper left")
    return fig


def figure_policies(df: pd.DataFrame, p: PolicyParams):
    """Walks per 1000 charges vs active memcgs per CPU, per CPU count, mix and policy."""
    syn = df[(df["workload"] == "synthetic") & (df["slots"] == p.slots)]
    colours = policy_palette(df["policy"].unique())  # a plugin's policies too
    fig, ax = new_figure(len(p.cpus), len(p.mixes), width=4.2, height=3.0, sharex=True,
                         sharey=True, squeeze=False)
    for i, cpus in enumerate(p.cpus):
        for j, mix in enumerate(p.mixes):
            a = ax[i, j]
            sns.lineplot(syn[(syn["mix"] == mix) & (syn["cpus"] == cpus)], x="active",
                         y="walks_per_1000", hue="policy", style="policy",
                         palette=colours, markers=True, errorbar="sd", ax=a,
                         legend=i == j == 0)
            a.axvline(p.slots, color="k", ls=":", lw=1)
            a.set_xscale("log", base=2)
            a.set(title=f"{mix} mix, {cpus} CPU{'s' * (cpus > 1)}",
                  xlabel="active memcgs per CPU (log scale)", ylabel="walks per 1000 charges")
    fig.suptitle(f"Victim policies with {p.slots} slots (dotted line): with one CPU they "
                 "differ only right of the line;\nwith more, remote releases add memcgs "
                 "that other CPUs charge (mean, sd over seeds)", fontsize="medium")
    return fig


def figure_slots(df: pd.DataFrame, p: PolicyParams, r: PolicyResults):
    """Netperf cost vs slots per policy; the second line's gain; the priced advantage."""
    one, two = p.line_slots
    fig, ax = new_figure(1, 3)
    net = df[(df["workload"] == NETPERF) & df["default"]]
    sns.lineplot(net, x="slots", y="cycles_per_op", hue="policy", style="policy",
                 palette=policy_palette(df["policy"].unique()), markers=True, errorbar="sd",
                 ax=ax[0])
    for edge in (one, two):
        ax[0].axvline(edge + 0.5, color="k", ls=":", lw=1)
    ax[0].xaxis.get_major_locator().set_params(integer=True)
    ax[0].set(title=f"netperf, {p.netperf_clients} clients (dotted: cache-line ends)",
              xlabel="slots (NR_MEMCG_STOCK)",
              ylabel="charge-path cycles per charge (typical costs)")
    line = second_line(df, p)
    sns.lineplot(line, x="active", y="gain_pct", hue="mix", style="cpus", markers=True,
                 ax=ax[1])
    ax[1].axhline(0, color="k", lw=1)
    ax[1].set_xscale("log", base=2)
    ax[1].legend(fontsize="x-small", ncol=2)
    ax[1].set(title=f"{p.policy}: {two} slots (2 lines) vs {one} (1 line)",
              xlabel="active memcgs per CPU (log scale)",
              ylabel="charge-path gain of the 2nd line (%)")
    claim = load("claims").frame.set_index("claim_id").loc["lru_vs_random"]
    band = f"{claim['low']:g}-{claim['high']:g}%"
    a = ax[2]
    a.axvspan(claim["low"], claim["high"], color="0.85", label=f"claimed {band}")
    mixes = list(r.priced)
    for i, m in enumerate(mixes):
        res = r.priced[m]
        a.plot([res.low, res.high], [i, i], color="k", lw=2)
        a.plot([res.median], [i], "o", color="k")
    a.axvline(0, color="k", lw=1)
    a.set_yticks(range(len(mixes)), [mix_label(m, p).replace(", more", ",\nmore")
                                      for m in mixes], fontsize="small")
    a.invert_yaxis()
    a.set(title=f"random vs LRU, {p.slots} slots: median and 90% interval",
          xlabel="random's throughput advantage over LRU (%)", ylabel="")
    a.legend(loc="lower right", fontsize="small")
    fig.suptitle("How many slots, and which policy: cost per charge, the second cache "
                 f"line's payoff, and the {band} claim priced per mix", fontsize="medium")
    return fig


def figure_sensitivity(r: PolicyResults, mix: str = NETPERF):
    """What drives ``mix``'s priced advantage: a tornado and Sobol bars, and a caption."""
    if mix not in r.priced:
        raise ValueError(f"mix={mix!r}: not priced; priced: {', '.join(r.priced)}")
    return sensitivity_figure(r.priced[mix], f"random's advantage over LRU, {mix}")
