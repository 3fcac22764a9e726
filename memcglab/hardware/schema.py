"""What a hardware prior file may hold: known names, their units and plausible ranges.

Every prior in ``data/hardware/`` is checked against :data:`PARAMETERS` (a cost-model
parameter of :class:`memcglab.cost.CostParams`, or an input of the contention model)
and every curve against :data:`CURVES`; a value outside the plausible range is a typo
or a unit slip (ns written as cycles), not a bold measurement. Errors name the file,
the field and what is valid.

>>> prior_from_table("f.toml", "l1_hit", {"unit": "cycles", "low": 4, "typical": 4,
...     "high": 5, "shape": "uniform", "source": "manual"}).high
5.0
>>> prior_from_table("f.toml", "l1_hit", {"unit": "ns", "low": 1, "typical": 1,
...     "high": 2, "shape": "uniform", "source": "manual"})
Traceback (most recent call last):
...
memcglab.hardware.schema.HardwareDataError: f.toml: priors.l1_hit.unit='ns': valid units: cycles
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memcglab.cost import CostParams
from memcglab.uncertainty.priors import SHAPES, Prior

__all__ = ["CURVES", "PARAMETERS", "HardwareDataError", "ParamSpec", "number",
           "prior_from_table", "prior_to_table"]


class HardwareDataError(ValueError):
    """A hardware prior or profile file is malformed; the message names file and field."""

    def __init__(self, file: object, field: str, what: str) -> None:
        super().__init__(f"{file}: {field}{what}")
        self.file, self.field = str(file), field


@dataclass(frozen=True)
class ParamSpec:
    """The units a parameter may be given in and the range a value must lie in."""

    units: tuple[str, ...]
    minimum: float
    maximum: float
    meaning: str


_CYCLES = ("cycles",)
#: every known prior: the eight cost-model parameters, then the contention model's inputs
PARAMETERS: dict[str, ParamSpec] = {
    "l1_hit": ParamSpec(_CYCLES, 0.0, 50.0, "L1d load-to-use latency"),
    "slot_compare": ParamSpec(_CYCLES, 0.0, 50.0, "one stock slot compared"),
    "percpu_rmw": ParamSpec(_CYCLES, 0.0, 100.0, "non-atomic RMW of a local L1 line"),
    "atomic_rmw": ParamSpec(_CYCLES, 0.0, 500.0, "uncontended LOCK XADD on an L1 line"),
    "c2c_transfer": ParamSpec(_CYCLES, 0.0, 5000.0, "line transfer between cores of a socket"),
    "stock_lock": ParamSpec(_CYCLES, 0.0, 500.0, "per-CPU stock trylock + unlock"),
    "call": ParamSpec(_CYCLES, 0.0, 500.0, "call, return and prologue"),
    "random_u32": ParamSpec(_CYCLES, 0.0, 5000.0, "get_random_u32_below"),
    "c2c_transfer_cross_socket": ParamSpec(_CYCLES, 0.0, 10000.0,
                                           "line transfer between sockets"),
    "contended_rmw_per_sharer": ParamSpec(_CYCLES, 0.0, 5000.0,
                                          "extra cycles per contended atomic per sharer"),
    "cpu_ghz": ParamSpec(("GHz",), 0.2, 8.0, "core clock"),
    "smt_per_core": ParamSpec(("threads",), 1.0, 8.0, "hardware threads per core"),
    "smt_gain": ParamSpec(("fraction",), 0.0, 1.0,
                          "extra work of a core running two threads instead of one"),
    "other_cycles_per_packet": ParamSpec(_CYCLES, 1.0, 1e7,
                                         "non-memcg work per loopback TCP message"),
}
assert set(CostParams.names()) <= set(PARAMETERS), "every cost parameter needs a prior spec"

#: every known curve: x name, units and range of the values
CURVES: dict[str, tuple[str, ParamSpec]] = {
    "contended_rmw": ("sharers", ParamSpec(("ns",), 0.0, 1e5,
                                           "ns per atomic add overall, N threads on one line")),
}

_PRIOR_KEYS = ("unit", "low", "typical", "high", "shape", "source")


def number(file: object, field: str, v: Any) -> float:
    """``v`` as a float, or an error naming ``field`` when it is not a finite number."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise HardwareDataError(file, field, f"={v!r}: must be a finite number")
    return float(v)


def text(file: object, field: str, v: Any, empty_ok: bool = False) -> str:
    """``v`` as a string, or an error when it is not one (or is empty and must not be)."""
    if not isinstance(v, str) or (not empty_ok and not v.strip()):
        raise HardwareDataError(file, field, f"={v!r}: must be a non-empty string"
                                if not empty_ok else f"={v!r}: must be a string")
    return v


def check_keys(file: object, where: str, table: Mapping[str, Any], required: tuple[str, ...],
               optional: tuple[str, ...] = ()) -> None:
    """Error on a missing or an unknown key of ``table`` (found at ``where``)."""
    if not isinstance(table, Mapping):
        raise HardwareDataError(file, where, f": must be a table, got {type(table).__name__}")
    missing = [k for k in required if k not in table]
    if missing:
        raise HardwareDataError(file, where, f": lacks {', '.join(missing)}; needs "
                                f"{', '.join(required)}")
    unknown = sorted(set(table) - set(required) - set(optional))
    if unknown:
        raise HardwareDataError(file, where, f": unknown key(s) {', '.join(unknown)}; valid: "
                                f"{', '.join((*required, *optional))}")


def check_unit_shape(file: object, where: str, table: Mapping[str, Any],
                     spec: ParamSpec) -> None:
    """Error unless ``table``'s ``unit`` is one of ``spec``'s and its ``shape`` a known one."""
    if table["unit"] not in spec.units:
        raise HardwareDataError(file, f"{where}.unit", f"={table['unit']!r}: valid units: "
                                f"{', '.join(spec.units)}")
    if table["shape"] not in SHAPES:
        raise HardwareDataError(file, f"{where}.shape", f"={table['shape']!r}: valid: "
                                f"{', '.join(SHAPES)}")


def prior_from_table(file: object, name: str, t: Mapping[str, Any]) -> Prior:
    """Validate ``[priors.NAME]`` of ``file`` and return it as a :class:`Prior`."""
    where = f"priors.{name}"
    if name not in PARAMETERS:
        raise HardwareDataError(file, where, f": unknown parameter; valid: "
                                f"{', '.join(PARAMETERS)}")
    check_keys(file, where, t, _PRIOR_KEYS, ("note",))
    spec = PARAMETERS[name]
    check_unit_shape(file, where, t, spec)
    unit = t["unit"]
    vals = {k: number(file, f"{where}.{k}", t[k]) for k in ("low", "typical", "high")}
    for k, v in vals.items():
        if not spec.minimum <= v <= spec.maximum:
            raise HardwareDataError(file, f"{where}.{k}", f"={v}: outside the plausible range "
                                    f"[{spec.minimum:g}, {spec.maximum:g}] {unit} of "
                                    f"{spec.meaning}")
    source = text(file, f"{where}.source", t["source"])
    note = text(file, f"{where}.note", t.get("note", ""), empty_ok=True)
    try:
        return Prior(name, unit, vals["low"], vals["typical"], vals["high"], t["shape"],
                     source, note)
    except ValueError as e:
        raise HardwareDataError(file, where, f": {e}") from None


def prior_to_table(p: Prior) -> dict[str, Any]:
    """The TOML table of a prior: the inverse of :func:`prior_from_table`."""
    t: dict[str, Any] = {"unit": p.unit, "low": float(p.low), "typical": float(p.typical),
                         "high": float(p.high), "shape": p.shape, "source": p.source}
    if p.note:
        t["note"] = p.note
    return t
