"""The sweep layer's bounds: every input whose size multiplies, checked before anything runs.

A sweep's cost is a product: the values of every ``-p`` list multiply into runs, each
run is a notebook and a Jupyter kernel (a few hundred MB while it runs), every worker
holds one of those at a time, and every run leaves a directory and a table row of what
its notebook recorded. Each factor gets a bound here, and each refusal names the inputs
and the limit, before a file is written:

>>> grid = {"slots": list(range(1, 256)), "memcgs": list(range(1, 65))}
>>> check_grid_size(grid, flag="-p ")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: -p slots 1,2,...,255 (255 values) x -p memcgs 1,2,...,64 (64 values) = 16320 runs ...
>>> check_grid_size({"slots": [1, 7], "policy": ["random", "lru"]})
4
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_GRID_POINTS", "MAX_RESULT_BYTES", "MAX_RESULT_KEYS", "MAX_RUNS", "MAX_TIMEOUT_S",
    "WORKERS_PER_CPU", "check_grid_size", "check_result_size", "check_timeout", "check_workers",
    "max_workers",
]

#: runs (notebook executions) in one sweep: each is a kernel start, a directory and a row.
#: Ten thousand runs of the shortest study take hours on a large machine.
MAX_RUNS = 10_000
#: points of one :func:`memcglab.sweep.run_grid` call (each a row, and with a cache a file)
MAX_GRID_POINTS = 100_000
#: worker processes per CPU, and never fewer than MIN_WORKER_LIMIT in all: each worker runs
#: one notebook in a Jupyter kernel of its own, so workers beyond the CPUs only queue for
#: them while each holds its memory
WORKERS_PER_CPU = 4
MIN_WORKER_LIMIT = 8
#: seconds one run may be given (a week); beyond it the limit is no limit at all
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: what one run's record_result may hold: every name is a table column, every byte is
#: stored once per run (the studies record 25-150 names, 5-40 KB)
MAX_RESULT_KEYS = 1000
MAX_RESULT_BYTES = 1 << 20


def _values(values: Sequence[Any]) -> str:
    shown = [str(v) for v in values]
    if len(shown) <= 3:
        return ",".join(shown)
    return f"{shown[0]},{shown[1]},...,{shown[-1]} ({len(shown)} values)"


def check_grid_size(grid: Mapping[str, Sequence[Any]], flag: str = "") -> int:
    """The number of runs of ``grid`` (the product of its value lists), at most MAX_RUNS.

    Computed from the list lengths, so an oversized grid is refused before it is
    expanded; ``flag`` prefixes each name in the message (``"-p "`` on the command line).
    """
    runs = math.prod(len(v) for v in grid.values())
    if runs > MAX_RUNS:
        product = " x ".join(f"{flag}{name} {_values(v)}" for name, v in grid.items())
        raise ValueError(f"{product} = {runs} runs exceeds the limit of {MAX_RUNS} runs per "
                         f"sweep; sweep fewer values")
    return runs


def max_workers() -> int:
    """The most worker processes on this machine: WORKERS_PER_CPU per CPU, at least 8."""
    return max(MIN_WORKER_LIMIT, WORKERS_PER_CPU * (os.cpu_count() or 1))


def check_workers(workers: int, flag: str = "workers=") -> int:
    """``workers`` if it is between 1 and :func:`max_workers`; else ValueError naming both.

    >>> check_workers(2)
    2
    """
    limit = max_workers()
    if not 1 <= workers <= limit:
        raise ValueError(
            f"{flag}{workers}: must be between 1 and {limit} on this machine "
            f"({WORKERS_PER_CPU} per CPU, {os.cpu_count() or 1} CPUs, at least "
            f"{MIN_WORKER_LIMIT}); each worker runs a notebook in a Jupyter kernel of its own")
    return workers


def check_timeout(seconds: float, flag: str = "timeout=") -> float:
    """``seconds`` if it is positive and at most MAX_TIMEOUT_S (a week); else ValueError.

    >>> check_timeout(float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: timeout=inf: must be a positive number of seconds, at most 604800 (a week)
    """
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise ValueError(f"{flag}{seconds:g}: must be a positive number of seconds, at most "
                         f"{MAX_TIMEOUT_S:g} (a week)")
    return seconds


def check_result_size(keys: int, size: int) -> None:
    """Refuse a run result of more than MAX_RESULT_KEYS names or MAX_RESULT_BYTES of JSON.

    >>> check_result_size(2000, 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: record_result: 2000 results; at most 1000 per run (each is a column of the ...
    """
    bulk = "record summaries and write bulk data to files in output_dir"
    if keys > MAX_RESULT_KEYS:
        raise ValueError(f"record_result: {keys} results; at most {MAX_RESULT_KEYS} per run "
                         f"(each is a column of the sweep's table); {bulk}")
    if size > MAX_RESULT_BYTES:
        raise ValueError(f"record_result: the results take {size} bytes as JSON; at most "
                         f"{MAX_RESULT_BYTES} per run (the sweep's table keeps every run's); "
                         f"{bulk}")
