"""The published tables of the seed threads, loaded with validation.

Each table is a tidy CSV in ``data/published/`` with a JSON sidecar of the same name
that says where every number comes from (seed mail, thread subject, author, date,
machine, workload command), the unit and type of every column, which columns the
author derived from others and how the author rounded them. ``memcglab.stats``, the
studies and the notebooks read them through this module; a published number never
enters a simulation (``tests/test_no_published_in_simulation.py`` enforces it), and
the studies hold none, nor a thread's words (:func:`quote`), as a literal.

>>> t = load("seed003_madvise")
>>> int(t.frame.loc[0, "cgroups"]), float(t.frame.loc[0, "before_ms"])
(1, 446.0)
>>> t.units["stddev_ms"], t.source["author"]
('ms', 'Joshua Hahn')
>>> bool(rederive(t)["consistent"].all())
True
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from memcglab.resources import data_dir

__all__ = [
    "PUBLISHED_DIR",
    "UNITS",
    "PublishedTable",
    "table_names",
    "load",
    "quote",
    "rederive",
    "pct_change_interval",
]

#: data/published/: shipped inside an installed wheel, or beside the package in a
#: checkout and an editable install (:func:`memcglab.resources.data_dir` decides)
PUBLISHED_DIR = data_dir() / "published"

#: units a column may declare; "per-row" defers to the table's unit column; "address" is a
#: hexadecimal memory address kept as text (kernel addresses overflow int64)
UNITS = frozenset({"count", "Mbps", "ms", "%", "bytes", "s", "name", "text", "date", "per-row",
                   "address"})
_HEX = re.compile(r"^(0x)?[0-9a-fA-F]+$")
_DTYPES = frozenset({"int", "float", "str"})
_ROUNDING = frozenset({"round", "truncate"})
_FORMULAS = frozenset({"pct_change"})
_SOURCE_KEYS = ("thread_subject", "author", "date")
_MACHINE_KEYS = ("cpus", "memory_gb", "sockets", "kernel")
_WORKLOAD_KEYS = ("command", "description")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, eq=False)
class PublishedTable:
    """One validated table: the numbers (``frame``) and the sidecar (``meta``)."""

    name: str
    frame: pd.DataFrame
    meta: Mapping[str, Any]

    @property
    def units(self) -> dict[str, str]:
        """The unit of each column, by name."""
        return {c: spec["unit"] for c, spec in self.meta["columns"].items()}

    @property
    def source(self) -> dict[str, Any]:
        """Provenance of the whole table (empty when it is carried per row)."""
        return dict(self.meta.get("source", {}))

    @property
    def machine(self) -> dict[str, Any]:
        """The machine the numbers were measured on (cpus, memory_gb, sockets, kernel)."""
        return dict(self.meta["machine"])


def table_names(directory: Path | None = None) -> list[str]:
    """Names of the tables in ``directory`` (default: :data:`PUBLISHED_DIR`)."""
    d = PUBLISHED_DIR if directory is None else Path(directory)
    return sorted(p.stem for p in d.glob("*.csv") if p.with_suffix(".json").exists())


def load(name: str, directory: Path | None = None) -> PublishedTable:
    """Load table ``name`` and validate it against its sidecar."""
    d = PUBLISHED_DIR if directory is None else Path(directory)
    csv, side = d / f"{name}.csv", d / f"{name}.json"
    if not csv.exists() or not side.exists():
        have = ", ".join(table_names(d)) or "none"
        raise FileNotFoundError(f"published table {name!r}: need {csv} and {side}; have: {have}")
    meta = json.loads(side.read_text())
    _validate_meta(name, meta)
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    frame = _typed_frame(name, frame, meta)
    table = PublishedTable(name, frame, meta)
    _validate_provenance(table)
    return table


def quote(quote_id: str, directory: Path | None = None) -> str:
    """The words of the seed threads that a study quotes, from the ``thread_quotes`` table.

    >>> quote("fix2_oom_kills")
    'Fix 2 has been giving me lots of memcg OOM kills not seen before'
    """
    quotes = load("thread_quotes", directory).frame.set_index("quote_id")["quote"]
    if quote_id not in quotes.index:
        raise KeyError(f"quote_id={quote_id!r}: not in thread_quotes; valid: "
                       f"{', '.join(quotes.index)}")
    return str(quotes[quote_id])


def _fail(name: str, what: str) -> ValueError:
    return ValueError(f"published table {name!r}: {what}")


def _validate_meta(name: str, meta: Mapping[str, Any]) -> None:
    if meta.get("table") != name:
        raise _fail(name, f"sidecar 'table' is {meta.get('table')!r}; must be {name!r}")
    for key, need in (("machine", _MACHINE_KEYS), ("workload", _WORKLOAD_KEYS)):
        sect = meta.get(key)
        if not isinstance(sect, Mapping):
            raise _fail(name, f"sidecar lacks the {key!r} section (keys {', '.join(need)})")
        missing = [k for k in need if k not in sect]
        if missing:
            raise _fail(name, f"{key} lacks {', '.join(missing)} (use null when unstated)")
    if not meta["workload"]["command"]:
        raise _fail(name, "workload.command is empty; say 'not published: ...' when unstated")
    if "source" not in meta and "provenance_columns" not in meta:
        raise _fail(name, "sidecar needs a 'source' section or 'provenance_columns'")
    cols = meta.get("columns")
    if not isinstance(cols, Mapping) or not cols:
        raise _fail(name, "sidecar lacks 'columns' (name -> unit, dtype)")
    for col, spec in cols.items():
        unit, dtype = spec.get("unit"), spec.get("dtype")
        if unit not in UNITS:
            raise _fail(name, f"column {col!r} unit={unit!r}; valid: {', '.join(sorted(UNITS))}")
        if dtype not in _DTYPES:
            raise _fail(name, f"column {col!r} dtype={dtype!r}; "
                              f"valid: {', '.join(sorted(_DTYPES))}")
        if unit == "address" and dtype != "str":
            raise _fail(name, f"column {col!r} unit 'address' needs dtype 'str' (hexadecimal "
                              "text; kernel addresses overflow int64)")
        if unit == "per-row" and meta.get("unit_column") not in cols:
            raise _fail(name, f"column {col!r} has unit 'per-row' but no valid 'unit_column'")
    for der in meta.get("derived", []):
        if der.get("formula") not in _FORMULAS or der.get("rounding") not in _ROUNDING:
            raise _fail(name, f"derived {der!r}: formula must be one of {sorted(_FORMULAS)} "
                              f"and rounding one of {sorted(_ROUNDING)}")
        for c in [der.get("column"), *der.get("inputs", [])]:
            if c not in cols or "decimals" not in cols[c]:
                raise _fail(name, f"derived {der['column']!r} uses column {c!r}, which must be "
                                  "declared with 'decimals'")


def _typed_frame(name: str, raw: pd.DataFrame, meta: Mapping[str, Any]) -> pd.DataFrame:
    cols = meta["columns"]
    if list(raw.columns) != list(cols):
        raise _fail(name, f"CSV columns {list(raw.columns)} differ from the sidecar's {list(cols)}")
    out = {}
    for col, spec in cols.items():
        cells = raw[col]
        if spec["dtype"] == "str":
            if spec["unit"] == "address":
                bad = [(i, c) for i, c in enumerate(cells) if not _HEX.match(c)]
                if bad:
                    i, c = bad[0]
                    raise _fail(name, f"row {i + 1} column {col!r}: {c!r} is not a "
                                      "hexadecimal address")
            out[col] = cells.astype(str)
            continue
        nullable = spec["unit"] == "per-row" or spec.get("nullable", False)
        values = []
        for i, cell in enumerate(cells):
            if cell == "" and nullable:
                values.append(math.nan)
                continue
            try:
                v = float(cell)
            except ValueError:
                raise _fail(name, f"row {i + 1} column {col!r}: {cell!r} is not a number "
                                  f"({spec['dtype']}, unit {spec['unit']})") from None
            if spec["dtype"] == "int" and not v.is_integer():
                raise _fail(name, f"row {i + 1} column {col!r}: {cell!r} is not an integer")
            values.append(v)
        series = pd.Series(values, name=col, dtype=float)
        out[col] = series.astype("int64") if spec["dtype"] == "int" else series
    return pd.DataFrame(out)


def _validate_provenance(t: PublishedTable) -> None:
    rows = ([t.source] if "source" in t.meta
            else t.frame[list(t.meta["provenance_columns"])].to_dict("records"))
    for i, prov in enumerate(rows):
        where = "source" if "source" in t.meta else f"row {i + 1}"
        missing = [k for k in _SOURCE_KEYS if not prov.get(k)]
        if missing:
            raise _fail(t.name, f"{where} lacks provenance {', '.join(missing)}")
        if not _DATE.match(str(prov["date"])):
            raise _fail(t.name, f"{where} date={prov['date']!r}; must be ISO 8601 YYYY-MM-DD")
        if prov.get("kind", "seed") == "seed" and not prov.get("seed_file"):
            raise _fail(t.name, f"{where} is from a seed but names no seed_file")


def pct_change_interval(old: float, new: float, old_dec: int, new_dec: int) -> tuple[float, float]:
    """Range of ``(new / old - 1) * 100`` over the unrounded values the printed ones allow.

    A value printed with ``d`` decimals lies within half a unit of its last digit.

    >>> lo, hi = pct_change_interval(446, 441, 0, 0)
    >>> round(lo, 3), round(hi, 3)
    (-1.344, -0.898)
    """
    ho, hn = 0.5 * 10.0**-old_dec, 0.5 * 10.0**-new_dec
    lo = ((new - hn) / (old + ho) - 1.0) * 100.0
    hi = ((new + hn) / (old - ho) - 1.0) * 100.0
    return lo, hi


def _printed_interval(value: float, decimals: int, rounding: str) -> tuple[float, float]:
    # What true values print as ``value``: rounding covers half a unit either side;
    # truncation (toward zero) covers one unit away from zero.
    unit = 10.0**-decimals
    if rounding == "round":
        return value - unit / 2, value + unit / 2
    return (value, value + unit) if value >= 0 else (value - unit, value)


def rederive(table: PublishedTable, rounding: str | None = None) -> pd.DataFrame:
    """Recompute every derived column from its raw columns, row by row.

    Returns a tidy frame (column, row, published, derived, low, high, consistent):
    ``derived`` from the printed raw values, ``[low, high]`` what the raw values'
    own rounding allows, and ``consistent`` whether the published figure can be
    printed from a value in that range under the sidecar's rounding rule (or
    ``rounding`` when given, to test the other rule).
    """
    cols = table.meta["columns"]
    rows = []
    for der in table.meta.get("derived", []):
        a, b = der["inputs"]
        mode = rounding or der["rounding"]
        if mode not in _ROUNDING:
            raise ValueError(f"rounding={mode!r}: must be one of {sorted(_ROUNDING)}")
        for i, r in table.frame.iterrows():
            pub = float(r[der["column"]])
            if math.isnan(pub):
                continue
            old, new = float(r[a]), float(r[b])
            lo, hi = pct_change_interval(old, new, cols[a]["decimals"], cols[b]["decimals"])
            plo, phi = _printed_interval(pub, cols[der["column"]]["decimals"], mode)
            rows.append({
                "column": der["column"], "row": int(i), "published": pub,
                "derived": (new / old - 1.0) * 100.0, "low": lo, "high": hi,
                "consistent": bool(lo <= phi and plo <= hi),
            })
    return pd.DataFrame(rows, columns=["column", "row", "published", "derived", "low", "high",
                                       "consistent"])
