"""``build(BenchmarkSpec) -> BenchmarkTrace``: the scenario layer's one entry point.

>>> from memcglab.workloads.catalogue.spec import BenchmarkSpec, Machine
>>> bt = build(BenchmarkSpec("netperf", "TCP_RR", {"instances": 2}, Machine(8, 2, 2),
...                          operations=100))
>>> bt.operation, bt.operations, bt.memcgs
('transaction', 200, {0: 'root', 1: 'system.slice', 2: 'service'})
>>> bt.placement["client"].tolist(), bt.placement["server"].tolist()
([[0], [4]], [[1], [5]])
>>> build(BenchmarkSpec("netperf", "TCP_RR", {"instances": 16000}, Machine(8),
...                     operations=10**6))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: instances=16000 x (operations=1000000 + warm-up 8) x up to 10 trace rows ...
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memcglab.trace import Trace
from memcglab.workloads.catalogue.events import Events, Roles
from memcglab.workloads.catalogue.layout import cgroups
from memcglab.workloads.catalogue.placement import place, place_random, topology
from memcglab.workloads.catalogue.rows import AccountingRow
from memcglab.workloads.catalogue.spec import MAX_TRACE_ROWS, BenchmarkSpec
from memcglab.workloads.catalogue.tests import TESTS

__all__ = ["BenchmarkTrace", "MAX_OPERATIONS", "MAX_TASKS", "TARGET_ROWS", "build",
           "default_operations"]

#: the bound on trace rows (the rows one operation can make at most, times the
#: operations) the default size aims at: a trace replays in a few seconds
TARGET_ROWS = 1_000_000


@dataclass(frozen=True)
class BenchmarkTrace:
    """A built benchmark: its trace and what the scenario layer needs to price it.

    ``operations`` benchmark operations (all instances, each an ``operation``) are
    measured: the trace rows from ``warmup_rows`` on (the rows before are the
    ``cgroup`` lines and ``warmup_operations`` per instance that fill stocks and
    socket reserves; count a measured quantity as replay(trace) minus
    replay(trace.ops[:warmup_rows])). ``memcgs`` maps each memcg ID to its role;
    ``placement`` maps each task role to its CPUs, shape (instances, members);
    ``instance_memcg``/``server_memcg`` give each instance's memcgs;
    ``softirq_cpus`` the roles whose CPUs run receive softirq work; ``rows`` the
    accounting rows and ``origin`` the row (index into ``rows``) of each trace row
    (-1 for the ``cgroup`` lines); ``topology`` each CPU's socket, core and thread.
    """

    spec: BenchmarkSpec
    trace: Trace
    operation: str
    counted: str
    operations: int
    operations_per_instance: int
    warmup_operations: int
    warmup_rows: int
    bytes_per_operation: int | None
    memcgs: dict[int, str]
    instance_memcg: np.ndarray
    server_memcg: np.ndarray
    placement: dict[str, np.ndarray]
    softirq_cpus: tuple[str, ...]
    rows: tuple[AccountingRow, ...]
    origin: np.ndarray
    keys: dict[str, Any]
    alternatives: dict[str, Any]
    topology: dict[str, np.ndarray] = field(repr=False)

    @property
    def protection(self) -> bool:
        """memory.min/low on the top shared cgroup: the pricing layer's flag, not the trace's."""
        return self.spec.protection

    @property
    def sk_reclaim(self) -> str:
        """The socket reclaim era the trace was made with (``eager`` or ``lazy``)."""
        return self.spec.sk_reclaim

    def summary(self) -> dict[str, Any]:
        """The JSON-able facts of the build (no arrays): for reports and caches."""
        return {"family": self.spec.family, "test": self.spec.test, "keys": self.keys,
                "layout": self.spec.layout, "depth": self.spec.resolved_depth,
                "protection": self.protection, "sk_reclaim": self.sk_reclaim,
                "alternatives": self.alternatives, "operation": self.operation,
                "counted": self.counted, "operations": self.operations,
                "warmup_operations": self.warmup_operations, "warmup_rows": self.warmup_rows,
                "trace_rows": len(self.trace.ops), "bytes_per_operation":
                    self.bytes_per_operation, "memcgs": {str(k): v for k, v in
                                                         self.memcgs.items()}}


def default_operations(spec: BenchmarkSpec) -> int:
    """Operations per instance a spec without ``operations`` generates.

    As many as keep the bound on trace rows near :data:`TARGET_ROWS`, but at least
    the test's minimum, and for hackbench no more than the run itself has
    (``fds * fds * loops`` messages per group).
    """
    test = TESTS[(spec.family, spec.test)]
    keys = spec.resolved_keys()
    ninst = keys[test.instances_key]
    n = max(test.least(keys), int(TARGET_ROWS / (ninst * test.bound(keys))) - test.warm(keys))
    if spec.family == "hackbench":
        n = min(n, max(1, keys["fds"] * keys["fds"] * keys["loops"] - test.warm(keys)))
    if spec.family == "madvise":
        n = min(n, keys["iterations"])
    return max(1, n)


def _check_size(ninst: int, nops: int, warm: int, bound: float, name: str) -> None:
    rows = int(np.ceil(ninst * (nops + warm) * bound))
    if rows > MAX_TRACE_ROWS:
        most = max(0, int(MAX_TRACE_ROWS / (ninst * bound)) - warm)
        raise ValueError(f"{name}={ninst} x (operations={nops} + warm-up {warm}) x up to "
                         f"{bound:g} trace rows per operation = {rows:,} exceeds "
                         f"{MAX_TRACE_ROWS:,} (MAX_TRACE_ROWS): give fewer operations "
                         f"(at most {most} per instance here) or fewer {name}")


#: most tasks a build places (instances x roles x members: hackbench's groups x 2 fds)
MAX_TASKS = 1 << 20
#: most benchmark operations (all instances) a build simulates, rows or not: the
#: generators hold a few arrays of this length (hackbench pipe: its messages)
MAX_OPERATIONS = 50_000_000


def build(spec: BenchmarkSpec) -> BenchmarkTrace:
    """Generate the trace of ``spec`` (deterministic for its seed)."""
    test = TESTS[(spec.family, spec.test)]
    keys = spec.resolved_keys()
    alts = spec.resolved_alternatives()
    ninst = keys[test.instances_key]
    nops = spec.operations if spec.operations is not None else default_operations(spec)
    warm = test.warm(keys)
    _check_size(ninst, nops, warm, test.bound(keys), test.instances_key)
    if ninst * (nops + warm) > MAX_OPERATIONS:
        raise ValueError(f"{test.instances_key}={ninst} x (operations={nops} + warm-up {warm}) "
                         f"= {ninst * (nops + warm):,} operations exceeds {MAX_OPERATIONS:,} "
                         "(MAX_OPERATIONS): give fewer operations or fewer "
                         f"{test.instances_key}")
    m = spec.machine
    members = test.members(keys)
    tasks = ninst * len(test.roles) * members
    if tasks > MAX_TASKS:
        what = (f"{test.instances_key}={ninst} x {len(test.roles)} roles x fds={members}"
                if members > 1 else f"{test.instances_key}={ninst} x {len(test.roles)} roles")
        raise ValueError(f"{what} = {tasks:,} tasks exceeds {MAX_TASKS:,} (MAX_TASKS): give "
                         f"fewer {test.instances_key}" + (" or fds" if members > 1 else ""))
    rng = np.random.default_rng([spec.seed, zlib.crc32(f"{spec.family}/{spec.test}".encode())])
    # tasks in creation order: instance by instance, its roles in order, members inside
    per = len(test.roles) * members
    if alts["placement"] == "random":
        task_cpu = place_random(ninst, per, m.cpus, rng)
    else:
        task_cpu = place(ninst * per, m.cpus, m.sockets, m.threads_per_core)
    task_cpu = task_cpu.reshape(ninst, len(test.roles), members)
    placement = {role: task_cpu[:, k, :] for k, role in enumerate(test.roles)}
    head, roles, memcgs = cgroups(spec.layout, spec.resolved_depth, ninst,
                                  alts.get("server_memcg", "hierarchy"))
    era = None
    if test.by_kernel:
        from memcglab.workloads.catalogue.wis import accounting_kernel
        era = accounting_kernel(spec.kernel)
    rows = test.rows(keys, era) if test.by_kernel else test.rows(keys)
    ev = Events(Roles(placement, {r: memcgs.server if r in test.server else memcgs.instance
                                  for r in test.roles}), rows)
    if test.by_kernel:
        test.generate(ev, ninst, nops + warm, keys, alts, rng, era=era)
    else:
        test.generate(ev, ninst, nops + warm, keys, alts, rng)
    body, origin, nwarm = ev.build(spec.sk_reclaim, float(warm))
    if not test.exact_bound and len(body) > MAX_TRACE_ROWS:
        raise ValueError(f"{test.instances_key}={ninst} x (operations={nops} + warm-up {warm}) "
                         f"made {len(body):,} trace rows, more than {MAX_TRACE_ROWS:,} "
                         "(MAX_TRACE_ROWS): give fewer operations or fewer "
                         f"{test.instances_key}")
    ops = np.concatenate([head, body])
    trace = Trace(m.cpus, ops, f"<{spec.family} {spec.test}>", nodes=m.sockets)
    softirq = tuple(sorted({r.cpu for r in rows.values() if r.irq}))
    return BenchmarkTrace(
        spec=spec, trace=trace, operation=test.operation, counted=test.counted,
        operations=ninst * nops, operations_per_instance=nops, warmup_operations=warm,
        warmup_rows=len(head) + nwarm, bytes_per_operation=test.bytes_per_operation(keys),
        memcgs=roles, instance_memcg=memcgs.instance, server_memcg=memcgs.server,
        placement=placement, softirq_cpus=softirq, rows=tuple(rows.values()),
        origin=np.concatenate([np.full(len(head), -1, dtype=np.int64), origin]),
        keys=keys, alternatives=alts,
        topology=topology(m.cpus, m.sockets, m.threads_per_core))
