"""Curves of priors: one prior per point, e.g. ns per atomic add vs the number of sharers.

A curve in ``data/hardware/priors.toml`` (``[curves.NAME]``) lists its x values (for
``contended_rmw``, ``sharers``) and ``low``, ``typical`` and ``high`` lists of the same
length; :meth:`Curve.prior_at` gives the prior between the points.

>>> c = Curve("contended_rmw", "ns", (1, 4), (1.0, 10.0), (2.0, 20.0), (3.0, 30.0),
...           "triangular", "example")
>>> c.prior_at(2).typical
11.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcglab.hardware.schema import (
    CURVES,
    HardwareDataError,
    check_keys,
    check_unit_shape,
    number,
    text,
)
from memcglab.uncertainty.priors import Prior

__all__ = ["Curve", "curve_from_table"]

_WHICH = ("low", "typical", "high")


@dataclass(frozen=True)
class Curve:
    """A prior per point of a curve (values at ``x``), e.g. ns per atomic op vs sharers."""

    name: str
    unit: str
    x: tuple[int, ...]
    low: tuple[float, ...]
    typical: tuple[float, ...]
    high: tuple[float, ...]
    shape: str
    source: str
    note: str = ""

    def prior_at(self, x: float) -> Prior:
        """The prior at ``x``, interpolated linearly in log ``x`` (clamped at the ends).

        >>> Curve("contended_rmw", "ns", (1, 4), (1.0, 1.0), (2.0, 8.0), (3.0, 9.0),
        ...       "triangular", "example").prior_at(100).typical
        8.0
        """
        if not x >= 1:
            raise ValueError(f"{self.name}: x={x!r}: must be >= 1 ({CURVES[self.name][0]})")
        lx = np.log(np.asarray(self.x, dtype=float))
        v = [float(np.interp(np.log(x), lx, np.asarray(a))) for a in
             (self.low, self.typical, self.high)]
        shape = "point" if v[0] == v[2] else self.shape
        return Prior(f"{self.name}@{x:g}", self.unit, v[0], v[1], v[2], shape,
                     self.source, self.note)

    def to_table(self) -> dict[str, Any]:
        """The curve's TOML table."""
        t = {"unit": self.unit, CURVES[self.name][0]: list(self.x), "low": list(self.low),
             "typical": list(self.typical), "high": list(self.high), "shape": self.shape,
             "source": self.source}
        return {**t, "note": self.note} if self.note else t


def curve_from_table(file: object, name: str, t: Mapping[str, Any]) -> Curve:
    """Validate ``[curves.NAME]`` of ``file`` and return it as a :class:`Curve`."""
    where = f"curves.{name}"
    if name not in CURVES:
        raise HardwareDataError(file, where, f": unknown curve; valid: {', '.join(CURVES)}")
    xname, spec = CURVES[name]
    check_keys(file, where, t, ("unit", xname, "low", "typical", "high", "shape", "source"),
               ("note",))
    check_unit_shape(file, where, t, spec)
    xs = t[xname]
    if (not isinstance(xs, list) or not xs or any(isinstance(v, bool) or not isinstance(v, int)
                                                  or v < 1 for v in xs)
            or list(xs) != sorted(set(xs))):
        raise HardwareDataError(file, f"{where}.{xname}", f"={xs!r}: must be a non-empty, "
                                "strictly increasing list of integers >= 1")
    cols = {}
    for k in _WHICH:
        vs = t[k]
        if not isinstance(vs, list) or len(vs) != len(xs):
            raise HardwareDataError(file, f"{where}.{k}", f": must be a list of {len(xs)} "
                                    f"numbers, one per {xname}")
        cols[k] = tuple(number(file, f"{where}.{k}[{i}]", v) for i, v in enumerate(vs))
        for i, v in enumerate(cols[k]):
            if not spec.minimum <= v <= spec.maximum:
                raise HardwareDataError(file, f"{where}.{k}[{i}]", f"={v}: outside "
                                        f"[{spec.minimum:g}, {spec.maximum:g}] {t['unit']}")
    for i, (lo, ty, hi) in enumerate(zip(*cols.values(), strict=True)):
        if not lo <= ty <= hi:
            raise HardwareDataError(file, f"{where}[{i}]", f": low={lo}, typical={ty}, "
                                    f"high={hi}: need low <= typical <= high")
    return Curve(name, t["unit"], tuple(xs), cols["low"], cols["typical"], cols["high"],
                 t["shape"], text(file, f"{where}.source", t["source"]),
                 text(file, f"{where}.note", t.get("note", ""), empty_ok=True))
