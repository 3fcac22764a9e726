"""Workload generators: the benchmark catalogue, the seeds' experiments, synthetic mixes.

The scenario contract's benchmarks (netperf, lmbench, hackbench, the RFC's madvise
loop) are :mod:`memcglab.workloads.catalogue`: ``build(BenchmarkSpec(...))`` gives a
:class:`~memcglab.workloads.catalogue.BenchmarkTrace`, each test's accounting derived
from the kernel and benchmark sources (``docs/accounting.md``). ``loopback_rr``,
``loopback_stream`` and ``unix_stream`` are thin aliases of it, kept for the studies.

Each generator takes a frozen spec (every field documented with its physical
meaning and where its default comes from), is deterministic for the spec's seed,
and builds its output with whole numpy arrays:

* ``netperf_rx`` (seed 000), ``madvise_fault`` (seed 003) and ``synthetic`` make a
  :class:`~memcglab.trace.Trace` for the replay and the engine (:data:`WORKLOADS`);
* ``mremap_pageout`` (seed 004) makes an :class:`~memcglab.layout.access.AccessStream`
  of struct mem_cgroup field accesses for the coherence simulator
  (:data:`ACCESS_WORKLOADS`).

>>> t = generate("synthetic", cpus=2, memcgs=4, active_per_cpu=2, charges_per_cpu=10)
>>> t.cpus, len(t.ops)
(2, 45)
>>> generate("synthetic", slots=7)
Traceback (most recent call last):
...
ValueError: synthetic has no parameter 'slots'; valid: cpus, memcgs, active_per_cpu, mix, \
zipf_s, burst_length, burst_memcgs, charges_per_cpu, max_pages, release_delay, remote_release, \
ancestors, seed
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

from memcglab.layout.access import AccessStream
from memcglab.trace import Trace
from memcglab.workloads.catalogue import BenchmarkSpec, BenchmarkTrace, Machine, build
from memcglab.workloads.common import write_trace
from memcglab.workloads.loopback_rr import LoopbackRRSpec, loopback_rr
from memcglab.workloads.loopback_stream import LoopbackStreamSpec, loopback_stream
from memcglab.workloads.madvise import MadviseFaultSpec, madvise_fault, trial_bounds
from memcglab.workloads.migration import (
    ManyCgroupsSpec,
    NetperfMigratingSpec,
    SchedMigrationSpec,
    many_cgroups,
    netperf_migrating,
    sched_migration,
)
from memcglab.workloads.mremap import MremapPageoutSpec, mremap_pageout
from memcglab.workloads.netperf import NetperfRxSpec, netperf_rx
from memcglab.workloads.paired_migration import NetperfPairedSpec, netperf_paired
from memcglab.workloads.synthetic import SyntheticSpec, synthetic
from memcglab.workloads.unix_stream import UnixStreamSpec, unix_stream

__all__ = [
    "ACCESS_WORKLOADS",
    "BenchmarkSpec",
    "BenchmarkTrace",
    "Machine",
    "build",
    "WORKLOADS",
    "Workload",
    "LoopbackRRSpec",
    "LoopbackStreamSpec",
    "MadviseFaultSpec",
    "ManyCgroupsSpec",
    "MremapPageoutSpec",
    "NetperfMigratingSpec",
    "NetperfPairedSpec",
    "NetperfRxSpec",
    "SchedMigrationSpec",
    "SyntheticSpec",
    "UnixStreamSpec",
    "generate",
    "loopback_rr",
    "loopback_stream",
    "madvise_fault",
    "many_cgroups",
    "mremap_pageout",
    "netperf_migrating",
    "netperf_paired",
    "netperf_rx",
    "sched_migration",
    "synthetic",
    "trial_bounds",
    "unix_stream",
    "write_trace",
]


class Workload(NamedTuple):
    """A generator and the spec class it takes."""

    spec: type
    generate: Callable[[Any], Any]


#: name -> generator of charge traces
WORKLOADS: dict[str, Workload] = {
    "netperf_rx": Workload(NetperfRxSpec, netperf_rx),
    "madvise_fault": Workload(MadviseFaultSpec, madvise_fault),
    "synthetic": Workload(SyntheticSpec, synthetic),
    "loopback_rr": Workload(LoopbackRRSpec, loopback_rr),
    "loopback_stream": Workload(LoopbackStreamSpec, loopback_stream),
    "unix_stream": Workload(UnixStreamSpec, unix_stream),
    "netperf_migrating": Workload(NetperfMigratingSpec, netperf_migrating),
    "sched_migration": Workload(SchedMigrationSpec, sched_migration),
    "many_cgroups": Workload(ManyCgroupsSpec, many_cgroups),
    "netperf_paired": Workload(NetperfPairedSpec, netperf_paired),
}
#: name -> generator of struct field access streams
ACCESS_WORKLOADS: dict[str, Workload] = {
    "mremap_pageout": Workload(MremapPageoutSpec, mremap_pageout),
}


def generate(name: str, **params: Any) -> Trace | AccessStream:
    """Run workload ``name`` with the spec built from ``params`` (unnamed fields default)."""
    registry = {**WORKLOADS, **ACCESS_WORKLOADS}
    if name not in registry:
        raise ValueError(f"unknown workload {name!r}; valid: {', '.join(registry)}")
    spec_type, function = registry[name]
    fields = [f.name for f in dataclasses.fields(spec_type)]
    for key in params:
        if key not in fields:
            raise ValueError(f"{name} has no parameter {key!r}; valid: {', '.join(fields)}")
    return function(spec_type(**params))
