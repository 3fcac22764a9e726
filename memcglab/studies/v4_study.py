"""Study 6: the page_counter stock as posted in v4, where charges and uncharges part.

Joshua Hahn's series "mm/memcontrol, page_counter: move stock from mem_cgroup to
page_counter" went from the RFC (seed 003, model ``pcstock``) to v4 (23 Jun 2026,
model ``pcstock-v4``): a lock-free ``atomic_t`` stock per CPU per memory counter,
charges through ``page_counter_try_charge_stock``, uncharges never through the stock.
Its benchmark is the same-CPU madvise loop. This study says, before anyone measures
it, what v4 does where charges and uncharges do not meet on one CPU:

1. exact event counts of every network workload and the madvise loop under the multi
   stock, the RFC and v4 (:mod:`~memcglab.studies.v4_counts`);
2. the predicted throughput change of each pair from the contention model, with its
   90% interval over the hardware priors, the modelling alternatives and the seeds,
   its driver and break-even, on two machines (:mod:`~memcglab.studies.v4_predict`),
   written to ``predictions.parquet`` before any comparison (:func:`write_predictions`);
3. the pages stranded in stocks when tasks migrate, against the cover letters' bound
   and its claim that coming close "is difficult and rare"
   (:mod:`~memcglab.studies.v4_stale`);
4. the series' own madvise test for v4 against the multi stock, at 50 and 15
   iterations per trial, with study 3's TOST (:mod:`~memcglab.studies.v4_madvise`).

>>> p = V4Params.from_notebook(quick=True)
>>> p.seeds, p.samples, len(p.machines), p.cases
(1, 32, 2, ('netperf_rx', 'tcp_rr', 'madvise_fault'))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memcglab.hardware import MachineProfile, load_profile, profiles
from memcglab.studies import claim_row, count_row
from memcglab.studies import v4_madvise as mad
from memcglab.studies.staleness import CLOSE_FRACTION, PAGE_MIB
from memcglab.studies.v4_counts import CASES, COMPARED, count_runs
from memcglab.studies.v4_predict import PAIRS, predict, predictions_frame
from memcglab.studies.v4_stale import StaleConfig, grid, per_memcg, sweep, thresholds
from memcglab.uncertainty import UncertainResult

__all__ = ["PREDICTIONS_FILE", "QUICK_CASES", "V4Params", "break_even_text", "claims",
           "comparison", "conclusion", "count_rows", "counts", "madvise", "memcg_detail",
           "per_message", "predict_all", "stale", "stale_answer", "summary",
           "write_predictions"]

#: the file the predictions go to, in the notebook's output directory
PREDICTIONS_FILE = "predictions.parquet"
STUDY = "06"
#: the quick run's benchmarks: one of each kind (a stream of messages, request/response,
#: the series' own loop), so CI stays short; the full run has every case
QUICK_CASES: tuple[str, ...] = ("netperf_rx", "tcp_rr", "madvise_fault")


def _power_of_two(n: int) -> bool:
    return n >= 2 and not n & (n - 1)


@dataclass(frozen=True)
class V4Params:
    """The problem size of study 6. Each default says where it comes from."""

    #: benchmarks (v4_counts.CASES): every network workload of the lab and the madvise loop.
    cases: tuple[str, ...] = tuple(CASES)
    #: machine profiles (data/hardware/profiles): seed 000's 72-CPU netperf box and a
    #: two-socket 224-thread server of the size regression farms use.
    machines: tuple[str, ...] = ("seed000-72cpu", "lkp-2s-224t-spr")
    #: messages (transactions, sends, faults) per trace: enough that the per-message
    #: counts settle to a few digits.
    size: int = 50_000
    #: trace seeds per (case, machine, alternative): the seed factor of the propagation.
    seeds: int = 3
    #: quasi-random points of each propagation (a power of 2).
    samples: int = 128
    #: "no loss beyond" this many % is the claim a prediction is priced against
    #: (study 3's TOST margin).
    margin_pct: float = 2.0
    #: the stale sweep: migration rates per own operation (0 to every operation)...
    stale_rates: tuple[float, ...] = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
    #: ...memcgs of sched_migration (below, at and above the CPUs)...
    stale_cgroups: tuple[int, ...] = (8, 72, 288)
    #: ...memcgs per CPU of many_cgroups (all above NR_MEMCG_STOCK = 7)...
    many_per_cpu: tuple[int, ...] = (4, 16, 64)
    #: ...and netperf_migrating's rates (36 clients, seed 000's largest row).
    netperf_rates: tuple[float, ...] = (0.0, 0.001, 0.01, 0.05, 0.2, 1.0)
    #: CPUs of the stale sweep: seed 000's 72.
    stale_cpus: int = 72
    stale_operations: int = 200_000
    #: samples of the stocks over each trace.
    stale_samples: int = 40
    #: memory.max of a memcg for the share-of-limit figure, MiB: a small container.
    memory_max_mib: float = 256.0
    #: the madvise test: seed 003's 1, 4 and 32 cgroups, 30 trials, 50 and 15 iterations.
    madvise_cgroups: tuple[int, ...] = (1, 4, 32)
    madvise_trials: int = 30
    madvise_iterations: tuple[int, ...] = (50, 15)
    region_pages: int = 256

    def __post_init__(self) -> None:
        bad = [c for c in self.cases if c not in CASES]
        if bad or not self.cases:
            raise ValueError(f"cases={self.cases}: unknown {bad}; valid: {', '.join(CASES)}")
        known = profiles()
        missing = [m for m in self.machines if m not in known]
        if missing or not self.machines:
            raise ValueError(f"machines={self.machines}: unknown {missing}; valid: "
                             f"{', '.join(known)}")
        if not 1 <= self.seeds <= 100:
            raise ValueError(f"seeds={self.seeds}: must be between 1 and 100")
        if not _power_of_two(self.samples):
            raise ValueError(f"samples={self.samples}: must be a power of 2 >= 2 (Sobol)")
        if not 1000 <= self.size <= 10_000_000:
            raise ValueError(f"size={self.size}: must be between 1000 and 10^7")
        if not 0 < self.margin_pct < 100:
            raise ValueError(f"margin_pct={self.margin_pct}: must be in (0, 100)")
        if self.madvise_trials < 2:
            raise ValueError(f"madvise_trials={self.madvise_trials}: TOST needs at least 2")
        rates = (*self.stale_rates, *self.netperf_rates)
        if any(not 0.0 <= r <= 1.0 for r in rates):
            raise ValueError(f"stale rates {rates}: each must be in [0, 1]")

    @classmethod
    def from_notebook(cls, quick: bool = False, seeds: int = 3, samples: int = 128,
                      margin_pct: float = 2.0, memory_max_mib: float = 256.0) -> V4Params:
        """From the notebook's parameters; ``quick`` shrinks every part (CI-sized)."""
        if quick:
            return cls(cases=QUICK_CASES, size=4000, seeds=1, samples=32, margin_pct=margin_pct,
                       stale_rates=(0.0, 0.01, 1.0), stale_cgroups=(8, 72),
                       many_per_cpu=(16,), netperf_rates=(0.0, 0.05), stale_operations=20_000,
                       stale_samples=8, memory_max_mib=memory_max_mib, madvise_trials=5,
                       madvise_iterations=(5, 2), region_pages=64)
        return cls(seeds=seeds, samples=samples, margin_pct=margin_pct,
                   memory_max_mib=memory_max_mib)

    def profiles(self) -> dict[str, MachineProfile]:
        """The machine profiles, by name."""
        return {m: load_profile(m) for m in self.machines}


def counts(p: V4Params) -> pd.DataFrame:
    """:func:`~memcglab.studies.v4_counts.count_runs` for every case and machine."""
    cpus = {name: prof.cpus for name, prof in p.profiles().items()}
    return count_runs(p.cases, cpus, p.size, range(p.seeds), COMPARED)


def per_message(runs: pd.DataFrame) -> pd.DataFrame:
    """Rates per (workload, machine, model) at each case's default alternative, mean
    over seeds: walks, stock hits and drains per 1000 charges, charges and shared-line
    transfers per message."""
    default = {name: ",".join(f"{k}={v[0]}" for k, v in sorted(c.alternatives.items()))
               for name, c in CASES.items()}
    sub = runs[runs["choice"] == runs["workload"].map(default)].copy()
    k = 1000.0 / sub["charges"].clip(lower=1)
    sub["walks_per_1000"] = sub["walks"] * k
    sub["hits_per_1000"] = sub["stock_hits"] * k
    sub["drains_per_1000"] = sub["drains"] * k
    sub["charges_per_message"] = sub["charges"] / sub["messages"]
    sub["shared_per_message"] = sub["shared"].map(sum)
    cols = ["walks_per_1000", "hits_per_1000", "drains_per_1000", "charges_per_message",
            "shared_per_message"]
    return sub.groupby(["workload", "machine", "model"], sort=False, as_index=False)[cols].mean()


_QUANTITIES = (("walks_per_1000", "page_counter walks per 1000 charges"),
               ("hits_per_1000", "stock hits per 1000 charges"),
               ("drains_per_1000", "stock drains per 1000 charges"),
               ("shared_per_message", "shared usage-line transfers per message"))


def count_rows(rates: pd.DataFrame, stale_runs: pd.DataFrame | None = None) -> list[dict]:
    """The study's count rows: :func:`per_message`'s rates, then the stale sweep's peaks."""
    rows = []
    for _, r in rates.iterrows():
        case = CASES[r["workload"]]
        note = f"a message is one {case.per}; the default alternative, mean over seeds"
        if not case.steady:
            note += ("; only setup and teardown charge, so the steady per-message load "
                     "(line transfers) is 0")
        for col, quantity in _QUANTITIES:
            rows.append(count_row(STUDY, quantity, f"{r['model']}, {r['workload']}, "
                                  f"{r['machine']}", round(float(r[col]), 4), note))
    if stale_runs is not None:
        g = stale_runs.groupby(["workload", "cgroups", "migration_rate", "model"],
                               as_index=False)["peak_mib"].mean()
        top = g[g["migration_rate"] == g["migration_rate"].max()]
        for _, r in top.iterrows():
            rows.append(count_row(STUDY, "peak pages held in stocks (MiB)",
                                  f"{r['model']}, {r['workload']}, {int(r['cgroups'])} memcgs, "
                                  f"migration rate {r['migration_rate']:g}",
                                  round(float(r["peak_mib"]), 2), "all memcgs, all CPUs"))
    return rows


def predict_all(runs: pd.DataFrame, p: V4Params
                ) -> dict[tuple[str, str, str, str], UncertainResult]:
    """Every (workload, machine, baseline, model) prediction."""
    out = {}
    for machine, prof in p.profiles().items():
        for case in p.cases:
            for base, model in PAIRS:
                out[(case, machine, base, model)] = predict(
                    runs, case, machine, prof, base, model, range(p.seeds), n=p.samples,
                    margin_pct=p.margin_pct)
    return out


def write_predictions(results: dict, output_dir: str | Path) -> pd.DataFrame:
    """predictions.parquet (one row per workload, machine and pair; a loss is negative)
    in ``output_dir`` ("" writes nothing); the frame written."""
    frame = predictions_frame(results)
    if output_dir:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        frame.to_parquet(Path(output_dir) / PREDICTIONS_FILE, index=False)
    return frame


def stale(p: V4Params) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stale sweep: ``(runs, series)`` of :func:`~memcglab.studies.v4_stale.sweep`."""
    c, ops = p.stale_cpus, p.stale_operations
    configs = (grid("sched_migration", p.stale_rates, p.stale_cgroups, c, ops)
               + grid("many_cgroups", p.stale_rates, [k * c for k in p.many_per_cpu], c, ops)
               + grid("netperf_migrating", p.netperf_rates, [c // 2], c, ops))
    return sweep(configs, samples=p.stale_samples, memory_max_mib=p.memory_max_mib)


def memcg_detail(p: V4Params, rate: float = 0.1) -> tuple[StaleConfig, pd.DataFrame]:
    """One sweep point seen per memcg: sched_migration with one memcg per CPU, tasks
    moving at ``rate`` per own operation (:func:`~memcglab.studies.v4_stale.per_memcg`)."""
    cfg = StaleConfig("sched_migration", rate, p.stale_cpus, p.stale_cpus, p.stale_operations)
    return cfg, per_memcg(cfg, samples=p.stale_samples)


def madvise(p: V4Params) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The madvise loop, v4 against multi: ``(trials, tost)``."""
    df = mad.run(p.madvise_cgroups, p.madvise_trials, p.madvise_iterations, p.region_pages)
    return df, mad.tost(df, p.margin_pct)


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
    crossings = {k: v for k, v in r.break_even.items() if v is not None}
    if not crossings:
        return "none in the priors' ranges"
    return "; ".join(f"{k} = {v:.3g} {r.space[k].unit}" for k, v in crossings.items())


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
            "reproduced" if eq else "not reproduced"))
    for machine in p.machines:
        for case in p.cases:
            r = results[(case, machine, "multi", "pcstock-v4")]
            verdict = ("predicted loss" if r.high < -p.margin_pct else
                       "predicted negligible" if r.low >= -p.margin_pct else "undetermined")
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
