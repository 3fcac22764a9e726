"""Resume: a sweep killed mid-way, run again, executes each run exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from memcglab.sweep.runner import load_record, run_dir, sweep
from memcglab.sweep.spec import expand_grid

from .conftest import SWEEP_NOTEBOOK

GRID_ARGS = ["-p", "slots", "1,2,3,4", "-p", "sleep_s", "1"]


def command(out: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "memcglab.cli", "sweep", str(SWEEP_NOTEBOOK), *GRID_ARGS,
            "--out", str(out), "--workers", str(workers), "--no-progress"]


def start_sweep(out: Path) -> subprocess.Popen:
    cmd = command(out, workers=2)
    # A session of its own, so the kill takes the pool workers and kernels with it, as a
    # terminal's Ctrl-\ or a batch system's SIGKILL to the job would.
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finished(out: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in (out / "runs").glob("*/run.json")}


def test_a_killed_sweep_resumes_without_rerunning_or_duplicating(tmp_path):
    out = tmp_path / "out"
    proc = start_sweep(out)
    try:
        deadline = time.monotonic() + 90
        while len(finished(out)) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the sweep never finished two runs"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    before = finished(out)
    assert 2 <= len(before) < 4
    assert not (out / "results.parquet").exists()

    # the same grid, run serially this time: the run ids do not depend on the executor
    rerun = subprocess.run(command(out, workers=1), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert (f"4 runs: {len(before)} already done, {4 - len(before)} executed, 0 failed"
            in rerun.stdout)
    after = finished(out)
    assert {k: after[k] for k in before} == before  # finished runs were not executed again
    rows = pq.read_table(out / "results.parquet").to_pylist()
    specs = expand_grid(SWEEP_NOTEBOOK.name, {"slots": [1, 2, 3, 4], "sleep_s": [1.0]})
    assert [r["run_id"] for r in rows] == [s.run_id for s in specs]  # each once, grid order
    assert [r["slots"] for r in rows] == [1, 2, 3, 4]
    assert all(r["status"] == "ok" and r["walks"] == 10 * r["slots"] + 6 for r in rows)
    leftovers = [p for p in (out / "runs").rglob("*")
                 if p.is_file() and p.name not in ("notebook.ipynb", "result.json", "run.json")]
    assert leftovers == []  # no temporary files left behind


def test_an_unfinished_run_is_cleared_and_executed_again(tmp_path):
    out = tmp_path / "out"
    grid = {"slots": [1, 2]}
    first = sweep(SWEEP_NOTEBOOK, grid, out, progress=False)
    assert (first.skipped, first.executed) == (0, 2)
    spec = first.specs[1]
    # what a kill between the notebook's record_result and the run's commit leaves behind
    (run_dir(out, spec) / "run.json").unlink()
    (run_dir(out, spec) / "result.json").write_text('{"walks": -1}')
    second = sweep(SWEEP_NOTEBOOK, grid, out, progress=False)
    assert (second.skipped, second.executed) == (1, 1)
    assert load_record(run_dir(out, spec))["result"]["walks"] == 26
    assert load_record(run_dir(out, first.specs[0])) == first.records[0]
