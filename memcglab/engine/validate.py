"""Chunked, compiled trace validation: the contract's rules, memcg IDs to dense indices.

The rules are those of :func:`memcglab.trace.validate`. One compiled pass over a
chunk checks every row and maps memcg IDs (up to 2^63-1) to dense indices in
creation order (the root, ID 0, is 0) through an open-addressing hash table. It
writes one ``int32`` column for the replay: the dense memcg of each operation, or,
for a ``cgroup`` row, the dense parent (the new memcg's own index is implicit: the
number of memcgs created before it).

At the first bad row the message comes from ``memcglab.trace.validate`` itself,
run on a short synthetic trace that rebuilds the checker's state (every memcg
created so far, the offlined ones offlined) and ends with the offending row, so
the engine raises the very ``TraceError`` the faithful replay raises, whatever its
wording, without re-checking a long prefix in Python.

>>> from memcglab.trace import make_ops, OP_CGROUP, OP_CHARGE, PAGE_COUNTER_MAX
>>> v = ChunkValidator(cpus=2, single=False, source="t")
>>> v.check(make_ops([(OP_CGROUP, -1, 10**18, PAGE_COUNTER_MAX, 0), (OP_CHARGE, 1, 10**18, 3)]))
array([0, 1], dtype=int32)
>>> v.ids
[0, 1000000000000000000]
>>> v.check(make_ops([(OP_CHARGE, 2, 10**18, 3)]))
Traceback (most recent call last):
...
memcglab.trace.TraceError: t:3: charge: cpu 2 out of range 0..1
"""

from __future__ import annotations

import numpy as np

from memcglab.engine.jit import kernel
from memcglab.trace import (
    MAX_CPUS,
    NR_MAX,
    OBJ_BYTES_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    STOCK_SLOTS_MAX,
    Trace,
    validate,
)

__all__ = ["ChunkValidator"]

_EMPTY = np.iinfo(np.int64).min  # hash slot marker; never a valid ID
_NR_MAX = np.uint64(NR_MAX)
_BYTES_MAX = np.uint64(OBJ_BYTES_MAX)


@kernel
def _find(keys, key):
    # Open addressing with linear probing; returns the slot of key or of the empty slot
    # where it would go. The table is never more than half full.
    mask = keys.shape[0] - 1
    h = key * -7046029254386353131  # 0x9E3779B97F4A7C15 as int64: wraps, which is fine
    i = (h ^ (h >> 29)) & mask
    while keys[i] != _EMPTY and keys[i] != key:
        i = (i + 1) & mask
    return i


@kernel
def _insert(keys, vals, key, val):
    i = _find(keys, key)
    keys[i] = key
    vals[i] = val


@kernel
def _lookup(keys, vals, key):
    if key == _EMPTY:
        return -1
    i = _find(keys, key)
    return vals[i] if keys[i] == key else -1


@kernel
def _rehash(old_keys, old_vals, keys, vals):
    for i in range(old_keys.shape[0]):
        if old_keys[i] != _EMPTY:
            _insert(keys, vals, old_keys[i], old_vals[i])


@kernel
def _check_rows(op, nested, irq, cpu, ids, pids, arg, cpus, single, max_memcgs, keys, vals,
                st, online, nchild, parent, by_dense, dense):
    # Validate rows in order; return the first row validate() would refuse, or -1.
    # st[0] is the number of memcgs created so far. State advances up to the bad row.
    for i in range(op.shape[0]):
        o = op[i]
        if o > OP_OBJ_UNCHARGE or (nested[i] and single):
            return i
        if irq[i] and not (o == OP_CHARGE or o == OP_UNCHARGE or o == OP_UNCHARGE_DIRECT
                           or o == OP_OBJ_CHARGE or o == OP_OBJ_UNCHARGE):
            return i
        if o == OP_CGROUP:
            p = _lookup(keys, vals, pids[i])
            if (ids[i] < 1 or _lookup(keys, vals, ids[i]) >= 0 or p < 0 or not online[p]
                    or arg[i] < 1):
                return i
            d = st[0]
            if max_memcgs >= 0 and d + 1 > max_memcgs:  # trace.check_per_memcg()
                return i
            st[0] = d + 1
            _insert(keys, vals, ids[i], d)
            by_dense[d] = ids[i]
            online[d] = 1
            parent[d] = p
            nchild[p] += 1
            dense[i] = p
            continue
        if o != OP_SET_MAX and o != OP_OFFLINE and not 0 <= cpu[i] < cpus:
            return i
        if o == OP_CPU_DEAD:
            dense[i] = 0
            continue
        d = _lookup(keys, vals, ids[i])
        if d < 0 or not online[d]:
            return i
        if o == OP_CHARGE or o == OP_UNCHARGE or o == OP_UNCHARGE_DIRECT:
            if (d == 0 and o == OP_CHARGE) or arg[i] < 1 or arg[i] > _NR_MAX:
                return i
        elif o == OP_OBJ_CHARGE or o == OP_OBJ_UNCHARGE:
            if (d == 0 and o == OP_OBJ_CHARGE) or arg[i] < 1 or arg[i] > _BYTES_MAX:
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
        dense[i] = d
    return -1


def _grown(a: np.ndarray, size: int, fill: int) -> np.ndarray:
    out = np.full(size, fill, dtype=a.dtype)
    out[:len(a)] = a
    return out


class ChunkValidator:
    """Validates a trace chunk by chunk, keeping the ID map and the checker's state."""

    def __init__(self, cpus: int, single: bool, source: str, per_memcg: str | None = None,
                 nodes: int = 1) -> None:
        self.cpus, self.single, self.source = cpus, single, source
        self.per_memcg, self.nodes = per_memcg, nodes
        self.keys = np.full(64, _EMPTY, dtype=np.int64)
        self.vals = np.zeros(64, dtype=np.int64)
        self.st = np.zeros(1, dtype=np.int64)
        self.online = np.zeros(16, dtype=np.uint8)
        self.nchild = np.zeros(16, dtype=np.int64)
        self.parent = np.full(16, -1, dtype=np.int64)
        self.by_dense = np.zeros(16, dtype=np.int64)
        self.rows = 0  # rows validated so far (global index of the next chunk's first row)
        if not 1 <= cpus <= MAX_CPUS:
            validate(Trace(cpus, np.zeros(0, dtype=OP_DTYPE), source), single=single)
        _insert(self.keys, self.vals, 0, 0)  # the root memcg
        self.online[0], self.st[0] = 1, 1

    @property
    def count(self) -> int:
        """Memcgs created so far, the root included."""
        return int(self.st[0])

    @property
    def ids(self) -> list[int]:
        """Memcg ID of each dense index."""
        return self.by_dense[:self.count].tolist()

    def check(self, ops: np.ndarray) -> np.ndarray:
        """Validate the next chunk; return its dense column, or raise the faithful TraceError."""
        self._reserve(self.count + int(np.count_nonzero(ops["op"] == OP_CGROUP)))
        dense = np.zeros(len(ops), dtype=np.int32)
        bad = _check_rows(ops["op"], ops["nested"], ops["irq"], ops["cpu"], ops["memcg"],
                          ops["parent"],
                          ops["arg"], self.cpus, self.single, self._max_memcgs(), self.keys,
                          self.vals, self.st,
                          self.online, self.nchild, self.parent, self.by_dense, dense)
        if bad >= 0:
            self._raise(ops[bad], self.rows + bad)
        self.rows += len(ops)
        return dense

    def _max_memcgs(self) -> int:
        # the most memcgs (root included) trace.check_per_memcg() allows, or -1 for no bound
        factor = {"cpus": self.cpus, "nodes": self.nodes}.get(self.per_memcg or "", 1)
        return STOCK_SLOTS_MAX // factor if factor > 1 else -1

    def _reserve(self, total: int) -> None:
        if 2 * total > len(self.keys):
            size = len(self.keys)
            while 2 * total > size:
                size *= 2
            keys, vals = np.full(size, _EMPTY, dtype=np.int64), np.zeros(size, dtype=np.int64)
            _rehash(self.keys, self.vals, keys, vals)
            self.keys, self.vals = keys, vals
        if total > len(self.online):
            size = max(total, 2 * len(self.online))
            self.online = _grown(self.online, size, 0)
            self.nchild = _grown(self.nchild, size, 0)
            self.parent = _grown(self.parent, size, -1)
            self.by_dense = _grown(self.by_dense, size, 0)

    def _raise(self, row: np.void, index: int) -> None:
        ids, n = self.ids, self.count
        synth = [(OP_CGROUP, False, -1, ids[d], ids[self.parent[d]], PAGE_COUNTER_MAX, 0,
                  False) for d in range(1, n)]
        synth += [(OP_OFFLINE, False, -1, ids[d], -1, 0, 0, False)
                  for d in range(n - 1, 0, -1) if not self.online[d]]
        op, nested, cpu, memcg, parent, arg, line, irq = row.tolist()
        synth.append((op, nested, cpu, memcg, parent, arg, line or index + 1, irq))
        validate(Trace(self.cpus, np.array(synth, dtype=OP_DTYPE), self.source, self.nodes),
                 single=self.single, per_memcg=self.per_memcg)
        raise RuntimeError(f"{self.source}: engine validator refused row {index} "
                           f"({row.tolist()}) but memcglab.trace.validate accepts it; "
                           "please report")
