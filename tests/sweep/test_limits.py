"""Every input of the sweep layer whose size multiplies is bounded, before anything runs."""

from __future__ import annotations

import itertools
import json
import os

import pytest

from memcglab.cli import main
from memcglab.sweep import record_result, run_grid
from memcglab.sweep.executors import iter_completed
from memcglab.sweep.limits import (
    MAX_RESULT_BYTES,
    MAX_RESULT_KEYS,
    MAX_RUNS,
    check_grid_size,
    max_workers,
)
from memcglab.sweep.params import ParameterError, check_grid
from memcglab.sweep.runner import _read_result
from memcglab.sweep.spec import expand_grid

from .conftest import SWEEP_NOTEBOOK


def test_the_grid_bound_is_the_product_of_the_lists_and_names_each():
    assert check_grid_size({"a": list(range(100)), "b": list(range(100))}) == MAX_RUNS
    with pytest.raises(ValueError) as err:
        check_grid_size({"a": list(range(100)), "b": list(range(100)), "c": [1, 2]})
    assert str(err.value) == ("a 0,1,...,99 (100 values) x b 0,1,...,99 (100 values) x c 1,2 "
                              "= 20000 runs exceeds the limit of 10000 runs per sweep; sweep "
                              "fewer values")


def test_expand_grid_refuses_an_oversized_grid_before_expanding_it():
    # 10^18 runs: expanding them would never end
    grid = {name: list(range(1000)) for name in "abcdef"}
    with pytest.raises(ValueError, match=r"= 1000000000000000000 runs exceeds the limit"):
        expand_grid("n.ipynb", grid)


def test_the_command_line_grid_is_refused_before_a_value_is_converted():
    # 'x' is no int, but the size is what is wrong first, and it is said with -p
    slots = ",".join(["x", *map(str, range(1, 200))])
    with pytest.raises(ParameterError) as err:
        check_grid(SWEEP_NOTEBOOK, [("slots", slots), ("scale", ",".join(map(str, range(60))))])
    assert str(err.value).startswith("-p slots x,1,...,199 (200 values) x -p scale 0,1,...,59 "
                                     "(60 values) = 12000 runs exceeds the limit of 10000")


def test_an_oversized_sweep_writes_nothing(tmp_path, capsys):
    values = ",".join(map(str, range(1, 10_002)))
    assert main(["sweep", str(SWEEP_NOTEBOOK), "-p", "slots", values, "--out",
                 str(tmp_path / "out"), "--no-progress"]) == 2
    assert "= 10001 runs exceeds the limit of 10000" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_pool_larger_than_the_bound_is_refused():
    items = list(range(max_workers() + 1))
    with pytest.raises(ValueError, match=rf"workers={len(items)}: must be between 1 and "
                                         rf"{max_workers()} on this machine"):
        list(iter_completed(abs, items, workers=len(items)))
    # more workers than items start only as many as there are items
    assert sorted(v for _, v, _ in iter_completed(abs, [-1, 2], workers=10**6)) == [1, 2]


def test_run_grid_counts_its_specs_without_reading_them_all():
    endless = ({"x": i} for i in itertools.count())
    with pytest.raises(ValueError, match="run_grid: more than 100000 specs; at most 100000"):
        run_grid(lambda s: s, endless)


def test_record_result_bounds_names_and_bytes_and_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match=rf"record_result: {MAX_RESULT_KEYS + 1} results; at "
                                         rf"most {MAX_RESULT_KEYS} per run"):
        record_result(tmp_path, {f"k{i}": i for i in range(MAX_RESULT_KEYS + 1)})
    with pytest.raises(ValueError, match=rf"record_result: the results take \d+ bytes as JSON; "
                                         rf"at most {MAX_RESULT_BYTES} per run"):
        record_result(tmp_path, {"text": "x" * MAX_RESULT_BYTES})
    assert os.listdir(tmp_path) == []
    assert record_result(tmp_path, {f"k{i}": i for i in range(MAX_RESULT_KEYS)}).exists()


def test_a_result_file_written_by_hand_is_bounded_too(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps({"text": "x" * (3 * MAX_RESULT_BYTES)}))
    result, error = _read_result(tmp_path)
    assert result == {} and error.startswith("result.json: ") and "bytes; at most" in error
    (tmp_path / "result.json").write_text(json.dumps({"text": "x" * (MAX_RESULT_BYTES + 10)}))
    assert "the results take" in _read_result(tmp_path)[1]
