"""Chunked trace validation for the engine: memcg IDs to dense indices, compiled checks.

The rules are those of :func:`memcglab.trace.validate` (the contract's). A compiled
pass finds the first operation that breaks one; the message then comes from
``memcglab.trace.validate`` itself, run on a short synthetic trace that rebuilds the
validator's state (every memcg created so far, the offlined ones offlined) and ends
with the offending row, so the engine raises the very ``TraceError`` the faithful
replay raises, whatever its wording, without re-checking a long prefix in Python.

Memcg IDs (up to 2^63-1) map to dense indices in creation order (the root, ID 0,
is index 0) through sorted arrays and ``np.searchsorted``, chunk by chunk.

>>> from memcglab.trace import make_ops, OP_CGROUP, OP_CHARGE, PAGE_COUNTER_MAX
>>> v = ChunkValidator(cpus=2, single=False, source="t")
>>> v.check(make_ops([(OP_CGROUP, -1, 10**18, PAGE_COUNTER_MAX, 0), (OP_CHARGE, 1, 10**18, 3)]))
>>> v.ids
[0, 1000000000000000000]
>>> v.check(make_ops([(OP_CHARGE, 2, 10**18, 3)]))
Traceback (most recent call last):
...
memcglab.trace.TraceError: t:3: charge: cpu 2 out of range 0..1
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memcglab.trace import (
    MAX_CPUS,
    NR_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    Trace,
    validate,
)

__all__ = ["IdMap", "ChunkValidator"]

_LATER = np.iinfo(np.int64).max  # "created after every row of this chunk"


class IdMap:
    """Memcg ID -> dense index, for IDs created in earlier chunks (root 0 -> 0)."""

    def __init__(self) -> None:
        self.keys = np.zeros(1, dtype=np.int64)
        self.dense = np.zeros(1, dtype=np.int64)

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """Dense index of each ID, or -1 for an unknown one."""
        pos = np.searchsorted(self.keys, ids)
        pos[pos == len(self.keys)] = 0
        return np.where(self.keys[pos] == ids, self.dense[pos], -1)

    def add(self, ids: np.ndarray, dense: np.ndarray) -> None:
        keys = np.concatenate([self.keys, ids])
        order = np.argsort(keys, kind="stable")
        self.keys, self.dense = keys[order], np.concatenate([self.dense, dense])[order]


@njit(cache=True)
def _check_rows(op, nested, cpu, ids, dm, cm, dp, cp, arg, cpus, single, online, nchild,
                parent):
    # Index of the first row that validate() would refuse, or -1; state advances up to it.
    for i in range(op.shape[0]):
        o = op[i]
        if o > OP_OFFLINE or (nested[i] and single):
            return i
        d = dm[i]
        known = d >= 0 and cm[i] < i
        if o == OP_CGROUP:
            p = dp[i]
            if ids[i] < 1 or known or p < 0 or cp[i] >= i or not online[p] or arg[i] < 1:
                return i
            online[d] = 1
            parent[d] = p
            nchild[p] += 1
            continue
        if o != OP_SET_MAX and o != OP_OFFLINE and not 0 <= cpu[i] < cpus:
            return i
        if o == OP_CPU_DEAD:
            continue
        if not known or not online[d]:
            return i
        if o == OP_CHARGE or o == OP_UNCHARGE or o == OP_UNCHARGE_DIRECT:
            if (d == 0 and o == OP_CHARGE) or arg[i] < 1 or arg[i] > NR_MAX:
                return i
        elif o == OP_SET_MAX:
            if d == 0 or arg[i] < 1:
                return i
        elif o == OP_OFFLINE:
            if d == 0 or nchild[d]:
                return i
            online[d] = 0
            nchild[parent[d]] -= 1
        elif o != OP_DRAIN_ALL:
            return i
    return -1


class ChunkValidator:
    """Validates a trace chunk by chunk, keeping the ID map and the checker's state."""

    def __init__(self, cpus: int, single: bool, source: str) -> None:
        self.cpus, self.single, self.source = cpus, single, source
        self.idmap = IdMap()
        self.ids: list[int] = [0]  # dense index -> memcg ID
        self.online = np.ones(1, dtype=np.uint8)
        self.nchild = np.zeros(1, dtype=np.int64)
        self.parent = np.full(1, -1, dtype=np.int64)
        self.rows = 0  # rows validated so far (global index of the next chunk's first row)
        if not 1 <= cpus <= MAX_CPUS:
            validate(Trace(cpus, np.zeros(0, dtype=OP_DTYPE), source), single=single)

    def check(self, ops: np.ndarray) -> None:
        """Validate the next chunk; raise the faithful ``TraceError`` at its first bad row."""
        n = len(ops)
        ids, pids = ops["memcg"], ops["parent"]
        rows = np.arange(n, dtype=np.int64)
        dm = self.idmap.lookup(ids)
        cm = np.where(dm >= 0, -1, _LATER)
        cg = np.flatnonzero(ops["op"] == OP_CGROUP)
        dp = np.full(n, -1, dtype=np.int64)
        cp = np.full(n, _LATER, dtype=np.int64)
        dp[cg] = self.idmap.lookup(pids[cg])
        cp[cg] = np.where(dp[cg] >= 0, -1, _LATER)
        # this chunk's creations: the first cgroup row of each ID not created earlier
        fresh = cg[dm[cg] < 0]
        keys, first = np.unique(ids[fresh], return_index=True)
        first_rows = fresh[first]
        rank = np.empty(len(keys), dtype=np.int64)
        rank[np.argsort(first_rows)] = np.arange(len(keys))
        dense = len(self.ids) + rank
        if len(keys):
            for col_d, col_c, col_ids, where in ((dm, cm, ids, rows), (dp, cp, pids, cg)):
                miss = where[col_d[where] < 0]
                pos = np.minimum(np.searchsorted(keys, col_ids[miss]), len(keys) - 1)
                hit = keys[pos] == col_ids[miss]
                col_d[miss[hit]] = dense[pos[hit]]
                col_c[miss[hit]] = first_rows[pos[hit]]
        total = len(self.ids) + len(keys)
        self._grow(total)
        bad = _check_rows(ops["op"], ops["nested"], ops["cpu"], ids, dm, cm, dp, cp, ops["arg"],
                          self.cpus, self.single, self.online, self.nchild, self.parent)
        order = np.argsort(first_rows)
        if bad >= 0:
            made = order[first_rows[order] < bad]
            self._raise(ops[bad], self.rows + bad, [int(k) for k in keys[made]])
        self.ids.extend(int(k) for k in keys[order])
        self.idmap.add(keys, dense)
        self.rows += n

    def dense(self, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Dense memcg and parent columns of an already validated chunk."""
        dm = self.idmap.lookup(ops["memcg"])
        dp = np.where(ops["op"] == OP_CGROUP, self.idmap.lookup(ops["parent"]), 0)
        return dm, dp

    def _grow(self, total: int) -> None:
        have = len(self.online)
        if total > have:
            extra = total - have
            self.online = np.concatenate([self.online, np.zeros(extra, dtype=np.uint8)])
            self.nchild = np.concatenate([self.nchild, np.zeros(extra, dtype=np.int64)])
            self.parent = np.concatenate([self.parent, np.full(extra, -1, dtype=np.int64)])

    def _raise(self, row: np.void, index: int, made_here: list[int]) -> None:
        ids = self.ids + made_here
        synth = [(OP_CGROUP, False, -1, ids[d], ids[self.parent[d]], PAGE_COUNTER_MAX, 0)
                 for d in range(1, len(ids))]
        synth += [(OP_OFFLINE, False, -1, ids[d], -1, 0, 0)
                  for d in range(len(ids) - 1, 0, -1) if not self.online[d]]
        bad = tuple(row.tolist())
        synth.append(bad[:-1] + (bad[-1] or index + 1,))
        validate(Trace(self.cpus, np.array(synth, dtype=OP_DTYPE), self.source),
                 single=self.single)
        raise RuntimeError(f"{self.source}: engine validator refused row {index} "
                           f"({bad}) but memcglab.trace.validate accepts it; please report")
