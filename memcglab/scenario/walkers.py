"""Read-only walks through ``parent_mem_cgroup``: reads of each level's usage line by CPUs
that are not writing it at that moment (counts per operation; nothing priced here).

Besides the page_counter walks the replay counts, three kernel paths walk a memcg's
ancestors with ``parent_mem_cgroup`` and read, at every level, the field it follows
(``docs/audit/page-counter-fields-comparison.md``, section 3):

* **the socket-pressure check**: every ``__sk_mem_reduce_allocated`` calls
  ``sk_under_memory_pressure`` -> ``mem_cgroup_under_socket_pressure``, a do-while over
  the socket's memcg and each ancestor, the root included (include/linux/memcontrol.h;
  v5.19 and v6.0-rc1 read by reading 2, net/core/sock.c of both). A socket row's
  uncharge in the trace is one such call;
* **the pre-rstat stat flushes** (to v5.12: rstat replaced them in v5.13): a per-CPU stat
  delta of a memcg that passes ``MEMCG_CHARGE_BATCH`` (32) is added to every ancestor's
  ``vmstats`` (``__mod_memcg_state``, ``__mod_memcg_lruvec_state`` through
  ``parent_nodeinfo``, ``__count_memcg_events``; v5.11 mm/memcontrol.c, both readings).
  A page a benchmark faults in moves four of them (its rmap count and its LRU size, each
  at the memcg and the node level) and ``PGPGIN``; a page it frees the same four the
  other way and ``PGPGOUT`` (inferred from the rmap and LRU callers, which reading 2
  marks as not re-read: :data:`CHARGE_STREAMS`, :data:`UNCHARGE_STREAMS`);
* **the event thresholds**: ``memcg_check_events`` walks every level each 128 page
  events per CPU (``THRESHOLDS_EVENTS_TARGET``, ``mem_cgroup_threshold``), after every
  ``mem_cgroup_charge`` and ``uncharge_batch``.

Which field ``parent_mem_cgroup`` reads, and which paths walk, is the kernel's
(:func:`walker_era`); whether that field sits on ``usage``'s line is the layout's
(:func:`memcglab.pricing.layout.parent_on_usage_line`). The post-charge ``memory.high``
loop also walks every level, but it reads ``usage`` itself there, so its fetch of the
line is the same in every layout and is left to the calibrated hold time.

>>> walker_era("v5.11", "v6.15").parent_field, walker_era("v5.12", "v6.15").parent_field
('memory.parent', 'css.parent')
>>> walker_era("v5.12", "v5.9").stat_walks, walker_era("v6.1", "v6.16").stat_walks
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from memcglab.trace import OP_CGROUP, OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT
from memcglab.workloads.catalogue import BenchmarkTrace
from memcglab.workloads.catalogue.wis import accounting_kernel

__all__ = ["CHARGE_STREAMS", "STAT_BATCH", "THRESHOLD_EVENTS", "UNCHARGE_STREAMS",
           "ParentReads", "WalkerEra", "parent_reads", "walker_era"]

#: ``MEMCG_CHARGE_BATCH`` before v6.1: a per-CPU stat delta flushes past it
STAT_BATCH = 32
#: ``THRESHOLDS_EVENTS_TARGET``: page events per CPU between threshold walks
THRESHOLD_EVENTS = 128
#: per-CPU stat accumulators a charged page moves (rmap and LRU, memcg and node level),
#: besides PGPGIN; a freed page moves the same four back, besides PGPGOUT
CHARGE_STREAMS = 4
UNCHARGE_STREAMS = 4

_PAGE_CHARGE, _PAGE_UNCHARGE, _SOCKET_UNCHARGE = 1, 2, 3


@dataclass(frozen=True)
class WalkerEra:
    """What one kernel's read-only ancestor walks are: the field ``parent_mem_cgroup``
    reads, and whether the stat flushes and the event thresholds walk."""

    parent_field: str
    stat_walks: bool
    threshold_walks: bool
    why: str


def walker_era(layout: str, kernel: str) -> WalkerEra:
    """The read-only walks of a kernel with page_counter ``layout`` whose accounting era
    is ``kernel`` (a :attr:`memcglab.scenario.spec.Design.kernel`).

    The v5.11 layout exists only in kernels up to v5.11: ``memory.parent``, stat
    flushes and thresholds walk. Otherwise the accounting era decides: v5.9 to v5.13
    still flush stats up the tree and read ``memory.parent``; from the v5.14 era the
    stats are rstat's (no walk) and ``parent_mem_cgroup`` reads ``css.parent`` (Wei
    Yang, "mm/memcg: retrieve parent memcg from css.parent", 11 Jan 2022,
    20220111010302.8864-3-richard.weiyang@gmail.com; v5.19 has it, reading 2). That
    makes v5.14 to v5.17, which kept ``memory.parent``, read as v5.19: the development
    set has no kernel of those releases. The thresholds walk to the v6.1 era.
    """
    if layout == "v5.11":
        return WalkerEra("memory.parent", True, True, "v5.11 layout: a kernel up to v5.11")
    era = accounting_kernel(kernel)
    if era in ("v5.8", "v5.9"):
        return WalkerEra("memory.parent", True, True, f"{kernel}: the {era} era, before rstat")
    return WalkerEra("css.parent", False, era != "v6.18", f"{kernel}: the {era} era, rstat")


@dataclass(frozen=True)
class ParentReads:
    """Per memcg ID: the ancestor-walk reads per benchmark operation of its level
    (every walk from it or from below it), and how many CPUs make them."""

    reads: dict[int, float]
    readers: dict[int, int]


@numba.njit(cache=True)
def _walks(kind, cpu, memcg, arg, measured_from, nmemcg, ncpu, stat, threshold,
           batch, target, charge_streams, uncharge_streams):  # pragma: no cover - jitted
    state = np.zeros((nmemcg, ncpu), dtype=np.int64)
    pgpgin = np.zeros((nmemcg, ncpu), dtype=np.int64)
    pgpgout = np.zeros((nmemcg, ncpu), dtype=np.int64)
    events = np.zeros((nmemcg, ncpu), dtype=np.int64)
    nxt = np.zeros((nmemcg, ncpu), dtype=np.int64)
    out = np.zeros((nmemcg, ncpu), dtype=np.float64)
    for i in range(len(kind)):
        k = kind[i]
        if k == 0:
            continue
        m, c, n = memcg[i], cpu[i], arg[i]
        w = 0.0
        if k == 3:
            w += 1.0
        else:
            if stat:
                state[m, c] += n if k == 1 else -n
                if abs(state[m, c]) > batch:
                    state[m, c] = 0
                    w += charge_streams if k == 1 else uncharge_streams
                if k == 1:
                    pgpgin[m, c] += n
                    if pgpgin[m, c] > batch:
                        pgpgin[m, c] = 0
                        w += 1.0
                else:
                    pgpgout[m, c] += n
                    if pgpgout[m, c] > batch:
                        pgpgout[m, c] = 0
                        w += 1.0
            if threshold:
                events[m, c] += n
                if events[m, c] > nxt[m, c]:  # mem_cgroup_event_ratelimit
                    nxt[m, c] = events[m, c] + target
                    w += 1.0
        if i >= measured_from:
            out[m, c] += w
    return out


def parent_reads(bt: BenchmarkTrace, era: WalkerEra) -> ParentReads:
    """The read-only ancestor walks of ``bt``'s measured part under ``era``, per level.

    Each walk starts at the memcg a trace row charges and reads every level up to the
    root; the per-CPU accumulators run over the warm-up rows too, as the kernel's do.
    """
    ops = bt.trace.ops
    cg = ops["op"] == OP_CGROUP
    parents = {int(m): int(p) for m, p in zip(ops["memcg"][cg], ops["parent"][cg], strict=True)}
    ids = sorted({0, *parents})
    index = {m: k for k, m in enumerate(ids)}
    # origin -1 (the cgroup lines) picks the appended False
    socket = np.array([r.socket for r in bt.rows] + [False], dtype=bool)[bt.origin]
    op = ops["op"]
    kind = np.zeros(len(ops), dtype=np.int8)
    kind[(op == OP_CHARGE) & ~socket] = _PAGE_CHARGE
    kind[np.isin(op, (OP_UNCHARGE_DIRECT, OP_UNCHARGE)) & ~socket] = _PAGE_UNCHARGE
    kind[(op == OP_UNCHARGE) & socket] = _SOCKET_UNCHARGE
    if not (era.stat_walks or era.threshold_walks):
        kind[kind != _SOCKET_UNCHARGE] = 0
    memcg = np.array([index.get(int(m), 0) for m in ops["memcg"]], dtype=np.int64)
    walks = _walks(kind, ops["cpu"].astype(np.int64), memcg, ops["arg"].astype(np.int64),
                   bt.warmup_rows, len(ids), bt.trace.cpus, era.stat_walks,
                   era.threshold_walks, STAT_BATCH, THRESHOLD_EVENTS, float(CHARGE_STREAMS),
                   float(UNCHARGE_STREAMS))
    per_level = np.zeros_like(walks)
    for m in ids:  # every walk from m reads m and each ancestor
        level = m
        while True:
            per_level[index[level]] += walks[index[m]]
            if level == 0:
                break
            level = parents[level]
    nops = bt.operations
    return ParentReads(reads={m: float(per_level[index[m]].sum()) / nops for m in ids},
                       readers={m: int(np.count_nonzero(per_level[index[m]])) for m in ids})
