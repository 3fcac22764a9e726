"""The rows a study hands the report: claims and counts, validated, and their sidecar JSON.

Every study's ``claims`` returns claim rows and its ``counts`` count rows; a notebook
records both in its sidecar (``result.json``), and ``memcglab reproduce`` gathers them into
``claims.parquet``, ``counts.parquet`` and the report. :mod:`memcglab.studies` re-exports
everything here, so ``from memcglab.studies import claim_row`` is the public spelling.

Claim rows
----------
Each row that ``claims`` returns is a dict. The four keys of :data:`CLAIM_KEYS` are
required, each a non-empty ``str`` ready for a report table:

``claim``
    the published claim, named by seed, in a few words
    (``"seed 000: improvement grows with clients (table shape)"``);
``published``
    what the seed thread states, with its numbers (``"14% at 6 -> 145% at 36 clients"``);
``simulated``
    what this run of memcglab found, with its numbers and the test used;
``verdict``
    the judgement in a few words (``"reproduced"``, ``"refuted"``, ``"undetermined"``).

The keys of :data:`PRICED_KEYS` are optional; a claim whose answer is a price (cycles,
percent of a benchmark) carries them, a structural or count-derived one does not:

``kind`` (str)
    one of :data:`KINDS`; when absent, ``"priced"`` if any priced key is present,
    else ``"structural"`` (:func:`claim_kind`);
``estimate`` (float, optional)
    the central value under the priors (the median), in ``unit``;
``low``, ``high`` (float, required when priced)
    the 90% interval (5th and 95th percentiles) over seeds *and* the hardware priors;
``unit`` (str, required when priced)
    the unit of ``estimate``, ``low`` and ``high``: ``"%"``, ``"cycles/packet"``;
``p_holds`` (float in [0, 1], required when priced)
    the probability that the published claim holds under those priors;
``driver`` (str, required when priced)
    the input with the largest total Sobol index (``"percpu_rmw"``);
``driver_st`` (float, optional)
    that total Sobol index, as estimated: it belongs in [0, 1], but an estimator's
    sampling noise can put it a little outside, so any finite value is kept;
``break_even`` (str, optional)
    where the conclusion flips, with the parameter and its unit
    (``"percpu_rmw = 0.45 cycles"``), or ``"none in prior range"``.

A key whose value is ``None`` counts as absent. Rows keep the keys they were given, in
:data:`CLAIM_COLUMNS` order; ``memcglab reproduce`` writes every column of
:data:`CLAIM_COLUMNS` to ``claims.parquet``, null where a row has no value.

Count rows
----------
Counts (walks per 1000 charges, evictions, active memcgs per CPU) come from the replay,
not from the cost model: for a given trace they are exact, and the report shows them
before any price. A study's ``counts`` returns dicts with exactly :data:`COUNT_KEYS`:
``study`` (str, the study number, ``"02"``), ``quantity`` (str, with its unit:
``"walks per 1000 charges"``), ``configuration`` (str: ``"multi, 7 slots, netperf 36
clients"``), ``value`` (int or finite float) and ``note`` (str, may be empty).

In the sidecar
--------------
:func:`memcglab.sweep.record_result` accepts scalars only (a sweep's table has one
column per result), so a notebook records its claims as a JSON *string* under the key
``"claims"`` (:func:`claims_json`) and its counts under ``"counts"``
(:func:`counts_json`); :func:`read_claims` and :func:`read_counts` turn a
``result.json`` (its path, its directory, or its loaded dict) back into rows. A sidecar
without ``"counts"`` has no count rows.

>>> rows = [claim_row("seed 003: negligible", "-1.2%", "+0.4%", "reproduced"),
...         claim_row("seed 000: LRU costs", "1-3%", "+1.8%", "undetermined", low=-0.1,
...                   high=4.9, unit="%", p_holds=0.83, driver="percpu_rmw")]
>>> read_claims({"claims": claims_json(rows)}) == rows
True
>>> [claim_kind(r) for r in rows]
['structural', 'priced']
>>> counts = [count_row("02", "walks per 1000 charges", "multi, 7 slots", 92.6)]
>>> read_counts({"counts": counts_json(counts)}) == counts, read_counts({})
(True, [])
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CLAIM_COLUMNS", "CLAIM_KEYS", "CLAIM_NUMBERS", "COUNT_KEYS", "KINDS",
           "PRICED_KEYS", "PRICED_REQUIRED", "check_claims", "check_counts", "claim_kind",
           "claim_row", "claims_json", "count_row", "counts_json", "read_claims", "read_counts"]

#: the keys every claim row has
CLAIM_KEYS: tuple[str, ...] = ("claim", "published", "simulated", "verdict")
#: the optional keys of a claim row (``kind`` and the price)
PRICED_KEYS: tuple[str, ...] = ("kind", "estimate", "low", "high", "unit", "p_holds",
                                "driver", "driver_st", "break_even")
#: the priced keys a priced claim must have
PRICED_REQUIRED: tuple[str, ...] = ("low", "high", "unit", "p_holds", "driver")
#: every claim key, in report and ``claims.parquet`` column order
CLAIM_COLUMNS: tuple[str, ...] = ("claim", "kind", "published", "simulated", "estimate",
                                  "low", "high", "unit", "p_holds", "driver", "driver_st",
                                  "break_even", "verdict")
#: what a claim's answer is: a price with an interval, a shape or test, or exact counts
KINDS: tuple[str, ...] = ("priced", "structural", "count-derived")
#: the keys of every count row, in report and ``counts.parquet`` column order
COUNT_KEYS: tuple[str, ...] = ("study", "quantity", "configuration", "value", "note")

#: the claim keys whose values are floats (the rest are str)
CLAIM_NUMBERS: tuple[str, ...] = ("estimate", "low", "high", "p_holds", "driver_st")
_UNIT_INTERVAL = ("p_holds",)


def _text(what: str, key: str, value: Any, empty: bool = False) -> str:
    if not isinstance(value, str) or not (value or empty):
        need = "a str" if empty else "a non-empty str"
        raise ValueError(f"{what} field {key}={value!r}: must be {need}")
    return value


def _number(what: str, key: str, value: Any, keep_int: bool = False) -> float | int:
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()  # numpy scalars, from pandas columns
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} field {key}={value!r}: must be a finite number")
    return value if keep_int and isinstance(value, int) else float(value)


def claim_kind(row: Mapping[str, Any]) -> str:
    """The row's ``kind``: as given, else ``"priced"`` if it has any priced key, else
    ``"structural"``."""
    if row.get("kind") is not None:
        return row["kind"]
    priced = any(row.get(k) is not None for k in PRICED_KEYS if k != "kind")
    return "priced" if priced else "structural"


def _check_claim(i: int, row: Mapping[str, Any]) -> dict[str, Any]:
    what = f"claim row {i}"
    if not isinstance(row, Mapping):
        raise ValueError(f"{what}={row!r}: must be a dict with keys {', '.join(CLAIM_KEYS)}")
    given = {k: v for k, v in row.items() if v is not None}
    unknown = [k for k in given if k not in CLAIM_COLUMNS]
    if unknown:
        raise ValueError(f"{what} has unknown keys {sorted(map(str, unknown))}; a claim row "
                         f"has {', '.join(CLAIM_KEYS)} and optionally {', '.join(PRICED_KEYS)}")
    missing = [k for k in CLAIM_KEYS if k not in given]
    if missing:
        raise ValueError(f"{what} lacks {', '.join(missing)}; every claim row needs "
                         f"{', '.join(CLAIM_KEYS)}")
    out: dict[str, Any] = {}
    for key in CLAIM_COLUMNS:
        if key not in given:
            continue
        value = given[key]
        if key in CLAIM_NUMBERS:
            value = _number(what, key, value)
            if key in _UNIT_INTERVAL and not 0.0 <= value <= 1.0:
                raise ValueError(f"{what} field {key}={value!r}: must be in [0, 1]")
        else:
            value = _text(what, key, value)
        out[key] = value
    kind = claim_kind(out)
    if kind not in KINDS:
        raise ValueError(f"{what} field kind={kind!r}: must be one of {', '.join(KINDS)}")
    if kind == "priced":
        lacking = [k for k in PRICED_REQUIRED if k not in out]
        if lacking:
            raise ValueError(f"{what} is priced but lacks {', '.join(lacking)}; a priced "
                             f"claim needs {', '.join(PRICED_REQUIRED)}")
        if out["low"] > out["high"]:
            raise ValueError(f"{what} fields low={out['low']!r}, high={out['high']!r}: "
                             "low must not exceed high")
    else:
        extra = [k for k in PRICED_KEYS if k in out and k != "kind"]
        if extra:
            raise ValueError(f"{what} is {kind} but has {', '.join(extra)}; only a priced "
                             "claim carries an interval (set kind='priced' or drop them)")
    return out


def claim_row(claim: str, published: str, simulated: str, verdict: str, *,
              kind: str | None = None, estimate: float | None = None,
              low: float | None = None, high: float | None = None, unit: str | None = None,
              p_holds: float | None = None, driver: str | None = None,
              driver_st: float | None = None, break_even: str | None = None) -> dict[str, Any]:
    """One validated claim row; the priced keywords left as None are left out.

    >>> claim_row("seed 000: MAPE", "table", "12%", "")
    Traceback (most recent call last):
    ...
    ValueError: claim row 0 field verdict='': must be a non-empty str
    >>> claim_row("c", "p", "s", "v", low=2.0, high=1.0, unit="%", p_holds=0.5, driver="x")
    Traceback (most recent call last):
    ...
    ValueError: claim row 0 fields low=2.0, high=1.0: low must not exceed high
    """
    row = {"claim": claim, "kind": kind, "published": published, "simulated": simulated,
           "estimate": estimate, "low": low, "high": high, "unit": unit, "p_holds": p_holds,
           "driver": driver, "driver_st": driver_st, "break_even": break_even,
           "verdict": verdict}
    return check_claims([row])[0]


def check_claims(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate claim rows (the module docstring's contract); return plain dicts, numbers as
    floats, keys in :data:`CLAIM_COLUMNS` order, None values dropped."""
    return [_check_claim(i, row) for i, row in enumerate(rows)]


def claims_json(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a JSON list in one string: the sidecar's ``"claims"`` value."""
    return json.dumps(check_claims(rows), ensure_ascii=False)


def count_row(study: str, quantity: str, configuration: str, value: float,
              note: str = "") -> dict[str, Any]:
    """One validated count row.

    >>> count_row("02", "evictions", "lru, 7 slots", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: count row 0 field value=nan: must be a finite number
    """
    return check_counts([{"study": study, "quantity": quantity,
                          "configuration": configuration, "value": value, "note": note}])[0]


def check_counts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate count rows (exactly :data:`COUNT_KEYS`; ``value`` an int or a finite float,
    the rest str, only ``note`` may be empty); return plain dicts in that key order."""
    out = []
    for i, row in enumerate(rows):
        what = f"count row {i}"
        if not isinstance(row, Mapping) or set(row) != set(COUNT_KEYS):
            keys = sorted(map(str, row)) if isinstance(row, Mapping) else row
            raise ValueError(f"{what} has keys {keys!r}; need exactly {', '.join(COUNT_KEYS)}")
        out.append({k: _number(what, k, row[k], keep_int=True) if k == "value"
                    else _text(what, k, row[k], empty=k == "note") for k in COUNT_KEYS})
    return out


def counts_json(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a JSON list in one string: the sidecar's ``"counts"`` value."""
    return json.dumps(check_counts(rows), ensure_ascii=False)


def _sidecar(result: Mapping[str, Any] | str | os.PathLike[str]) -> Mapping[str, Any]:
    if isinstance(result, Mapping):
        return result
    path = Path(result)
    path = path / "result.json" if path.is_dir() else path
    return json.loads(path.read_text(encoding="utf-8"))


def _rows(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def read_claims(result: Mapping[str, Any] | str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Claim rows from a sidecar: a loaded ``result.json`` dict, its path, or its directory.

    Accepts the value as the JSON string :func:`claims_json` writes or as a list; a
    sidecar without ``"claims"`` raises KeyError.
    """
    result = _sidecar(result)
    if "claims" not in result:
        raise KeyError(f"sidecar has no 'claims' key; has {', '.join(sorted(result))}")
    return check_claims(_rows(result["claims"]))


def read_counts(result: Mapping[str, Any] | str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Count rows from a sidecar, like :func:`read_claims`; no ``"counts"`` key means none."""
    result = _sidecar(result)
    return check_counts(_rows(result["counts"])) if "counts" in result else []
