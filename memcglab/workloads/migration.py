"""Workloads whose tasks migrate: pages stranded in per-CPU stocks.

A task that charges on one CPU and moves leaves its memcg's pages in that CPU's
stock (the multi stock keeps up to ``MEMCG_CHARGE_BATCH`` pages per slot; the v4
page_counter stock keeps one stock per counter and CPU). These generators vary how
often tasks move, to compare how much each design strands:

* ``netperf_migrating``: :func:`~memcglab.workloads.netperf.netperf_rx` with moving
  tasks (its ``migration_rate``, here a required study parameter);
* ``sched_migration``: tasks in many memcgs charge and release like a scheduler's
  mix, each moving to a uniformly random other CPU with probability
  ``migration_rate`` per operation of its own (:class:`~memcglab.workloads.common.Timeline`);
* ``many_cgroups``: the same mix with far more memcgs per CPU than the multi
  stock's 7 slots (``NR_MEMCG_STOCK``), one small task each.

In ``sched_migration`` and ``many_cgroups`` a task's operation charges 1..``max_pages``
pages (``charge``: ``try_charge_memcg``) that the same task releases ``1..2*hold-1``
of its operations later (``uncharge``: through ``refill_stock``, as socket and objcg
memory is), on the CPU it is on by then. Tasks' operations interleave at random
(equal counts); the trace ends with every page released.

>>> from memcglab.workloads.describe import pages_by_memcg
>>> t = sched_migration(SchedMigrationSpec(cpus=4, cgroups=3, operations=60))
>>> all(c == r for c, r in pages_by_memcg(t).values())
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, NR_MAX, Trace
from memcglab.workloads.common import (
    SEED_MAX,
    Streams,
    Timeline,
    bounded_delay,
    charge_release,
    check_choice,
    check_float,
    check_int,
    check_tenants,
    hierarchy,
    rng_for,
)
from memcglab.workloads.netperf import RELEASES, NetperfRxSpec, netperf_rx

__all__ = ["NetperfMigratingSpec", "netperf_migrating", "SchedMigrationSpec", "sched_migration",
           "ManyCgroupsSpec", "many_cgroups"]


@dataclass(frozen=True, slots=True)
class NetperfMigratingSpec:
    """Parameters of :func:`netperf_migrating`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: netperf clients, one memcg each: seed 000's largest row.
    clients: int = 36
    #: messages in the trace (a length, not a rate).
    messages: int = 200_000
    #: probability that a task migrates per message of its flow: 0.05, five times
    #: netperf_rx's default, the "tasks move often" end of a stranding sweep.
    migration_rate: float = 0.05
    #: where pages are released, a key of netperf_rx's RELEASES: the reader's CPU.
    release: str = "task"
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_float("migration_rate", self.migration_rate, 0.0, 1.0)
        check_choice("release", self.release, RELEASES)
        self.netperf()  # validates the other fields, naming them

    def netperf(self) -> NetperfRxSpec:
        """The netperf_rx spec this one stands for."""
        return NetperfRxSpec(cpus=self.cpus, clients=self.clients, messages=self.messages,
                             migration_rate=self.migration_rate, release=self.release,
                             seed=self.seed)


def netperf_migrating(spec: NetperfMigratingSpec = NetperfMigratingSpec()) -> Trace:
    """netperf_rx with the spec's migration rate (see the module docstring)."""
    return netperf_rx(spec.netperf())


@dataclass(frozen=True, slots=True)
class SchedMigrationSpec:
    """Parameters of :func:`sched_migration`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: memcgs, one task each: 144, two per CPU, so a CPU's stock sees the memcgs
    #: of the tasks that pass through it.
    cgroups: int = 144
    #: operations in the trace (all tasks together), each one charge and its release.
    operations: int = 200_000
    #: probability that a task moves to another CPU per operation of its own: a
    #: sweep parameter; 0.01 is a move per hundred charges.
    migration_rate: float = 0.01
    #: largest charge in pages (uniform 1..max_pages); 4 is a few slab or socket pages.
    max_pages: int = 4
    #: mean operations of its own a task holds a charge before releasing it.
    hold: int = 4
    #: shared cgroups between the root and the tasks' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        _check_mix(self)


@dataclass(frozen=True, slots=True)
class ManyCgroupsSpec:
    """Parameters of :func:`many_cgroups`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: memcgs per CPU, one small task each: 32, far above NR_MEMCG_STOCK = 7.
    cgroups_per_cpu: int = 32
    #: operations in the trace (all tasks together).
    operations: int = 200_000
    #: probability that a task moves per operation of its own: 0.001, rare moves
    #: (each strands what the task's memcg had stocked where it was).
    migration_rate: float = 0.001
    #: largest charge in pages: 1, small tasks charging a page at a time.
    max_pages: int = 1
    #: mean operations of its own a task holds a charge before releasing it.
    hold: int = 2
    #: shared cgroups between the root and the tasks' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cgroups_per_cpu", self.cgroups_per_cpu, 1, 2**16)
        _check_mix(self)

    @property
    def cgroups(self) -> int:
        """All the memcgs (cpus * cgroups_per_cpu)."""
        return self.cpus * self.cgroups_per_cpu


def _check_mix(spec: SchedMigrationSpec | ManyCgroupsSpec) -> None:
    check_int("cpus", spec.cpus, 1, MAX_CPUS, "the replay contract's limit")
    check_tenants("cgroups", spec.cgroups, spec.ancestors)
    check_int("operations", spec.operations, 1, 2**28)
    check_float("migration_rate", spec.migration_rate, 0.0, 1.0)
    check_int("max_pages", spec.max_pages, 1, NR_MAX, "the charge NR range")
    check_int("hold", spec.hold, 1, 2**20)
    check_int("seed", spec.seed, 0, SEED_MAX)


def _task_mix(spec: SchedMigrationSpec | ManyCgroupsSpec, name: str) -> Trace:
    rng = rng_for(name, spec.seed)
    n, m = spec.cgroups, spec.operations
    head, tenants = hierarchy(n, spec.ancestors)
    task = rng.permutation(np.arange(m, dtype=np.int64) % n)
    step = np.arange(m, dtype=np.int64)
    start = np.arange(n, dtype=np.int64) % spec.cpus  # task i starts on CPU i mod cpus
    tasks = Timeline.draw(rng, start, m, spec.migration_rate / n, spec.cpus)
    own = Streams.of(task, n)
    release = own.step(task, own.rank() + bounded_delay(rng, m, spec.hold)) - 0.5
    pages = rng.integers(1, spec.max_pages + 1, m).astype(np.uint64)
    release_cpu = tasks.at(task, np.minimum(np.ceil(release).astype(np.int64), m - 1))
    return charge_release(spec.cpus, head, step.astype(np.float64), release,
                          tasks.at(task, step), release_cpu, tenants[task], pages, f"<{name}>")


def sched_migration(spec: SchedMigrationSpec = SchedMigrationSpec()) -> Trace:
    """Tasks in many memcgs that move at ``migration_rate`` (see the module docstring)."""
    return _task_mix(spec, "sched_migration")


def many_cgroups(spec: ManyCgroupsSpec = ManyCgroupsSpec()) -> Trace:
    """``cgroups_per_cpu`` small memcgs per CPU (see the module docstring).

    >>> from memcglab.workloads.describe import memcgs_per_cpu
    >>> t = many_cgroups(ManyCgroupsSpec(cpus=2, cgroups_per_cpu=9, operations=900,
    ...                                  migration_rate=0.0))
    >>> memcgs_per_cpu(t).tolist()
    [9, 9]
    """
    return _task_mix(spec, "many_cgroups")
