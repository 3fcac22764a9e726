"""Batch sweeps: run a notebook, or a function, over a parameter grid; collect a table.

Two entry points share one set of executors (serial, local process pool, or a Dask
cluster) and one resume rule (finished work is written atomically and skipped on
the next start):

* ``memcglab sweep NOTEBOOK -p NAME V1,V2 ... --out DIR`` (:func:`sweep`) executes a
  notebook with papermill once per point of the cartesian product of the ``-p``
  lists, and writes ``DIR/results.parquet`` (layout in :mod:`memcglab.sweep.runner`,
  columns in :mod:`memcglab.sweep.table`);
* :func:`run_grid` runs a picklable function over a list of specs inside a notebook
  and returns a DataFrame (:mod:`memcglab.sweep.grid`).

The sidecar convention (what a swept notebook must do)
-------------------------------------------------------
1. Its ``parameters`` cell (the cell tagged ``parameters``) declares typed,
   commented defaults, including these two::

       output_dir = ""      # str: set by the sweep; "" when run by hand
       quick: bool = False  # smaller problem sizes, for CI and smoke runs

   Annotate every parameter a sweep may set (``slots: int = 7``); papermill reads
   ``Optional[int]`` but not ``int | None``, and stops reading a line whose comment
   holds an ``=``. The sweep refuses, before running anything, names the notebook
   does not declare, values that do not convert to the declared type (int, float,
   bool, str, Optional of them), grids over :mod:`memcglab.sweep.limits`, and
   parameters the notebook ignores or overrides: one no other code cell names, and
   what its ``memcglab.sweep`` metadata excludes (:mod:`memcglab.sweep.declared`:
   the parameters a sweep may ``vary``, the ``fixed`` ones and why, the ones a
   condition such as ``quick`` ``overrides``).
2. At its end it calls, once::

       from memcglab.sweep import record_result
       record_result(output_dir, {"walks": walks, "hit_ratio": hit_ratio, ...})

   with scalars only (int, float, bool, str, None; numpy scalars are fine). The
   values are written atomically to ``output_dir/result.json`` and become the
   run's row in the table; with ``output_dir == ""`` nothing is written. A notebook
   that runs several models records a ``model`` value (or takes a ``model``
   parameter) so its row gets the right ``kernel_version``.
3. It runs in the kernel named explicitly by the sweep (``python3``, from
   ipykernel), with the notebook's own directory as the working directory (the
   ``output_dir`` the sweep passes is absolute), and must finish within the run
   timeout (the whole notebook, not one cell).

Ctrl-C or SIGTERM stops a sweep within seconds and keeps what finished
(:mod:`memcglab.sweep.interrupt`); the same command resumes it.

A run is a :class:`RunSpec` (notebook file name + parameters); its ``run_id``, a
stable hash, names its directory, so the same command run again skips finished runs.
"""

from __future__ import annotations

from typing import Any

from memcglab.sweep.grid import run_grid
from memcglab.sweep.params import ParameterError, check_grid
from memcglab.sweep.runner import SweepSummary, sweep
from memcglab.sweep.sidecar import record_result
from memcglab.sweep.spec import RunSpec, expand_grid

__all__ = [
    "ParameterError", "RunSpec", "SweepSummary", "check_grid", "expand_grid", "read_table",
    "record_result", "run_grid", "sweep",
]


def __getattr__(name: str) -> Any:
    # read_table needs pyarrow; notebooks that only call record_result should not pay for it.
    if name == "read_table":
        from memcglab.sweep.table import read_table

        return read_table
    raise AttributeError(f"module 'memcglab.sweep' has no attribute {name!r}")
