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

from memcglab.hardware import load_profile
from memcglab.stats import judge, option_intervals
from memcglab.studies import claim_row, count_row, interval_columns
from memcglab.studies.common.sources import V4, name
from memcglab.studies.common.text import plural
from memcglab.studies.s06_page_counter_stock_v4.counts import CASES
from memcglab.studies.s06_page_counter_stock_v4.stale import thresholds
from memcglab.studies.s06_page_counter_stock_v4.staleness import CLOSE_FRACTION, PAGE_MIB
from memcglab.uncertainty import UncertainResult

if TYPE_CHECKING:  # the study's parameters; imported for annotations only
    from memcglab.studies.s06_page_counter_stock_v4.study import V4Params

__all__ = ["break_even_text", "claims", "comparison", "conclusion", "stale_answer",
           "prediction_rows", "stale_row", "summary", "tost_counts"]


def comparison(pred: pd.DataFrame, tost: pd.DataFrame, margin_pct: float) -> pd.DataFrame:
    """The registered madvise predictions (v4 vs multi) beside the simulated trials' TOST.

    Both say whether v4 changes the series' own benchmark beyond ``margin_pct``: the
    prediction from the contention model on each machine profile, the TOST from study
    3's per-trial CPU times (40 CPUs, the page_counter-stock RFC's setting). They agree when the
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
    """The lab's predictions for v4 (rule ``prediction``: nothing was measured) and the
    cover letters' stranded-pages claim (rule ``port``). The madvise TOST over simulated
    trials is a test with seed noise only: its numbers are count rows
    (:func:`tost_counts`), not claims."""
    return prediction_rows(results, p) + [stale_row(stale_runs)]


def prediction_rows(results: dict, p: V4Params) -> list[dict]:
    """One prediction row per (machine, case) of v4 against the multi stock; a case that
    charges nothing in steady state is zero by construction and predicts nothing."""
    rows = []
    src = name(V4)
    for machine in p.machines:
        label = load_profile(machine).name
        for case in p.cases:
            r = results[(case, machine, "multi", "pcstock-v4")]
            zero = None if CASES[case].steady else (
                f"{case} makes no charge once it runs (its charges are setup and teardown), "
                "so both stocks carry the same steady load")
            verdict = judge("prediction", interval=r, margin=p.margin_pct,
                            alternatives=option_intervals(r), degenerate=zero)
            rows.append(claim_row(
                f"v4 vs memcg stock: {case} on {label}", src,
                "not measured (prediction registered before any measurement)",
                f"throughput per flow {r.describe('{:+.2f}')}", verdict,
                would_take=break_even_text(r) if zero is None else None,
                **interval_columns(r, "%")))
    return rows


def stale_row(stale_runs: pd.DataFrame) -> dict:
    """The cover letters' "difficult and rare", a behaviour of the port (rule ``port``)."""
    src = name(V4)
    ans = stale_answer(stale_runs)
    close = ans[ans["first_close_rate"].notna()]
    over = ans[ans["first_rate_over_old_bound"].notna()]
    still = close[close["first_close_rate"] == 0]
    condition = (f"shown when no sweep's stocks reach {CLOSE_FRACTION:.0%} of nr_cpus x "
                 "nr_cgroups x 64 without migrations (coming close needs tasks to bounce); "
                 + (f"they come close only after {close['migrations_per_task_there'].min():.3g} "
                    "migrations per task" if len(close) else "no sweep comes close")
                 + ("; yet they hold more than the old bound nr_cpus x 7 x 64 in "
                    f"{len(over)} of {len(ans)} sweeps" if len(over) else ""))
    return claim_row(
        "coming close to nr_cpus x nr_cgroups x 64 stranded pages is difficult and rare",
        src, "v3/v4 cover letters: bound nr_cpus x 7 x 64 -> nr_cpus x nr_cgroups x 64; close "
        "'would require processes to bounce across CPUs'",
        f"close = >= {CLOSE_FRACTION:.0%} of the bound; " + "; ".join(
            f"{r['workload']} {plural(int(r['cgroups']), 'memcg')}: close "
            f"{_from_rate(r['first_close_rate'])}, over the old bound "
            f"{_from_rate(r['first_rate_over_old_bound'])}, peak {r['max_fraction']:.0%} "
            f"of the bound ({r['max_peak_mib']:.0f} MiB)" for _, r in ans.iterrows()),
        judge("port", shown=still.empty, condition=condition))


def tost_counts(tost: pd.DataFrame, p: V4Params) -> list[dict]:
    """The simulated madvise TOST (v4 vs multi, seed noise only), as count rows: the
    largest absolute difference per iteration count, equivalence in the note."""
    rows = []
    for it, part in sorted(tost.groupby("iterations"), reverse=True):
        eq = bool(part["equivalent"].all())
        rows.append(count_row(
            "06", "largest |difference| of simulated trial CPU time, v4 vs multi (%)",
            f"madvise loop, {int(it)} iterations, {p.madvise_trials} trials, cgroups "
            f"{', '.join(str(int(c)) for c in part['cgroups'])}",
            round(float(part["delta_pct"].abs().max()), 4),
            f"TOST +-{p.margin_pct:g}%: {'equivalent' if eq else 'not equivalent'} at every "
            "cgroup count (seed noise only: a test, not a verdict)"))
    return rows
