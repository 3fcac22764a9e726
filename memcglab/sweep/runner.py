"""Execute a notebook over a grid with papermill, resumably.

Layout of a sweep's output directory::

    OUT/sweep.json                  what was asked: notebook, grid, kernel, timeout
    OUT/runs/<run_id>/notebook.ipynb   the executed notebook (kept for failed runs too)
    OUT/runs/<run_id>/result.json      the notebook's sidecar (record_result)
    OUT/runs/<run_id>/run.json         the run's record, written last
    OUT/results.parquet             one row per run of the grid

``run.json`` is the commit point: it is written atomically after the notebook has
finished, so a run with a ``run.json`` whose status is ``"ok"`` is done, and a
restarted sweep skips it. Anything else in a run directory (a notebook cut short by
a kill, a stale ``result.json``) is cleared and the run executes again. Failed runs
are retried on the next start; their record keeps the error until then.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memcglab
from memcglab.results import read_json, write_json_atomic
from memcglab.sweep.executors import describe_executor, iter_completed
from memcglab.sweep.sidecar import RESULT_FILE, check_scalars
from memcglab.sweep.spec import RunSpec, expand_grid

__all__ = ["RunJob", "SweepSummary", "execute_run", "load_record", "run_dir", "sweep"]

RUN_FILE = "run.json"
NOTEBOOK_FILE = "notebook.ipynb"
SWEEP_FILE = "sweep.json"


def run_dir(out: str | os.PathLike[str], spec: RunSpec) -> Path:
    """The directory a run writes into: ``OUT/runs/<run_id>``."""
    return Path(out) / "runs" / spec.run_id


@dataclass(frozen=True)
class RunJob:
    """Everything a worker needs for one run; picklable, paths absolute."""

    spec: RunSpec
    notebook_path: str
    directory: str
    timeout: float
    kernel: str


def _deadline_timeout(deadline: float) -> Any:
    """An nbclient ``timeout_func``: each cell may use what is left of the run's budget."""

    def timeout_func(cell: Any) -> float:
        # nbclient treats 0 as "no timeout", so an exhausted budget becomes a tiny one.
        return max(deadline - time.monotonic(), 0.001)

    return timeout_func


def _in_own_thread(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Call ``fn(**kwargs)`` in a new thread with an empty context; return or raise as fn.

    nbclient drives the kernel through jupyter_core's ``run_sync``, which keeps "this
    thread's" event loop in a context variable. Dask (and asyncio callbacks in
    general) copy contexts across threads, so two runs in one process could find the
    same loop and fail with "This event loop is already running"; a caller's own
    running loop (a sweep started from a notebook) would get in the way too. A thread
    of our own with an empty context gets a loop of its own, which it closes.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn(**kwargs)
        except BaseException as exc:  # re-raised in the caller's thread below
            outcome["error"] = exc
        finally:
            try:
                asyncio.get_event_loop_policy().get_event_loop().close()
            except RuntimeError:
                pass  # no loop was created in this thread
            asyncio.set_event_loop(None)

    thread = threading.Thread(target=lambda: contextvars.Context().run(target),
                              name="memcglab-papermill")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _describe_error(exc: BaseException, timeout: float) -> str:
    name = type(exc).__name__
    if name == "PapermillExecutionError":
        return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"  # type: ignore[attr-defined]
    if isinstance(exc, TimeoutError) or name == "CellTimeoutError":
        return f"timeout: the run exceeded its {timeout:g} s budget"
    return f"{name}: {exc}"


def execute_run(job: RunJob) -> dict[str, Any]:
    """Run one notebook with papermill and write its ``run.json``; return that record.

    Runs in a worker process (or a Dask worker). Notebook errors and timeouts are
    recorded as a failed run, not raised: a sweep is a batch, and one bad point must
    not cost the others.
    """
    import papermill

    # Absolute: papermill runs the notebook in its own directory, where a relative
    # output_dir would point somewhere else.
    directory = Path(job.directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    for stale in (RUN_FILE, RESULT_FILE):
        (directory / stale).unlink(missing_ok=True)
    params = {**job.spec.as_dict(), "output_dir": str(directory)}
    started = time.time()
    t0 = time.monotonic()
    error = None
    try:
        _in_own_thread(
            papermill.execute_notebook,
            input_path=job.notebook_path,
            output_path=str(directory / NOTEBOOK_FILE),
            parameters=params,
            kernel_name=job.kernel,
            progress_bar=False,
            cwd=str(Path(job.notebook_path).parent),
            # timeout_func sets each cell's limit; the int trait covers nbclient's other waits
            execution_timeout=math.ceil(job.timeout),
            timeout_func=_deadline_timeout(t0 + job.timeout),
            # ipykernel logs on every start that its loopback TCP is unencrypted, and now
            # and then a KeyboardInterrupt while shutting down; over hundreds of runs these
            # lines bury the errors that matter, which the cells' outputs and run.json keep.
            extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
        )
    except Exception as exc:
        error = _describe_error(exc, job.timeout)
    result: dict[str, Any] = {}
    if error is None:
        try:
            result = check_scalars(read_json(directory / RESULT_FILE))
        except FileNotFoundError:
            error = (
                "the notebook finished without calling "
                "memcglab.sweep.record_result(output_dir, {...})"
            )
        except (ValueError, TypeError) as exc:
            error = f"{RESULT_FILE}: {exc}"
    record = {
        "run_id": job.spec.run_id,
        "notebook": job.spec.notebook,
        "params": job.spec.as_dict(),
        "status": "ok" if error is None else "failed",
        "error": error,
        "result": result,
        "started": started,
        "duration_s": round(time.monotonic() - t0, 3),
        "kernel_name": job.kernel,
        "memcglab_version": memcglab.__version__,
    }
    write_json_atomic(directory / RUN_FILE, record)
    return record


def load_record(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``run.json`` of a run directory, or None if the run never finished."""
    try:
        return read_json(Path(directory) / RUN_FILE)
    except (FileNotFoundError, ValueError):
        return None  # a ValueError here is a foreign or hand-edited file: run it again


@dataclass
class SweepSummary:
    """What a sweep did: per-run records in grid order and the table it wrote."""

    specs: list[RunSpec]
    records: list[dict[str, Any]]
    skipped: int
    executed: int
    table: Path
    failed: list[dict[str, Any]] = field(default_factory=list)


def _progress(total: int, initial: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total, initial=initial, desc=desc, unit="run", disable=not enabled,
        file=sys.stderr, dynamic_ncols=True,
    )


def sweep(
    notebook: str | os.PathLike[str],
    grid: Mapping[str, Sequence[Any]],
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
    executor: Any = None,
    timeout: float = 600.0,
    kernel: str = "python3",
    progress: bool = True,
) -> SweepSummary:
    """Run ``notebook`` once per point of ``grid`` (already checked and typed) into ``out``.

    Finished runs (``run.json`` with status ok) are skipped; the others run on
    ``executor`` (see :mod:`memcglab.sweep.executors`). Ends by writing
    ``out/results.parquet`` with one row per grid point, failed runs included.
    """
    from memcglab.sweep.params import notebook_defaults
    from memcglab.sweep.table import TABLE_FILE, build_table, write_table

    nb_path = Path(notebook).resolve()
    specs = expand_grid(nb_path.name, grid)
    out = Path(out).resolve()
    (out / "runs").mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / SWEEP_FILE, {
        "notebook": str(nb_path), "grid": {k: list(v) for k, v in grid.items()},
        "kernel": kernel, "timeout_s": timeout, "runs": len(specs),
    })
    records: list[dict[str, Any] | None] = []
    todo: list[int] = []
    for i, spec in enumerate(specs):
        rec = load_record(run_dir(out, spec))
        ok = rec is not None and rec.get("status") == "ok" and rec.get("run_id") == spec.run_id
        records.append(rec if ok else None)
        if not ok:
            todo.append(i)
    skipped = len(specs) - len(todo)
    jobs = [
        RunJob(specs[i], str(nb_path), str(run_dir(out, specs[i])), timeout, kernel) for i in todo
    ]
    failed: list[dict[str, Any]] = []
    desc = f"{nb_path.name} ({describe_executor(executor, workers)})"
    bar = _progress(len(specs), skipped, progress, desc)
    bar.set_postfix(done=skipped, failed=0, remaining=len(jobs), refresh=False)
    try:
        for k, rec, exc in iter_completed(execute_run, jobs, executor, workers):
            if exc is not None:  # the worker itself died: no run.json was written
                job = jobs[k]
                rec = {
                    "run_id": job.spec.run_id, "notebook": job.spec.notebook,
                    "params": job.spec.as_dict(), "status": "failed", "result": {},
                    "error": "".join(traceback.format_exception_only(exc)).strip(),
                    "duration_s": None, "memcglab_version": memcglab.__version__,
                }
            records[todo[k]] = rec
            if rec["status"] != "ok":
                failed.append(rec)
            done = sum(r is not None for r in records)
            bar.set_postfix(
                done=done - len(failed), failed=len(failed), remaining=len(specs) - done,
                refresh=False,
            )
            bar.update(1)
    finally:
        bar.close()
    final = [r for r in records if r is not None]
    table = build_table(final, list(grid), notebook_defaults(nb_path))
    path = write_table(out / TABLE_FILE, table)
    return SweepSummary(specs, final, skipped, len(jobs), path, failed)

