"""The contended-line calibration point, and the check of the whole set.

The calibration source's sidecar says which of its printed rates a fit may read, the line
each one is bound by, and how many atomic updates of that line one operation makes; a rate
X then bounds the line's hold time ``s = 1 / (k X)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memcglab.validation.devset.cases import load_cases
from memcglab.validation.devset.records import CalibrationPoint, CalibrationRow, DevsetError
from memcglab.validation.devset.sources import load_source, read_json, resolve_dir, source_ids

__all__ = ["calibration_point", "check"]


def calibration_point(directory: Path | None = None) -> CalibrationPoint:
    """The contended-line calibration point (the set's calibration source), checked."""
    d = resolve_dir(directory)
    cal = [s for s in source_ids(d) if read_json(d / f"{s}.json").get("role") == "calibration"]
    if len(cal) != 1:
        raise DevsetError(d, "role", f"needs exactly one calibration source, has {cal}")
    src = load_source(cal[0], d)
    side, c = d / f"{cal[0]}.json", src.meta.get("calibration")
    if not isinstance(c, Mapping) or not isinstance(c.get("threads"), int) or c["threads"] < 1:
        raise DevsetError(side, "calibration.threads", "must be a positive integer")
    rows = []
    for i, r in enumerate(c.get("rows", [])):
        where = f"calibration.rows[{i}]"
        found = [x for x in src.rows if (x.kernel, x.quantity) == (r.get("kernel"),
                                                                   r.get("quantity"))]
        if len(found) != 1:
            raise DevsetError(side, where, f"{r.get('kernel')!r} {r.get('quantity')!r} is not "
                              "one row of the table")
        k = tuple(float(x) for x in r.get("rmw_per_op", []))
        use = r.get("use")
        if use not in ("hold_time", "hold_time_bound", "other_work") or \
                (use != "other_work") != (len(k) == 2 and 0 < k[0] <= k[1]):
            raise DevsetError(side, f"{where}.rmw_per_op", f"{list(k)}: a hold-time row needs "
                              "[low, high] updates per operation, other rows none")
        rows.append(CalibrationRow(r["kernel"], r["quantity"], use, found[0].value, k,
                                   r.get("line", ""), r.get("basis", "")))
    if not any(r.use == "other_work" for r in rows):
        raise DevsetError(side, "calibration.rows", "needs the accounting-free 'other_work' row")
    (table,) = src.tables.values()
    return CalibrationPoint(src.source_id, table.source, dict(src.meta["machine"]),
                            c["threads"], tuple(rows), dict(c.get("not_usable", {})),
                            c.get("how", ""), c.get("caveat", ""))


def check(directory: Path | None = None) -> dict[str, int]:
    """Load and check the whole set; every source used, every scenario file named once."""
    d = resolve_dir(directory)
    cases = load_cases(d)
    for s in source_ids(d):
        src = load_source(s, d)
        if src.role == "cases" and not any(c.source == s for c in cases):
            raise DevsetError(d / f"{s}.json", "source_id", "no case of cases.csv uses it")
    named = {c.scenario.resolve() for c in cases}
    for p in sorted((d / "scenarios").rglob("*.toml")):
        if p.resolve() not in named:
            raise DevsetError(p, "scenario", "no case of cases.csv names it")
    point = calibration_point(d)
    return {"sources": len(source_ids(d)), "cases": len(cases), "calibration_rows":
            len(point.rows)}
