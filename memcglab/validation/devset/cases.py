"""The cases: one scenario file each, with the change its source measured, all checked.

Every case's values must be its source's printed ones, its change must follow from them
(the source's own figure, or one derived or inverted here and rounded as stated), its noise
must be what the source states, and its scenario file must exist and parse as TOML with
the scenario contract's top-level tables and no other.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memcglab.validation.devset.digits import decimals, derive, value_interval
from memcglab.validation.devset.records import Case, DevsetError, Source, SourceRow, Table
from memcglab.validation.devset.sources import (
    load_source,
    read_csv,
    read_number,
    resolve_dir,
    source_ids,
)

__all__ = ["CASE_COLUMNS", "CONTRACT_TOP_LEVEL", "case_profile", "load_cases"]

#: the scenario contract's top-level keys (required ones first); any other is an error
CONTRACT_TOP_LEVEL = ("schema", "name", "machine", "workload", "base", "new", "cgroups")
CASE_COLUMNS = ("case_id", "source", "scenario", "table", "condition", "quantity",
                "base_kernel", "new_kernel", "unit", "base_value", "new_value", "metric",
                "direction", "measured_change_pct", "change_decimals", "change_origin",
                "noise_pct", "noise_origin", "noise_hidden_below_pct", "profile", "notes")
_ORIGINS = ("printed", "derived", "inverted")


def _check_scenario(path: Path) -> None:
    if not path.is_file():
        raise DevsetError(path, "scenario", "does not exist")
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise DevsetError(path, "scenario", f"not valid TOML: {e}") from None
    unknown = sorted(set(doc) - set(CONTRACT_TOP_LEVEL))
    if unknown:
        raise DevsetError(path, unknown[0], "is not a key of the scenario contract (valid: "
                          f"{', '.join(CONTRACT_TOP_LEVEL)})")
    if doc.get("schema") != 1:
        raise DevsetError(path, "schema", f"{doc.get('schema')!r} must be 1")
    if not isinstance(doc.get("name"), str) or not doc["name"]:
        raise DevsetError(path, "name", "is required (free text)")
    for key in ("machine", "workload", "base", "new", "cgroups"):
        if (key in doc or key != "cgroups") and not isinstance(doc.get(key), dict):
            raise DevsetError(path, key, "must be a table")


def _ops_change(direction: str, base: float, new: float) -> float:
    return (new / base - 1) * 100 if direction == "higher-is-better" else (base / new - 1) * 100


def _case(path: Path, i: int, r: Mapping[str, str], src: Source, scenarios: Path) -> Case:
    def fail(col: str, what: str) -> DevsetError:
        return DevsetError(path, f"row {i + 2} ({r['case_id']}) {col}", what)

    if f"{r['case_id']}.toml" != r["scenario"] or not r["scenario"].startswith(src.source_id +
                                                                                "/"):
        raise fail("scenario", f"{r['scenario']!r} must be {r['case_id']}.toml under "
                   f"{src.source_id}/")
    _check_scenario(scenarios / r["scenario"])
    t = src.tables.get(r["table"])
    if t is None:
        raise fail("table", f"{r['table']!r} (valid: {', '.join(src.tables)})")
    rows = {}
    for arm in ("base", "new"):
        row = src.row(r["table"], r["condition"], r["quantity"], r[f"{arm}_kernel"])
        if row is None:
            raise fail(f"{arm}_kernel", f"{r[f'{arm}_kernel']!r} has no {r['quantity']!r} row "
                       f"in table {r['table']} {r['condition']}".rstrip())
        given = read_number(path, f"{arm}_value", r[f"{arm}_value"])
        if given != row.value or row.unit != r["unit"]:
            raise fail(f"{arm}_value", f"{r[f'{arm}_value']} {r['unit']} is not the source's "
                       f"{row.printed} {row.unit}")
        rows[arm] = row
    if r["metric"] != "ops_per_s" or r["direction"] not in ("higher-is-better",
                                                            "lower-is-better"):
        raise fail("metric", "must be ops_per_s, with direction higher- or lower-is-better")
    m = read_number(path, "measured_change_pct", r["measured_change_pct"])
    dec = int(read_number(path, "change_decimals", r["change_decimals"]))
    b, n = rows["base"].value, rows["new"].value
    origin = r["change_origin"]
    if origin == "printed":
        if r["base_kernel"] != t.reference or r["direction"] != "higher-is-better" or \
                not rows["new"].change_printed:
            raise fail("change_origin", "'printed' needs the table's reference as base and a "
                       "change printed for the new kernel")
        expected = float(rows["new"].change_printed.replace("−", "-").rstrip("%"))
    elif origin == "inverted":
        if r["direction"] != "lower-is-better" or not rows["new"].change_printed:
            raise fail("change_origin", "'inverted' needs a printed change of a time")
        d = float(rows["new"].change_printed.rstrip("%"))
        expected = round(100 * (100 / (100 + d) - 1), dec)
    elif origin == "derived":
        expected = round(_ops_change(r["direction"], b, n), dec)
    else:
        raise fail("change_origin", f"{origin!r} (valid: {', '.join(_ORIGINS)})")
    if abs(m - expected) > 1e-9 or decimals(r["measured_change_pct"]) != dec:
        raise fail("measured_change_pct", f"{r['measured_change_pct']} does not follow from "
                   f"the source ({origin}: {expected:.{dec}f})")
    ib = value_interval(rows["base"].printed, b, t.integer_rounding)
    inn = value_interval(rows["new"].printed, n, t.integer_rounding)
    if r["direction"] == "higher-is-better":
        lo, hi = derive("pct", ib, inn)
    else:
        lo, hi = derive("pct", inn, ib)
    noise, hidden = _check_noise(path, fail, r, rows, t)
    _check_profile(fail, r, src)
    return Case(r["case_id"], r["source"], scenarios / r["scenario"], r["table"],
                r["condition"], r["quantity"], r["base_kernel"], r["new_kernel"], r["unit"],
                b, n, r["direction"], m, dec, origin, noise, r["noise_origin"], hidden,
                r["profile"], lo, hi, r["notes"])


def _check_noise(path: Path, fail: Any, r: Mapping[str, str], rows: Mapping[str, SourceRow],
                 t: Table) -> tuple[float | None, float | None]:
    noise = read_number(path, "noise_pct", r["noise_pct"], empty_ok=True)
    hidden = read_number(path, "noise_hidden_below_pct", r["noise_hidden_below_pct"],
                         empty_ok=True)
    origin = r["noise_origin"]
    if origin == "printed":
        if noise is None or noise not in (rows["base"].noise_pct, rows["new"].noise_pct):
            raise fail("noise_pct", f"{r['noise_pct']!r} is not a noise the source prints "
                       "for either kernel")
    elif origin == "derived":
        a = rows["base"].noise_abs
        if noise is None or a is None or \
                round(100 * a / rows["base"].value, decimals(r["noise_pct"])) != noise:
            raise fail("noise_pct", f"{r['noise_pct']!r} is not the printed spread as a share "
                       "of the base value")
    elif origin == "none":
        if noise is not None or any(x.noise_printed for x in rows.values()):
            raise fail("noise_origin", "'none', but a noise is given or printed")
        if hidden != t.noise_hidden_below_pct:
            raise fail("noise_hidden_below_pct", f"{r['noise_hidden_below_pct']!r} must be the "
                       f"table's reporting rule ({t.noise_hidden_below_pct})")
    else:
        raise fail("noise_origin", f"{origin!r} (valid: printed, derived, none)")
    if origin != "none" and hidden is not None:
        raise fail("noise_hidden_below_pct", "applies only where no noise is stated")
    return noise, hidden


def _profile_rows(src: Source, table: str, kernel: str, kind: str) -> dict[str, float]:
    return {x.function: x.value for x in src.rows
            if (x.table, x.kernel, x.kind) == (table, kernel, f"profile-{kind}")}


def _check_profile(fail: Any, r: Mapping[str, str], src: Source) -> None:
    kinds = {"": (), "self": ("self",), "self+children": ("self", "children")}
    if r["profile"] not in kinds:
        raise fail("profile", f"{r['profile']!r} (valid: self, self+children, or empty)")
    for kind in kinds[r["profile"]]:
        for arm in ("base", "new"):
            if not _profile_rows(src, r["table"], r[f"{arm}_kernel"], kind):
                raise fail("profile", f"table {r['table']} prints no {kind} shares for "
                           f"{r[f'{arm}_kernel']!r}")


def case_profile_noise(case: Case, directory: Path | None = None
                       ) -> dict[str, dict[str, dict[str, float]]]:
    """The printed ``± x%`` of each perf share :func:`case_profile` gives (x, in % of
    the share), where the source prints one; shaped as :func:`case_profile`."""
    src = load_source(case.source, directory)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for arm, kernel in (("base", case.base_kernel), ("new", case.new_kernel)):
        for kind in ("self", "children"):
            rows = {x.function: x.noise_pct for x in src.rows
                    if (x.table, x.kernel, x.kind) == (case.table, kernel, f"profile-{kind}")
                    and x.noise_pct is not None}
            if rows:
                out.setdefault(arm, {})[kind] = rows
    return out


def load_cases(directory: Path | None = None, published_dir: Path | None = None
               ) -> tuple[Case, ...]:
    """Every case of ``cases.csv``, each checked against its source and its scenario file."""
    d = resolve_dir(directory)
    path = d / "cases.csv"
    sources: dict[str, Source] = {}
    cases, seen = [], set()
    for i, r in enumerate(read_csv(path, CASE_COLUMNS)):
        if r["case_id"] in seen:
            raise DevsetError(path, f"row {i + 2} case_id", f"{r['case_id']!r} is repeated")
        seen.add(r["case_id"])
        if r["source"] not in source_ids(d):
            raise DevsetError(path, f"row {i + 2} source", f"{r['source']!r} (valid: "
                              f"{', '.join(source_ids(d))})")
        if r["source"] not in sources:
            sources[r["source"]] = load_source(r["source"], d, published_dir)
        if sources[r["source"]].role != "cases":
            raise DevsetError(path, f"row {i + 2} source", f"{r['source']} is a calibration "
                              "source, not a case source")
        cases.append(_case(path, i, r, sources[r["source"]], d / "scenarios"))
    return tuple(cases)


def case_profile(case: Case, directory: Path | None = None
                 ) -> dict[str, dict[str, dict[str, float]]]:
    """The perf-profile shares (percent of all cycles) the source prints for a case.

    ``{"base" | "new": {"self" | "children": {function: share}}}``; empty when it prints none.
    """
    src = load_source(case.source, directory)
    return {arm: {kind: rows for kind in ("self", "children")
                  if (rows := _profile_rows(src, case.table, kernel, kind))}
            for arm, kernel in (("base", case.base_kernel), ("new", case.new_kernel))}

