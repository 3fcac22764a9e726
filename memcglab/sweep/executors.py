"""Run one function over many items: serially, in a process pool, or on Dask.

Both the notebook sweep and :func:`memcglab.sweep.run_grid` hand their work to
:func:`iter_completed`, which yields each item's outcome as soon as it is known, so
callers can record finished work (and survive being killed) while the rest runs.

The executor is one of

* ``None`` with ``workers <= 1``: serial, in this process. Tracebacks stay local and
  the function need not be picklable (handy for functions defined in a notebook);
* ``None`` with ``workers > 1``: a ``ProcessPoolExecutor`` created for the call. It
  uses the ``spawn`` start method, because the caller may run threads (tqdm's
  monitor, a Jupyter kernel's) and forking a threaded process can deadlock;
* any ``concurrent.futures.Executor`` the caller owns;
* a ``dask.distributed.Client``: work goes to the cluster's workers, which must be
  able to import ``memcglab`` and see the same file system.

Stopping early (the caller's ``stop()`` turns true, the caller closes the generator,
or an exception such as KeyboardInterrupt arrives) starts nothing more: queued work
is cancelled; a process pool created here has its workers sent SIGTERM (they stop
their notebook runs with the kernels, see :mod:`memcglab.sweep.stopping`, and exit),
and any worker still alive after :data:`HALT_GRACE_S`, or as soon as ``stop()``
returns 2 or more (a second Ctrl-C), is killed with everything below it. Work
already running on a caller's own ``concurrent.futures`` executor runs to its end (it
is not ours to kill). Dask cannot interrupt a task that is running, so there
the caller's ``remote_stop`` is run on every worker (``client.run``): the sweep uses it
to kill the kernels of its runs, which then end at once.

>>> sorted(v for _, v, _ in iter_completed(abs, [-1, 2, -3]))
[1, 2, 3]
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from memcglab.sweep.limits import check_workers
from memcglab.sweep.stopping import install_worker_handlers, kill_process_tree

__all__ = ["HALT_GRACE_S", "POLL_S", "Outcome", "describe_executor", "is_dask_client",
           "iter_completed"]

# (index into items, return value or None, exception or None)
Outcome = tuple[int, Any, BaseException | None]
#: how often a wait wakes up to look at the caller's stop(), seconds
POLL_S = 0.2
#: how long stopped pool workers may take to exit before they are killed, seconds
HALT_GRACE_S = 12.0
#: how long a remote stop on a Dask cluster may take, seconds
REMOTE_STOP_S = 10.0

#: the caller's stop(): 0 (or False) to go on, 1 (or True) to stop, 2 or more to stop
#: without waiting for the workers
Stop = Callable[[], int] | None


def is_dask_client(executor: Any) -> bool:
    """True for a ``distributed.Client`` (checked by module, so Dask stays optional)."""
    return type(executor).__module__.startswith("distributed") and hasattr(executor, "submit")


def describe_executor(executor: Any, workers: int) -> str:
    """A short human description for progress bars and logs.

    >>> describe_executor(None, 1)
    'serial'
    >>> describe_executor(None, 4)
    'process pool, 4 workers'
    """
    if executor is None:
        return "serial" if workers <= 1 else f"process pool, {workers} workers"
    if is_dask_client(executor):
        return f"dask {getattr(executor.scheduler, 'address', '')}".strip()
    return type(executor).__name__


def _stopping(stop: Stop) -> int:
    return 0 if stop is None else int(stop())


def _serial(fn: Callable[[Any], Any], items: Sequence[Any], stop: Stop) -> Iterator[Outcome]:
    for i, item in enumerate(items):
        if _stopping(stop):
            return
        try:
            value = fn(item)
        except Exception as exc:  # reported to the caller, who decides what a failure means
            yield i, None, exc
        else:
            yield i, value, None


def _futures(fn: Callable[[Any], Any], items: Sequence[Any], pool: cf.Executor,
             stop: Stop) -> Generator[Outcome, None, bool]:
    """Yield outcomes as futures finish; return True when all did, False when stopped."""
    index = {pool.submit(fn, item): i for i, item in enumerate(items)}
    pending = set(index)
    try:
        while pending:
            if _stopping(stop):
                return False
            done, pending = cf.wait(pending, timeout=POLL_S, return_when=cf.FIRST_COMPLETED)
            for fut in sorted(done, key=index.__getitem__):
                exc = fut.exception()
                yield index[fut], (None if exc else fut.result()), exc
        return True
    finally:
        for fut in pending:  # on an early exit, do not leave queued work behind
            fut.cancel()


def _halt_pool(pool: cf.ProcessPoolExecutor, stop: Stop) -> None:
    """Stop a pool of ours now: SIGTERM its workers, kill what outlives the grace period."""
    # The worker processes, to signal them: the pool keeps them in a private dict and
    # offers no public way to stop a running call.
    procs = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + HALT_GRACE_S
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline \
            and _stopping(stop) < 2:
        time.sleep(POLL_S / 4)
    for proc in procs:
        if proc.is_alive():
            kill_process_tree(proc.pid)
            proc.join(1.0)


def _pool(fn: Callable[[Any], Any], items: Sequence[Any], workers: int,
          stop: Stop) -> Iterator[Outcome]:
    ctx = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                  initializer=install_worker_handlers)
    complete = False
    try:
        complete = yield from _futures(fn, items, pool, stop)
    finally:
        if complete:
            pool.shutdown(wait=True)
        else:
            _halt_pool(pool, stop)


def _run_remote_stop(client: Any, remote_stop: Callable[[], Any]) -> None:
    """``client.run(remote_stop)``, waited for at most REMOTE_STOP_S (a cluster may be gone)."""
    def target() -> None:
        try:
            client.run(remote_stop)
        except Exception:  # an unreachable cluster: its tasks end on their own
            pass

    thread = threading.Thread(target=target, daemon=True, name="memcglab-remote-stop")
    thread.start()
    thread.join(REMOTE_STOP_S)


def _dask(fn: Callable[[Any], Any], items: Sequence[Any], client: Any, stop: Stop,
          remote_stop: Callable[[], Any] | None) -> Iterator[Outcome]:
    import distributed

    # pure=False: two calls with equal arguments are still two runs (fn may have effects)
    futures = [client.submit(fn, item, pure=False) for item in items]
    index = {fut.key: i for i, fut in enumerate(futures)}
    ready = distributed.as_completed(futures)
    complete = False
    try:
        while not ready.is_empty():
            if _stopping(stop):
                break
            batch = ready.next_batch(block=False)
            if not batch:
                time.sleep(POLL_S / 4)
                continue
            for fut in batch:
                if fut.status == "error":
                    yield index[fut.key], None, fut.exception()
                elif fut.status == "cancelled":
                    yield index[fut.key], None, RuntimeError("cancelled by the Dask cluster")
                else:
                    yield index[fut.key], fut.result(), None
        else:
            complete = True
    finally:
        client.cancel([f for f in futures if not f.done()])
        if not complete and remote_stop is not None:
            _run_remote_stop(client, remote_stop)


def iter_completed(
    fn: Callable[[Any], Any], items: Sequence[Any], executor: Any = None, workers: int = 1,
    *, stop: Stop = None, remote_stop: Callable[[], Any] | None = None,
) -> Iterator[Outcome]:
    """Yield ``(index, value, exception)`` for each item, in completion order.

    An exception raised by ``fn`` is yielded, not raised, so one failed item does not
    stop the others. ``stop`` is polled (every :data:`POLL_S` at least, between items
    when serial); once it returns 1 (True), or when the generator is closed early,
    nothing more starts and what runs is stopped as the module docstring says; 2 or
    more also kills a pool's workers without waiting. ``remote_stop``
    (picklable) is what a Dask cluster's workers run then. ``workers`` is bounded by
    :func:`memcglab.sweep.limits.max_workers` when a pool of that size would start.
    """
    if workers < 1:
        raise ValueError(f"workers={workers}: must be at least 1")
    if not items:
        return
    if executor is None and workers <= 1:
        yield from _serial(fn, items, stop)
    elif executor is None:
        yield from _pool(fn, items, check_workers(min(workers, len(items))), stop)
    elif is_dask_client(executor):
        yield from _dask(fn, items, executor, stop, remote_stop)
    elif isinstance(executor, cf.Executor):
        yield from _futures(fn, items, executor, stop)
    else:
        raise TypeError(
            f"executor={executor!r}: must be None, a concurrent.futures.Executor or a "
            f"dask.distributed.Client"
        )
