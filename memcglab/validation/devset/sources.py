"""Reading one source: its sidecar, its table (or the data/published table behind it).

A source's sidecar gives every printed table's provenance (subject, author, date, where the
date comes from, message-id), its kernels as printed, its verbatim lines and how it rounds;
``SOURCE.csv`` holds one printed value per row. A sidecar with ``published`` points at a
table of ``data/published/`` instead, whose own checks (:mod:`memcglab.published`) run.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memcglab import published
from memcglab.resources import data_dir
from memcglab.validation.devset.digits import check_changes, check_excerpts
from memcglab.validation.devset.records import DevsetError, Source, SourceRow, Table

__all__ = ["VALIDATION_DIR", "ROW_COLUMNS", "load_source", "read_csv", "read_json", "read_number",
           "resolve_dir", "source_ids"]

#: data/validation/, installed or in a checkout (:func:`memcglab.resources.data_dir`)
VALIDATION_DIR = data_dir() / "validation"
ROW_COLUMNS = ("table", "condition", "kernel", "quantity", "function", "kind", "unit",
               "printed", "value", "noise_printed", "noise_pct", "change_printed",
               "excerpt_line")
_KINDS = ("benchmark", "profile-self", "profile-children", "system", "rate")
_PROVENANCE = ("subject", "author", "date", "date_source", "message_id")
_TOKENS = ("change", "value", "noise")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NOISE = re.compile(r"^±\s*(\d+)%$")


def resolve_dir(directory: Path | None) -> Path:
    """``directory``, or the shipped data/validation/ when None."""
    return VALIDATION_DIR if directory is None else Path(directory)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON sidecar; a missing or malformed file is a :class:`DevsetError` naming it."""
    if not path.is_file():
        raise DevsetError(path, "file", "does not exist")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DevsetError(path, "file", f"not valid JSON: {e}") from None


def read_csv(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a CSV whose header must be ``columns``, every cell present."""
    if not path.is_file():
        raise DevsetError(path, "file", "does not exist")
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != columns:
            raise DevsetError(path, "header", f"columns {reader.fieldnames} must be "
                              f"{list(columns)}")
        rows = list(reader)
    for i, r in enumerate(rows):
        if None in r or None in r.values():
            raise DevsetError(path, f"row {i + 2}", f"needs exactly {len(columns)} cells")
    return rows


def read_number(path: object, where: str, text: str, empty_ok: bool = False) -> float | None:
    """A printed number (thousands separators and a Unicode minus allowed), finite."""
    if text == "" and empty_ok:
        return None
    try:
        v = float(text.replace(",", "").replace("−", "-"))
    except ValueError:
        raise DevsetError(path, where, f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise DevsetError(path, where, f"{text!r} is not finite")
    return v


def source_ids(directory: Path | None = None) -> list[str]:
    """The sources of the set: every sidecar but ``cases.json``."""
    return sorted(p.stem for p in resolve_dir(directory).glob("*.json") if p.stem != "cases")


def _provenance(path: Path, where: str, prov: Any) -> None:
    if not isinstance(prov, Mapping):
        raise DevsetError(path, where, f"needs provenance ({', '.join(_PROVENANCE)})")
    missing = [k for k in _PROVENANCE if not prov.get(k)]
    if missing:
        raise DevsetError(path, where, f"lacks provenance {', '.join(missing)}")
    if not _DATE.match(str(prov["date"])):
        raise DevsetError(path, f"{where}.date", f"{prov['date']!r} must be YYYY-MM-DD")


def _table(path: Path, tid: str, t: Mapping[str, Any]) -> Table:
    where = f"tables.{tid}"
    _provenance(path, f"{where}.source", t.get("source"))
    kernels = t.get("kernels")
    if not isinstance(kernels, Mapping) or t.get("reference") not in kernels:
        raise DevsetError(path, f"{where}.reference", f"{t.get('reference')!r} must be one "
                          "of its kernels")
    order = tuple(t.get("token_order", ()))
    if sorted(order) != sorted(set(order)) or not set(order) <= set(_TOKENS) or not order:
        raise DevsetError(path, f"{where}.token_order", f"{list(order)}: use each of "
                          f"{', '.join(_TOKENS)} at most once")
    for key, valid in (("integer_rounding", ("round", "truncate-or-round")),
                       ("change_rounding", ("round", "truncate"))):
        if t.get(key) not in valid:
            raise DevsetError(path, f"{where}.{key}", f"{t.get(key)!r} (valid: "
                              f"{', '.join(valid)})")
    text = "\n".join([*t.get("header", []), *t.get("rows", []), *t.get("context", [])])
    for k in kernels:
        if k not in text:
            raise DevsetError(path, f"{where}.kernels", f"{k!r} is not printed in the excerpt")
    return Table(tid, dict(t["source"]), t["reference"], dict(kernels), order,
                 t["integer_rounding"], t["change_rounding"], t.get("noise_hidden_below_pct"),
                 tuple(t.get("header", [])), tuple(t.get("rows", [])))


def _row(path: Path, i: int, r: Mapping[str, str], tables: Mapping[str, Table]) -> SourceRow:
    where = f"row {i + 2}"
    t = tables.get(r["table"])
    if t is None:
        raise DevsetError(path, f"{where} table", f"{r['table']!r} (valid: {', '.join(tables)})")
    if r["kernel"] not in t.kernels:
        raise DevsetError(path, f"{where} kernel", f"{r['kernel']!r} is not a kernel of table "
                          f"{t.table_id} (valid: {', '.join(t.kernels)})")
    if r["kind"] not in _KINDS:
        raise DevsetError(path, f"{where} kind", f"{r['kind']!r} (valid: {', '.join(_KINDS)})")
    if bool(r["function"]) != r["kind"].startswith("profile-"):
        raise DevsetError(path, f"{where} function", "a profile row needs its function; "
                          "other rows have none")
    value = read_number(path, f"{where} value", r["value"])
    if read_number(path, f"{where} printed", r["printed"]) != value:
        raise DevsetError(path, f"{where} value", f"{r['value']} is not the printed "
                          f"{r['printed']!r}")
    noise = read_number(path, f"{where} noise_pct", r["noise_pct"], empty_ok=True)
    m = _NOISE.match(r["noise_printed"])
    if (m is None and r["noise_printed"]) or (noise != (float(m.group(1)) if m else None)):
        raise DevsetError(path, f"{where} noise_pct", f"{r['noise_pct']!r} does not read "
                          f"{r['noise_printed']!r}")
    line = int(read_number(path, f"{where} excerpt_line", r["excerpt_line"]))
    if not 0 <= line < len(t.lines):
        raise DevsetError(path, f"{where} excerpt_line", f"{line}: table {t.table_id} has "
                          f"{len(t.lines)} excerpt lines")
    return SourceRow(r["table"], r["condition"], r["kernel"], r["quantity"], r["function"],
                     r["kind"], r["unit"], r["printed"], value, r["noise_printed"], noise,
                     r["change_printed"], line)


def _published_rows(path: Path, spec: Mapping[str, Any],
                    published_dir: Path | None) -> tuple[dict[str, Table], list[SourceRow]]:
    t = published.load(spec["table"], published_dir)
    bad = published.rederive(t)
    if not bad["consistent"].all():
        raise DevsetError(path, "published.table", f"{spec['table']}'s derived column does "
                          "not follow from its values (memcglab.published.rederive)")
    cols = t.meta["columns"]
    prov = {"subject": t.source["thread_subject"], **t.source}
    _provenance(path, "published.table", prov)
    for kernel in spec["kernels"]:
        if not any(kernel in line for line in t.meta["excerpt"]):
            raise DevsetError(path, "published.kernels", f"{kernel!r} is not printed in "
                              f"{spec['table']}'s excerpt")
    table = Table(spec["table"], prov, spec["reference"], dict.fromkeys(spec["kernels"], ""),
                  lines=tuple(t.meta["excerpt"]))
    rows = []
    for _, r in t.frame.iterrows():
        cond = f"{spec['condition_column']}={int(r[spec['condition_column']])}"
        for kernel, col in spec["kernels"].items():
            dec = cols[col]["decimals"]
            change = ""
            if kernel == spec["change_kernel"]:
                change = f"{r[spec['change_column']]:.{cols[spec['change_column']]['decimals']}f}%"
            noise = float(r[spec["noise_column"]]) if spec.get("noise_column") else None
            rows.append(SourceRow(spec["table"], cond, kernel, spec["quantity"], "",
                                  spec["kind"], spec["unit"], f"{r[col]:.{dec}f}",
                                  float(r[col]), change_printed=change, noise_abs=noise))
    return {spec["table"]: table}, rows


def load_source(source_id: str, directory: Path | None = None,
                published_dir: Path | None = None) -> Source:
    """Load one source and check its rows against its excerpts and its own arithmetic."""
    d = resolve_dir(directory)
    side = d / f"{source_id}.json"
    meta = read_json(side)
    if meta.get("source_id") != source_id:
        raise DevsetError(side, "source_id", f"{meta.get('source_id')!r} must be "
                          f"{source_id!r} (the file's name)")
    if meta.get("role") not in ("cases", "calibration") or not meta.get("title"):
        raise DevsetError(side, "role", f"{meta.get('role')!r} (valid: cases, calibration), "
                          "with a title")
    if "published" in meta:
        tables, rows = _published_rows(side, meta["published"], published_dir)
    else:
        for key in ("machine", "workload", "tables"):
            if not isinstance(meta.get(key), Mapping):
                raise DevsetError(side, key, "is missing")
        if not meta["workload"].get("command") or not meta["machine"].get("as_printed"):
            raise DevsetError(side, "workload.command", "the command (or 'not published: "
                              "...') and machine.as_printed are required")
        tables = {tid: _table(side, tid, t) for tid, t in meta["tables"].items()}
        path = d / f"{source_id}.csv"
        rows = [_row(path, i, r, tables) for i, r in enumerate(read_csv(path, ROW_COLUMNS))]
        check_excerpts(path, tables, rows)
        check_changes(path, tables, rows)
    return Source(source_id, meta["title"], meta["role"], tables, tuple(rows), meta)

