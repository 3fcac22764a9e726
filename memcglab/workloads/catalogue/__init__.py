"""The scenario contract's benchmark catalogue: every test of its "Workloads" table as a trace.

``build(BenchmarkSpec(...))`` turns a family, a test, the contract's keys, a cgroup
layout and a machine into a :class:`BenchmarkTrace`: the trace, what one benchmark
operation is and how many the trace represents, the memcgs and their roles, where
each instance's tasks and softirq work run, and the accounting rows the trace was
made of (``docs/accounting.md`` prints them). Each test's accounting is derived from
the benchmark's source and the kernel's (v6.18.19; ``sk_reclaim = "lazy"`` for the
socket code before v6.0), with the sources cited per row.

>>> bt = build(BenchmarkSpec("hackbench", "socket", {"groups": 2}, Machine(8, 1, 2),
...                          operations=400))
>>> bt.operation, bt.operations, sorted(bt.placement), bt.placement["sender"].shape
('message', 800, ['receiver', 'sender'], (2, 20))
"""

from memcglab.workloads.catalogue.build import BenchmarkTrace, build, default_operations
from memcglab.workloads.catalogue.rows import AccountingRow, Cite
from memcglab.workloads.catalogue.spec import (
    ALTERNATIVES,
    FAMILIES,
    LAYOUTS,
    MAX_TRACE_ROWS,
    BenchmarkSpec,
    Machine,
)
from memcglab.workloads.catalogue.tests import TESTS

__all__ = ["ALTERNATIVES", "FAMILIES", "LAYOUTS", "MAX_TRACE_ROWS", "TESTS", "AccountingRow",
           "BenchmarkSpec", "BenchmarkTrace", "Cite", "Machine", "build", "default_operations"]
