"""Stopping notebook runs, kernels included, in the process that executes them.

A run's notebook executes in a worker (a pool process, a Dask worker, or the sweep's
own process when it runs serially), and its Jupyter kernel is a child of that worker
which jupyter_client starts in a session of its own: a terminal's Ctrl-C does not
reach it, and stopping the worker alone would leave it running. So every run starts
its kernel through :meth:`RunHandle.kernel_manager_class`, which registers the
kernel with the run, and :func:`stop` kills the kernels of the runs it stops (their
whole process group) and marks them stopped, so a run that has not started its kernel
yet stops as it does. nbclient notices a dead kernel within a second; the run then
ends without a record, and a resumed sweep executes it again.

Runs are grouped by a token (one per sweep, :attr:`memcglab.sweep.runner.RunJob.token`),
so stopping one sweep on a shared Dask cluster leaves other sweeps' runs alone.

The registry is a plain set changed only by single set operations, which are atomic
under the GIL: :func:`stop` runs inside signal handlers, where taking a lock that the
interrupted code may hold would deadlock.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ALL", "EXIT_GRACE_S", "RunHandle", "install_worker_handlers", "kill_process_tree",
           "running", "stop", "stopped"]

#: the token that stands for every run in this process
ALL = "*"
#: seconds a pool worker told to stop waits for its runs to wind down before it exits
EXIT_GRACE_S = 10.0

_stopped: set[str] = set()
_runs: set[RunHandle] = set()


class RunHandle:
    """One run executing in this process: its token and the kernels it started."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.managers: list[Any] = []

    @property
    def stopped(self) -> bool:
        """True once :func:`stop` was called for this run's token (or for every run)."""
        return stopped(self.token)

    def kernel_manager_class(self, log_path: str | os.PathLike[str] | None = None) -> type:
        """nbclient's default kernel manager, registering each kernel it starts with this run.

        With ``log_path``, the kernel's own stdout and stderr (not its cells', which the
        notebook keeps) go to that file instead of the sweep's terminal: a kernel killed
        while it shuts down may log a traceback from its sockets, which is no error of
        the run and would bury the sweep's one-line report.
        """
        from jupyter_client.manager import AsyncKernelManager

        run = self

        class RunKernelManager(AsyncKernelManager):
            async def start_kernel(self, **kw: Any) -> None:
                run.managers.append(self)
                if log_path is None:
                    await super().start_kernel(**kw)
                else:
                    with open(log_path, "ab") as log:  # the kernel keeps its own copy of the fd
                        await super().start_kernel(stdout=log, stderr=log, **kw)
                if run.stopped:  # stopped while the kernel was starting
                    run.kill_kernels()

        return RunKernelManager

    def kill_kernels(self) -> int:
        """SIGKILL the process group of each kernel this run started; how many were signalled."""
        killed = 0
        for km in list(self.managers):
            provisioner = getattr(km, "provisioner", None)
            pid = getattr(provisioner, "pid", None)
            pgid = getattr(provisioner, "pgid", None)
            if not pid:
                continue  # not launched yet: start_kernel checks `stopped` when it is
            try:
                if pgid and pgid != os.getpgrp():  # the kernel's own session, as launched
                    os.killpg(pgid, signal.SIGKILL)
                else:  # never our own group: that would take the sweep down with it
                    os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass  # already gone
        return killed


def stopped(token: str) -> bool:
    """True once the runs of ``token`` (or every run in this process) were told to stop."""
    return ALL in _stopped or token in _stopped


@contextmanager
def running(token: str) -> Iterator[RunHandle]:
    """Register a run for the duration of the ``with`` block (its whole execution)."""
    run = RunHandle(token)
    _runs.add(run)
    try:
        yield run
    finally:
        _runs.discard(run)


def stop(token: str | None = None) -> int:
    """Stop the runs of ``token`` (None: every run in this process); kill their kernels.

    Returns how many kernels were signalled. Runs that start afterwards with a stopped
    token stop at once. Picklable with :func:`functools.partial`, so a sweep can send
    it to Dask workers (``client.run``).
    """
    _stopped.add(ALL if token is None else token)
    return sum(run.kill_kernels() for run in list(_runs)
               if token is None or run.token == token)


def install_worker_handlers() -> None:
    """The initializer of the sweep's pool workers.

    SIGINT is ignored: a terminal's Ctrl-C reaches every process of the foreground
    group, and the sweep's own process decides what it means. SIGTERM, which the sweep
    sends to stop its workers, stops every run here and exits once they have wound down
    (a run that finished is committed first), after :data:`EXIT_GRACE_S` at the latest.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)


def _stop_worker(signum: int, frame: Any) -> None:
    logging.disable(logging.CRITICAL)  # nbclient would log "Kernel died" for each run
    stop(None)
    threading.Thread(target=_exit_when_idle, args=(128 + signum,), daemon=True,
                     name="memcglab-stop").start()


def _exit_when_idle(status: int) -> None:
    deadline = time.monotonic() + EXIT_GRACE_S
    while _runs and time.monotonic() < deadline:
        time.sleep(0.05)
    os._exit(status)  # the pool's queues may be mid-message: do not wait on them


def kill_process_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it (kernels sit in sessions of their own).

    The last resort for a worker that did not exit in time. Without psutil (a
    dependency of Dask's distributed) only ``pid`` itself is killed; its kernels then
    exit by themselves within a second (ipykernel polls for its parent).
    """
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            below = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            below = []
        for proc in below:
            try:
                proc.kill()
            except psutil.Error:
                pass  # gone already, or not ours
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
