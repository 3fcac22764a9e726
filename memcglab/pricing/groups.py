"""Draws grouped by the discrete inputs that pick a trace, and loads per unit of work.

A priced quantity evaluates thousands of parameter points at once, but its counts are
keyed by trace: the modelling alternatives that change the trace (where pages are
released, where tasks start) and the trace seed. :func:`group_points` yields each
combination of those inputs present in a draw with the indices of its points, so a
quantity function prices each trace's load once over all its points.
:func:`per_unit_coefficients` turns one replay's events into the cost model's units per
unit of work (a message, a transaction), the form :class:`~memcglab.pricing.FlowLoad`
takes.

>>> from memcglab.uncertainty import Space
>>> d = Space([], {"release": ["task", "softirq"]}, seeds=[0, 1]).sample(8)
>>> sorted((k, len(i)) for k, i in group_points(d, ("release", "seed")))
[(('softirq', 0), 2), (('softirq', 1), 2), (('task', 0), 2), (('task', 1), 2)]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from memcglab.cost import CostParams, coefficients
from memcglab.layout import slot_scan_lines
from memcglab.models import MODELS
from memcglab.uncertainty import Draws

__all__ = ["group_points", "per_unit_coefficients", "subset"]


def group_points(d: Draws, names: Sequence[str]) -> Iterator[tuple[tuple[Any, ...], np.ndarray]]:
    """``(values, indices)`` for every combination of the discrete inputs ``names`` that
    the points of ``d`` take, in sorted order of their option indices."""
    if not names:
        yield (), np.arange(d.n)
        return
    missing = [k for k in names if k not in d.index]
    if missing:
        raise ValueError(f"group_points: {', '.join(missing)} not discrete inputs of the "
                         f"draws; discrete inputs: {', '.join(d.index)}")
    keys = np.column_stack([d.index[k] for k in names])
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for g, key in enumerate(uniq):
        values = tuple(d.options[k][int(i)] for k, i in zip(names, key, strict=True))
        yield values, np.flatnonzero(inverse == g)


def subset(d: Draws | Mapping[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The points ``idx`` of every input of ``d``, as a plain mapping."""
    values = d.values if isinstance(d, Draws) else d
    return {k: np.asarray(v)[idx] for k, v in values.items()}


def per_unit_coefficients(events: Any, model: str, slots: int, units: int,
                          keep_c2c: bool = True) -> np.ndarray:
    """The cost model's units (:meth:`CostParams.names` order) per unit of work of one
    replay: :func:`memcglab.cost.coefficients` per charge times charges over ``units``.

    A multi stock's lookup scans ``slots`` slots; single and pcstock one. Zeros for a
    replay without charges. ``keep_c2c=False`` zeroes ``c2c_transfer``, which the
    queueing model prices through its line stations.
    """
    if units <= 0:
        raise ValueError(f"units={units}: the work the replay stands for must be > 0")
    if model not in MODELS:
        raise ValueError(f"model={model!r}: unknown; valid: {', '.join(MODELS)}")
    t = events.totals()
    if t["charges"] == 0:
        return np.zeros(len(CostParams.names()))
    looked = slots if MODELS[model].multi else 1
    c = coefficients(events, lines_per_scan=slot_scan_lines(looked), slots=looked)
    out = c.reindex(list(CostParams.names())).to_numpy(float) * t["charges"] / units
    if not keep_c2c:
        out[CostParams.names().index("c2c_transfer")] = 0.0
    return out
