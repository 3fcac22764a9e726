"""Execute a notebook over a grid with papermill, resumably.

Layout of a sweep's output directory::

    OUT/sweep.json                  what was asked: notebook, grid, kernel, timeout
    OUT/runs/<run_id>/notebook.ipynb   the executed notebook (kept for failed runs too)
    OUT/runs/<run_id>/result.json      the notebook's sidecar (record_result)
    OUT/runs/<run_id>/run.json         the run's record, written last
    OUT/runs/<run_id>/kernel.log       the Jupyter kernel's own output, kept if there was any
    OUT/results.parquet             one row per run of the grid

``run.json`` is the commit point: it is written atomically after the notebook has
finished, so a run with a ``run.json`` whose status is ``"ok"`` is done, and a
restarted sweep skips it. Anything else in a run directory (a notebook cut short by
a kill, a stale ``result.json``) is cleared and the run executes again. Failed runs
are retried on the next start; their record keeps the error until then.

A sweep stopped by SIGINT or SIGTERM (:mod:`memcglab.sweep.interrupt`) starts no more
runs and stops the running ones with their kernels; those write no ``run.json`` (they
are neither done nor failed), and the sweep writes ``results.parquet`` with the runs
that have one, so what finished is kept and the same command resumes with the rest.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import math
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memcglab
from memcglab.results import read_json, write_json_atomic
from memcglab.sweep import stopping
from memcglab.sweep.executors import describe_executor, iter_completed
from memcglab.sweep.interrupt import Interruption
from memcglab.sweep.limits import MAX_RESULT_BYTES, check_result_size
from memcglab.sweep.sidecar import RESULT_FILE, check_scalars
from memcglab.sweep.spec import RunSpec, expand_grid

__all__ = ["INTERRUPTED", "RunJob", "SweepSummary", "execute_run", "load_record", "run_dir",
           "sweep"]

RUN_FILE = "run.json"
NOTEBOOK_FILE = "notebook.ipynb"
KERNEL_LOG_FILE = "kernel.log"
SWEEP_FILE = "sweep.json"
#: the status of a run stopped by an interruption: it has no run.json and runs again
INTERRUPTED = "interrupted"
#: seconds a stopped run waits for papermill to notice its dead kernel and clean up
STOP_GRACE_S = 5.0


class RunInterrupted(Exception):
    """The run was told to stop (:mod:`memcglab.sweep.stopping`) before it finished."""


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
    #: the sweep the run belongs to, so that stopping it stops only its runs
    token: str = ""


def _deadline_timeout(deadline: float) -> Any:
    """An nbclient ``timeout_func``: each cell may use what is left of the run's budget."""

    def timeout_func(cell: Any) -> float:
        # nbclient treats 0 as "no timeout", so an exhausted budget becomes a tiny one.
        return max(deadline - time.monotonic(), 0.001)

    return timeout_func


def _in_own_thread(fn: Callable[..., Any], run: stopping.RunHandle | None = None,
                   **kwargs: Any) -> Any:
    """Call ``fn(**kwargs)`` in a new thread with an empty context; return or raise as fn.

    nbclient drives the kernel through jupyter_core's ``run_sync``, which keeps "this
    thread's" event loop in a context variable. Dask (and asyncio callbacks in
    general) copy contexts across threads, so two runs in one process could find the
    same loop and fail with "This event loop is already running"; a caller's own
    running loop (a sweep started from a notebook) would get in the way too. A thread
    of our own with an empty context gets a loop of its own, which it closes.

    The join polls, so this thread runs its signal handlers while it waits, and once
    ``run`` is stopped it waits at most STOP_GRACE_S more, then raises RunInterrupted
    (the thread is a daemon: it cannot keep a stopped worker alive).
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
                              name="memcglab-papermill", daemon=True)
    thread.start()
    given_up_at = None
    while thread.is_alive():
        thread.join(0.2)
        if run is not None and run.stopped:
            given_up_at = given_up_at or time.monotonic() + STOP_GRACE_S
            if time.monotonic() > given_up_at:
                raise RunInterrupted("the notebook did not end after its kernel was killed")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _drop_if_empty(path: Path) -> None:
    try:
        if path.stat().st_size == 0:
            path.unlink()
    except FileNotFoundError:
        pass


def _describe_error(exc: BaseException, timeout: float) -> str:
    name = type(exc).__name__
    if name == "PapermillExecutionError":
        return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"  # type: ignore[attr-defined]
    if isinstance(exc, TimeoutError) or name == "CellTimeoutError":
        return f"timeout: the run exceeded its {timeout:g} s budget"
    return f"{name}: {exc}"


def _record(job: RunJob, status: str, error: str | None, result: dict[str, Any],
            started: float, duration: float | None) -> dict[str, Any]:
    return {
        "run_id": job.spec.run_id, "notebook": job.spec.notebook, "params": job.spec.as_dict(),
        "status": status, "error": error, "result": result, "started": started,
        "duration_s": None if duration is None else round(duration, 3),
        "kernel_name": job.kernel, "memcglab_version": memcglab.__version__,
    }


def _read_result(directory: Path) -> tuple[dict[str, Any], str | None]:
    """The run's sidecar as scalars, or the error that makes the run a failure."""
    path = directory / RESULT_FILE
    try:
        if path.stat().st_size > 2 * MAX_RESULT_BYTES:  # not read whole: refused anyway
            return {}, f"{RESULT_FILE}: {path.stat().st_size} bytes; at most {MAX_RESULT_BYTES}"
        result = check_scalars(read_json(path))
        check_result_size(len(result), len(json.dumps(result, ensure_ascii=False).encode()))
    except FileNotFoundError:
        return {}, ("the notebook finished without calling "
                    "memcglab.sweep.record_result(output_dir, {...})")
    except (ValueError, TypeError) as exc:
        return {}, f"{RESULT_FILE}: {exc}"
    return result, None


def execute_run(job: RunJob) -> dict[str, Any]:
    """Run one notebook with papermill and write its ``run.json``; return that record.

    Runs in a worker process (or a Dask worker). Notebook errors and timeouts are
    recorded as a failed run, not raised: a sweep is a batch, and one bad point must
    not cost the others. A run stopped by :func:`memcglab.sweep.stopping.stop` writes
    no record and returns one with status :data:`INTERRUPTED`, unless its notebook had
    already finished, in which case it is committed as usual.
    """
    import papermill

    # Absolute: papermill runs the notebook in its own directory, where a relative
    # output_dir would point somewhere else.
    directory = Path(job.directory).resolve()
    started = time.time()
    t0 = time.monotonic()
    with stopping.running(job.token) as run:
        if run.stopped:
            return _record(job, INTERRUPTED, None, {}, started, None)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in (RUN_FILE, RESULT_FILE, KERNEL_LOG_FILE):
            (directory / stale).unlink(missing_ok=True)
        params = {**job.spec.as_dict(), "output_dir": str(directory)}
        error = None
        try:
            _in_own_thread(
                papermill.execute_notebook,
                run=run,
                input_path=job.notebook_path,
                output_path=str(directory / NOTEBOOK_FILE),
                parameters=params,
                kernel_name=job.kernel,
                kernel_manager_class=run.kernel_manager_class(directory / KERNEL_LOG_FILE),
                progress_bar=False,
                cwd=str(Path(job.notebook_path).parent),
                # timeout_func sets each cell's limit; the int trait covers nbclient's other
                # waits
                execution_timeout=math.ceil(job.timeout),
                timeout_func=_deadline_timeout(t0 + job.timeout),
                # ipykernel logs on every start that its loopback TCP is unencrypted, and now
                # and then a KeyboardInterrupt while shutting down; over hundreds of runs
                # these lines bury the errors that matter, which the cells' outputs and
                # run.json keep.
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
        except Exception as exc:
            _drop_if_empty(directory / KERNEL_LOG_FILE)
            if run.stopped:  # its kernel was killed on purpose: not a failure of the run
                return _record(job, INTERRUPTED, None, {}, started, time.monotonic() - t0)
            error = _describe_error(exc, job.timeout)
        else:
            _drop_if_empty(directory / KERNEL_LOG_FILE)
        result: dict[str, Any] = {}
        if error is None:
            result, error = _read_result(directory)
        record = _record(job, "ok" if error is None else "failed", error, result, started,
                         time.monotonic() - t0)
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
    """What a sweep did: per-run records in grid order and the table it wrote.

    ``records`` holds the runs that have a record (done or failed); after an
    interruption (``interrupted`` is the signal) the other runs of ``specs`` have none.
    """

    specs: list[RunSpec]
    records: list[dict[str, Any]]
    skipped: int
    executed: int
    table: Path
    failed: list[dict[str, Any]] = field(default_factory=list)
    interrupted: int | None = None

    @property
    def unfinished(self) -> int:
        """Runs of the grid with no record: left to run when the sweep resumes."""
        return len(self.specs) - len(self.records)


def _progress(total: int, initial: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total, initial=initial, desc=desc, unit="run", disable=not enabled,
        file=sys.stderr, dynamic_ncols=True,
    )


def _finished(out: Path, spec: RunSpec) -> dict[str, Any] | None:
    """The record of a run that has one for this very spec, or None."""
    rec = load_record(run_dir(out, spec))
    return rec if rec is not None and rec.get("run_id") == spec.run_id else None


def _worker_died(job: RunJob, exc: BaseException) -> dict[str, Any]:
    """The record of a run whose worker itself died (it wrote no run.json)."""
    return {
        "run_id": job.spec.run_id, "notebook": job.spec.notebook,
        "params": job.spec.as_dict(), "status": "failed", "result": {},
        "error": "".join(traceback.format_exception_only(exc)).strip(),
        "duration_s": None, "memcglab_version": memcglab.__version__,
    }


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
    ``out/results.parquet`` with one row per grid point, failed runs included. SIGINT
    or SIGTERM (from the main thread's point of view) ends it early: the summary's
    ``interrupted`` says which signal, and the table holds the runs that finished.
    """
    from memcglab.sweep.params import notebook_defaults
    from memcglab.sweep.table import TABLE_FILE, build_table, write_table

    nb_path = Path(notebook).resolve()
    specs = expand_grid(nb_path.name, grid)
    out = Path(out).resolve()
    token = uuid.uuid4().hex
    with Interruption(token) as interruption:
        (out / "runs").mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / SWEEP_FILE, {
            "notebook": str(nb_path), "grid": {k: list(v) for k, v in grid.items()},
            "kernel": kernel, "timeout_s": timeout, "runs": len(specs),
        })
        records: list[dict[str, Any] | None] = []
        todo: list[int] = []
        before: dict[int, Any] = {}  # when each failed run that runs again last started
        for i, spec in enumerate(specs):
            rec = _finished(out, spec)
            ok = rec is not None and rec.get("status") == "ok"
            records.append(rec if ok else None)
            if not ok:
                todo.append(i)
                before[i] = None if rec is None else rec.get("started")
        skipped = len(specs) - len(todo)
        jobs = [RunJob(specs[i], str(nb_path), str(run_dir(out, specs[i])), timeout, kernel,
                       token) for i in todo]
        desc = f"{nb_path.name} ({describe_executor(executor, workers)})"
        bar = _progress(len(specs), skipped, progress, desc)
        bar.set_postfix(done=skipped, failed=0, remaining=len(jobs), refresh=False)
        executed = failed = 0
        try:
            outcomes = iter_completed(
                execute_run, jobs, executor, workers, stop=interruption.requested,
                remote_stop=functools.partial(stopping.stop, token))
            for k, rec, exc in outcomes:
                if exc is not None:  # the worker itself died: no run.json was written
                    if interruption.requested():
                        continue  # killed on the way out, not a failure of the run
                    rec = _worker_died(jobs[k], exc)
                if rec["status"] == INTERRUPTED:
                    continue
                records[todo[k]] = rec
                executed += 1
                failed += rec["status"] != "ok"
                bar.set_postfix(done=skipped + executed - failed, failed=failed,
                                remaining=len(jobs) - executed, refresh=False)
                bar.update(1)
        finally:
            bar.leave = not interruption.requested()  # the sweep's one line says it all
            bar.close()
        if interruption.requested():  # runs may have committed after the last outcome
            for i in todo:
                if records[i] is None:
                    records[i] = rec = _finished(out, specs[i])
                    # a failure left from an earlier start is kept, but was not run now
                    executed += rec is not None and rec.get("started") != before[i]
        final = [r for r in records if r is not None]
        table = build_table(final, list(grid), notebook_defaults(nb_path))
        path = write_table(out / TABLE_FILE, table)
    failed = [r for r in final if r["status"] != "ok"]
    interrupted = interruption.signum if len(final) < len(specs) else None
    return SweepSummary(specs, final, skipped, executed, path, failed, interrupted)
