"""Study 6's stale-overcharge sweep: stranded stock pages vs migration rate and cgroups.

Three workloads whose tasks move (:mod:`memcglab.workloads.migration`): the multi-memcg thread's
netperf mix with moving tasks, a scheduler-like mix of one task per memcg moving to a
random other CPU with probability ``migration_rate`` per operation of its own, and
the same mix with many small memcgs per CPU. Each trace is replayed through the multi
stock and ``pcstock-v4`` and sampled over time with
:func:`memcglab.studies.s06_page_counter_stock_v4.staleness.occupancy`; :func:`sweep` returns one
row per run with :func:`~memcglab.studies.s06_page_counter_stock_v4.staleness.summary`'s numbers and
the time series.

A run's *migrations per task* is ``migration_rate`` times the operations each task
makes: what the cover letters' "processes bounce across CPUs" counts.

>>> cfg = StaleConfig("sched_migration", rate=0.1, cgroups=4, cpus=4, operations=400)
>>> cfg.migrations_per_task
10.0
>>> runs, series = sweep([cfg], models=("pcstock-v4",), samples=4, memory_max_mib=64)
>>> int(runs["cgroups"].iloc[0]), bool(runs["peak_pages"].iloc[0] > 0), len(series)
(4, True, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab.queueing import trace_parents
from memcglab.studies.s06_page_counter_stock_v4.staleness import PAGE_MIB, occupancy, summary
from memcglab.trace import Trace
from memcglab.workloads import (
    ManyCgroupsSpec,
    NetperfMigratingSpec,
    SchedMigrationSpec,
    many_cgroups,
    netperf_migrating,
    sched_migration,
)

__all__ = ["STALE_WORKLOADS", "StaleConfig", "grid", "per_memcg", "sweep", "thresholds"]

#: workload -> what its ``cgroups`` counts
STALE_WORKLOADS: dict[str, str] = {
    "sched_migration": "memcgs, one task each",
    "many_cgroups": "memcgs, one small task each (cgroups_per_cpu times the CPUs)",
    "netperf_migrating": "netperf clients, one memcg each (a sender and a receiver task)",
}


@dataclass(frozen=True)
class StaleConfig:
    """One trace of the sweep: workload, migration rate per own operation, memcgs."""

    workload: str
    rate: float
    cgroups: int
    cpus: int = 72
    operations: int = 200_000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.workload not in STALE_WORKLOADS:
            raise ValueError(f"workload={self.workload!r}: must be one of "
                             f"{', '.join(STALE_WORKLOADS)}")
        if self.workload == "many_cgroups" and self.cgroups % self.cpus:
            raise ValueError(f"cgroups={self.cgroups}: many_cgroups needs a multiple of "
                             f"cpus={self.cpus} (cgroups_per_cpu memcgs per CPU)")
        if self.workload == "netperf_migrating" and not 1 <= self.cgroups <= self.cpus:
            raise ValueError(f"cgroups={self.cgroups}: netperf_migrating has one client "
                             f"per memcg, 1 to cpus={self.cpus}")

    @property
    def tasks(self) -> int:
        """Tasks of the trace: one per memcg, two per netperf client."""
        return 2 * self.cgroups if self.workload == "netperf_migrating" else self.cgroups

    @property
    def migrations_per_task(self) -> float:
        """Expected moves of one task over the trace."""
        own = self.operations / self.cgroups  # a netperf task acts once per message of its flow
        return self.rate * own

    def trace(self) -> Trace:
        """The configuration's trace."""
        if self.workload == "sched_migration":
            return sched_migration(SchedMigrationSpec(
                cpus=self.cpus, cgroups=self.cgroups, operations=self.operations,
                migration_rate=self.rate, seed=self.seed))
        if self.workload == "many_cgroups":
            return many_cgroups(ManyCgroupsSpec(
                cpus=self.cpus, cgroups_per_cpu=self.cgroups // self.cpus,
                operations=self.operations, migration_rate=self.rate, seed=self.seed))
        return netperf_migrating(NetperfMigratingSpec(
            cpus=self.cpus, clients=self.cgroups, messages=self.operations,
            migration_rate=self.rate, seed=self.seed))


def grid(workload: str, rates: Sequence[float], cgroups: Sequence[int], cpus: int = 72,
         operations: int = 200_000, seeds: Sequence[int] = (0,)) -> list[StaleConfig]:
    """Every (rate, cgroups, seed) configuration of one workload."""
    return [StaleConfig(workload, float(r), int(c), cpus, operations, int(s))
            for c in cgroups for r in rates for s in seeds]


def sweep(configs: Sequence[StaleConfig], models: Sequence[str] = ("multi", "pcstock-v4"),
          samples: int = 40, memory_max_mib: float = 256.0
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Replay every configuration through every model, sampling the stocks.

    Returns ``(runs, series)``: one row per (configuration, model) with the
    configuration's fields and
    :func:`~memcglab.studies.s06_page_counter_stock_v4.staleness.summary`; and the total stocked MiB
    per sample (``op_fraction``: the share of the trace replayed).
    """
    rows, series = [], []
    for cfg in configs:
        trace = cfg.trace()
        for model in models:
            occ = occupancy(trace, model, samples=samples, seed=cfg.seed)
            keys = {"workload": cfg.workload, "migration_rate": cfg.rate,
                    "cgroups": cfg.cgroups, "cpus": cfg.cpus, "seed": cfg.seed,
                    "model": model}
            rows.append({**keys, "migrations_per_task": cfg.migrations_per_task,
                         **summary(occ, model, cfg.cpus, cfg.cgroups, memory_max_mib)})
            t = occ.total
            series.append(pd.DataFrame({**keys, "op_fraction": t["op"] / len(trace.ops),
                                        "stocked_mib": t["stocked"] * PAGE_MIB}))
    return pd.DataFrame(rows), pd.concat(series, ignore_index=True)


def per_memcg(cfg: StaleConfig, models: Sequence[str] = ("multi", "pcstock-v4"),
              samples: int = 40) -> pd.DataFrame:
    """Pages each memcg holds in stocks over one configuration's trace, per model.

    :attr:`~memcglab.studies.s06_page_counter_stock_v4.staleness.Occupancy.memcg` with ``model``,
    ``stocked_mib`` and ``share_of_usage`` (stocked over the memcg's usage) added; the rows of
    memcgs with children are left out.
    """
    trace = cfg.trace()
    inner = set(trace_parents(trace).values())  # ancestors: their usage is their children's
    frames = []
    for model in models:
        m = occupancy(trace, model, samples=samples, seed=cfg.seed).memcg
        m = m[~m["memcg"].isin(inner)]
        frames.append(m.assign(model=model, stocked_mib=m["stocked"] * PAGE_MIB,
                               share_of_usage=m["stocked"] / m["usage"].clip(lower=1)))
    return pd.concat(frames, ignore_index=True)


def thresholds(runs: pd.DataFrame, model: str = "pcstock-v4") -> pd.DataFrame:
    """Per (workload, cgroups): the smallest migration rate whose mean peak (over seeds)
    reaches the close-to-bound share, and the migrations per task there (NaN: never)."""
    sub = runs[runs["model"] == model]
    g = sub.groupby(["workload", "cgroups", "migration_rate"], as_index=False).agg(
        fraction=("peak_fraction_of_bound", "mean"), close=("close_to_bound", "mean"),
        migrations=("migrations_per_task", "mean"), peak_mib=("peak_mib", "mean"))
    out = []
    for (w, c), part in g.groupby(["workload", "cgroups"]):
        hit = part[part["close"] >= 0.5].sort_values("migration_rate")
        out.append({"workload": w, "cgroups": int(c),
                    "first_close_rate": float(hit["migration_rate"].iloc[0]) if len(hit)
                    else np.nan,
                    "migrations_per_task_there": float(hit["migrations"].iloc[0]) if len(hit)
                    else np.nan,
                    "max_fraction": float(part["fraction"].max()),
                    "max_peak_mib": float(part["peak_mib"].max())})
    return pd.DataFrame(out)
