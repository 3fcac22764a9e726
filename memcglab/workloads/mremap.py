"""mremap_pageout: the struct mem_cgroup field accesses behind seed 004's regression.

Seed 004 (Usama Arif, "mm/memcontrol: avoid false sharing between vmstats and
events"): "The stress-ng mremap stressor exercises MADV_PAGEOUT with swap disabled,
generating about 20 million MEMCG_SWAP_FAIL updates per 60-second run on a 176-CPU
test system. Those writes bounce the line while memcg statistics paths load
vmstats_percpu." This generator produces that access pattern as an
:class:`~memcglab.layout.access.AccessStream` over fields of ``struct mem_cgroup``,
for the coherence simulator to replay over the layouts before and after the fix.
It makes no charge trace: the stressor's memory stays charged.

Which fields each path touches (kernel-notes 2.15, 4.4-4.6):

* Swap-fail event. With no swap device, ``shrink_folio_list`` fails
  ``add_to_swap`` for each anonymous folio that MADV_PAGEOUT tries to reclaim, and
  ``__mem_cgroup_try_charge_swap`` sees an empty entry and calls
  ``memcg_memory_event(memcg, MEMCG_SWAP_FAIL)`` (MEMCG_SWAP_FAIL = 8).
  ``__memcg_memory_event`` then does ``atomic_long_inc(&memcg->memory_events_local[8])``
  (a write) and, for the memcg and each ancestor below the root,
  ``atomic_long_inc(&memcg->memory_events[8])`` (a write) and
  ``cgroup_file_notify(&memcg->swap_events_file)``, which reads the file's
  ``notified_at`` and writes it at most once per ``CGROUP_FILE_NOTIFY_MIN_INTV`` =
  HZ/100 (10 ms) per memcg; modelled as a write on the first event of each 10 ms
  window. The cgroup_file members are addressed by the member name.
* Stat updates. ``mod_memcg_state``, ``mod_memcg_lruvec_state`` and
  ``count_memcg_events`` load ``memcg->vmstats_percpu`` (the hot pointer) for their
  per-CPU add, then ``memcg_rstat_updated`` loads it again and walks per-CPU
  ``parent_pcpu`` links, which live outside struct mem_cgroup. Each update is one
  read of ``vmstats_percpu`` of the task's memcg (the second load right after hits
  the line just fetched). ``stat_updates_per_event`` of them fall between the CPU's
  previous swap-fail event and this one, uniformly: every CPU runs an instance, so
  every CPU reads the line at that rate per its own event. The default is the
  derivation of :mod:`memcglab.workloads.mremap_stats` over the whole stressor loop
  (faults, LRU moves, rmap, unmapping, page tables and the failed pageouts),
  about 48 per event; the failed pageout alone (isolation, PGACTIVATE, putback)
  gives 3. A fractional value puts ``floor`` loads, plus one more with the
  fraction's probability, before each event.
* Stat flushes. The periodic flusher (``flush_memcg_stats_dwork``, every
  ``FLUSH_TIME`` = 2 s) flushes the tree; ``mem_cgroup_css_rstat_flush`` reads
  ``vmstats`` and ``vmstats_percpu`` of each updated memcg, modelled as one read of
  each, per memcg instance, on a random CPU (an unbound workqueue).

Events on each CPU form a Poisson process at ``swap_fail_rate / cpus`` per second:
one stressor instance per CPU, all alike. Instance numbering: 0..memcgs-1 are the
stressor memcgs (CPU c's instance runs in memcg c mod memcgs), then the shared
ancestors from the nearest up. The root memcg is not an instance: the event loop
stops below it.

The first swap-fail event of a run, with one ancestor (the notify windows are all
new, so both levels write ``notified_at``):

>>> s = mremap_pageout(MremapPageoutSpec(cpus=2, duration=1e-4, seed=3))
>>> a = s.accesses
>>> first = a[a["time"] == a["time"][a["field"] == EVENTS_LOCAL].min()]
>>> for f, w, i in first[["field", "write", "instance"]].tolist():
...     print(s.field_names[f], "write" if w else "read", i)
memory_events_local[8] write 0
memory_events[8] write 0
swap_events_file read 0
swap_events_file write 0
memory_events[8] write 1
swap_events_file read 1
swap_events_file write 1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.layout.access import ACCESS_DTYPE, AccessStream
from memcglab.trace import MAX_CPUS
from memcglab.workloads.common import (
    MAX_ANCESTORS,
    MEM_CGROUP_ID_MAX,
    SEED_MAX,
    check_float,
    check_int,
    rng_for,
)
from memcglab.workloads.mremap_stats import READ_RANGE

__all__ = ["MremapPageoutSpec", "mremap_pageout", "FIELDS", "MEMCG_SWAP_FAIL"]

MEMCG_SWAP_FAIL = 8  # enum memcg_memory_event (linux-mm 044c4600b3bd)
EVENTS_LOCAL, EVENTS, SWAP_EVENTS_FILE, VMSTATS_PERCPU, VMSTATS = range(5)
FIELDS = (f"memory_events_local[{MEMCG_SWAP_FAIL}]", f"memory_events[{MEMCG_SWAP_FAIL}]",
          "swap_events_file", "vmstats_percpu", "vmstats")
ACCESS_SIZE = 8  # atomic_long_t, unsigned long and pointers on x86-64


@dataclass(frozen=True, slots=True)
class MremapPageoutSpec:
    """Parameters of :func:`mremap_pageout`; each default says where it comes from."""

    #: CPUs: seed 004's "176-CPU test system", one stressor instance per CPU.
    cpus: int = 176
    #: MEMCG_SWAP_FAIL events per second over the machine: seed 004's workload
    #: description, "about 20 million ... per 60-second run" (an input, not a result).
    swap_fail_rate: float = 20e6 / 60
    #: seconds of the run the stream covers. The process is stationary, so a
    #: window of ~10^4 events gives the access pattern; longer ones scale it.
    duration: float = 0.05
    #: vmstats_percpu loads per swap-fail event on each CPU: the typical value of the
    #: derivation over the stressor's loop (memcglab.workloads.mremap_stats.READ_RANGE).
    stat_updates_per_event: float = READ_RANGE.typical
    #: memcgs the instances run in: 1, the one cgroup a benchmark harness runs in.
    memcgs: int = 1
    #: shared cgroups between the root and the stressor memcgs.
    ancestors: int = 1
    #: CGROUP_FILE_NOTIFY_MIN_INTV in seconds (DIV_ROUND_UP(HZ, 100) jiffies).
    notify_interval: float = 0.01
    #: seconds between periodic stat flushes: FLUSH_TIME = 2 * HZ.
    flush_interval: float = 2.0
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS)
        check_float("swap_fail_rate", self.swap_fail_rate, 0.0, 1e12, why="events per second")
        check_float("duration", self.duration, 0.0, 3600.0, low_open=True, why="seconds")
        check_float("stat_updates_per_event", self.stat_updates_per_event, 0.0, 1000.0,
                    why="vmstats_percpu loads per swap-fail event")
        expected = self.swap_fail_rate * self.duration * (1 + self.stat_updates_per_event)
        if expected > 5e8:
            raise ValueError(f"duration={self.duration!r}: about {expected:.3g} accesses; "
                             "must stay below 5e8 (shorten the window)")
        check_int("ancestors", self.ancestors, 0, MAX_ANCESTORS)
        check_int("memcgs", self.memcgs, 1, min(self.cpus, MEM_CGROUP_ID_MAX - self.ancestors),
                  "at most the CPUs, one instance each")
        check_float("notify_interval", self.notify_interval, 0.0, 3600.0, low_open=True)
        check_float("flush_interval", self.flush_interval, 0.0, 1e9, low_open=True)
        check_int("seed", self.seed, 0, SEED_MAX)


def _events(spec: MremapPageoutSpec, rng: np.random.Generator):
    """Swap-fail event times and CPUs, sorted by CPU then time; and each CPU's previous."""
    counts = rng.poisson(spec.swap_fail_rate / spec.cpus * spec.duration, spec.cpus)
    cpu = np.repeat(np.arange(spec.cpus, dtype=np.int32), counts)
    time = rng.random(len(cpu)) * spec.duration
    order = np.lexsort((time, cpu))
    cpu, time = cpu[order], time[order]
    first = np.r_[True, cpu[1:] != cpu[:-1]] if len(cpu) else np.zeros(0, bool)
    previous = np.where(first, 0.0, np.r_[0.0, time[:-1]])
    return time, cpu, previous


def _rows(time, cpu, field, write, instance, seq) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros(len(time), dtype=ACCESS_DTYPE)
    out["time"], out["cpu"], out["field"] = time, cpu, field
    out["write"], out["size"], out["instance"] = write, ACCESS_SIZE, instance
    return out, np.full(len(time), seq, dtype=np.int64)


def _notify_writers(time: np.ndarray, instance: np.ndarray, interval: float) -> np.ndarray:
    """Indices of the events that find their memcg's notify window expired and write."""
    window = np.floor(time / interval).astype(np.int64)
    by_time = np.argsort(time, kind="stable")
    key = instance[by_time] * (window.max(initial=0) + 1) + window[by_time]
    _, first = np.unique(key, return_index=True)
    return by_time[first]


def mremap_pageout(spec: MremapPageoutSpec = MremapPageoutSpec()) -> AccessStream:
    """Generate the access stream described by ``spec`` (see the module docstring)."""
    rng = rng_for("mremap_pageout", spec.seed)
    time, cpu, previous = _events(spec, rng)
    leaf = (cpu % spec.memcgs).astype(np.int32)
    # `seq` orders the accesses of one event as the kernel makes them.
    parts = [_rows(time, cpu, EVENTS_LOCAL, True, leaf, 0)]
    for level in range(1 + spec.ancestors):
        inst = leaf if level == 0 else np.full_like(leaf, spec.memcgs + level - 1)
        parts.append(_rows(time, cpu, EVENTS, True, inst, 1 + 3 * level))
        parts.append(_rows(time, cpu, SWAP_EVENTS_FILE, False, inst, 2 + 3 * level))
        w = _notify_writers(time, inst, spec.notify_interval)
        parts.append(_rows(time[w], cpu[w], SWAP_EVENTS_FILE, True, inst[w], 3 + 3 * level))
    n, k = len(time), spec.stat_updates_per_event
    whole = int(k)
    per_event = np.full(n, whole, dtype=np.int64)
    if k > whole:  # whole loads always; one more with the fraction's probability
        per_event += rng.random(n) < k - whole
    owner = np.repeat(np.arange(n), per_event)
    stat_time = previous[owner] + rng.random(len(owner)) * (time - previous)[owner]
    parts.append(_rows(stat_time, cpu[owner], VMSTATS_PERCPU, False, leaf[owner], 0))
    flush = np.arange(rng.random() * spec.flush_interval, spec.duration, spec.flush_interval)
    instances = np.r_[np.arange(spec.memcgs), spec.memcgs + np.arange(spec.ancestors)]
    flush_cpu = np.repeat(rng.integers(0, spec.cpus, len(flush)), len(instances))
    for seq, field in enumerate((VMSTATS_PERCPU, VMSTATS)):
        parts.append(_rows(np.repeat(flush, len(instances)), flush_cpu, field, False,
                           np.tile(instances, len(flush)), seq))
    accesses = np.concatenate([p for p, _ in parts])
    seq = np.concatenate([q for _, q in parts])
    accesses = accesses[np.lexsort((seq, accesses["time"]))]
    return AccessStream(FIELDS, accesses, "mem_cgroup", spec.duration)
