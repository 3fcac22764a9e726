"""Collecting run records into the Parquet table."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from memcglab.models import KERNEL_VERSIONS
from memcglab.sweep.table import build_table, read_table, write_table


def rec(run_id, params, result, status="ok", error=None):
    return {"run_id": run_id, "status": status, "params": params, "result": result,
            "error": error, "duration_s": 1.0, "memcglab_version": "0.0.9",
            "notebook": "n.ipynb"}


def test_columns_rows_and_metadata(tmp_path):
    records = [
        rec("a", {"model": "multi", "slots": 1}, {"walks": 10, "ratio": 0.5}),
        rec("b", {"model": "pcstock", "slots": 2}, {}, "failed", "cell 3: ValueError: no"),
        rec("c", {"model": "multi-rr", "slots": 4}, {"walks": 30, "ratio": 0.25, "extra": "x"}),
    ]
    path = write_table(tmp_path / "results.parquet", build_table(records, ["model", "slots"], {}))
    table = pq.read_table(path)
    assert table.column_names == [
        "run_id", "status", "model", "slots", "walks", "ratio", "extra", "kernel_version",
        "memcglab_version", "duration_s", "error", "notebook"]
    rows = table.to_pylist()
    assert [r["run_id"] for r in rows] == ["a", "b", "c"]
    assert [r["walks"] for r in rows] == [10, None, 30]
    assert [r["kernel_version"] for r in rows] == [
        KERNEL_VERSIONS["multi"], KERNEL_VERSIONS["pcstock"], KERNEL_VERSIONS["multi-rr"]]
    assert rows[1]["error"] == "cell 3: ValueError: no" and rows[1]["status"] == "failed"
    assert rows[0]["memcglab_version"] == "0.0.9"  # the version that ran it, not this one
    meta = json.loads(table.schema.metadata[b"memcglab"])
    assert meta["kernel_versions"] == KERNEL_VERSIONS
    df = read_table(path)
    assert df.attrs["memcglab"] == meta and list(df["slots"]) == [1, 2, 4]


def test_model_comes_from_parameter_then_result_then_notebook_default():
    table = build_table([
        rec("p", {"model": "single"}, {"model": "multi"}),
        rec("r", {}, {"model": "multi-lru"}),
        rec("d", {}, {}),
        rec("u", {"model": "no-such-model"}, {}),
    ], [], {"model": "multi-fix2"})
    assert table.column("kernel_version").to_pylist() == [
        KERNEL_VERSIONS["single"], KERNEL_VERSIONS["multi-lru"], KERNEL_VERSIONS["multi-fix2"],
        None]
    assert table.column("result_model").to_pylist() == ["multi", None, None, None]


def test_a_result_mixing_types_across_runs_is_kept_as_text_with_a_warning():
    with pytest.warns(UserWarning, match="column 'v' mixes int, str across runs"):
        table = build_table([rec("a", {}, {"v": 1}), rec("b", {}, {"v": "high"})], [], {})
    assert table.column("v").to_pylist() == ["1", "high"]
