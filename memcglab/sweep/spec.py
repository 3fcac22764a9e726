"""Run specifications: what names a run, and the stable hash that files it.

A run is a notebook plus its parameters. :class:`RunSpec` is frozen so it can key a
dict and a set, and :meth:`RunSpec.run_id` hashes a canonical JSON form of it, which
is the same on every machine and every Python process (unlike ``hash()``, which is
salted per process). The hash names the run's directory, which is how an interrupted
sweep knows, after a restart, which runs are already done.

>>> spec = RunSpec.make("02_policy.ipynb", {"slots": 7, "policy": "lru"})
>>> spec.params
(('policy', 'lru'), ('slots', 7))
>>> spec.run_id == RunSpec.make("02_policy.ipynb", {"policy": "lru", "slots": 7}).run_id
True
>>> [s.as_dict() for s in expand_grid("n.ipynb", {"a": [1, 2], "b": ["x"]})]
[{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memcglab.sweep.limits import check_grid_size

__all__ = ["RunSpec", "canonical_json", "expand_grid", "spec_items", "stable_hash"]

# Parameter values a run may carry: what papermill can inject and JSON can round-trip.
Scalar = int | float | bool | str | None


def _plain(value: Any, where: str) -> Any:
    """Return ``value`` as a JSON-ready Python value, or raise naming ``where``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueError(f"{where}=nan: NaN cannot identify a run (it never equals itself)")
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _plain(value.item(), where)
    if isinstance(value, list | tuple):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):  # nested only inside the hash, e.g. {"params": {...}}
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    raise TypeError(
        f"{where}={value!r}: a run parameter must be int, float, bool, str, None "
        f"or a list of them, not {type(value).__name__}"
    )


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The one JSON text of ``obj``: sorted keys, no whitespace, ints distinct from floats.

    >>> canonical_json({"b": 1.0, "a": True})
    '{"a":true,"b":1.0}'
    """
    plain = {str(k): _plain(v, str(k)) for k, v in obj.items()}
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(obj: Mapping[str, Any], length: int = 16) -> str:
    """A hex digest of :func:`canonical_json` of ``obj``, ``length`` characters long.

    >>> stable_hash({"slots": 7})
    '0ed02dac451d8ba6'
    """
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


def spec_items(spec: Any) -> dict[str, Any]:
    """The named fields of a spec: a dataclass instance or a mapping.

    >>> spec_items({"x": 1})
    {'x': 1}
    """
    if isinstance(spec, RunSpec):
        return spec.as_dict()
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        return {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    if isinstance(spec, Mapping):
        return dict(spec)
    raise TypeError(
        f"spec {spec!r}: must be a dataclass instance or a mapping of field names to values, "
        f"not {type(spec).__name__}"
    )


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run of a notebook: its file name and its parameters, sorted by name.

    ``notebook`` is the notebook's file name, not its full path, so that the same
    sweep started from another directory or machine finds its finished runs.
    """

    notebook: str
    params: tuple[tuple[str, Any], ...]

    @classmethod
    def make(cls, notebook: str, params: Mapping[str, Any]) -> RunSpec:
        """Build a spec, normalising parameter order and list values (to tuples)."""
        items = []
        for name, value in sorted(params.items()):
            _plain(value, name)  # refuse what cannot be hashed stably, naming it
            items.append((name, tuple(value) if isinstance(value, list) else value))
        return cls(notebook, tuple(items))

    def as_dict(self) -> dict[str, Any]:
        """The parameters as a dict (lists come back as lists, as papermill injects them)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.params}

    @property
    def run_id(self) -> str:
        """16 hex digits naming this run's directory; stable across processes."""
        return stable_hash({"notebook": self.notebook, "params": self.as_dict()})


def expand_grid(notebook: str, grid: Mapping[str, Sequence[Any]]) -> list[RunSpec]:
    """The cartesian product of ``grid``'s value lists, in row-major order.

    The first parameter varies slowest, so the run order (and the table's row order)
    follows the order the ``-p`` options were given in. A duplicate value in one list
    would name the same run twice, so it is refused, and so is a grid of more than
    :data:`memcglab.sweep.limits.MAX_RUNS` runs (before it is expanded).

    >>> [s.as_dict()["slots"] for s in expand_grid("n.ipynb", {"slots": [1, 2, 4]})]
    [1, 2, 4]
    >>> expand_grid("n.ipynb", {"slots": [1, 1]})
    Traceback (most recent call last):
    ...
    ValueError: slots: value 1 is given twice
    """
    for name, values in grid.items():
        if len(values) == 0:
            raise ValueError(f"{name}: no values given; give at least one")
    check_grid_size(grid)
    for name, values in grid.items():
        seen: set[str] = set()
        for v in values:
            key = canonical_json({"v": v})
            if key in seen:
                raise ValueError(f"{name}: value {v!r} is given twice")
            seen.add(key)
    names = list(grid)
    combos: Iterable[tuple[Any, ...]] = itertools.product(*(grid[n] for n in names))
    return [RunSpec.make(notebook, dict(zip(names, combo, strict=True))) for combo in combos]
