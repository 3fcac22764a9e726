"""A new user's first commands, timed from a new virtual environment.

    python benchmarks/cold_start.py [--work DIR] [--reuse-deps] [--scenario FILE]

Builds memcglab's wheel from this checkout, installs it (not editable) into a new
virtual environment, and from an empty directory, with every cache of memcglab's
empty (numba's, the compiled core's, the calibration folds'), times:

1. ``memcglab replay <example.trace> --model multi --engine compiled``: the first
   compiled replay of the shipped 10-line trace, compile included;
2. the same command again (warm);
3. with every cache emptied again, ``memcglab predict <scenario>``: the first prediction
   of one shipped scenario (default ``data/scenarios/study06/tcp_rr-72cpu-multi_vs_v4.toml``),
   compile included;
4. the same prediction again (warm).

Each line prints wall seconds and the peak resident memory of the command (from
``getrusage`` of the child). ``--reuse-deps`` skips downloading memcglab's
dependencies: the new environment installs only the wheel (``--no-deps``) and sees
the running interpreter's site-packages through a ``.pth`` file, so the figures
measure memcglab's own cold start, not pip's. The issue's goals (issue 21): the
first replay in at most 10 s, the first predict in at most 30 s, on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "data/scenarios/study06/tcp_rr-72cpu-multi_vs_v4.toml"


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of this child alone and its stdout; exits on a failure."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{err.read()[-2000:]}")
        return seconds, usage.ru_maxrss / 1024, out.read()


def build_env(work: Path, reuse_deps: bool) -> Path:
    """The wheel built and installed into ``work/venv``; return its bin directory."""
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist),
                    str(ROOT)], check=True)
    wheel = next(dist.glob("memcglab-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    pip = [str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "-q"]
    if reuse_deps:
        subprocess.run([*pip, "--no-deps", str(wheel)], check=True)
        purelib = subprocess.run([str(work / "venv" / "bin" / "python"), "-c",
                                  "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
        Path(purelib, "memcglab-cold-start-deps.pth").write_text("\n".join(deps) + "\n")
    else:
        subprocess.run([*pip, str(wheel)], check=True)
    return work / "venv" / "bin"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep the wheel and venv here "
                        "(default: a temporary directory, removed afterwards)")
    parser.add_argument("--reuse-deps", action="store_true",
                        help="install only the wheel; dependencies from this interpreter")
    parser.add_argument("--scenario", default=SCENARIO,
                        help=f"scenario file, relative to the checkout (default {SCENARIO})")
    args = parser.parse_args()
    scenario = (ROOT / args.scenario).resolve()
    if not scenario.is_file():
        sys.exit(f"--scenario {args.scenario}: no such file")
    work = args.work.resolve() if args.work else Path(tempfile.mkdtemp(prefix="cold-start-"))
    try:
        t0 = time.perf_counter()
        bindir = build_env(work, args.reuse_deps)
        print(f"wheel built and installed in {time.perf_counter() - t0:.0f} s ({work})")
        empty = Path(tempfile.mkdtemp(prefix="cold-start-cwd-", dir=work))
        caches = work / "caches"
        shutil.rmtree(caches, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "MEMCGLAB_"))}
        env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
                   HOME=str(caches / "home"), XDG_CACHE_HOME=str(caches / "xdg"),
                   MEMCGLAB_CACHE=str(caches / "memcglab"),
                   NUMBA_CACHE_DIR=str(caches / "numba"))
        example = run([str(bindir / "python"), "-c",
                       "from memcglab.resources import example_trace; print(example_trace())"],
                      empty, env)[2].strip()
        replay = [str(bindir / "memcglab"), "replay", example, "--model", "multi",
                  "--engine", "compiled"]
        predict = [str(bindir / "memcglab"), "predict", str(scenario)]
        print(f"{'command':<40} {'seconds':>8} {'peak MB':>8}")
        for label, cmd in (("replay example.trace (cold)", replay),
                           ("replay example.trace (warm)", replay),
                           ("predict one scenario (cold)", predict),
                           ("predict one scenario (warm)", predict)):
            if "cold" in label:  # every cache empty again: a new user's first command
                shutil.rmtree(caches, ignore_errors=True)
            seconds, peak, _ = run(cmd, empty, env)
            print(f"{label:<40} {seconds:8.1f} {peak:8.0f}", flush=True)
        print(f"scenario: {args.scenario}; {os.cpu_count()} CPUs")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
