"""Atomic writers: the old file or the new one, never half of one, never a stray temp."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memcglab.results import atomic_write, read_json, write_json_atomic, write_parquet_atomic


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"v": 1})

    def half_then_fail(f):
        f.write(b'{"v": ')
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert read_json(path) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_replacing_a_file_and_writing_parquet(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"v": 1})
    write_json_atomic(path, {"v": 2, "a": "é"})
    assert read_json(path) == {"a": "é", "v": 2}
    assert path.read_text().endswith("}\n")
    pq_path = write_parquet_atomic(tmp_path / "t.parquet", pa.table({"x": [1.5, None]}))
    assert pq.read_table(pq_path).column("x").to_pylist() == [1.5, None]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "t.parquet"]
