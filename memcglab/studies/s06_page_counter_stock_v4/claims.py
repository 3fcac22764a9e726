"""Study 6's verdicts: the madvise comparison, the stale answer, claims and conclusion.

The text a reader sees is built here from the run's numbers: :func:`comparison` puts
the madvise prediction beside the simulated TOST, :func:`stale_answer` says where v4's
stocks come close to their bound and where they pass the old one, :func:`claims` and
:func:`conclusion` turn them, and the predictions regenerated from the scenario files
(:mod:`memcglab.studies.s06_page_counter_stock_v4.scenarios`, a frame of
``predictions.parquet``'s rows), into claim rows and sentences, :func:`summary` into
sidecar scalars. Every prediction's phrase is :func:`memcglab.stats.judge`'s rule
``prediction`` at the study's margin. The study's runs come from
:mod:`memcglab.studies.s06_page_counter_stock_v4.study`.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memcglab.stats import Verdict, judge
from memcglab.studies import claim_row, count_row
from memcglab.studies.common.sources import V4, name
from memcglab.studies.common.text import plural
from memcglab.studies.s06_page_counter_stock_v4.stale import thresholds
from memcglab.studies.s06_page_counter_stock_v4.staleness import CLOSE_FRACTION, PAGE_MIB
from memcglab.validation.drivers import BandDriver

if TYPE_CHECKING:  # the study's parameters; imported for annotations only
    from memcglab.studies.s06_page_counter_stock_v4.study import V4Params

__all__ = ["BASELINES", "claims", "comparison", "conclusion", "driver_cells", "prediction",
           "prediction_rows", "stale_answer", "stale_row", "summary", "tost_counts"]

#: how a reader knows each pair's baseline
BASELINES: dict[str, str] = {"multi": "v6.16's multi-memcg stock", "pcstock": "the RFC"}


def comparison(pred: pd.DataFrame, tost: pd.DataFrame, margin_pct: float) -> pd.DataFrame:
    """The madvise predictions (v4 vs multi, regenerated from the scenario files) beside
    the simulated trials' TOST.

    Both say whether v4 changes the series' own benchmark beyond ``margin_pct``: the
    prediction from ``memcglab predict`` on each machine, the TOST from study 3's
    per-trial CPU times (40 CPUs, the page_counter-stock RFC's setting). They agree when
    the prediction's interval lies inside the margin and the TOST shows equivalence.
    """
    rows = []
    sel = (pred["workload"] == "madvise_fault") & (pred["pair"] == "multi_vs_v4")
    for _, r in pred[sel].iterrows():
        inside = bool(-margin_pct <= r["low"] and r["high"] <= margin_pct)
        for it, part in tost.groupby("iterations"):
            eq = bool(part["equivalent"].all())
            rows.append({"machine": r["machine"], "file": r["file"],
                         "predicted_change_pct": r["change_pct"],
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


def summary(rates: pd.DataFrame, pred: pd.DataFrame, stale_runs: pd.DataFrame,
            tost: pd.DataFrame) -> dict:
    """Scalars for the sidecar: each regenerated prediction's median change (key
    ``change_pct_WORKLOAD_MACHINE_PAIR``), the counts, the stale answer, the TOSTs."""
    out: dict = {"predictions": len(pred),
                 "prediction_points": int(pred["points"].iloc[0]) if len(pred) else 0}
    for _, r in pred.iterrows():
        key = f"{r['workload']}_{r['machine']}_{r['pair']}".replace("-", "_")
        out[f"change_pct_{key}"] = float(r["change_pct"])
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


def _from_rate(x: float) -> str:
    return "never in the sweep" if x is None or math.isnan(x) else f"from rate {x:g}"


def conclusion(pred: pd.DataFrame, stale_runs: pd.DataFrame, tost: pd.DataFrame,
               p: V4Params) -> str:
    """The conclusion, built from this run's numbers."""
    parts = []
    for machine in dict.fromkeys(pred["machine"]):
        for pair in dict.fromkeys(pred.loc[pred["machine"] == machine, "pair"]):
            sub = pred[(pred["machine"] == machine) & (pred["pair"] == pair)]
            phrases: dict[str, list[str]] = {}
            for _, r in sub.iterrows():
                phrases.setdefault(str(prediction(r, p.margin_pct).prediction),
                                   []).append(str(r["workload"]))
            worst = sub.loc[sub["change_pct"].idxmin()]
            base = BASELINES.get(str(worst["baseline"]), str(worst["baseline"]))
            neck = (f"the bottleneck is the {worst['new_bottleneck']} in both kernels"
                    if worst["base_bottleneck"] == worst["new_bottleneck"] else
                    f"the bottleneck moves from the {worst['base_bottleneck']} to the "
                    f"{worst['new_bottleneck']}")
            parts.append(
                f"On {machine}, v4 against {base}: " + "; ".join(
                    f"{ph} on {', '.join(ws)}" for ph, ws in phrases.items())
                + f". It loses most on {worst['workload']}: {worst['change_pct']:+.1f}% "
                f"[{worst['low']:+.1f}, {worst['high']:+.1f}] (90%, memcglab predict "
                f"{worst['file']}; {neck}{_driven(worst)}).")
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


def claims(pred: pd.DataFrame, stale_runs: pd.DataFrame, tost: pd.DataFrame,
           p: V4Params) -> list[dict]:
    """The lab's predictions for v4 (rule ``prediction``: nothing was measured), one per
    regenerated scenario file, and the cover letters' stranded-pages claim (rule
    ``port``). The madvise TOST over simulated trials is a test with seed noise only:
    its numbers are count rows (:func:`tost_counts`), not claims."""
    return prediction_rows(pred, p) + [stale_row(stale_runs)]


def prediction(row: pd.Series, margin_pct: float) -> Verdict:
    """``judge``'s prediction rule on one regenerated file's change band: the sources are
    the parameters (calibrated and hardware priors) and, where the file prices more than
    one, the modelling alternatives; a band of zero width says why it is one."""
    sources = {"parameters"} | ({"alternatives"} if int(row["alternatives"]) > 1 else set())
    iv = SimpleNamespace(low=float(row["low"]), high=float(row["high"]),
                         sources=frozenset(sources), coverage=0.9)
    zero = None
    if iv.low == iv.high:
        idle = all(float(row[f"{k}_{q}"]) == 0 for k in ("base", "new")
                   for q in ("charges_per_op", "uncharges_per_op"))
        zero = (f"{row['workload']} charges and uncharges nothing per operation in either "
                "kernel" if idle else f"both kernels price the same at every point "
                f"({iv.low:g}%)")
    return judge("prediction", interval=iv, margin=margin_pct, degenerate=zero)


def driver_cells(row: pd.Series, margin_pct: float) -> dict:
    """A regenerated file's ``driver``, ``driver_st`` and ``would_take``: where the median
    change, its driver pinned and the rest as drawn, meets the margin on its own side
    (a loss shrinking to -margin, a gain to +margin); nothing for a band of zero width."""
    if not isinstance(row.get("driver"), str):
        return {}
    d = BandDriver.from_columns(row)
    edge = -margin_pct if d.median < 0 else margin_pct
    take = d.would_take(edge, "the median change", "%")
    return {"driver": d.name, "driver_st": d.st,
            "would_take": take if d.drawn is None else f"a median change of {edge:+g}%: {take}"}


def _driven(row: pd.Series) -> str:
    cells = driver_cells(row, 1.0)
    return f"; driver {cells['driver']} (S_T {cells['driver_st']:.2f})" if cells else ""


def prediction_rows(pred: pd.DataFrame, p: V4Params) -> list[dict]:
    """One prediction row per regenerated scenario file, in the frame's order."""
    src = name(V4)
    rows = []
    for _, r in pred.iterrows():
        base = BASELINES.get(str(r["baseline"]), str(r["baseline"]))
        rows.append(claim_row(
            f"v4 vs {base}: {r['workload']} on {r['machine']}", src,
            "not measured (prediction stated before any measurement)",
            f"throughput change {r['change_pct']:+.2f}% [{r['low']:+.2f}, {r['high']:+.2f}] "
            f"(90%), memcglab predict {r['file']}; page_counter walks per operation "
            f"{r['base_walks_per_op']:.3g} -> {r['new_walks_per_op']:.3g}; bottleneck "
            f"{r['base_bottleneck']} -> {r['new_bottleneck']}", prediction(r, p.margin_pct),
            estimate=float(r["change_pct"]), low=float(r["low"]), high=float(r["high"]),
            unit="%", **driver_cells(r, p.margin_pct)))
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
