"""The sidecar: how a notebook hands its numbers to the sweep that ran it.

A swept notebook ends with ``record_result(output_dir, {...})``; the scalars land
in ``output_dir/result.json`` (atomically) and become one row of the sweep's
table. This module is imported inside notebook kernels, so it pulls in nothing
heavier than the standard library and :mod:`memcglab.results`.

>>> import tempfile, json
>>> d = tempfile.mkdtemp()
>>> p = record_result(d, {"walks": 12, "hit_ratio": 0.75, "policy": "lru"})
>>> json.loads(p.read_text())["walks"]
12
>>> record_result("", {"walks": 12}) is None   # run by hand: nothing recorded
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memcglab.results import write_json_atomic
from memcglab.sweep.limits import check_result_size

__all__ = ["RESULT_FILE", "check_scalars", "merge_row", "record_result"]

RESULT_FILE = "result.json"


def _scalar(key: str, value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        return _scalar(key, value.item())  # numpy scalars and 0-d arrays
    raise TypeError(
        f"result {key!r}={value!r}: a recorded result must be a scalar (int, float, bool, "
        f"str or None), not {type(value).__name__}; record one key per number"
    )


def check_scalars(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``values`` as plain Python scalars, or raise naming the offending key.

    >>> import numpy as np
    >>> check_scalars({"n": np.int64(3), "x": np.float32(0.5)})
    {'n': 3, 'x': 0.5}
    >>> check_scalars({"v": [1, 2]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: result 'v'=[1, 2]: a recorded result must be a scalar (...), not list; ...
    """
    if not isinstance(values, Mapping):
        raise TypeError(
            f"results {values!r}: must be a mapping of names to scalars, "
            f"not {type(values).__name__}"
        )
    out = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"result key {key!r}: must be a non-empty str")
        out[key] = _scalar(key, value)
    return out


def record_result(
    output_dir: str | os.PathLike[str] | None, values: Mapping[str, Any]
) -> Path | None:
    """Write ``values`` (name -> scalar) atomically to ``output_dir/result.json``.

    Called once, at the end of a swept notebook. When ``output_dir`` is empty or None
    (the notebook's default, i.e. it is being run by hand) the values are only
    checked, nothing is written, and None is returned. NaN and infinities are kept
    (Python's JSON writes them as ``NaN``/``Infinity``); a table row keeps them too.
    At most :data:`~memcglab.sweep.limits.MAX_RESULT_KEYS` names and
    :data:`~memcglab.sweep.limits.MAX_RESULT_BYTES` of JSON: each name is a column of
    the sweep's table and each run is a row, so bulk data belongs in files.
    """
    plain = check_scalars(values)
    check_result_size(len(plain), len(json.dumps(plain, ensure_ascii=False).encode()))
    if output_dir is None or str(output_dir) == "":
        return None
    directory = Path(output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    return write_json_atomic(directory / RESULT_FILE, plain)


def merge_row(
    params: Mapping[str, Any], result: Mapping[str, Any], reserved: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One table row: parameters, then results; a clashing result name gets ``result_``.

    A notebook that echoes a parameter (``record_result(d, {"slots": slots})``) or
    uses a name the table reserves must not silently overwrite it, so the result is
    kept beside it under a prefixed name.

    >>> merge_row({"slots": 7}, {"slots": 7, "walks": 3})
    {'slots': 7, 'result_slots': 7, 'walks': 3}
    """
    row = dict(params)
    taken = set(params) | set(reserved)
    for key, value in result.items():
        row[f"result_{key}" if key in taken else key] = value
    return row
