"""The page_counter ``usage`` lines that walks write, and their transfers per message.

Every hierarchical walk (``page_counter_try_charge``, ``page_counter_uncharge``)
writes the ``usage`` cache line of each counter from the walked memcg up to the root.
The compiled engine counts, per memcg and so per counter (``per_memcg
["usage_transfers"]``, indexed by dense memcg), each write whose line another CPU
wrote last: a cache-to-cache transfer (:mod:`memcglab.engine`'s event conventions).

A line is *shared* when walks from two or more memcgs write it - the root's and
every common ancestor's - and *private* when only one memcg's walks do (a tenant's
own counter). In the netperf mix each memcg is one flow, so a private line moves
only between that flow's own CPUs, while a shared line is a resource all flows queue
for. :func:`line_counts` splits an engine run's transfers that way, per message.

>>> from memcglab.events import ChargeEvents
>>> ev = ChargeEvents.zeros(ncpus=2, nmemcgs=4)      # root 0, dir 1, tenants 2 and 3
>>> ev.memcg_ids[:] = [0, 1, 2, 3]
>>> ev.per_cpu["charges"][:] = [50, 50]
>>> ev.per_memcg["walks"][:] = [0, 0, 10, 12]
>>> ev.per_memcg["usage_transfers"][:] = [20, 20, 3, 4]
>>> c = line_counts(ev, {1: 0, 2: 1, 3: 1})
>>> c.names, c.shared.tolist(), c.private
(('usage:0', 'usage:1'), [0.2, 0.2], 0.07)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from memcglab.events import ChargeEvents
from memcglab.trace import OP_CGROUP, Trace

__all__ = ["LineCounts", "line_counts", "trace_parents"]

ROOT = 0  # the root memcg's ID in a trace (replay contract: parent 0 is the root)


@dataclass(frozen=True)
class LineCounts:
    """Usage-line transfers per message of one engine run.

    ``shared[i]`` is the transfers per message of the line ``names[i]`` (``usage:ID``
    for memcg ``ID``; the root first, then by depth), ``private`` the transfers per
    message summed over all private lines, ``messages`` the denominator (charges).
    """

    names: tuple[str, ...]
    shared: np.ndarray
    private: float
    messages: int


def trace_parents(trace: Trace) -> dict[int, int]:
    """Memcg ID -> parent ID from a trace's ``cgroup`` lines (the root, 0, has none).

    >>> from memcglab.trace import parse_text
    >>> trace_parents(parse_text("memcglab-trace 1\\ncpus 1\\ncgroup 1 0\\ncgroup 5 1\\n"))
    {1: 0, 5: 1}
    """
    rows = trace.ops[trace.ops["op"] == OP_CGROUP]
    return {int(m): int(p) for m, p in zip(rows["memcg"], rows["parent"], strict=True)}


def _chain(memcg: int, parents: Mapping[int, int]) -> list[int]:
    """``memcg`` and its ancestors up to the root, bottom-up."""
    out = [memcg]
    while out[-1] != ROOT:
        if out[-1] not in parents:
            raise ValueError(f"memcg {out[-1]}: no parent in parents; every memcg the run "
                             "walked needs its cgroup line (trace_parents(trace))")
        out.append(parents[out[-1]])
        if len(out) > len(parents) + 1:
            raise ValueError(f"parents: the chain from memcg {memcg} loops")
    return out


def line_counts(events: ChargeEvents, parents: Mapping[int, int],
                messages: int | None = None) -> LineCounts:
    """Split a run's usage-line transfers into shared lines and private ones, per message.

    ``parents`` maps memcg ID to parent ID (:func:`trace_parents`); ``messages``
    defaults to the run's charges (one per message in the netperf mix).
    """
    ids = [int(i) for i in events.memcg_ids]
    walks, transfers = events.per_memcg["walks"], events.per_memcg["usage_transfers"]
    n = int(events.totals()["charges"]) if messages is None else int(messages)
    if n <= 0:
        raise ValueError(f"messages={n}: must be > 0 (the run made no charges?)")
    writers: dict[int, set[int]] = {}
    for dense, memcg in enumerate(ids):
        if walks[dense] > 0:
            for line in _chain(memcg, parents):
                writers.setdefault(line, set()).add(memcg)
    depth = {m: len(_chain(m, parents)) if m != ROOT else 1 for m in writers}
    shared = sorted((m for m, w in writers.items() if len(w) > 1), key=lambda m: (depth[m], m))
    where = {memcg: dense for dense, memcg in enumerate(ids)}
    moved = np.array([transfers[where[m]] if m in where else 0 for m in shared], dtype=float)
    private = float(transfers.sum()) - float(moved.sum())
    return LineCounts(names=tuple(f"usage:{m}" for m in shared), shared=moved / n,
                      private=private / n, messages=n)
