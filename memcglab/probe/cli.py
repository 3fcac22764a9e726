"""``memcglab probe``: measure this machine's cost parameters and write its profile.

Examples::

    memcglab probe --quick                 # a few seconds; CI runs it
    memcglab probe --out box.toml          # every CPU pair, more runs: minutes on big boxes
    memcglab probe --cpus 0-3,8 --cc clang

Compiles the C microbenchmark that ships with memcglab (``c2c.c``) with the system C
compiler, pins its threads to the allowed CPUs (``os.sched_getaffinity``) and measures
the core clock (a chain of dependent register-register adds, one cycle each,
cross-checked against a chain of 3-cycle imuls and compared with what the OS
reports), an L1 load, a local read-modify-write, an uncontended ``lock xadd``,
the one-way cache-line transfer latency of every CPU pair, and the throughput of
atomic adds on one line as 1..N threads share it. Every value is the median of
repeated runs with its interquartile range. The result is a machine profile
(``memcglab.hardware``) whose measured values are narrow priors, written atomically
to ``--out``, and the pair heatmap beside it (``OUT-c2c.png``).

A user error (no compiler, fewer than two CPUs, a bad ``--cpus`` list, an ``--out``
that is a directory or cannot be written) exits with status 2 and one line on stderr;
a measurement outside the plausible range of its parameter (a machine too busy to
measure), or clock chains that disagree by more than 10%, exits with status 1,
writing nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

from memcglab.hardware import HardwareDataError
from memcglab.probe.bench import ProbeError, compile_bench
from memcglab.probe.heatmap import heatmap_png
from memcglab.probe.measure import FULL, QUICK, ProbeResult, measure, total_lines
from memcglab.probe.toprofile import to_profile
from memcglab.results import atomic_write

__all__ = ["add_arguments", "parse_cpus", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The probe's options."""
    parser.add_argument("--quick", action="store_true",
                        help="few iterations and runs: seconds, not minutes (noisier)")
    parser.add_argument("--out", type=Path, default=Path("memcglab-probe.toml"),
                        help="profile to write (default: %(default)s); the heatmap goes "
                        "beside it as OUT-c2c.png")
    parser.add_argument("--cpus", metavar="LIST",
                        help="CPUs to probe, e.g. 0-3,8 (default: every CPU this process "
                        "may run on)")
    parser.add_argument("--cc", default="gcc", help="C compiler (default: %(default)s)")
    parser.add_argument("--name", default="probed", help="profile name (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_cpus(text: str | None, allowed: set[int]) -> list[int]:
    """The CPU list ``text`` (``0-3,8``), checked against ``allowed``; all of them if None.

    >>> parse_cpus("0-2,5", {0, 1, 2, 3, 5})
    [0, 1, 2, 5]
    >>> parse_cpus("7", {0, 1})
    Traceback (most recent call last):
    ...
    ValueError: --cpus 7: CPU 7 is not one this process may run on (allowed: 0-1)
    """
    if text is None:
        return sorted(allowed)
    out: set[int] = set()
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m or (m[2] and int(m[2]) < int(m[1])):
            raise ValueError(f"--cpus {text}: {part!r} is not a CPU or a range like 0-3")
        out |= set(range(int(m[1]), int(m[2] or m[1]) + 1))
    bad = sorted(out - allowed)
    if bad:
        raise ValueError(f"--cpus {text}: CPU {bad[0]} is not one this process may run on "
                         f"(allowed: {_ranges(sorted(allowed))})")
    return sorted(out)


def _ranges(cpus: list[int]) -> str:
    out, start = [], None
    for i, c in enumerate(cpus):
        start = c if start is None else start
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(f"{start}-{c}" if c != start else str(c))
            start = None
    return ",".join(out)


def _clock_versus(r: ProbeResult) -> str:
    """The clock used, the cross-check chain and the OS's figure, for the summary line."""
    imul = f"imul chain {r.imul_ghz.median:.2f} GHz" if r.imul_ghz else "no imul chain"
    if not r.os_ghz:
        return f"register-register add chain; {imul}; the OS reports no clock"
    src, os_ghz = max(r.os_ghz.items(), key=lambda kv: kv[1])
    return (f"register-register add chain; {imul}; OS {src} {os_ghz:.2f} GHz, "
            f"{r.core_ghz.median / os_ghz:.2f}x")


def _fail(msg: str) -> int:
    print(f"memcglab probe: error: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Measure, write the profile and the heatmap; 0 on success, 2 on a user error."""
    try:
        cpus = parse_cpus(args.cpus, set(os.sched_getaffinity(0)))
    except ValueError as e:
        return _fail(str(e))
    if len(cpus) < 2:
        return _fail(f"need two CPUs or more to measure transfers between them; this process "
                     f"may use {len(cpus)} ({_ranges(cpus)})")
    plan = QUICK if args.quick else FULL
    out = Path(args.out)
    if not out.parent.is_dir():
        return _fail(f"--out {out}: directory {out.parent} does not exist")
    if out.is_dir():
        return _fail(f"--out {out}: is a directory; give a file name such as {out / 'probe.toml'}")
    t0 = time.monotonic()
    bar = tqdm(total=total_lines(len(cpus), plan), unit="run", desc="probe",
               disable=args.no_progress, file=sys.stderr)
    try:
        with tempfile.TemporaryDirectory(prefix="memcglab-probe-") as tmp:
            exe = compile_bench(Path(tmp), args.cc)
            result = measure(exe, cpus, plan,
                             lambda what, n: (bar.set_postfix_str(what, refresh=False),
                                              bar.update(n)))
    except ProbeError as e:
        return _fail(str(e))
    finally:
        bar.close()
    try:
        profile = to_profile(result, name=args.name)
    except HardwareDataError as e:
        print(f"memcglab probe: error: a measurement is implausible (a very busy machine?): "
              f"{e}", file=sys.stderr)
        return 1
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", out.stem).lstrip("._-") or "probe"
    try:
        atomic_write(out, lambda f: f.write(profile.to_toml().encode()))
        png = heatmap_png(result, out.parent / f"{stem}-c2c")
    except OSError as e:
        return _fail(f"--out {out}: cannot write ({e.strerror or e})")
    c = profile.cost_params()
    print(f"wrote {out} and {png} in {time.monotonic() - t0:.1f} s: core clock "
          f"{result.core_ghz.median:.2f} GHz ({_clock_versus(result)}); l1_hit "
          f"{c.l1_hit:.1f}, percpu_rmw "
          f"{c.percpu_rmw:.1f}, atomic_rmw {c.atomic_rmw:.1f}, c2c_transfer "
          f"{c.c2c_transfer:.0f} cycles")
    return 0
