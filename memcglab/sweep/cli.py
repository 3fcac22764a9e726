"""``memcglab sweep``: run a notebook over a parameter grid, resumably, into Parquet.

Everything the user can get wrong (the notebook path, parameter names and values,
workers, timeout, kernel, scheduler address, an --out that is a file) is checked
before the first file is written; such mistakes exit with status 2 and one line
naming the input and what is valid. Exit status 1 means some runs failed (their
rows say why); 0 means every run succeeded.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["UsageError", "add_arguments", "resolve_notebook", "run"]


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
        "--workers", type=int, default=os.cpu_count() or 1,
        help="local worker processes (default: one per CPU); 1 runs serially",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="a Dask distributed scheduler (e.g. tcp://host:8786); its workers must see "
        "the same file system",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0,
        help="seconds a whole run may take before it is stopped and marked failed "
        "(default 600)",
    )
    parser.add_argument(
        "--kernel", default="python3", help="Jupyter kernel name (default: python3)"
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
    from memcglab.sweep.params import ParameterError, check_grid

    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: must be at least 1")
    if not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout:g}: must be a positive number of seconds")
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


def run(args: argparse.Namespace) -> int:
    """Run ``memcglab sweep``; the exit status (see the module docstring)."""
    from memcglab.sweep.runner import sweep

    client = None
    try:
        grid = _validate(args)
        if args.scheduler:
            client = _connect(args.scheduler)
    except UsageError as exc:
        print(f"memcglab sweep: error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = sweep(
            args.notebook, grid, args.out, workers=args.workers, executor=client,
            timeout=args.timeout, kernel=args.kernel, progress=not args.no_progress,
        )
    finally:
        if client is not None:
            client.close()
    n = len(summary.specs)
    print(
        f"{n} runs: {summary.skipped} already done, {summary.executed} executed, "
        f"{len(summary.failed)} failed; table: {summary.table}"
    )
    for rec in summary.failed:
        print(f"  failed {rec['run_id']} {rec['params']}: {rec['error']}", file=sys.stderr)
    return 1 if summary.failed else 0
