"""Build and drive the C microbenchmark ``c2c.c`` that ships with this package.

:func:`compile_bench` compiles it with the system C compiler into a directory the
caller owns; :func:`run_bench` runs one of its modes and yields the result lines as
they come (the benchmark flushes each one), so the caller can show progress. A
missing compiler, a failed build or a failed run is a :class:`ProbeError` whose
message says what to do.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

__all__ = ["ProbeError", "compile_bench", "run_bench", "source_text"]


class ProbeError(RuntimeError):
    """The probe cannot run here (no compiler, one CPU, a failed benchmark)."""


def source_text() -> str:
    """The C source of the benchmark, read from the installed package."""
    return resources.files("memcglab.probe").joinpath("c2c.c").read_text()


def compile_bench(workdir: Path, cc: str = "gcc") -> Path:
    """Compile ``c2c.c`` with ``cc`` into ``workdir``; return the executable's path."""
    compiler = shutil.which(cc)
    if compiler is None:
        raise ProbeError(f"C compiler {cc!r} not found on PATH; install gcc (Debian: "
                         "apt-get install gcc) or name another with --cc")
    src = Path(workdir) / "c2c.c"
    exe = Path(workdir) / "c2c_probe"
    src.write_text(source_text())
    cmd = [compiler, "-O2", "-pthread", "-o", str(exe), str(src)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise ProbeError(f"{cc} could not build the probe (x86-64 Linux with pthreads "
                         f"needed): {first}")
    return exe


def run_bench(exe: Path, args: Sequence[object]) -> Iterator[list[str]]:
    """Run ``exe args``; yield each output line split into fields, as it is printed."""
    cmd = [str(exe), *map(str, args)]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                yield line.split()
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait()
    if proc.returncode != 0:
        raise ProbeError(f"benchmark {' '.join(cmd[1:3])} failed with status "
                         f"{proc.returncode}: {err.strip() or 'no message'}")
