"""record_result: the notebook side of the sidecar convention."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memcglab.sweep.sidecar import check_scalars, merge_row, record_result


def test_record_result_writes_plain_json_atomically(tmp_path):
    path = record_result(tmp_path / "run", {"walks": np.int64(12), "ratio": np.float64(0.25),
                                            "ok": np.bool_(True), "model": "multi",
                                            "missing": None, "inf": float("inf")})
    assert path == tmp_path / "run" / "result.json"
    assert json.loads(path.read_text()) == {"walks": 12, "ratio": 0.25, "ok": True,
                                            "model": "multi", "missing": None,
                                            "inf": float("inf")}
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]


def test_record_result_by_hand_checks_but_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert record_result("", {"walks": 1}) is None
    assert record_result(None, {"walks": 1}) is None
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="result 'curve'="):
        record_result("", {"curve": np.arange(3)})


@pytest.mark.parametrize("values, message", [
    ({"xs": [1, 2]}, "result 'xs'=[1, 2]: a recorded result must be a scalar"),
    ({"d": {"a": 1}}, "result 'd'={'a': 1}: a recorded result must be a scalar"),
    ({1: 2}, "result key 1: must be a non-empty str"),
    ({"": 2}, "result key '': must be a non-empty str"),
    ([("a", 1)], "results [('a', 1)]: must be a mapping of names to scalars, not list"),
])
def test_non_scalars_are_refused_by_name(values, message):
    with pytest.raises(TypeError) as err:
        check_scalars(values)
    assert message in str(err.value)


def test_results_that_clash_with_parameters_or_reserved_names_are_prefixed():
    assert merge_row({"slots": 7}, {"slots": 8, "status": "x", "walks": 1},
                     reserved=("status",)) == {
        "slots": 7, "result_slots": 8, "result_status": "x", "walks": 1}
