"""``memcglab sweep`` end to end: refusals that write nothing, runs, failures, timeouts."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pyarrow.parquet as pq
import pytest

from memcglab.cli import main
from memcglab.models import KERNEL_VERSIONS
from memcglab.resources import notebooks_dir

from .conftest import SWEEP_NOTEBOOK, make_notebook, read_run

NB = str(SWEEP_NOTEBOOK)
DECLARED = str(SWEEP_NOTEBOOK.with_name("sweep_declared.ipynb"))


def sweep(*args: str) -> int:
    return main(["sweep", *args, "--no-progress"])


@pytest.mark.parametrize("args, message", [
    ([NB, "-p", "slots", "1,abc"], "slots=abc: not an int (e.g. 7)"),
    ([NB, "-p", "slot", "1"], "unknown parameter 'slot' for sweep_fixture.ipynb "
                              "(did you mean 'slots'?); valid: fail (bool), model"),
    ([NB, "-p", "quick", "perhaps"], "quick=perhaps: not a bool; valid are true"),
    ([NB, "-p", "output_dir", "x"], "output_dir: set by the sweep itself"),
    ([NB, "-p", "slots", "1,1"], "slots: value 1 is given twice"),
    (["missing.ipynb"], "notebook 'missing.ipynb': no such file"),
    (["notes.txt"], "notebook 'notes.txt': expected a .ipynb file"),
    ([NB, "--workers", "0"], "--workers 0: must be between 1 and "),
    ([NB, "--workers", "100000"], "--workers 100000: must be between 1 and "),
    ([NB, "--timeout", "0"], "--timeout 0: must be a positive number of seconds, at most 604800"),
    ([NB, "--timeout", "inf"], "--timeout inf: must be a positive number of seconds"),
    ([NB, "-p", "slots", ",".join(map(str, range(1, 256))), "-p", "scale",
      ",".join(map(str, range(64)))],
     "-p slots 1,2,...,255 (255 values) x -p scale 0,1,...,63 (64 values) = 16320 runs "
     "exceeds the limit of 10000 runs per sweep"),
    ([DECLARED, "-p", "policy", "random,lru"], "policy: sweep_declared.ipynb does not let a "
                                               "sweep set it: every run compares random and LRU"),
    ([NB, "--kernel", "nope"], "--kernel nope: no such Jupyter kernel; valid: python3"),
    ([str(notebooks_dir() / "02_policy_and_slots.ipynb"), "-p", "profile", "cray-1"],
     "profile=cray-1: hardware profile 'cray-1': no file "),
])
def test_mistakes_exit_2_with_one_clear_line_and_write_nothing(
        tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert sweep(*args, "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert err.startswith("memcglab sweep: error: ") and message in err
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_an_out_path_that_is_a_file_is_refused_untouched(tmp_path, capsys):
    out = tmp_path / "results"
    out.write_text("keep me")
    assert sweep(NB, "--out", str(out)) == 2
    assert "--out " in capsys.readouterr().err
    assert out.read_text() == "keep me" and list(tmp_path.iterdir()) == [out]


def test_a_sweep_writes_notebooks_sidecars_and_one_row_per_run(tmp_path, capsys):
    out = tmp_path / "out"
    args = [NB, "-p", "policy", "random,lru", "-p", "slots", "1,2", "-p", "model", "multi",
            "--out", str(out), "--workers", "1"]
    assert sweep(*args) == 0
    assert "4 runs: 0 already done, 4 executed, 0 failed" in capsys.readouterr().out
    table = pq.read_table(out / "results.parquet")
    rows = table.to_pylist()
    assert [(r["policy"], r["slots"], r["walks"]) for r in rows] == [
        ("random", 1, 16), ("random", 2, 26), ("lru", 1, 13), ("lru", 2, 23)]
    assert {r["status"] for r in rows} == {"ok"}
    assert {r["kernel_version"] for r in rows} == {KERNEL_VERSIONS["multi"]}
    assert table.column_names[:4] == ["run_id", "status", "policy", "slots"]
    for r in rows:
        run = out / "runs" / r["run_id"]
        assert sorted(p.name for p in run.iterdir()) == ["notebook.ipynb", "result.json",
                                                         "run.json"]
        assert f"walks={r['walks']}" in (run / "notebook.ipynb").read_text()
        assert read_run(out, r["run_id"])["params"] == {
            "model": "multi", "policy": r["policy"], "slots": r["slots"]}
    # the same command again: nothing to do, the same rows
    assert sweep(*args) == 0
    assert "4 runs: 4 already done, 0 executed, 0 failed" in capsys.readouterr().out
    assert pq.read_table(out / "results.parquet").to_pylist() == rows


def test_failed_runs_get_a_row_with_the_error_and_are_retried_next_time(tmp_path, capsys):
    out = tmp_path / "out"
    args = [NB, "-p", "fail", "false,true", "--out", str(out), "--workers", "1"]
    assert sweep(*args) == 1
    captured = capsys.readouterr()
    assert "2 runs: 0 already done, 2 executed, 1 failed" in captured.out
    assert "ValueError: asked to fail with slots=7" in captured.err
    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert [(r["fail"], r["status"], r["walks"]) for r in rows] == [
        (False, "ok", 76), (True, "failed", None)]
    assert rows[1]["error"].endswith("ValueError: asked to fail with slots=7")
    assert (out / "runs" / rows[1]["run_id"] / "notebook.ipynb").exists()
    assert sweep(*args) == 1
    assert "2 runs: 1 already done, 1 executed, 1 failed" in capsys.readouterr().out


def test_the_timeout_bounds_the_whole_run_not_each_cell(tmp_path, capsys):
    nb = make_notebook(tmp_path / "slow.ipynb", 'output_dir = ""',
                       "import time\ntime.sleep(1.2)", "time.sleep(1.2)", "time.sleep(1.2)",
                       "from memcglab.sweep import record_result\n"
                       "record_result(output_dir, {'done': True})")
    out = tmp_path / "out"
    assert sweep(str(nb), "--out", str(out), "--timeout", "2.5", "--workers", "1") == 1
    (row,) = pq.read_table(out / "results.parquet").to_pylist()
    assert row["status"] == "failed"
    assert row["error"] == "timeout: the run exceeded its 2.5 s budget"
    assert row["duration_s"] < 10


def test_a_notebook_that_records_nothing_fails_with_the_convention_spelled_out(tmp_path, capsys):
    nb = make_notebook(tmp_path / "mute.ipynb", 'output_dir = ""', "x = 1")
    assert sweep(str(nb), "--out", str(tmp_path / "out"), "--workers", "1") == 1
    assert "without calling memcglab.sweep.record_result(output_dir, {...})" in (
        capsys.readouterr().err)


def test_every_run_gets_an_absolute_output_dir_whatever_out_was(tmp_path, monkeypatch):
    # papermill runs the notebook in its own folder: a relative path would land there
    monkeypatch.chdir(tmp_path)
    assert sweep(NB, "-p", "slots", "3", "--out", "rel/out", "--workers", "1") == 0
    (run,) = (tmp_path / "rel" / "out" / "runs").iterdir()
    nb = nbformat.read(run / "notebook.ipynb", as_version=4)
    (injected,) = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert f'output_dir = "{run}"\n' in injected.source + "\n"
    assert Path(run).is_absolute()


def test_ctrl_c_while_the_grid_is_checked_is_one_line_and_130(tmp_path, capsys, monkeypatch):
    import memcglab.sweep.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_validate", interrupted)
    assert sweep(NB, "--out", str(tmp_path / "out")) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("memcglab sweep: stopped by SIGINT; ")
    assert list(tmp_path.iterdir()) == []


def test_the_resume_command_repeats_the_grid_with_absolute_paths(tmp_path, monkeypatch):
    import argparse
    import os

    from memcglab.sweep.cli import resume_command

    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(params=[["slots", "1,7"], ["profile", "a b"]], out=Path("o"),
                              scheduler=None, workers=(os.cpu_count() or 1) + 1, timeout=600.0,
                              kernel="python3", no_progress=False)
    assert resume_command(args, "02_policy_and_slots") == (
        f"memcglab sweep 02_policy_and_slots -p slots 1,7 -p profile 'a b' --out {tmp_path}/o "
        f"--workers {args.workers}")  # not the default: said
    (tmp_path / "mine.ipynb").write_text("{}")
    args.scheduler, args.timeout = "tcp://h:8786", 60.0
    assert resume_command(args, "mine.ipynb").startswith(
        f"memcglab sweep {tmp_path}/mine.ipynb -p slots 1,7")
    assert resume_command(args, "mine.ipynb").endswith(
        "--scheduler tcp://h:8786 --timeout 60")
