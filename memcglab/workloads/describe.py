"""Shapes of a trace: the statistics the generators' parameters control.

These read any :class:`~memcglab.trace.Trace` (generated or parsed) with whole-array
numpy, so notebooks can show what a workload looks like before replaying it, and
the tests can check that each parameter moves the statistic it is meant to move.

>>> from memcglab.trace import parse_text
>>> t = parse_text("memcglab-trace 1\\ncpus 2\\ncgroup 1 0\\ncgroup 2 0\\n"
...                "charge 0 1 3\\ncharge 0 2 1\\nuncharge 1 1 3\\nuncharge 0 2 1\\n")
>>> remote_release_fraction(t), memcgs_per_cpu(t).tolist(), switch_fraction(t)
(0.5, [2, 0], 1.0)
>>> pages_by_memcg(t)
{1: (3, 3), 2: (1, 1)}
>>> held_range(t)
{1: (0, 3), 2: (0, 1)}
"""

from __future__ import annotations

import numpy as np

from memcglab.trace import OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, Trace

__all__ = [
    "held_range",
    "memcgs_per_cpu",
    "pages_by_memcg",
    "remote_release_fraction",
    "switch_fraction",
]

_RELEASES = (OP_UNCHARGE, OP_UNCHARGE_DIRECT)


def _rows(trace: Trace, codes: tuple[int, ...]) -> np.ndarray:
    return trace.ops[np.isin(trace.ops["op"], codes)]


def pages_by_memcg(trace: Trace) -> dict[int, tuple[int, int]]:
    """memcg -> (pages charged, pages asked to release) over the whole trace."""
    ops = _rows(trace, (OP_CHARGE, *_RELEASES))
    out: dict[int, tuple[int, int]] = {}
    charge = ops["op"] == OP_CHARGE
    for memcg in np.unique(ops["memcg"]).tolist():
        mine = ops["memcg"] == memcg
        out[memcg] = (int(ops["arg"][mine & charge].sum()), int(ops["arg"][mine & ~charge].sum()))
    return out


def held_range(trace: Trace) -> dict[int, tuple[int, int]]:
    """memcg -> (fewest, most) pages it held (charged, not yet released) over the trace.

    The running balance starts at 0 for every memcg. A negative minimum means a
    release before its charge, which the replay clips as ``short_uncharges``; the
    generators never produce one.
    """
    ops = _rows(trace, (OP_CHARGE, *_RELEASES))
    sign = np.where(ops["op"] == OP_CHARGE, 1, -1) * ops["arg"].astype(np.int64)
    order = np.argsort(ops["memcg"], kind="stable")
    memcg, running = ops["memcg"][order], sign[order]
    if not len(memcg):
        return {}
    starts = np.flatnonzero(np.r_[True, memcg[1:] != memcg[:-1]])
    total = np.cumsum(running)
    before = np.r_[0, total][starts]
    held = total - np.repeat(before, np.diff(np.r_[starts, len(memcg)]))
    low = np.minimum(np.minimum.reduceat(held, starts), 0)
    high = np.maximum.reduceat(held, starts)
    return {int(m): (int(lo), int(hi)) for m, lo, hi in zip(memcg[starts], low, high, strict=True)}


def remote_release_fraction(trace: Trace) -> float:
    """Fraction of releases on another CPU than the memcg's latest charge before them.

    Meaningful where a memcg charges on one CPU at a time (a flow's softirq CPU, a
    task's CPU); for a memcg charged on several CPUs at once, compare traces instead.
    """
    ops = _rows(trace, (OP_CHARGE, *_RELEASES))
    order = np.argsort(ops["memcg"], kind="stable")
    memcg, cpu = ops["memcg"][order], ops["cpu"][order]
    is_charge = ops["op"][order] == OP_CHARGE
    # Index of the latest charge at or before each row, carried forward.
    last = np.maximum.accumulate(np.where(is_charge, np.arange(len(memcg)), -1))
    release = ~is_charge & (last >= 0)
    release &= memcg[np.maximum(last, 0)] == memcg
    if not release.any():
        return 0.0
    return float(np.mean(cpu[release] != cpu[last[release]]))


def memcgs_per_cpu(trace: Trace, op: int = OP_CHARGE) -> np.ndarray:
    """Number of distinct memcgs with at least one ``op`` operation, per CPU."""
    ops = trace.ops[trace.ops["op"] == op]
    pairs = np.unique(ops["cpu"].astype(np.int64) * (2**40) + ops["memcg"])
    return np.bincount((pairs // 2**40).astype(np.int64), minlength=trace.cpus)


def switch_fraction(trace: Trace) -> float:
    """Fraction of charges whose memcg differs from the previous charge on the same CPU.

    What a single-memcg stock would see: each such charge finds another memcg cached.
    """
    ops = trace.ops[trace.ops["op"] == OP_CHARGE]
    order = np.argsort(ops["cpu"], kind="stable")
    cpu, memcg = ops["cpu"][order], ops["memcg"][order]
    same_cpu = cpu[1:] == cpu[:-1]
    if not same_cpu.any():
        return 0.0
    return float(np.mean(memcg[1:][same_cpu] != memcg[:-1][same_cpu]))
