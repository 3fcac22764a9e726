"""run_grid: a function over specs, serially, in a process pool, and resumable from a cache."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from memcglab.sweep import run_grid

from .points import Point, fail_on_three, walks

SPECS = [Point(slots, policy) for policy in ("random", "lru") for slots in (1, 2, 4)]
EXPECTED = pd.DataFrame({
    "slots": [1, 2, 4, 1, 2, 4],
    "policy": ["random"] * 3 + ["lru"] * 3,
    "walks": [16, 26, 46, 13, 23, 43],
})


def test_serial_runs_here_and_keeps_spec_order():
    df = run_grid(walks, SPECS)
    pd.testing.assert_frame_equal(df.drop(columns="pid"), EXPECTED)
    assert set(df["pid"]) == {os.getpid()}


def test_a_process_pool_gives_the_same_table_from_other_processes(spawnable):
    df = run_grid(walks, SPECS, workers=2)
    pd.testing.assert_frame_equal(df.drop(columns="pid"), EXPECTED)
    assert os.getpid() not in set(df["pid"])


def test_any_concurrent_futures_executor_works():
    with ThreadPoolExecutor(2) as pool:
        df = run_grid(walks, SPECS, pool)
    pd.testing.assert_frame_equal(df.drop(columns="pid"), EXPECTED)


def test_the_cache_skips_finished_points(tmp_path):
    calls = []

    def counted(spec):
        calls.append(spec)
        return walks(spec)

    first = run_grid(counted, SPECS[:4], cache_dir=tmp_path)
    assert len(calls) == 4 and len(list(tmp_path.glob("*.json"))) == 4
    df = run_grid(counted, SPECS, cache_dir=tmp_path)
    assert calls[4:] == SPECS[4:]  # only the two new points were computed
    pd.testing.assert_frame_equal(df.iloc[:4], first)
    pd.testing.assert_frame_equal(df.drop(columns="pid"), EXPECTED)


def test_the_cache_is_keyed_by_function_too(tmp_path):
    run_grid(walks, SPECS[:1], cache_dir=tmp_path)
    df = run_grid(fail_on_three, [{"slots": 1, "policy": "random"}], cache_dir=tmp_path)
    assert list(df.columns) == ["slots", "policy", "double"]


def test_a_failing_point_raises_naming_its_spec_and_keeps_the_finished_ones(tmp_path):
    specs = [{"slots": s} for s in (1, 2, 3)]
    with pytest.raises(ValueError, match="three is not allowed") as err:
        run_grid(fail_on_three, specs, cache_dir=tmp_path)
    assert "in run_grid, for spec {'slots': 3}" in err.value.__notes__[0]
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_results_must_be_mappings_of_scalars():
    with pytest.raises(TypeError, match="must be a mapping of names to scalars, not int"):
        run_grid(lambda spec: 3, [{"a": 1}])


def test_bad_executors_are_refused_by_name():
    with pytest.raises(TypeError, match="executor=42: must be None, a concurrent.futures"):
        run_grid(walks, SPECS, 42)
    with pytest.raises(ValueError, match="workers=0: must be at least 1"):
        run_grid(walks, SPECS, workers=0)
