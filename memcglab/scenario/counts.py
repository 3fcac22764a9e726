"""Counts first: one kernel design replayed on one built benchmark, per operation, exact.

:func:`kernel_counts` builds the benchmark's trace (:func:`memcglab.workloads.catalogue.build`),
replays it through the compiled engine (:mod:`memcglab.engine`, byte-identical to the
faithful port) with the design's model, batch, slots and refill, and divides the event
counts of the measured part (after the build's warm-up rows) by the benchmark
operations it represents. Nothing here is priced.

The page_counter ``usage`` lines a prediction queues for are the counters whose walks
come from more than one instance (:attr:`KernelCounts.shared`): the root, the shared
ancestors, and in the ``lkp`` and ``shared`` layouts the benchmark's own memcg. A
counter only one instance's tasks walk is that instance's private line. For each
shared line, ``cross`` is the chance that consecutive writes come from different
sockets, ``1 - sum_s p_s^2`` for the share ``p_s`` of the line's charge-path operations
issued on socket ``s``.

>>> from memcglab.scenario.spec import Design
>>> from memcglab.workloads.catalogue import BenchmarkSpec, Machine
>>> spec = BenchmarkSpec("netperf", "TCP_RR", {"instances": 4}, Machine(8, 2, 2),
...                      operations=200)
>>> c = kernel_counts(spec, Design("pcstock-v4"))
>>> c.operation, c.names, round(c.per_op["walks"], 3) > 1.0
('transaction', ('usage:root', 'usage:system.slice', 'usage:service'), True)
>>> kernel_counts(spec, Design("none")).per_op["walks"]
0.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from memcglab.engine import Engine
from memcglab.events import EVENT_NAMES, OBJ_ERA_EVENTS, PROFILE_EVENT_NAMES, ChargeEvents
from memcglab.scenario.spec import Design
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
)
from memcglab.workloads.catalogue import BenchmarkSpec, BenchmarkTrace, build

__all__ = ["KernelCounts", "built", "kernel_counts"]

_CHARGE_PATH_OPS = (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, OP_OBJ_CHARGE, OP_OBJ_UNCHARGE)


@dataclass(frozen=True)
class KernelCounts:
    """One design on one trace: events per operation and the usage lines they write."""

    design: Design
    operation: str
    operations: int
    per_op: dict[str, float]
    names: tuple[str, ...]
    shared: np.ndarray      # transfers per operation of each shared line
    writes: np.ndarray      # walk levels per operation at each shared line
    cross: np.ndarray       # chance that a shared line's next writer is on another socket
    sharers: np.ndarray     # instances whose walks write each shared line
    private: float          # transfers per operation of all private lines together
    private_cross: float    # the same chance for private lines (an instance's own CPUs)
    ids: tuple[int, ...] = ()  # the memcg ID of each shared line, in ``names`` order


@lru_cache(maxsize=16)
def built(spec: BenchmarkSpec) -> BenchmarkTrace:
    """The built benchmark (cached: base and new share one trace when their keys agree)."""
    return build(spec)


def _parents(bt: BenchmarkTrace) -> dict[int, int]:
    rows = bt.trace.ops[bt.trace.ops["op"] == OP_CGROUP]
    return {int(m): int(p) for m, p in zip(rows["memcg"], rows["parent"], strict=True)}


def _ancestors(memcg: int, parents: Mapping[int, int]) -> list[int]:
    out = [memcg]
    while out[-1] != 0:
        out.append(parents[out[-1]])
    return out


def _socket_counts(ops: np.ndarray, socket: np.ndarray) -> dict[int, np.ndarray]:
    """Per memcg: its charge-path operations issued on each socket."""
    rows = ops[np.isin(ops["op"], _CHARGE_PATH_OPS)]
    nsock = int(socket.max()) + 1
    key = rows["memcg"].astype(np.int64) * nsock + socket[rows["cpu"]]
    ids, counts = np.unique(key, return_counts=True)
    out: dict[int, np.ndarray] = {}
    for k, n in zip(ids.tolist(), counts.tolist(), strict=True):
        out.setdefault(k // nsock, np.zeros(nsock))[k % nsock] += n
    return out


def _socket_mix(per_memcg: Mapping[int, np.ndarray], members: set[int]) -> float:
    """The chance that two charge-path operations of ``members`` are on different sockets."""
    hist = sum((per_memcg[m] for m in members if m in per_memcg), start=np.zeros(1))
    total = float(np.sum(hist))
    if total == 0:
        return 0.0
    return float(1.0 - np.sum((hist / total) ** 2))


def _delta(after: ChargeEvents, before: ChargeEvents) -> ChargeEvents:
    n = len(after.memcg_ids)
    per_memcg = {k: v - np.pad(before.per_memcg[k], (0, n - len(before.per_memcg[k])))
                 for k, v in after.per_memcg.items()}
    return ChargeEvents(per_cpu={k: v - before.per_cpu[k] for k, v in after.per_cpu.items()},
                        per_memcg=per_memcg, memcg_ids=after.memcg_ids)


def _replay(bt: BenchmarkTrace, design: Design, seed: int
            ) -> tuple[ChargeEvents, dict[str, int]]:
    """The measured part's events, and (with an ``obj_stock`` era) the era's own event
    totals (:data:`memcglab.events.OBJ_ERA_EVENTS`, which the engine counts as totals)."""
    engine = Engine(bt.trace.cpus, design.model, design.slots, seed, design.batch,
                    events=True, source=bt.trace.source, refill=design.refill,
                    nodes=bt.trace.nodes, obj_stock=design.obj_stock)
    ops = bt.trace.ops
    engine.feed(ops[:bt.warmup_rows])
    warm, warm_era = engine.events(), _era_totals(engine)
    engine.feed(ops[bt.warmup_rows:])
    era = {k: v - warm_era[k] for k, v in _era_totals(engine).items()}
    return _delta(engine.events(), warm), era


def _era_totals(engine: Engine) -> dict[str, int]:
    if engine.obj_stock is None:
        return {}
    counts = engine.counts()
    return {k: counts[k] for k in OBJ_ERA_EVENTS}


def kernel_counts(spec: BenchmarkSpec, design: Design, seed: int = 0) -> KernelCounts:
    """Exact counts per benchmark operation of ``design`` on the benchmark ``spec`` builds.

    ``model = "none"`` is the root memcg: the kernel returns before any stock or
    counter (``mem_cgroup_is_root``), so every count is 0 and nothing is replayed.
    """
    bt = built(spec)
    nops = bt.operations
    if design.model == "none":
        zero = dict.fromkeys((*EVENT_NAMES, *PROFILE_EVENT_NAMES), 0.0)
        if design.obj_stock is not None:
            zero.update(dict.fromkeys(OBJ_ERA_EVENTS, 0.0))
        empty = np.zeros(0)
        return KernelCounts(design, bt.operation, nops, zero, (), empty, empty, empty,
                            empty.astype(np.int64), 0.0, 0.0)
    ev, era = _replay(bt, design, seed)
    totals = {**ev.totals(), **ev.profile_totals(), **era}
    per_op = {k: float(v) / nops for k, v in totals.items()}
    parents = _parents(bt)
    ids = [int(i) for i in ev.memcg_ids]
    # which instances' memcgs sit under each counter
    under: dict[int, set[int]] = {}
    members: dict[int, set[int]] = {}
    for inst, (mine, server) in enumerate(zip(bt.instance_memcg, bt.server_memcg,
                                              strict=True)):
        for memcg in {int(mine), int(server)} - {0}:
            for level in _ancestors(memcg, parents):
                under.setdefault(level, set()).add(inst)
                members.setdefault(level, set()).add(memcg)
    transfers = ev.per_memcg["usage_transfers"]
    levels = ev.per_memcg["walk_levels"]
    per_socket = _socket_counts(bt.trace.ops[bt.warmup_rows:], bt.topology["socket"])
    depth = {m: len(_ancestors(m, parents)) for m in under}
    shared_ids = sorted((m for m, s in under.items() if len(s) > 1), key=lambda m: (depth[m], m))
    where = {m: k for k, m in enumerate(ids)}
    moved = np.array([transfers[where[m]] if m in where else 0 for m in shared_ids], float)
    # walk levels are counted per walked leaf; each walk writes every counter above it
    written = np.zeros(len(shared_ids))
    for k, m in enumerate(shared_ids):
        below = members[m]
        written[k] = sum(levels[where[x]] / max(depth[x], 1) for x in below if x in where)
    private_ids = [m for m, s in under.items() if len(s) == 1]
    private = float(sum(transfers[where[m]] for m in private_ids if m in where))
    pcross = (float(np.mean([_socket_mix(per_socket, members[m]) for m in private_ids]))
              if private_ids else 0.0)
    names = tuple(f"usage:{bt.memcgs.get(m, str(m))}" if list(bt.memcgs.values()).count(
        bt.memcgs.get(m)) == 1 else f"usage:{m}" for m in shared_ids)
    return KernelCounts(
        design=design, operation=bt.operation, operations=nops, per_op=per_op, names=names,
        shared=moved / nops, writes=written / nops,
        cross=np.array([_socket_mix(per_socket, members[m]) for m in shared_ids]),
        sharers=np.array([len(under[m]) for m in shared_ids], dtype=np.int64),
        private=private / nops, private_cross=pcross, ids=tuple(shared_ids))
