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

>>> sorted(v for _, v, _ in iter_completed(abs, [-1, 2, -3]))
[1, 2, 3]
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["Outcome", "describe_executor", "is_dask_client", "iter_completed"]

# (index into items, return value or None, exception or None)
Outcome = tuple[int, Any, BaseException | None]


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


def _serial(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Outcome]:
    for i, item in enumerate(items):
        try:
            value = fn(item)
        except Exception as exc:  # reported to the caller, who decides what a failure means
            yield i, None, exc
        else:
            yield i, value, None


def _futures(
    fn: Callable[[Any], Any], items: Sequence[Any], pool: cf.Executor
) -> Iterator[Outcome]:
    index = {pool.submit(fn, item): i for i, item in enumerate(items)}
    try:
        for fut in cf.as_completed(index):
            exc = fut.exception()
            yield index[fut], (None if exc else fut.result()), exc
    finally:
        for fut in index:  # on an early exit, do not leave queued work behind
            fut.cancel()


def _dask(fn: Callable[[Any], Any], items: Sequence[Any], client: Any) -> Iterator[Outcome]:
    import distributed

    # pure=False: two calls with equal arguments are still two runs (fn may have effects)
    futures = [client.submit(fn, item, pure=False) for item in items]
    index = {fut.key: i for i, fut in enumerate(futures)}
    try:
        for fut in distributed.as_completed(futures):
            if fut.status == "error":
                yield index[fut.key], None, fut.exception()
            elif fut.status == "cancelled":
                yield index[fut.key], None, RuntimeError("cancelled by the Dask cluster")
            else:
                yield index[fut.key], fut.result(), None
    finally:
        client.cancel([f for f in futures if not f.done()])


def iter_completed(
    fn: Callable[[Any], Any], items: Sequence[Any], executor: Any = None, workers: int = 1
) -> Iterator[Outcome]:
    """Yield ``(index, value, exception)`` for each item, in completion order.

    An exception raised by ``fn`` is yielded, not raised, so one failed item does not
    stop the others. Closing the generator early cancels work not yet started.
    """
    if workers < 1:
        raise ValueError(f"workers={workers}: must be at least 1")
    if not items:
        return
    if executor is None and workers <= 1:
        yield from _serial(fn, items)
    elif executor is None:
        ctx = multiprocessing.get_context("spawn")
        pool = cf.ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=ctx)
        try:
            yield from _futures(fn, items, pool)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    elif is_dask_client(executor):
        yield from _dask(fn, items, executor)
    elif isinstance(executor, cf.Executor):
        yield from _futures(fn, items, executor)
    else:
        raise TypeError(
            f"executor={executor!r}: must be None, a concurrent.futures.Executor or a "
            f"dask.distributed.Client"
        )
