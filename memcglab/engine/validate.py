"""Chunked, compiled trace validation: the contract's rules, memcg IDs to dense indices.

The compiled pass is C (``memcglab/engine/native/validate.c``, built with the engine's
C core by :mod:`memcglab.engine.native`); :class:`ChunkValidator` owns its arrays and
raises the errors. The rules are those of :func:`memcglab.trace.validate`. One compiled pass over a
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

from memcglab.engine import native
from memcglab.trace import (
    MAX_CPUS,
    OP_CGROUP,
    OP_DTYPE,
    OP_OFFLINE,
    PAGE_COUNTER_MAX,
    STOCK_SLOTS_MAX,
    Trace,
    validate,
)

__all__ = ["ChunkValidator"]

EMPTY_KEY = np.iinfo(np.int64).min  # hash slot marker; never a valid ID (validate.c)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


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
        self.keys = np.full(64, EMPTY_KEY, dtype=np.int64)
        self.vals = np.zeros(64, dtype=np.int64)
        self.st = np.zeros(1, dtype=np.int64)
        self.online = np.zeros(16, dtype=np.uint8)
        self.nchild = np.zeros(16, dtype=np.int64)
        self.parent = np.full(16, -1, dtype=np.int64)
        self.by_dense = np.zeros(16, dtype=np.int64)
        self.rows = 0  # rows validated so far (global index of the next chunk's first row)
        if not 1 <= cpus <= MAX_CPUS:
            validate(Trace(cpus, np.zeros(0, dtype=OP_DTYPE), source), single=single)
        self._lib = native.load()
        self._lib.insert_key(_ptr(self.keys), _ptr(self.vals), len(self.keys), 0, 0)  # the root
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
        if ops.dtype != OP_DTYPE or ops.ndim != 1:
            raise TypeError(f"chunk must be a 1-D OP_DTYPE array, not {ops.dtype}")
        bad = self._lib.check_rows(
            _ptr(ops), ops.strides[0] if len(ops) else OP_DTYPE.itemsize, len(ops), self.cpus,
            self.single, self._max_memcgs(), _ptr(self.keys), _ptr(self.vals), len(self.keys),
            _ptr(self.st), _ptr(self.online), _ptr(self.nchild), _ptr(self.parent),
            _ptr(self.by_dense), _ptr(dense))
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
            keys = np.full(size, EMPTY_KEY, dtype=np.int64)
            vals = np.zeros(size, dtype=np.int64)
            self._lib.rehash(_ptr(self.keys), _ptr(self.vals), len(self.keys), _ptr(keys),
                             _ptr(vals), size)
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
                  False, 0) for d in range(1, n)]
        synth += [(OP_OFFLINE, False, -1, ids[d], -1, 0, 0, False, 0)
                  for d in range(n - 1, 0, -1) if not self.online[d]]
        op, nested, cpu, memcg, parent, arg, line, irq, kmem = row.tolist()
        synth.append((op, nested, cpu, memcg, parent, arg, line or index + 1, irq, kmem))
        validate(Trace(self.cpus, np.array(synth, dtype=OP_DTYPE), self.source, self.nodes),
                 single=self.single, per_memcg=self.per_memcg)
        raise RuntimeError(f"{self.source}: engine validator refused row {index} "
                           f"({row.tolist()}) but memcglab.trace.validate accepts it; "
                           "please report")
