"""Study 6: the page_counter stock as posted in v4, where charges and uncharges part.

Joshua Hahn's series "mm/memcontrol, page_counter: move stock from mem_cgroup to
page_counter" went from the RFC (April 2026, model ``pcstock``) to v4 (23 Jun 2026,
model ``pcstock-v4``; message-id
``20260623180124.868655-1-joshua.hahnjy@gmail.com``): a lock-free ``atomic_t`` stock
per CPU per memory counter, charges through ``page_counter_try_charge_stock``,
uncharges never through the stock.
Its benchmark is the same-CPU madvise loop. This study says, before anyone measures
it, what v4 does where charges and uncharges do not meet on one CPU:

1. exact event counts of every network workload and the madvise loop under the multi
   stock, the RFC and v4 (:mod:`~memcglab.studies.s06_page_counter_stock_v4.counts`);
2. the predicted throughput change of v4 against the multi stock and against the RFC,
   stated as scenario files of the contract (``data/scenarios/study06/``: every workload on
   two machines) and regenerated from them through ``memcglab predict`` at the default
   calibration, with each change's 90% interval and both kernels' counts and bottlenecks
   (:mod:`~memcglab.studies.s06_page_counter_stock_v4.scenarios`), written to
   ``predictions.parquet`` before any comparison or claim (:func:`regenerate`);
3. the pages stranded in stocks when tasks migrate, against the cover letters' bound
   and its claim that coming close "is difficult and rare"
   (:mod:`~memcglab.studies.s06_page_counter_stock_v4.stale`);
4. the series' own madvise test for v4 against the multi stock, at 50 and 15
   iterations per trial, with study 3's TOST
   (:mod:`~memcglab.studies.s06_page_counter_stock_v4.madvise`).

This module runs them; :mod:`~memcglab.studies.s06_page_counter_stock_v4.claims` turns the results
into the comparison, the claim rows and the conclusion,
:mod:`~memcglab.studies.s06_page_counter_stock_v4.views` into figures.

>>> p = V4Params.from_notebook(quick=True)
>>> p.seeds, p.points, len(p.machines), p.cases, p.scenarios
(1, 64, 2, ('netperf_rx', 'tcp_rr', 'madvise_fault'), '*-224t-multi_vs_v4')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from memcglab.hardware import MachineProfile, load_profile
from memcglab.scenario.predict import DEFAULT_POINTS, MAX_POINTS
from memcglab.studies import count_row
from memcglab.studies.s06_page_counter_stock_v4 import madvise as mad
from memcglab.studies.s06_page_counter_stock_v4 import scenarios as files
from memcglab.studies.s06_page_counter_stock_v4.counts import CASES, COMPARED, count_runs
from memcglab.studies.s06_page_counter_stock_v4.scenarios import PREDICTIONS_FILE, QUICK_SCENARIOS
from memcglab.studies.s06_page_counter_stock_v4.stale import StaleConfig, grid, per_memcg, sweep

__all__ = ["PREDICTIONS_FILE", "QUICK_CASES", "QUICK_POINTS", "V4Params", "count_rows", "counts",
           "madvise", "memcg_detail", "per_message", "regenerate", "stale"]

STUDY = "06"
#: parameter points per prediction in a quick run (memcglab validate --quick's)
QUICK_POINTS = 64
#: the quick run's benchmarks: one of each kind (a stream of messages, request/response,
#: the series' own loop), so CI stays short; the full run has every case
QUICK_CASES: tuple[str, ...] = ("netperf_rx", "tcp_rr", "madvise_fault")


def _power_of_two(n: int) -> bool:
    return n >= 2 and not n & (n - 1)


@dataclass(frozen=True)
class V4Params:
    """The problem size of study 6. Each default says where it comes from."""

    #: benchmarks (counts.CASES): every network workload of the lab and the madvise loop.
    cases: tuple[str, ...] = tuple(CASES)
    #: machine profiles: shipped names (data/hardware/profiles) or profile files' paths;
    #: the netperf thread's 72-CPU box and a two-socket 224-thread server of the size
    #: regression farms use.
    machines: tuple[str, ...] = ("butt-netperf-72cpu", "lkp-2s-224t-spr")
    #: messages (transactions, sends, faults) per trace: enough that the per-message
    #: counts settle to a few digits.
    size: int = 50_000
    #: trace seeds per (case, machine, alternative) of the counts tables.
    seeds: int = 3
    #: the scenario files regenerated (a glob over the stems of data/scenarios/study06):
    #: all 32, every workload on both machines, v4 against the multi stock and the RFC.
    scenarios: str = "*"
    #: parameter points of each prediction (memcglab predict's default; a power of 2).
    points: int = DEFAULT_POINTS
    #: a prediction is phrased against this margin, in % ("loss beyond", "within ±")
    #: (study 3's TOST margin).
    margin_pct: float = 2.0
    #: the stale sweep: migration rates per own operation (0 to every operation)...
    stale_rates: tuple[float, ...] = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
    #: ...memcgs of sched_migration (below, at and above the CPUs)...
    stale_cgroups: tuple[int, ...] = (8, 72, 288)
    #: ...memcgs per CPU of many_cgroups (all above NR_MEMCG_STOCK = 7)...
    many_per_cpu: tuple[int, ...] = (4, 16, 64)
    #: ...and netperf_migrating's rates (36 clients, the netperf table's largest row).
    netperf_rates: tuple[float, ...] = (0.0, 0.001, 0.01, 0.05, 0.2, 1.0)
    #: CPUs of the stale sweep: the netperf thread's 72.
    stale_cpus: int = 72
    stale_operations: int = 200_000
    #: samples of the stocks over each trace.
    stale_samples: int = 40
    #: memory.max of a memcg for the share-of-limit figure, MiB: a small container.
    memory_max_mib: float = 256.0
    #: the madvise test: the RFC's 1, 4 and 32 cgroups, 30 trials, 50 and 15 iterations.
    madvise_cgroups: tuple[int, ...] = (1, 4, 32)
    madvise_trials: int = 30
    madvise_iterations: tuple[int, ...] = (50, 15)
    region_pages: int = 256

    def __post_init__(self) -> None:
        bad = [c for c in self.cases if c not in CASES]
        if bad or not self.cases:
            raise ValueError(f"cases={self.cases}: unknown {bad}; valid: {', '.join(CASES)}")
        if not self.machines:
            raise ValueError("machines=(): name at least one profile (a shipped profile's "
                             "name or a profile file's path)")
        for m in self.machines:
            load_profile(m)  # its error names the file and the field
        if not isinstance(self.seeds, int) or isinstance(self.seeds, bool) \
                or not 1 <= self.seeds <= 100:
            raise ValueError(f"seeds={self.seeds!r}: must be an integer between 1 and 100")
        if not self.memory_max_mib > 0:
            raise ValueError(f"memory_max_mib={self.memory_max_mib}: must be > 0 (MiB)")
        if not _power_of_two(self.points) or self.points > MAX_POINTS:
            raise ValueError(f"points={self.points}: must be a power of 2 between 2 and "
                             f"{MAX_POINTS} (Sobol)")
        files.scenario_files(self.scenarios)  # its error names the pattern
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
    def from_notebook(cls, quick: bool = False, seeds: int = 3, points: int = DEFAULT_POINTS,
                      margin_pct: float = 2.0, memory_max_mib: float = 256.0,
                      profile: str = "") -> V4Params:
        """From the notebook's parameters; ``quick`` shrinks every part (CI-sized: the
        224-thread v4-vs-multi files at :data:`QUICK_POINTS` points); ``profile`` (a
        shipped profile's name or a profile file's path) counts on that one machine
        instead of the two defaults (the scenario files name their own machines)."""
        if profile:
            kw = cls.from_notebook(quick, seeds, points, margin_pct, memory_max_mib)
            return replace(kw, machines=(str(profile),))
        if quick:
            return cls(cases=QUICK_CASES, size=4000, seeds=1, scenarios=QUICK_SCENARIOS,
                       points=QUICK_POINTS, margin_pct=margin_pct,
                       stale_rates=(0.0, 0.01, 1.0), stale_cgroups=(8, 72),
                       many_per_cpu=(16,), netperf_rates=(0.0, 0.05), stale_operations=20_000,
                       stale_samples=8, memory_max_mib=memory_max_mib, madvise_trials=5,
                       madvise_iterations=(5, 2), region_pages=64)
        return cls(seeds=seeds, points=points, margin_pct=margin_pct,
                   memory_max_mib=memory_max_mib)

    def profiles(self) -> dict[str, MachineProfile]:
        """The machine profiles, by name."""
        return {m: load_profile(m) for m in self.machines}


def counts(p: V4Params) -> pd.DataFrame:
    """:func:`~memcglab.studies.s06_page_counter_stock_v4.counts.count_runs` for every case and
    machine."""
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


def regenerate(p: V4Params, output_dir: str | Path) -> pd.DataFrame:
    """Every scenario file of ``p.scenarios`` through ``memcglab predict`` (the default
    calibration, ``p.points`` points, seed 0), written to ``predictions.parquet`` in
    ``output_dir`` ("" writes nothing) before anything is built from it; the frame."""
    frame = files.regenerate(files.scenario_files(p.scenarios), p.points)
    files.write_predictions(frame, output_dir)
    return frame


def stale(p: V4Params) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stale sweep: ``(runs, series)`` of
    :func:`~memcglab.studies.s06_page_counter_stock_v4.stale.sweep`."""
    c, ops = p.stale_cpus, p.stale_operations
    configs = (grid("sched_migration", p.stale_rates, p.stale_cgroups, c, ops)
               + grid("many_cgroups", p.stale_rates, [k * c for k in p.many_per_cpu], c, ops)
               + grid("netperf_migrating", p.netperf_rates, [c // 2], c, ops))
    return sweep(configs, samples=p.stale_samples, memory_max_mib=p.memory_max_mib)


def memcg_detail(p: V4Params, rate: float = 0.1) -> tuple[StaleConfig, pd.DataFrame]:
    """One sweep point seen per memcg: sched_migration with one memcg per CPU, tasks
    moving at ``rate`` per own operation
    (:func:`~memcglab.studies.s06_page_counter_stock_v4.stale.per_memcg`)."""
    cfg = StaleConfig("sched_migration", rate, p.stale_cpus, p.stale_cpus, p.stale_operations)
    return cfg, per_memcg(cfg, samples=p.stale_samples)


def madvise(p: V4Params) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The madvise loop, v4 against multi: ``(trials, tost)``."""
    df = mad.run(p.madvise_cgroups, p.madvise_trials, p.madvise_iterations, p.region_pages)
    return df, mad.tost(df, p.margin_pct)
