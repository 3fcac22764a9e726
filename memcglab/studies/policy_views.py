"""Study 2's figures: victim policies over active memcgs, and slot counts.

The numbers come from :mod:`memcglab.studies.policy_study`; these functions only draw.
The claimed band of random's advantage over LRU is the published ``claims`` table's.
"""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from memcglab.published import load
from memcglab.studies.figures import POLICY_PALETTE, new_figure
from memcglab.studies.policy_study import NETPERF, PolicyParams, advantages, second_line

__all__ = ["figure_policies", "figure_slots"]


def figure_policies(df: pd.DataFrame, p: PolicyParams):
    """Walks per 1000 charges vs active memcgs per CPU, per CPU count, mix and policy."""
    syn = df[(df["workload"] == "synthetic") & (df["slots"] == p.slots)]
    fig, ax = new_figure(len(p.cpus), len(p.mixes), width=4.2, height=3.0, sharex=True,
                         sharey=True, squeeze=False)
    for i, cpus in enumerate(p.cpus):
        for j, mix in enumerate(p.mixes):
            a = ax[i, j]
            sns.lineplot(syn[(syn["mix"] == mix) & (syn["cpus"] == cpus)], x="active",
                         y="walks_per_1000", hue="policy", style="policy",
                         palette=POLICY_PALETTE, markers=True, errorbar="sd", ax=a,
                         legend=i == j == 0)
            a.axvline(p.slots, color="k", ls=":", lw=1)
            a.set_xscale("log", base=2)
            a.set(title=f"{mix} mix, {cpus} CPU{'s' * (cpus > 1)}",
                  xlabel="active memcgs per CPU (log scale)", ylabel="walks per 1000 charges")
    fig.suptitle(f"Victim policies with {p.slots} slots (dotted line): with one CPU they "
                 "differ only right of the line;\nwith more, remote releases add memcgs "
                 "that other CPUs charge (mean, sd over seeds)", fontsize="medium")
    return fig


def figure_slots(df: pd.DataFrame, p: PolicyParams):
    """Netperf cost vs slots per policy; the second line's gain; random vs LRU per seed."""
    one, two = p.line_slots
    fig, ax = new_figure(1, 3)
    net = df[df["workload"] == NETPERF]
    sns.lineplot(net, x="slots", y="cost_per_op", hue="policy", style="policy",
                 palette=POLICY_PALETTE, markers=True, errorbar="sd", ax=ax[0])
    for edge in (one, two):
        ax[0].axvline(edge + 0.5, color="k", ls=":", lw=1)
    ax[0].xaxis.get_major_locator().set_params(integer=True)
    ax[0].set(title=f"netperf, {p.netperf_clients} clients (dotted: cache-line ends)",
              xlabel="slots (NR_MEMCG_STOCK)", ylabel="cycles per charge")
    line = second_line(df, p)
    sns.lineplot(line, x="active", y="gain_pct", hue="mix", style="cpus", markers=True,
                 ax=ax[1])
    ax[1].axhline(0, color="k", lw=1)
    ax[1].set_xscale("log", base=2)
    ax[1].legend(fontsize="x-small", ncol=2)
    ax[1].set(title=f"{p.policy}: {two} slots (2 lines) vs {one} (1 line)",
              xlabel="active memcgs per CPU (log scale)",
              ylabel="throughput gain of the 2nd line (%)")
    adv = advantages(df, p)
    claim = load("claims").frame.set_index("claim_id").loc["lru_vs_random"]
    band = f"{claim['low']:g}-{claim['high']:g}%"
    ax[2].axhspan(claim["low"], claim["high"], color="0.85", label=f"claimed {band}")
    sns.pointplot(adv, x="workload", y="advantage_pct", errorbar=("ci", 95), ax=ax[2],
                  color="k", linestyle="none", capsize=0.1)
    sns.stripplot(adv, x="workload", y="advantage_pct", ax=ax[2], alpha=0.5)
    ax[2].axhline(0, color="k", lw=1)
    ax[2].set(title=f"random vs LRU, {p.slots} slots: per seed and 95% CI",
              xlabel="", ylabel="random's throughput advantage (%)")
    ax[2].tick_params(axis="x", labelsize="small")
    ax[2].legend(loc="best", fontsize="small")
    fig.suptitle("How many slots, and which policy: cost per charge, the second cache "
                 f"line's payoff, and the {band} claim", fontsize="medium")
    return fig
