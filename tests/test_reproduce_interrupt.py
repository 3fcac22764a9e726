"""Ctrl-C stops `memcglab reproduce` within seconds: one line, no traceback, nothing written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import nbformat
import pytest


def sleeper(path):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python",
                                  "name": "python3"}}
    params = nbformat.v4.new_code_cell('quick: bool = False\noutput_dir: str = ""')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("import time\ntime.sleep(120)")]
    nbformat.write(nb, path)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_reproduce_cleanly(tmp_path, signum):
    books = tmp_path / "notebooks"
    books.mkdir()
    sleeper(books / "01_sleep.ipynb")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "memcglab", "reproduce", "--notebooks",
                             str(books), "--only", "01", "--out", str(out), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(out.glob(".reproduce-*/01_sleep")):
        time.sleep(0.2)  # wait until the notebook runs
    time.sleep(3.0)
    sent = time.monotonic()
    os.kill(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signum, stderr
    assert took < 20, took
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "stopped by" in lines[0] and "nothing was written" in lines[0]
    assert not (out / "report.md").exists() and not list(out.glob(".reproduce-*"))
