"""The C benchmark: it ships with the package, builds, and its failures are reported."""

from __future__ import annotations

import shutil

import pytest

from memcglab.probe.bench import ProbeError, compile_bench, run_bench, source_text

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def test_the_source_ships_with_the_package():
    src = source_text()
    assert src.startswith("// SPDX-License-Identifier: GPL-2.0-only")
    assert "pthread_setaffinity_np" in src


@needs_gcc
def test_bench_modes_print_one_line_per_run(tmp_path):
    exe = compile_bench(tmp_path)
    lines = list(run_bench(exe, ["local", 0, 8192, 2]))
    assert [f[:2] for f in lines] == [["l1", "0"], ["rmw", "0"], ["atomic", "0"],
                                      ["l1", "1"], ["rmw", "1"], ["atomic", "1"]]
    assert all(float(f[2]) > 0 for f in lines)


@needs_gcc
def test_a_failing_run_is_a_probe_error(tmp_path):
    exe = compile_bench(tmp_path)
    with pytest.raises(ProbeError, match="benchmark nonsense 1 failed with status 2: usage"):
        list(run_bench(exe, ["nonsense", 1]))
    with pytest.raises(ProbeError, match="status 3: c2c_probe: pthread_setaffinity_np"):
        list(run_bench(exe, ["local", 100000, 8192, 1]))   # beyond CPU_SETSIZE
