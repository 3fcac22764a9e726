"""``memcglab sweep``: run a notebook over a parameter grid, resumably, into Parquet.

Everything the user can get wrong (the notebook path, parameter names and values,
parameters the notebook ignores or overrides, a grid or a worker count over its bound,
timeout, kernel, scheduler address, an --out that is a file) is checked before the
first file is written; such mistakes exit with status 2 and one line naming the input
and what is valid. Exit status 1 means some runs failed (their rows say why); 0 means
every run succeeded.

Ctrl-C (SIGINT) or SIGTERM stops the sweep within seconds: no run starts after it,
running notebooks are stopped with their kernels, the runs that finished are kept
(``run.json`` and ``results.parquet``), and one line on standard error says how many
finished and the command that resumes the rest. The exit status is then 128 + the
signal's number, as a shell reports it: 130 for SIGINT, 143 for SIGTERM. A second
signal kills the workers and kernels without waiting for them.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_TIMEOUT", "UsageError", "add_arguments", "resolve_notebook", "resume_command",
           "run"]

DEFAULT_TIMEOUT = 600.0
DEFAULT_KERNEL = "python3"


def _default_workers() -> int:
    return os.cpu_count() or 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``memcglab sweep``."""
    parser.add_argument(
        "notebook",
        help="the parameterised notebook (.ipynb) to execute; a name that is not a file, "
        "such as 02_policy_and_slots or 02, means that shipped study notebook",
    )
    parser.add_argument(
        "-p", "--param", dest="params", nargs=2, action="append", default=[],
        metavar=("NAME", "VALUES"),
        help="a notebook parameter and its comma-separated values (repeat for more); "
        "the sweep runs the cartesian product",
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument(
        "--workers", type=int, default=_default_workers(),
        help="local worker processes (default: one per CPU; at most 4 per CPU); 1 runs "
        "serially",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="a Dask distributed scheduler (e.g. tcp://host:8786); its workers must see "
        "the same file system",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help="seconds a whole run may take before it is stopped and marked failed "
        "(default 600, at most a week)",
    )
    parser.add_argument(
        "--kernel", default=DEFAULT_KERNEL, help="Jupyter kernel name (default: python3)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


class UsageError(Exception):
    """A mistake in the command line; reported in one line, exit status 2."""


def _check_kernel(name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        manager.get_kernel_spec(name)
    except NoSuchKernel:
        valid = ", ".join(sorted(manager.find_kernel_specs())) or "none installed"
        raise UsageError(f"--kernel {name}: no such Jupyter kernel; valid: {valid}") from None


def _connect(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs the 'distributed' package") from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler {address}: cannot connect ({exc})") from None


def resolve_notebook(name: str) -> str:
    """The notebook ``name`` means: the file itself when it exists, else a shipped study.

    A bare name that is not a file (no directory part) resolves to the study notebook
    shipped with memcglab that has that name, that name plus ``.ipynb``, or that
    number: ``02_policy_and_slots``, ``02_policy_and_slots.ipynb`` and ``02`` are the
    same notebook. Raises :class:`UsageError` naming the shipped notebooks otherwise.
    """
    from memcglab.resources import study_notebooks

    path = Path(name)
    if path.exists() or path.parent != Path(".") or path.suffix not in ("", ".ipynb"):
        return name
    shipped = study_notebooks()
    for nb in shipped:
        if name in (nb.name, nb.stem, nb.name[:2]):
            return str(nb)
    raise UsageError(f"notebook {name!r}: no such file, and not a shipped study notebook; "
                     f"shipped: {', '.join(nb.stem for nb in shipped)}")


def _validate(args: argparse.Namespace) -> dict[str, list[Any]]:
    from memcglab.sweep.limits import check_timeout, check_workers
    from memcglab.sweep.params import ParameterError, check_grid

    try:
        check_workers(args.workers, flag="--workers ")
        check_timeout(args.timeout, flag="--timeout ")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a directory")
    args.notebook = resolve_notebook(args.notebook)
    if Path(args.notebook).suffix != ".ipynb":
        raise UsageError(f"notebook {args.notebook!r}: expected a .ipynb file")
    try:
        grid = check_grid(args.notebook, [tuple(p) for p in args.params])
    except (ParameterError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    _check_kernel(args.kernel)
    return grid


def resume_command(args: argparse.Namespace, notebook: str) -> str:
    """The command that resumes this sweep: the same notebook, grid and --out.

    ``notebook`` is what the user typed; a file becomes an absolute path and --out is
    absolute, so the command works from any directory. Options left at their defaults
    are left out (the run ids depend on the notebook and the grid alone).
    """
    path = Path(notebook)
    parts = ["memcglab", "sweep", str(path.resolve()) if path.exists() else notebook]
    for name, values in args.params:
        parts += ["-p", name, values]
    parts += ["--out", str(Path(args.out).resolve())]
    if args.scheduler:
        parts += ["--scheduler", args.scheduler]
    elif args.workers != _default_workers():
        parts += ["--workers", str(args.workers)]
    if args.timeout != DEFAULT_TIMEOUT:
        parts += ["--timeout", f"{args.timeout:g}"]
    if args.kernel != DEFAULT_KERNEL:
        parts += ["--kernel", args.kernel]
    if args.no_progress:
        parts.append("--no-progress")
    return shlex.join(parts)


def _interrupted_line(summary: Any, args: argparse.Namespace, notebook: str) -> str:
    from memcglab.sweep.interrupt import signal_name

    total, done = len(summary.specs), len(summary.records)
    return (f"memcglab sweep: stopped by {signal_name(summary.interrupted)}; {done} of "
            f"{total} runs finished ({done - len(summary.failed)} ok, {len(summary.failed)} "
            f"failed), {total - done} left; resume with: {resume_command(args, notebook)}")


def run(args: argparse.Namespace) -> int:
    """Run ``memcglab sweep``; the exit status (see the module docstring)."""
    from memcglab.sweep.interrupt import exit_status

    given = args.notebook
    client = None
    try:
        try:
            grid = _validate(args)
            if args.scheduler:
                client = _connect(args.scheduler)
        except UsageError as exc:
            print(f"memcglab sweep: error: {exc}", file=sys.stderr)
            return 2
        from memcglab.sweep.runner import sweep

        summary = sweep(
            args.notebook, grid, args.out, workers=args.workers, executor=client,
            timeout=args.timeout, kernel=args.kernel, progress=not args.no_progress,
        )
    except KeyboardInterrupt:  # while checking, before the sweep's own handler is in place
        print("memcglab sweep: stopped by SIGINT; runs that finished are kept, and the same "
              "command resumes", file=sys.stderr)
        return exit_status(signal.SIGINT)
    finally:
        if client is not None:
            client.close()
    if summary.interrupted is not None:
        print(_interrupted_line(summary, args, given), file=sys.stderr)
        return exit_status(summary.interrupted)
    n = len(summary.specs)
    print(
        f"{n} run{'' if n == 1 else 's'}: {summary.skipped} already done, "
        f"{summary.executed} executed, "
        f"{len(summary.failed)} failed; table: {summary.table}"
    )
    for rec in summary.failed:
        print(f"  failed {rec['run_id']} {rec['params']}: {rec['error']}", file=sys.stderr)
    return 1 if summary.failed else 0
