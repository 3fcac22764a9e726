"""``run_grid``: a function over many specs, as a DataFrame, on any executor.

The notebook sweep runs whole notebooks; inside a notebook, finer points (a slot
count by a policy by a seed) are cheaper as plain function calls. ``run_grid`` runs
``fn(spec)`` for each spec on the executors of :mod:`memcglab.sweep.executors`,
and returns one row per spec: the spec's fields, then the mapping ``fn`` returned.

Given ``cache_dir``, each finished point is written there at once (atomically, as
``<hash>.json``, the hash covering the function's qualified name and the spec), so
a rerun after a crash or a kernel restart only computes the missing points.

>>> def walks(spec):
...     return {"walks": spec["ops"] // spec["batch"]}
>>> run_grid(walks, [{"ops": 640, "batch": b} for b in (32, 64)])
   ops  batch  walks
0  640     32     20
1  640     64     10
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from memcglab.results import read_json, write_json_atomic
from memcglab.sweep.executors import iter_completed
from memcglab.sweep.limits import MAX_GRID_POINTS
from memcglab.sweep.sidecar import check_scalars, merge_row
from memcglab.sweep.spec import canonical_json, spec_items, stable_hash

__all__ = ["cache_key", "run_grid"]


def cache_key(fn: Callable[..., Any], fields: Mapping[str, Any]) -> str:
    """The cache file stem for ``fn`` on a spec with ``fields``; stable across processes.

    >>> cache_key(len, {"a": 1}) == cache_key(len, {"a": 1}) != cache_key(abs, {"a": 1})
    True
    """
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    return stable_hash({"fn": name, "spec": canonical_json(fields)}, length=24)


def _load_cached(path: Path, fields: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        entry = read_json(path)
    except (FileNotFoundError, ValueError):
        return None  # absent, or not ours: compute it again
    if entry.get("spec") != canonical_json(fields):
        return None
    return entry.get("result")


def run_grid(
    fn: Callable[[Any], Mapping[str, Any]],
    specs: Iterable[Any],
    executor: Any = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    workers: int = 1,
    progress: bool = False,
) -> Any:
    """Run ``fn`` over ``specs`` and return a pandas DataFrame, one row per spec, in order.

    ``specs`` are dataclass instances or mappings of field names to scalars. ``fn``
    must return a mapping of result names to scalars; with a process pool or Dask it
    must also be picklable (defined in a module, not in a notebook). ``executor`` is
    None (serial, or a process pool when ``workers > 1``), a
    ``concurrent.futures.Executor`` or a ``dask.distributed.Client``.

    If ``fn`` raises, work not yet started is cancelled and the exception is raised
    with a note naming the spec; points already finished stay in ``cache_dir``. At most
    :data:`~memcglab.sweep.limits.MAX_GRID_POINTS` specs (counted before any runs).
    """
    import pandas as pd

    items = list(itertools.islice(specs, MAX_GRID_POINTS + 1))
    if len(items) > MAX_GRID_POINTS:
        raise ValueError(f"run_grid: more than {MAX_GRID_POINTS} specs; at most "
                         f"{MAX_GRID_POINTS} per call (each is a row of the table it returns, "
                         f"and with cache_dir a file); split them over several calls")
    fields = [spec_items(s) for s in items]
    results: list[dict[str, Any] | None] = [None] * len(items)
    cache = Path(cache_dir) if cache_dir is not None else None
    paths: list[Path | None] = [None] * len(items)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(fields):
            paths[i] = cache / f"{cache_key(fn, f)}.json"
            results[i] = _load_cached(paths[i], f)
    todo = [i for i, r in enumerate(results) if r is None]

    from tqdm.auto import tqdm

    bar = tqdm(total=len(items), initial=len(items) - len(todo), disable=not progress,
               unit="point")
    outcomes = iter_completed(fn, [items[i] for i in todo], executor, workers)
    try:
        for k, value, exc in outcomes:
            i = todo[k]
            if exc is not None:
                exc.add_note(f"in run_grid, for spec {fields[i]!r}")
                raise exc
            try:
                results[i] = check_scalars(value)
            except TypeError as err:
                err.add_note(f"in run_grid, returned by {fn!r} for spec {fields[i]!r}")
                raise
            path = paths[i]
            if path is not None:
                write_json_atomic(path, {"spec": canonical_json(fields[i]), "result": results[i]})
            bar.update(1)
    finally:
        outcomes.close()
        bar.close()
    rows = [merge_row(f, r or {}) for f, r in zip(fields, results, strict=True)]
    return pd.DataFrame(rows)
