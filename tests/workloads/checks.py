"""Checks every generated trace must pass, shared by the workload tests."""

from __future__ import annotations

import numpy as np

from memcglab.trace import Trace, parse_text, to_text, validate
from memcglab.workloads.describe import held_range, pages_by_memcg

COLUMNS = ("op", "nested", "cpu", "memcg", "parent", "arg")  # all but the line number


def same_ops(a: Trace, b: Trace) -> bool:
    return a.cpus == b.cpus and len(a.ops) == len(b.ops) and all(
        np.array_equal(a.ops[c], b.ops[c]) for c in COLUMNS)


def assert_contract(trace: Trace) -> None:
    """Valid by the replay contract, and the same after a trip through the text format."""
    validate(trace)
    back = parse_text(to_text(trace))
    assert same_ops(trace, back)


def assert_conserved(trace: Trace, most: int | None = None) -> None:
    """Every memcg releases exactly what it charged, never more than it holds, and
    holds at most ``most`` pages at any time."""
    for memcg, (charged, released) in pages_by_memcg(trace).items():
        assert charged == released, f"memcg {memcg}: charged {charged}, released {released}"
    for memcg, (low, high) in held_range(trace).items():
        assert low == 0, f"memcg {memcg} releases before it charges"
        if most is not None:
            assert high <= most, f"memcg {memcg} holds {high} > {most} pages"
