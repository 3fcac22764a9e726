"""No generator runs Python code per operation.

Timing is machine-dependent, so this counts instead: the Python lines the
generators execute must not grow with the trace length. A loop over operations
would add lines in proportion; numpy's work happens in C and adds none.
(Generation speed itself is measured by ``python -m memcglab.workloads.bench``.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import memcglab.workloads as workloads
from memcglab.workloads import generate

PACKAGE = str(Path(workloads.__file__).parent)


def _lines_executed(name: str, params: dict) -> int:
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        generate(name, **params)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize("name, length, short, long", [
    ("netperf_rx", "messages", 2_000, 64_000),
    ("madvise_fault", "iterations", 2, 64),
    ("synthetic", "charges_per_cpu", 500, 16_000),
    ("mremap_pageout", "duration", 0.002, 0.064),
])
def test_python_work_does_not_grow_with_the_trace(name, length, short, long):
    base = {"madvise_fault": {"region_pages": 64, "trials": 2},
            "netperf_rx": {"migration_rate": 0.05}}.get(name, {})
    few = _lines_executed(name, {**base, length: short})
    many = _lines_executed(name, {**base, length: long})
    assert few > 0
    # 32 times the operations; allow a few lines for a rare wider redraw of migrations.
    assert many <= few + 20, f"{name}: {few} lines for {short}, {many} for {long}"
