"""``memcglab probe --quick`` on this machine, and its one-line errors."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcglab.hardware import load_profile
from memcglab.probe import cli

pytestmark = pytest.mark.skipif(
    shutil.which("gcc") is None or len(os.sched_getaffinity(0)) < 2,
    reason="the probe needs gcc and two CPUs")


def _run(*argv: str) -> int:
    import argparse
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(["--no-progress", *argv]))


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "box.toml"
    # On a shared machine the probe can rightly refuse its own figures (exit 1, "a
    # measurement is implausible"); one retry, then the reason is reported as a skip.
    # Not for the clock: load only slows its chains, so a refused clock (chains that
    # disagree, or runs past the plausible range: the 15 GHz that CI once saw was the
    # immediate-add chain folded by the core, issue 21, not load) fails. Any other
    # failure (an exit 2 or 3, a traceback) fails the tests.
    errors = []
    for _attempt in range(2):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = _run("--quick", "--out", str(out), "--cpus", "0,1")
        if rc == 0:
            return out
        errors.append(err.getvalue().strip())
        assert rc == 1 and not out.exists(), f"memcglab probe exited {rc}: {errors[-1]}"
        assert "cpu_ghz" not in errors[-1], f"the probe's clock is broken: {errors[-1]}"
    pytest.skip("memcglab probe refused its measurements twice on this busy machine: "
                + " / ".join(errors))


def test_quick_probe_writes_a_profile_and_a_heatmap(probed):
    assert probed.is_file()
    png = probed.with_name("box-c2c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_probed_values_are_positive_and_ordered(probed):
    p = load_profile(probed)
    c = p.cost_params()
    assert p.cpus == os.cpu_count() and p.ghz > 0.2
    for name in ("l1_hit", "percpu_rmw", "atomic_rmw", "c2c_transfer"):
        assert getattr(c, name) > 0, name
        assert p.priors[name].source.startswith("memcglab probe"), name
    # a transfer between CPUs costs more than any access to a local line
    assert c.c2c_transfer > c.percpu_rmw and c.c2c_transfer > c.l1_hit
    assert c.atomic_rmw > c.percpu_rmw
    curve = p.curves["contended_rmw"]
    assert curve.x[:2] == (1, 2) and all(v > 0 for v in curve.typical)
    # the clock is the register-register add chain, its cross-check and the OS beside it
    clock = p.priors["cpu_ghz"].note
    assert clock.startswith("core clock from dependent register-register adds, one cycle "
                            "each (the clock used); cross-check: dependent 3-cycle imuls")
    assert "immediate adds read" in clock and ("OS: " in clock or "OS reports no" in clock)
    # unmeasured priors stay generic and are not written as overrides
    assert "call" not in p.overrides and p.priors["call"].source.startswith("Agner")


def test_probed_profile_round_trips_through_the_loader(probed, tmp_path):
    p = load_profile(probed)
    again = tmp_path / "again.toml"
    again.write_text(p.to_toml())
    assert load_profile(again) == p


def _errors(capsys) -> list[str]:
    err = capsys.readouterr().err
    return [line for line in err.splitlines() if line.strip()]


def test_missing_compiler_is_one_line_exit_2(tmp_path, capsys):
    assert _run("--quick", "--out", str(tmp_path / "x.toml"), "--cc", "no-such-cc") == 2
    (line,) = _errors(capsys)
    assert "C compiler 'no-such-cc' not found on PATH" in line
    assert not (tmp_path / "x.toml").exists()


def test_gcc_missing_from_path_is_one_line_exit_2(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty directory: no gcc
    done = subprocess.run([sys.executable, "-m", "memcglab", "probe", "--quick", "--no-progress",
                           "--out", str(tmp_path / "x.toml")], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "memcglab probe: error: C compiler 'gcc' not found on PATH; install gcc (Debian: "
        "apt-get install gcc) or name another with --cc"]


def test_one_cpu_is_one_line_exit_2(tmp_path, capsys):
    assert _run("--quick", "--out", str(tmp_path / "x.toml"), "--cpus", "0") == 2
    (line,) = _errors(capsys)
    assert line.startswith("memcglab probe: error: need two CPUs or more") and "(0)" in line


@pytest.mark.parametrize("cpus, message", [
    ("0-", "'0-' is not a CPU or a range like 0-3"),
    ("3-1", "'3-1' is not a CPU or a range"),
    ("0,4096", "CPU 4096 is not one this process may run on"),
])
def test_bad_cpu_list_is_one_line_exit_2(tmp_path, capsys, cpus, message):
    assert _run("--quick", "--out", str(tmp_path / "x.toml"), "--cpus", cpus) == 2
    (line,) = _errors(capsys)
    assert message in line


def test_a_compiler_that_fails_is_reported(tmp_path, capsys):
    assert _run("--quick", "--out", str(tmp_path / "x.toml"), "--cc", "false") == 2
    (line,) = _errors(capsys)
    assert "false could not build the probe" in line


def test_out_directory_fails_before_measuring(tmp_path, capsys):
    # "--cc no-such-cc" would fail at compile time: the directory error must come first
    assert _run("--quick", "--out", str(tmp_path), "--cc", "no-such-cc") == 2
    (line,) = _errors(capsys)
    assert f"--out {tmp_path}: is a directory; give a file name such as" in line
    assert str(tmp_path / "probe.toml") in line
    assert list(tmp_path.iterdir()) == []


def test_unwritable_out_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    import errno

    def no_space(path, write):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(cli, "compile_bench", lambda tmp, cc: tmp / "bench")
    monkeypatch.setattr(cli, "measure", lambda exe, cpus, plan, progress: object())
    monkeypatch.setattr(cli, "to_profile", lambda result, name: object())
    monkeypatch.setattr(cli, "atomic_write", no_space)
    out = tmp_path / "x.toml"
    assert _run("--quick", "--out", str(out), "--cpus", "0,1") == 2
    (line,) = _errors(capsys)
    assert line == (f"memcglab probe: error: --out {out}: cannot write "
                    f"({os.strerror(errno.ENOSPC)})")
    assert list(tmp_path.iterdir()) == []
