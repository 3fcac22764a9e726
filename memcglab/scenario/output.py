"""What ``memcglab predict`` prints: the scenario contract's JSON object, byte-stable.

Numbers are rounded once, here, to what a measurement could resolve (a change to
0.01 percentage points, a rate to 4 significant digits, a share of cycles to 0.001
points, a count per operation to 6 significant digits), so the same files, flags and
version give the same bytes on any machine whose floating point agrees that far.

>>> band = {"median": -70.123456, "low": -79.0, "high": -58.2}
>>> fmt_band(band, "pct")
{'median': -70.12, 'low': -79.0, 'high': -58.2}
>>> fmt_band({"median": 1234567.8, "low": 1.0e6, "high": 1.5e6}, "rate")
{'median': 1235000.0, 'low': 1000000.0, 'high': 1500000.0}
>>> dumps({"a": 1, "b": [1.5]})
'{"a":1,"b":[1.5]}'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["PROFILE_FUNCTIONS", "dumps", "fmt_band", "kernel_object", "scenario_object"]

#: the charge-path functions whose inclusive share of cycles a prediction reports
PROFILE_FUNCTIONS: tuple[str, ...] = ("try_charge_memcg", "page_counter_try_charge",
                                      "page_counter_uncharge", "refill_stock", "drain_stock",
                                      "obj_cgroup_charge")


def _sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return 0.0 if x == 0 else x
    return float(round(x, digits - 1 - int(math.floor(math.log10(abs(x))))))


def _round(x: float, how: str) -> float:
    x = float(x)
    if how == "pct":
        return round(x, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    if how == "share":
        return round(x, 3) + 0.0
    if how == "rate":
        return _sig(x, 4)
    return _sig(x, 6)


def fmt_band(band: Mapping[str, float], how: str) -> dict[str, float]:
    """``median``, ``low``, ``high`` rounded as ``how`` says (pct, share, rate, count)."""
    return {k: _round(band[k], how) for k in ("median", "low", "high")}


def kernel_object(rate: Mapping[str, float], walks: float, charges: float, uncharges: float,
                  profile: Mapping[str, Mapping[str, float]], bottleneck: str) -> dict[str, Any]:
    """The ``base`` or ``new`` object of the contract."""
    return {"ops_per_s": fmt_band(rate, "rate"),
            "walks_per_op": _round(walks, "count"),
            "charges_per_op": _round(charges, "count"),
            "uncharges_per_op": _round(uncharges, "count"),
            "profile": {f: fmt_band(profile[f], "share") for f in PROFILE_FUNCTIONS},
            "bottleneck": bottleneck}


def scenario_object(name: str, file: str, change: Mapping[str, float], base: dict[str, Any],
                    new: dict[str, Any], calibration: str, points: int, seed: int,
                    version: str, band: Mapping[str, float] | None = None,
                    draws: str | None = None) -> dict[str, Any]:
    """The whole object, keys in the contract's order (revision 2's ``band`` after
    ``new``, and ``draws``, the file ``--draws`` wrote, only when it was given)."""
    out = {"schema": 1, "name": name, "file": file, "metric": "ops_per_s",
           "change_pct": fmt_band(change, "pct"), "base": base, "new": new}
    if band is not None:
        out["band"] = {k: _round(v, "share") for k, v in band.items()}
    if draws is not None:
        out["draws"] = draws
    out.update({"calibration": calibration, "points": points, "seed": seed,
                "memcglab": version})
    return out


def dumps(obj: Any) -> str:
    """One line of compact JSON, keys in insertion order (the contract's)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)
