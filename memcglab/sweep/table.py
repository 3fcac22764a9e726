"""Collect run records into one Parquet table: one row per run.

Columns, in order: ``run_id``, ``status`` (``ok``/``failed``), the swept parameters
(in ``-p`` order), the notebook's recorded results (in order of first appearance),
``kernel_version`` (what the run's model ports, from
:data:`memcglab.models.KERNEL_VERSIONS`), ``memcglab_version`` (of the code that
executed the run), ``duration_s``, ``error`` and ``notebook``. A result whose name
clashes with one of these gets a ``result_`` prefix (:func:`merge_row`).

The run's model is its ``model`` parameter if swept, else the ``model`` it recorded,
else the notebook's default for ``model``; a run with none has a null
``kernel_version``. The whole mapping of models to kernels, and the collector's
version, are stored in the Parquet schema metadata under ``b"memcglab"``.

>>> rec = {"run_id": "ab", "status": "ok", "params": {"model": "multi", "slots": 7},
...        "result": {"walks": 3}, "error": None, "duration_s": 1.5,
...        "memcglab_version": "0.1.0", "notebook": "n.ipynb"}
>>> build_table([rec], ["model", "slots"], {}).to_pylist()[0]["kernel_version"]
'v6.16 (6.18.y 312d9602fe3e)'
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

import memcglab
from memcglab.models import KERNEL_VERSIONS
from memcglab.results import write_parquet_atomic
from memcglab.sweep.sidecar import merge_row

__all__ = ["META_COLUMNS", "TABLE_FILE", "build_table", "read_table", "write_table"]

TABLE_FILE = "results.parquet"
META_COLUMNS = (
    "run_id", "status", "kernel_version", "memcglab_version", "duration_s", "error", "notebook",
)


def _kernel_version(params: Mapping[str, Any], result: Mapping[str, Any],
                    defaults: Mapping[str, Any]) -> str | None:
    model = params.get("model", result.get("model", defaults.get("model")))
    return KERNEL_VERSIONS.get(model) if isinstance(model, str) else None


def _column(name: str, values: list[Any]) -> pa.Array:
    """An Arrow column; a column mixing types (a notebook bug) is kept as text, with a warning."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        warnings.warn(
            f"column {name!r} mixes {', '.join(kinds)} across runs; stored as text",
            stacklevel=3,
        )
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def build_table(
    records: Sequence[Mapping[str, Any]], param_names: Sequence[str],
    defaults: Mapping[str, Any],
) -> pa.Table:
    """Build the table from ``run.json`` records (in the order rows should appear)."""
    rows = []
    result_names: dict[str, None] = {}  # insertion-ordered set
    for rec in records:
        params, result = rec["params"], rec.get("result") or {}
        row = merge_row(params, result, reserved=META_COLUMNS)
        result_names.update((k, None) for k in row if k not in params)
        row.update(
            run_id=rec["run_id"], status=rec["status"],
            kernel_version=_kernel_version(params, result, defaults),
            memcglab_version=rec.get("memcglab_version"), duration_s=rec.get("duration_s"),
            error=rec.get("error"), notebook=rec.get("notebook"),
        )
        rows.append(row)
    order = ["run_id", "status", *param_names, *result_names, *META_COLUMNS[2:]]
    columns = {name: _column(name, [r.get(name) for r in rows]) for name in order}
    meta = {"memcglab_version": memcglab.__version__, "kernel_versions": dict(KERNEL_VERSIONS)}
    return pa.table(columns).replace_schema_metadata({"memcglab": json.dumps(meta)})


def write_table(path: str | os.PathLike[str], table: pa.Table) -> Path:
    """Write ``table`` to ``path`` atomically (a killed collector leaves the old table)."""
    return write_parquet_atomic(path, table)


def read_table(path: str | os.PathLike[str]) -> Any:
    """Read a sweep table as a pandas DataFrame (``df.attrs["memcglab"]`` holds the metadata)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    df = table.to_pandas()
    raw = (table.schema.metadata or {}).get(b"memcglab")
    df.attrs["memcglab"] = json.loads(raw) if raw else {}
    return df
