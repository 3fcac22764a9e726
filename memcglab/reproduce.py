"""``memcglab reproduce``: run every study notebook, collect the results, write the report.

Runs the study notebooks (``NN_*.ipynb`` for each number in ``EXPECTED``) with their
default parameters (plus ``quick=True`` with ``--quick``) through papermill, one run
of :func:`memcglab.sweep.runner.execute_run` each (kernel ``python3``, a time limit per
notebook), and writes into ``--out``::

    OUT/report.md, OUT/report.html   the measured claims first, predictions, exact facts,
                                     sources, then each study (memcglab.report)
    OUT/counts.md, OUT/counts.html   the appendix page: every exact count, per study
    OUT/results.parquet              one row per notebook: its sidecar scalars
    OUT/counts.parquet               one row per count (memcglab.report.counts_table)
    OUT/claims.parquet               one row per claim (memcglab.report.claims_table)
    OUT/NN_name/                     the executed notebook, result.json, run.json, PNGs

Everything is built in a staging directory inside ``OUT`` and moved into place
when all notebooks have finished (files by ``os.replace``, study directories by
rename), so an interrupted run leaves the previous results whole. Mistakes a user
can make (an --out that cannot be written, a bad option, no ``python3`` kernel)
exit with status 2 and one line on standard error, before anything is written.
Exit status 1 means some notebook failed (the report says which); 0 means all ran.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import memcglab
from memcglab.resources import notebooks_dir

__all__ = ["EXPECTED", "NOTEBOOKS_DIR", "UsageError", "add_arguments", "discover", "run"]

#: the studies of DESIGN.md, by number prefix
EXPECTED = ("01", "02", "03", "04", "05", "06", "07")
#: the shipped study notebooks (inside an installed wheel; notebooks/ in a checkout)
NOTEBOOKS_DIR = notebooks_dir()
KERNEL = "python3"


class UsageError(Exception):
    """A mistake on the command line: one line on stderr, exit status 2."""


# Each notebook's budget is a hang guard, not a speed target: a busy laptop must never
# reach it in normal work. The slowest quick notebook (01) took 53 s on an idle 2-core
# machine and 42-110 s with both cores loaded (issue 21: 99 s hit the old 120 s budget);
# the full run's slowest takes a few minutes. Each budget is about ten times those.
QUICK_BUDGET_S = 600.0
FULL_BUDGET_S = 1800.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``memcglab reproduce``."""
    parser.add_argument("--quick", action="store_true",
                        help="run every notebook with quick=True (CI-sized; about two "
                             "minutes on 2 cores)")
    parser.add_argument("--out", type=Path, default=Path("results"),
                        help="output directory (default: ./results)")
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS_DIR,
                        help=f"where the numbered notebooks are (default: {NOTEBOOKS_DIR})")
    parser.add_argument("--only", metavar="NN[,NN]",
                        help="run only these studies, e.g. 04,05 (default: all present)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds one notebook may take before it counts as hung "
                             f"(default {FULL_BUDGET_S:g}, {QUICK_BUDGET_S:g} with --quick)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="notebooks run at once (default: 2, or 1 on one CPU)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def discover(directory: Path, only: tuple[str, ...] = EXPECTED
             ) -> tuple[list[Path], list[str]]:
    """The numbered notebooks present (sorted) and the expected numbers that are missing."""
    found = {}
    for path in sorted(Path(directory).glob("[0-9][0-9]_*.ipynb")):
        found.setdefault(path.name[:2], path)
    present = [found[n] for n in only if n in found]
    return present, [n for n in only if n not in found]


def _first_existing(path: Path) -> Path:
    p = path.absolute()
    while not p.exists():
        p = p.parent
    return p


def _check(args: argparse.Namespace) -> tuple[list[Path], list[str], float]:
    out = args.out
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    base = _first_existing(out)
    if not base.is_dir():
        raise UsageError(f"--out {out}: {base} is not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: {base} is not writable")
    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: must be at least 1")
    timeout = args.timeout
    if timeout is None:
        timeout = QUICK_BUDGET_S if args.quick else FULL_BUDGET_S
    if not timeout > 0:
        raise UsageError(f"--timeout {timeout:g}: must be a positive number of seconds")
    only = EXPECTED
    if args.only:
        only = tuple(x.strip().zfill(2) for x in args.only.split(",") if x.strip())
        bad = [x for x in only if x not in EXPECTED]
        if bad or not only:
            raise UsageError(f"--only {args.only}: studies are {', '.join(EXPECTED)}")
    if not args.notebooks.is_dir():
        raise UsageError(f"--notebooks {args.notebooks}: not a directory")
    present, missing = discover(args.notebooks, only)
    if not present:
        raise UsageError(f"--notebooks {args.notebooks}: none of the notebooks "
                         f"{', '.join(f'{n}_*.ipynb' for n in only)} is there")
    _check_kernel()
    return present, missing, timeout


def _check_kernel() -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        raise UsageError(f"no Jupyter kernel named {KERNEL!r}; install one with "
                         f"'{sys.executable} -m ipykernel install --user --name python3'"
                         ) from None


def _make_out(out: Path) -> list[Path]:
    """Create ``out`` and its missing parents; return those created (deepest last)."""
    created = []
    for p in reversed([out, *out.parents]):
        if not p.exists():
            try:
                p.mkdir()
            except OSError as exc:
                for q in reversed(created):
                    q.rmdir()
                raise UsageError(f"--out {out}: cannot create {p} ({exc.strerror})") from None
            created.append(p)
    return created


def _precompile() -> None:
    """Compile the code the studies share (the engine, the coherence simulator) once.

    The engine's C core (about a second to build) and the coherence simulator's numba
    code are cached on disk. On a fresh checkout every notebook kernel would otherwise
    compile them by itself, several at once on a few cores; compiled here first, the
    kernels load them from the caches. With warm caches this costs about a
    second.
    """
    from memcglab.engine import replay_compiled
    from memcglab.layout.coherence import simulate
    from memcglab.trace import parse_text

    trace = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 3\nuncharge 1 1 3\n")
    replay_compiled(trace, "multi", events=True)
    replay_compiled(trace, "multi")
    simulate(cpu=[0, 1], addr=[0, 8], size=8, write=[True, False])


class Interrupted(Exception):
    """SIGINT or SIGTERM stopped the run; ``signum`` is the first signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _execute(notebooks: list[Path], stage: Path, quick: bool, timeout: float, workers: int,
             progress: bool) -> list[dict[str, Any]]:
    import functools
    import uuid

    from tqdm import tqdm

    from memcglab.sweep import stopping
    from memcglab.sweep.executors import iter_completed
    from memcglab.sweep.interrupt import Interruption
    from memcglab.sweep.runner import RunJob, execute_run
    from memcglab.sweep.spec import RunSpec

    params = {"quick": True} if quick else {}
    token = uuid.uuid4().hex
    jobs = [RunJob(RunSpec.make(nb.name, params), str(nb.resolve()), str(stage / nb.stem),
                   timeout, KERNEL, token) for nb in notebooks]
    records: list[dict[str, Any]] = [{}] * len(jobs)
    bar = tqdm(total=len(jobs), desc="reproduce", unit="notebook", disable=not progress,
               file=sys.stderr, dynamic_ncols=True)
    # Ctrl-C or SIGTERM: start nothing more, stop the running notebooks with their
    # kernels (the sweep's machinery), and write nothing: the previous results stay whole
    with Interruption(token) as interruption:
        try:
            _collect(iter_completed(execute_run, jobs, None, workers,
                                    stop=interruption.requested,
                                    remote_stop=functools.partial(stopping.stop, token)),
                     jobs, notebooks, records, params, bar)
        finally:
            bar.close()
        if interruption.signum is not None:
            raise Interrupted(interruption.signum)
    return records


def _collect(outcomes: Any, jobs: list[Any], notebooks: list[Path],
             records: list[dict[str, Any]], params: dict[str, Any], bar: Any) -> None:
    """Record each finished notebook's run in ``records`` as the executor yields it."""
    for k, rec, exc in outcomes:
        if exc is not None:  # the worker itself died
            rec = {"notebook": jobs[k].spec.notebook, "status": "failed", "result": {},
                   "params": params, "run_id": jobs[k].spec.run_id, "duration_s": None,
                   "error": f"{type(exc).__name__}: {exc}"}
        records[k] = rec
        bar.set_postfix_str(f"{notebooks[k].stem} {rec['status']}", refresh=False)
        bar.update(1)


def _write_outputs(stage: Path, notebooks: list[Path], records: list[dict[str, Any]],
                   run_info: dict[str, Any]) -> None:
    from memcglab.report import (
        COUNTS_FILE,
        claims_table,
        collect,
        counts_table,
        render_counts,
        render_html,
        render_markdown,
    )
    from memcglab.results import atomic_write, write_parquet_atomic
    from memcglab.sweep.runner import NOTEBOOK_FILE
    from memcglab.sweep.table import build_table

    studies = []
    for nb, rec in zip(notebooks, records, strict=True):
        d = stage / nb.stem
        d.mkdir(exist_ok=True)
        if (d / NOTEBOOK_FILE).exists():
            os.replace(d / NOTEBOOK_FILE, d / nb.name)
        studies.append(collect(d, nb.stem, nb, rec, nb.name))
    write_parquet_atomic(stage / "results.parquet", build_table(records, ["quick"], {}))
    write_parquet_atomic(stage / "claims.parquet", claims_table(studies))
    write_parquet_atomic(stage / "counts.parquet", counts_table(studies))
    md = render_markdown(studies, run_info, COUNTS_FILE)
    atomic_write(stage / "report.md", lambda f: f.write(md.encode()))
    page = render_html(md)
    atomic_write(stage / "report.html", lambda f: f.write(page.encode()))
    counts = render_counts(studies)
    atomic_write(stage / COUNTS_FILE, lambda f: f.write(counts.encode()))
    appendix = render_html(counts, "memcglab reproduce: counts")
    atomic_write(stage / "counts.html", lambda f: f.write(appendix.encode()))


def _readable(stage: Path) -> None:
    """Give the staged files the mode a plain ``open()`` would (atomic writes use
    ``mkstemp``, whose files only their owner may read): the report is for sharing."""
    umask = os.umask(0)
    os.umask(umask)
    for path in stage.rglob("*"):
        if path.is_file():
            path.chmod(0o666 & ~umask)


def _commit(stage: Path, out: Path, names: list[str]) -> None:
    """Move the staged study directories and files into ``out``; the old ones go last."""
    for name in names:
        src, dst = stage / name, out / name
        if (stage / name).is_dir():
            if dst.exists():
                os.replace(dst, stage / f".old-{name}")
            os.replace(src, dst)
        else:
            os.replace(src, dst)


def run(args: argparse.Namespace) -> int:
    """Run ``memcglab reproduce``; the exit status (see the module docstring)."""
    args.out = Path(args.out).absolute()  # the notebooks run in their own directory
    try:
        notebooks, missing, timeout = _check(args)
        _make_out(args.out)
    except UsageError as exc:
        print(f"memcglab reproduce: error: {exc}", file=sys.stderr)
        return 2
    if missing:
        print(f"memcglab reproduce: missing notebooks {', '.join(missing)} in {args.notebooks}; "
              f"running {', '.join(nb.name for nb in notebooks)}", file=sys.stderr)
    t0 = time.monotonic()
    stage = Path(tempfile.mkdtemp(dir=args.out, prefix=".reproduce-"))
    try:
        _precompile()
        try:
            records = _execute(notebooks, stage, args.quick, timeout, args.workers,
                               not args.no_progress)
        except Interrupted as stop:
            from memcglab.sweep.interrupt import exit_status, signal_name

            print(f"memcglab reproduce: stopped by {signal_name(stop.signum)} after "
                  f"{time.monotonic() - t0:.0f} s; nothing was written, {args.out} is as it "
                  "was; run the same command again", file=sys.stderr)
            return exit_status(stop.signum)
        info = {"quick": args.quick, "missing": missing, "version": memcglab.__version__,
                "elapsed_s": time.monotonic() - t0}
        _write_outputs(stage, notebooks, records, info)
        _readable(stage)
        _commit(stage, args.out, [nb.stem for nb in notebooks] + [
            "results.parquet", "counts.parquet", "claims.parquet", "report.md", "report.html",
            "counts.md", "counts.html"])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    failed = [r for r in records if r.get("status") != "ok"]
    for r in failed:
        print(f"memcglab reproduce: {r['notebook']} failed: {r.get('error')}", file=sys.stderr)
    print(f"{len(records) - len(failed)} of {len(records)} notebooks ran in "
          f"{time.monotonic() - t0:.0f} s; report: {args.out / 'report.md'}")
    return 1 if failed else 0
