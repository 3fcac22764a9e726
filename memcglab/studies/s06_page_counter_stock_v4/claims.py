"""Study 6's verdicts: the madvise comparison, the stale answer, claims and conclusion.

The text a reader sees is built here from the run's numbers: :func:`comparison` puts
the registered madvise prediction beside the simulated TOST, :func:`stale_answer`
says where v4's stocks come close to their bound and where they pass the old one,
:func:`claims` and :func:`conclusion` turn them, and each pair's priced change, into
claim rows and sentences, :func:`summary` into sidecar scalars. The study's runs come
from :mod:`memcglab.studies.s06_page_counter_stock_v4.study`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memcglab.stats.verdict_rules import judge
from memcglab.studies import claim_row
from memcglab.studies.s06_page_counter_stock_v4.stale import thresholds
from memcglab.studies.s06_page_counter_stock_v4.staleness import CLOSE_FRACTION, PAGE_MIB
from memcglab.uncertainty import UncertainResult

if TYPE_CHECKING:  # the study's parameters; imported for annotations only
    from memcglab.studies.s06_page_counter_stock_v4.study import V4Params

__all__ = ["break_even_text", "claims", "comparison", "conclusion", "stale_answer",
           "summary"]


def comparison(pred: pd.DataFrame, tost: pd.DataFrame, margin_pct: float) -> pd.DataFrame:
    """The registered madvise predictions (v4 vs multi) beside the simulated trials' TOST.

    Both say whether v4 changes the series' own benchmark beyond ``margin_pct``: the
    prediction from the contention model on each machine profile, the TOST from study
    3's per-trial CPU times (40 CPUs, seed 003's setting). They agree when the
    prediction's interval lies inside the margin and the TOST shows equivalence.
    """
    rows = []
    sel = (pred["workload"] == "madvise_fault") & (pred["baseline"] == "multi") \
        & (pred["model"] == "pcstock-v4")
    for _, r in pred[sel].iterrows():
        inside = bool(-margin_pct <= r["low"] and r["high"] <= margin_pct)
        for it, part in tost.groupby("iterations"):
            eq = bool(part["equivalent"].all())
            rows.append({"machine": r["machine"], "predicted_change_pct": r["predicted_change_pct"],
                         "low": r["low"], "high": r["high"], "iterations": int(it),
                         "tost_max_abs_delta_pct": float(part["delta_pct"].abs().max()),
                         "tost_equivalent": eq, "agree": inside == eq})
    return pd.DataFrame(rows)


def _old_bound_mib(cpus: int, slots: int = 7, batch: int = 64) -> float:
    return cpus * slots * batch * PAGE_MIB


def stale_answer(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (workload, cgroups): where v4 first comes close to its bound (thresholds), and
    the smallest rate at which its stocks hold more than the old bound, cpus x 7 x 64."""
    th = thresholds(runs)
    v4 = runs[runs["model"] == "pcstock-v4"]
    over = []
    for _, r in th.iterrows():
        part = v4[(v4["workload"] == r["workload"]) & (v4["cgroups"] == r["cgroups"])]
        g = part.groupby("migration_rate")[["peak_mib", "cpus"]].mean().sort_index()
        hit = g[g["peak_mib"] > _old_bound_mib(int(g["cpus"].iloc[0]))]
        over.append(float(hit.index[0]) if len(hit) else np.nan)
    return th.assign(first_rate_over_old_bound=over)


def summary(rates: pd.DataFrame, results: dict, stale_runs: pd.DataFrame,
            tost: pd.DataFrame) -> dict:
    """Scalars for the sidecar."""
    out: dict = {}
    for (case, machine, base, model), r in results.items():
        key = f"{case}_{machine}_{base}_{model}".replace("-", "_")
        out[f"change_pct_{key}"] = r.median
        out[f"p_holds_{key}"] = r.p_holds
    v4 = rates[rates["model"] == "pcstock-v4"]
    for _, r in v4.iterrows():
        key = f"{r['workload']}_{r['machine']}".replace("-", "_")
        out[f"walks_per_1000_v4_{key}"] = float(r["walks_per_1000"])
    ans = stale_answer(stale_runs)
    out["stale_max_fraction_of_bound"] = float(ans["max_fraction"].max())
    out["stale_any_close"] = bool(ans["first_close_rate"].notna().any())
    out["stale_close_fraction"] = CLOSE_FRACTION
    for it, part in tost.groupby("iterations"):
        out[f"madvise_equivalent_{int(it)}"] = bool(part["equivalent"].all())
        out[f"madvise_max_abs_delta_pct_{int(it)}"] = float(part["delta_pct"].abs().max())
    return out


def break_even_text(r: UncertainResult) -> str:
    """The priors at which the claim flips, crossings only; else "none in the priors'
    ranges" (every prior searched over its whole range)."""
    return "; ".join(r.crossings().values()) or "none in the priors' ranges"


def _from_rate(x: float) -> str:
    return "never in the sweep" if x is None or math.isnan(x) else f"from rate {x:g}"


def conclusion(results: dict, stale_runs: pd.DataFrame, tost: pd.DataFrame,
               p: V4Params) -> str:
    """The conclusion, built from this run's numbers."""
    parts = []
    for machine in p.machines:
        pairs = [(c, results[(c, machine, "multi", "pcstock-v4")]) for c in p.cases]
        worst = min(pairs, key=lambda kv: kv[1].median)
        loses = [c for c, r in pairs if r.high < -p.margin_pct]
        parts.append(
            f"On {machine}, v4 against the multi stock loses most on {worst[0]}: "
            f"{worst[1].median:+.1f}% [{worst[1].low:+.1f}, {worst[1].high:+.1f}] (90%), "
            f"driver {worst[1].driver}; the whole interval lies below -{p.margin_pct:g}% on "
            f"{', '.join(loses) if loses else 'no workload'}.")
    ans = stale_answer(stale_runs)
    close = ans[ans["first_close_rate"].notna()]
    over = ans[ans["first_rate_over_old_bound"].notna()]
    text = (f"Stranded pages ({p.stale_cpus} CPUs): v4's stocks reach {CLOSE_FRACTION:.0%} "
            f"of nr_cpus x nr_cgroups x 64 in {len(close)} of {len(ans)} (workload, memcgs) "
            "sweeps")
    if len(close):
        least = close.loc[close["migrations_per_task_there"].idxmin()]
        text += (f", and only after at least {least['migrations_per_task_there']:.3g} "
                 f"migrations per task ({least['workload']}, {int(least['cgroups'])} memcgs)")
    text += (f"; but they hold more than the old bound nr_cpus x 7 x 64 "
             f"({_old_bound_mib(p.stale_cpus):.0f} MiB) in {len(over)} of them")
    still = over[over["first_rate_over_old_bound"] == 0]
    moving = over[over["first_rate_over_old_bound"] > 0]
    if len(moving):
        text += (f", from {moving['first_rate_over_old_bound'].min():g} migrations per "
                 "operation")
    if len(still):
        text += (", and with no migration at all from "
                 f"{int(still['cgroups'].min())} memcgs ({still['workload'].iloc[0]})")
    parts.append(text + ".")
    eq = {int(it): bool(part["equivalent"].all()) for it, part in tost.groupby("iterations")}
    parts.append("The madvise loop: v4 vs multi is " + "; ".join(
        f"{'equivalent' if e else 'not shown equivalent'} within +-{p.margin_pct:g}% at "
        f"{it} iterations" for it, e in sorted(eq.items(), reverse=True)) + " (TOST).")
    return " ".join(parts)


def claims(results: dict, stale_runs: pd.DataFrame, tost: pd.DataFrame,
           p: V4Params) -> list[dict]:
    """The series' claims this study addresses and its priced predictions for v4."""
    rows = []
    for it, part in sorted(tost.groupby("iterations"), reverse=True):
        eq = bool(part["equivalent"].all())
        rows.append(claim_row(
            f"v4 (page_counter stock): madvise loop, v4 vs memcg stock negligible "
            f"({int(it)} iterations)",
            "the series' benchmark (seed 003: 30 trials of 50 iterations, 1/4/32 cgroups); "
            "no v4 numbers in the lab's data",
            ", ".join(f"{d:+.3f}% at {c}" for d, c in zip(part["delta_pct"], part["cgroups"],
                                                          strict=True))
            + f" cgroups, CPU ms per trial over {p.madvise_trials} trials (TOST "
            f"+-{p.margin_pct:g}%)",
            ("equivalent" if eq else "not equivalent")
            + " in simulation (TOST over trials at typical costs: seed noise only, so no "
            "rules verdict; the priced madvise_fault rows below carry one)",
            kind="count-derived"))
    for machine in p.machines:
        for case in p.cases:
            r = results[(case, machine, "multi", "pcstock-v4")]
            # the claim "no loss beyond the margin" is the band [-margin, inf) of the change
            verdict = judge("value", -p.margin_pct, None, interval=r).word
            st = float(r.sobol_total.get(r.driver, float("nan")))
            rows.append(claim_row(
                f"v4 beyond its benchmark: {case} on {machine}, no loss vs memcg stock",
                "not measured (prediction registered before any measurement)",
                f"throughput per flow {r.describe('{:+.2f}')}; claim holds if >= "
                f"-{p.margin_pct:g}%",
                verdict, kind="priced", estimate=r.median, unit="%",
                driver_st=st if math.isfinite(st) else None, low=r.low, high=r.high,
                p_holds=r.p_holds, driver=r.driver, break_even=break_even_text(r)))
    ans = stale_answer(stale_runs)
    close = ans[ans["first_close_rate"].notna()]
    over = ans[ans["first_rate_over_old_bound"].notna()]
    if close.empty:
        verdict = "holds in every sweep" + ("" if over.empty else
                                            ", yet stocks pass the old bound")
    else:
        least = close["migrations_per_task_there"].min()
        verdict = (f"holds below about {least:.3g} migrations per task; "
                   + ("stocks pass the old bound" if len(over) else "old bound not passed"))
    rows.append(claim_row(
        "v3/v4 cover letters: coming close to nr_cpus x nr_cgroups x 64 stranded pages is "
        "difficult and rare",
        "bound nr_cpus x 7 x 64 -> nr_cpus x nr_cgroups x 64; close 'would require "
        "processes to bounce across CPUs'",
        f"close = >= {CLOSE_FRACTION:.0%} of the bound; " + "; ".join(
            f"{r['workload']} {int(r['cgroups'])} memcgs: close "
            f"{_from_rate(r['first_close_rate'])}, over the old bound "
            f"{_from_rate(r['first_rate_over_old_bound'])}, peak {r['max_fraction']:.0%} "
            f"of the bound ({r['max_peak_mib']:.0f} MiB)" for _, r in ans.iterrows()),
        verdict, kind="count-derived"))
    return rows
