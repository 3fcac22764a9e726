"""Study 3: the RFC's page_counter stock against the multi-memcg stock.

"mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter" (Joshua Hahn,
RFC, April 2026; ``20260410210742.550489-1-joshua.hahnjy@gmail.com``) measured a
fault/MADV_DONTNEED loop with 1, 4 and 32 cgroups on 40 CPUs, 30 trials of 50
iterations, and reports "negligible performance differences". This study replays that
loop (:func:`memcglab.workloads.madvise_fault`) through the multi stock (``multi``, the
"before") and the RFC's stock (``pcstock``, the "after"), trial by trial, and tests
equivalence (TOST) on the published table (:func:`memcglab.stats.verdict_003`) and on
memcglab's own per-trial times (:func:`memcglab.stats.verdict_003_simulated`),
unchanged. The simulated difference is
also priced over the cost priors, the fault's other work and the trials
(:func:`memcglab.studies.s03_pcstock_vs_multi.pricing.madvise_change_fn`) and judged by
:func:`memcglab.stats.judge`: "negligible" as a change within the +-margin band at every
cgroup count (rule ``qualitative``), and the table's measured differences with their 90%
Welch intervals (rule ``measured``).

Beyond the RFC's test: the multi-memcg thread's netperf receive mix, where a message's pages
are released decides how the RFC's stock behaves. The scenarios
(:mod:`memcglab.studies.s03_pcstock_vs_multi.counts`) vary the release (the charging/softirq CPU
or the reader's), where the pair starts and whether it migrates together; counts come
first, then each scenario's throughput change through the contention model
(:mod:`memcglab.studies.s03_pcstock_vs_multi.pricing`), with its 90% interval over the hardware
priors, the work outside memcg, the scenarios and the seeds, its driver and its
break-even. No published number exists for that mix: those rows are the lab's own
predictions.

A simulated trial's time is the CPU time of its faults: each fault costs its
charge-path cycles (:mod:`memcglab.cost`) plus ``fault_cycles`` of work outside memcg.

>>> PcstockParams.from_notebook(quick=True).trials
5
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memcglab.cost import CostParams, coefficients
from memcglab.hardware import load_profile
from memcglab.layout import slot_scan_lines
from memcglab.stats import Measurement, judge, verdict_003, verdict_003_simulated
from memcglab.studies import count_row
from memcglab.studies.common.judging import would_take
from memcglab.studies.common.measure import lookup_slots, metrics, trial_counts
from memcglab.studies.common.text import plural
from memcglab.studies.s03_pcstock_vs_multi.counts import ALTERNATIVES, count_runs, scenarios
from memcglab.studies.s03_pcstock_vs_multi.counts import counts as netperf_counts
from memcglab.studies.s03_pcstock_vs_multi.pricing import (
    madvise_change_fn,
    madvise_space,
    predict_netperf,
)
from memcglab.uncertainty import UncertainResult, summarise
from memcglab.workloads import MadviseFaultSpec

__all__ = ["BEFORE", "AFTER", "MADVISE", "NETPERF", "DEFAULT_SCENARIO", "PcstockParams",
           "run", "run_madvise", "run_netperf", "samples", "verdict", "intervals",
           "predictions", "predictions_table", "judged", "judged_deltas", "counts", "summary",
           "madvise_key"]

#: the two arms: the page_counter-stock RFC's "before" (the memcg stock) and "after" (the RFC)
BEFORE, AFTER = "multi", "pcstock"
MADVISE, NETPERF = "madvise_fault", "netperf_rx"
#: the multi-memcg thread's mix as netperf_rx generates it: the scenario the first study priced
DEFAULT_SCENARIO = "task/spread/independent"


@dataclass(frozen=True)
class PcstockParams:
    """The problem size of study 3. Each default says where it comes from."""

    #: cgroups of the madvise loop: the page_counter-stock RFC's 1, 4 and 32.
    cgroups: tuple[int, ...] = (1, 4, 32)
    #: the page_counter-stock RFC's "30 trials of 50 iterations".
    trials: int = 30
    iterations: int = 50
    #: pages per iteration: MadviseFaultSpec's default (4 charge batches, 9 folio batches).
    region_pages: int = 256
    #: the rest of the loop: MadviseFaultSpec's defaults (40 CPUs, spread placement).
    madvise: MadviseFaultSpec = field(default_factory=MadviseFaultSpec)
    #: cycles per 4 KiB anonymous fault outside memcg: exception entry and exit,
    #: handle_mm_fault, page allocation, clear_page, rmap and LRU insertion, and its
    #: share of the MADV_DONTNEED zap and free; about 1 us at 2.5 GHz, a round figure
    #: for a recent x86-64 core (the TOST's trial times; the priced rows draw it from
    #: pricing.FAULT_CYCLES, 1500-6000 around this value).
    fault_cycles: float = 2500.0
    cpu_hz: float = 2.5e9
    #: netperf client counts (one memcg each) and seeds, beyond the RFC's test; the
    #: predictions are made at the largest.
    clients: tuple[int, ...] = (6, 18, 36)
    seeds: int = 5
    messages: int = 100_000
    #: the scenario axes: options of counts.ALTERNATIVES (all by default)
    releases: tuple[str, ...] = ALTERNATIVES["release"]
    placements: tuple[str, ...] = ALTERNATIVES["placement"]
    migrates: tuple[str, ...] = ALTERNATIVES["migrate"]
    #: points per priced quantity (a power of 2, also the Sobol base sample)
    samples: int = 1024
    #: machine profiles, shipped names (data/hardware/profiles) or profile files' paths:
    #: by default the netperf thread's 72-CPU box and the RFC's 40-CPU machine
    netperf_profile: str = "butt-netperf-72cpu"
    madvise_profile: str = "hahn-madvise-40cpu"
    #: TOST margin and equivalence band, in % of the "before" mean: verdict_003's default.
    margin_pct: float = 2.0
    cost: CostParams = field(default_factory=CostParams)

    def __post_init__(self) -> None:
        for name in ("netperf_profile", "madvise_profile"):
            load_profile(getattr(self, name))  # its error names the file and the field
        if self.trials < 2:
            raise ValueError(f"trials={self.trials}: the equivalence test needs at least 2")
        if self.seeds < 2:
            raise ValueError(f"seeds={self.seeds}: the equivalence test needs at least 2")
        if self.fault_cycles < 0:
            raise ValueError(f"fault_cycles={self.fault_cycles}: must be >= 0")
        if not 0 < self.margin_pct < 100:
            raise ValueError(f"margin_pct={self.margin_pct}: must be in (0, 100)")
        if self.samples < 2 or self.samples & (self.samples - 1):
            raise ValueError(f"samples={self.samples}: must be a power of 2 (e.g. 1024)")
        for name, axis in (("releases", "release"), ("placements", "placement"),
                           ("migrates", "migrate")):
            v = getattr(self, name)
            if not v or any(o not in ALTERNATIVES[axis] for o in v):
                raise ValueError(f"{name}={v!r}: must be a non-empty tuple drawn from "
                                 f"{list(ALTERNATIVES[axis])}")

    @classmethod
    def from_notebook(cls, quick: bool = False, fault_cycles: float = 2500.0,
                      margin_pct: float = 2.0, seeds: int = 5,
                      samples: int = 1024, profile: str = "") -> PcstockParams:
        """From the notebook's parameters; ``quick`` shortens every run; ``profile`` (a
        shipped profile's name or a profile file's path) prices both workloads on that
        machine, "" each on its source's machine."""
        where = {"netperf_profile": str(profile), "madvise_profile": str(profile)} \
            if profile else {}
        if quick:
            return cls(trials=5, iterations=5, region_pages=64, clients=(36,), seeds=3,
                       messages=10_000, samples=min(samples, 256),
                       fault_cycles=fault_cycles, margin_pct=margin_pct, **where)
        return cls(fault_cycles=fault_cycles, margin_pct=margin_pct, seeds=seeds,
                   samples=samples, **where)

    def madvise_spec(self, cgroups: int) -> MadviseFaultSpec:
        """The madvise workload spec for ``cgroups`` cgroups."""
        base = {n: getattr(self.madvise, n) for n in self.madvise.__dataclass_fields__}
        return MadviseFaultSpec(**{**base, "cgroups": cgroups, "trials": self.trials,
                                   "iterations": self.iterations,
                                   "region_pages": self.region_pages})

    @property
    def choices(self) -> dict[str, tuple[str, ...]]:
        """The scenario axes as prediction choices."""
        return {"release": self.releases, "placement": self.placements,
                "migrate": self.migrates}


def _coef(counted: dict, model: str) -> np.ndarray:
    """Cost units per fault, in CostParams.names() order."""
    s = lookup_slots(model, 7)
    c = coefficients(counted, lines_per_scan=slot_scan_lines(s), slots=s)
    return c.reindex(list(CostParams.names())).to_numpy(float)


def _trials(p: PcstockParams, cgroups: int, model: str) -> list[dict]:
    """Replay the loop trial by trial; one row of metrics per trial."""
    rows = []
    for t, counted in enumerate(trial_counts(p.madvise_spec(cgroups), model)):
        m = metrics(counted, model, params=p.cost)
        cycles = (m["cycles_per_op"] + p.fault_cycles) * m["charges"]
        rows.append({"workload": MADVISE, "cgroups": cgroups, "sample": t, "model": model,
                     **m, "trial_ms": cycles / p.cpu_hz * 1e3,
                     "hits_per_1000": 1000.0 * counted["stock_hits"] / counted["charges"],
                     "coef": _coef(counted, model)})
    return rows


def madvise_key(cgroups: int) -> str:
    """The key of the madvise loop's priced change at ``cgroups`` cgroups.

    >>> madvise_key(1), madvise_key(32)
    ('madvise, 1 cgroup', 'madvise, 32 cgroups')
    """
    return f"madvise, {plural(cgroups, 'cgroup')}"


def run_madvise(p: PcstockParams) -> pd.DataFrame:
    """The page_counter-stock RFC's loop: one row per (cgroups, model, trial)."""
    return pd.DataFrame([r for c in p.cgroups for model in (BEFORE, AFTER)
                         for r in _trials(p, c, model)])


def run_netperf(p: PcstockParams) -> pd.DataFrame:
    """The netperf scenarios (72 CPUs, loopback): one row per (scenario, clients, seed,
    model), :func:`~memcglab.studies.s03_pcstock_vs_multi.counts.count_runs`' columns plus the first
    study's rates priced at ``p.cost`` (``cycles_per_op``, ``walks_per_op``, ...)."""
    runs = count_runs(p.clients, scenarios(p.releases, p.placements, p.migrates),
                      range(p.seeds), p.messages)
    vec = p.cost.to_vector()
    return runs.assign(
        workload=NETPERF, cgroups=runs["clients"], sample=runs["seed"],
        walks_per_op=runs["walks"] / runs["charges"],
        hit_rate=runs["stock_hits"] / runs["charges"],
        transfers_per_op=runs["usage_transfers"] / runs["charges"],
        cycles_per_op=[float(np.asarray(c) @ vec) for c in runs["coef"]])


def run(p: PcstockParams) -> pd.DataFrame:
    """Both workloads in one tidy frame (``cgroups`` is the clients for netperf)."""
    return pd.concat([run_madvise(p), run_netperf(p)], ignore_index=True)


def samples(df: pd.DataFrame, workload: str, value: str) -> pd.DataFrame:
    """``verdict_003_simulated``'s input: cgroups, arm (the model), value, one row a sample."""
    sub = df[df["workload"] == workload]
    if sub.empty:
        raise ValueError(f"no {workload} rows; workloads present: {sorted(set(df['workload']))}")
    return pd.DataFrame({"cgroups": sub["cgroups"], "arm": sub["model"], "value": sub[value]})


def verdict(df: pd.DataFrame, p: PcstockParams) -> pd.DataFrame:
    """Welch and TOST per row: the published table and the simulated madvise loop.

    ``source`` says which; ``unit`` what the means are in (the columns keep
    ``verdict_003``'s ``_ms`` names). The netperf mix has no published table: its
    rows are priced predictions (:func:`predictions`).
    """
    parts = [
        ("published (the RFC's table)", "ms per trial", verdict_003(margin_pct=p.margin_pct)),
        (f"simulated {MADVISE}", "ms of CPU per trial", verdict_003_simulated(
            samples(df, MADVISE, "trial_ms"), p.margin_pct, before=BEFORE, after=AFTER)),
    ]
    out = []
    for source, unit, v in parts:
        v.insert(0, "source", source)
        v.insert(1, "unit", unit)
        out.append(v)
    return pd.concat(out, ignore_index=True)


def intervals(v: pd.DataFrame) -> pd.DataFrame:
    """Each verdict row's difference in % of "before" with its TOST (1 - 2 alpha) interval.

    The interval's far end is ``min_equiv_margin_pct`` (the smallest margin TOST
    accepts), so its half-width is that less the absolute difference.
    """
    half = v["min_equiv_margin_pct"] - v["delta_pct"].abs()
    return pd.DataFrame({"label": v["source"] + ", " + v["cgroups"].astype(str) + " cgroups",
                         "delta_pct": v["delta_pct"], "low": v["delta_pct"] - half,
                         "high": v["delta_pct"] + half, "equivalent": v["equivalent"]})


def predictions(df: pd.DataFrame, p: PcstockParams) -> dict[str, UncertainResult]:
    """Every priced change, in %, keyed by what it prices (in this order):

    :func:`madvise_key` ``(C)`` (trial CPU time), ``netperf, all scenarios`` (throughput per
    flow, every scenario drawn), ``netperf, release=R`` (the other axes drawn),
    ``netperf, LABEL`` per scenario, ``netperf by clients, N clients, R/P/M`` at the
    smaller client counts (first scenario), and ``netperf cycles, R/P/M`` for each release at
    the first placement and migration (the first study's charge-path cycles per
    packet, line transfers at ``c2c_transfer``).
    """
    out: dict[str, UncertainResult] = {}
    mad = df[df["workload"] == MADVISE]
    mspace = madvise_space(load_profile(p.madvise_profile), range(p.trials))
    for c in p.cgroups:
        out[madvise_key(c)] = summarise(
            madvise_change_fn(mad, c), mspace, n=p.samples,
            holds=lambda y: np.abs(y) <= p.margin_pct, threshold=p.margin_pct, unit="%")
    net = df[df["workload"] == NETPERF]
    profile, top, seeds = load_profile(p.netperf_profile), max(p.clients), range(p.seeds)

    def price(choices: dict, quantity: str = "throughput") -> UncertainResult:
        return predict_netperf(net, profile, choices, seeds, top, n=p.samples,
                               margin_pct=p.margin_pct, quantity=quantity)

    out["netperf, all scenarios"] = price(p.choices)
    for r in p.releases:
        out[f"netperf, release={r}"] = price({**p.choices, "release": (r,)})
    for case in scenarios(p.releases, p.placements, p.migrates):
        out[f"netperf, {case.label}"] = price({"release": (case.release,),
                                               "placement": (case.placement,),
                                               "migrate": (case.migrate,)})
    default = dict(zip(("release", "placement", "migrate"),
                       ((v[0],) for v in p.choices.values()), strict=True))
    for n in sorted(p.clients)[:-1]:  # the multi-memcg thread's other client counts, first scenario
        label = "/".join(v[0] for v in default.values())
        out[f"netperf by clients, {n} clients, {label}"] = predict_netperf(
            net, profile, default, seeds, n, n=p.samples, margin_pct=p.margin_pct)
    for r in p.releases:  # the first study's measure, at each release
        case = {"release": (r,), "placement": p.placements[:1], "migrate": p.migrates[:1]}
        label = f"{r}/{p.placements[0]}/{p.migrates[0]}"
        out[f"netperf cycles, {label}"] = price(case, "cycles")
    return out


def predictions_table(preds: dict[str, UncertainResult]) -> pd.DataFrame:
    """One row per priced change: median, 90% interval, P(within the band), driver,
    its total Sobol index and the break-even sentence."""
    rows = []
    for key, r in preds.items():
        cols = r.as_claim_columns()
        rows.append({"quantity": key, "median_pct": r.median, "low_pct": r.low,
                     "high_pct": r.high, "p_negligible": r.p_holds, "driver": r.driver,
                     "driver_st": float(r.sobol_total.get(r.driver, np.nan)),
                     "break_even": cols["break_even"]})
    return pd.DataFrame(rows)


#: how the lab makes "negligible performance differences" a number
NEGLIGIBLE = "a change of the trial's CPU time within +-{m:g}% (the TOST margin of this study)"
#: what differs between the RFC's benchmark and the lab's replay of it
SETUP = ("the RFC measured wall time of its fault/MADV_DONTNEED loop on a 40-CPU, 50G machine; "
         "the lab replays the loop's charges and prices its CPU time with cost priors and "
         "1500-6000 cycles of fault work")


def judged(preds: dict[str, UncertainResult], p: PcstockParams) -> object:
    """The RFC's "negligible performance differences" judged on every cgroup count at once
    (:func:`memcglab.stats.judge`, rule ``qualitative``: the +-margin band)."""
    band = Measurement(-p.margin_pct, p.margin_pct, 0.0, "%")
    conf = {plural(c, "cgroup"): {"measured": band, "interval": preds[madvise_key(c)],
                                  "tolerance": p.margin_pct} for c in p.cgroups}
    return judge("qualitative", operationalised=NEGLIGIBLE.format(m=p.margin_pct),
                 differences=SETUP, configurations=conf)


def judged_deltas(preds: dict[str, UncertainResult], v: pd.DataFrame,
                  p: PcstockParams, df: pd.DataFrame) -> dict[int, object]:
    """The table's measured difference at each cgroup count against the priced interval
    (rule ``measured``): the difference of means widened by its 90% Welch interval (n = 30
    trials per arm, the table's stddev for both); for a miss, what it would take: each
    prior's value at which the model's difference reaches the measured one."""
    pub = v[v["source"].str.startswith("published")].set_index("cgroups")
    trials = df[df["workload"] == MADVISE]
    out = {}
    for c in p.cgroups:
        if c not in pub.index:
            continue
        row, res = pub.loc[c], preds[madvise_key(c)]
        m = Measurement.point(float(row["delta_pct"]), float(row["ci90_half_pct"]), "%")
        kw = {"measured": m, "interval": res, "difference": True, "tolerance": p.margin_pct}
        verdict_ = judge("measured", **kw)
        if verdict_.word == "misses":
            names = [q.name for q in res.space.priors if q.name in res.space.varying]
            takes = would_take(madvise_change_fn(trials, c), res.space, names,
                               float(row["delta_pct"]))
            verdict_ = judge("measured", would_take=[t for t in takes if t.value is not None]
                             or takes[:1], **kw)
        out[c] = verdict_
    return out


def counts(df: pd.DataFrame, p: PcstockParams) -> list[dict]:
    """Exact counts first: the madvise loop's walks and hits per 1000 charges per cgroup
    count and stock, then the netperf scenarios' (counts.counts)."""
    rows = []
    mad = df[df["workload"] == MADVISE]
    for c in p.cgroups:
        for model in (BEFORE, AFTER):
            g = mad[(mad["cgroups"] == c) & (mad["model"] == model)]
            note = f"all {p.trials} trials of {p.iterations} iterations, 40 CPUs"
            charges = float(g["charges"].sum())
            walks = float((g["walks_per_op"] * g["charges"]).sum())
            hits = float((g["hit_rate"] * g["charges"]).sum())
            for q, v in (("walks per 1000 charges", walks), ("stock hits per 1000 charges",
                                                             hits)):
                rows.append(count_row("03", q, f"{model}, madvise loop {plural(c, 'cgroup')}",
                                      round(1000.0 * v / charges, 4), note))
    return rows + netperf_counts(df[df["workload"] == NETPERF], max(p.clients))


def summary(df: pd.DataFrame, v: pd.DataFrame, preds: dict[str, UncertainResult],
            p: PcstockParams) -> dict:
    """Scalars for the sidecar: TOST rows, priced changes, and the netperf counts."""
    out: dict = {"fault_cycles": p.fault_cycles, "margin_pct": p.margin_pct,
                 "trials": p.trials, "seeds": p.seeds, "samples": p.samples,
                 "madvise_max_cgroups": max(p.cgroups), "netperf_max_cgroups": max(p.clients)}
    for key, prefix in (("published", "published"), ("madvise", f"simulated {MADVISE}")):
        rows = v[v["source"].str.startswith(prefix)]
        for _, r in rows.iterrows():
            c = int(r["cgroups"])
            out[f"delta_pct_{key}_{c}"] = float(r["delta_pct"])
            out[f"equivalent_{key}_{c}"] = bool(r["equivalent"])
            out[f"welch_p_{key}_{c}"] = float(r["welch_p"])
        out[f"all_equivalent_{key}"] = bool(rows["equivalent"].all())
    out["judged_negligible"] = judged(preds, p).word
    for c, verdict_ in judged_deltas(preds, v, p, df).items():
        out[f"judged_published_delta_{c}"] = verdict_.word
    for key, r in preds.items():
        name = key.replace(", ", "_").replace(" ", "_").replace("/", "_").replace("=", "_")
        out[f"{name}_median_pct"] = r.median
        out[f"{name}_low_pct"], out[f"{name}_high_pct"] = r.low, r.high
        out[f"{name}_p_negligible"] = r.p_holds
        out[f"{name}_driver"] = r.driver
    mad = df[df["workload"] == MADVISE]
    net = df[(df["workload"] == NETPERF) & (df["cgroups"] == max(p.clients))]
    for model in (BEFORE, AFTER):
        m = mad[(mad["model"] == model) & (mad["cgroups"] == max(p.cgroups))]
        out[f"walks_per_op_{model}_madvise"] = float(m["walks_per_op"].mean())
        out[f"cycles_per_op_{model}_madvise"] = float(m["cycles_per_op"].mean())
        for label, g in net[net["model"] == model].groupby("scenario"):
            tag = label.replace("/", "_")
            out[f"walks_per_1000_{model}_{tag}"] = float(g["walks_per_1000"].mean())
            out[f"shared_per_msg_{model}_{tag}"] = float(g["shared_per_msg"].mean())
    return out
