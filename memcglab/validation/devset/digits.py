"""What printed digits allow: intervals of values and changes, and the excerpt check.

A value printed with ``d`` decimals lies within half a unit of its last digit (an lkp
integer may also be truncated, by Ruby's ``%d``); a printed change is rounded or truncated
as its source does. A change is consistent when the range the printed values allow meets
the range that prints as the change. Each CSV row must also stand, in column order, in the
verbatim excerpt line it names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

from memcglab.validation.devset.records import DevsetError, SourceRow, Table

__all__ = ["check_changes", "check_excerpts", "decimals", "derive", "value_interval"]


def decimals(text: str) -> int:
    """Decimal places a printed figure shows."""
    digits = text.replace(",", "").rstrip("%X").lstrip("+-−")
    return len(digits.split(".")[1]) if "." in digits else 0


def value_interval(text: str, value: float, integer_rounding: str) -> tuple[float, float]:
    """The values a printed figure can stand for, given its rounding."""
    # A printed value covers half a unit of its last digit either side; an lkp integer may
    # also be truncated (Ruby's '%d'), which covers one unit above.
    d = decimals(text)
    if d == 0 and integer_rounding == "truncate-or-round":
        return value - 0.5, value + 1.0
    h = 0.5 * 10.0**-d
    return value - h, value + h


def _change_interval(text: str, rounding: str) -> tuple[float, float]:
    c = float(text.replace("−", "-").rstrip("%X"))
    u = 10.0**-decimals(text)
    if rounding == "round":
        return c - u / 2, c + u / 2
    return (c - u, c) if text.lstrip().startswith(("-", "−")) else (c, c + u)


def _formula(change_printed: str) -> str:
    return "pct" if change_printed.endswith("%") else "ratio" if change_printed.endswith(
        "X") else "pp"


def derive(formula: str, ref: tuple[float, float], new: tuple[float, float]
            ) -> tuple[float, float]:
    """Range of the derived change over the boxes the printed values allow."""
    if formula == "pp":
        return new[0] - ref[1], new[1] - ref[0]
    if ref[0] <= 0:
        return -math.inf, math.inf
    lo, hi = new[0] / ref[1], new[1] / ref[0]
    return (lo, hi) if formula == "ratio" else ((lo - 1) * 100, (hi - 1) * 100)


def _found(token: str, line: str, pos: int) -> int:
    """End of ``token`` in ``line`` at or after ``pos``, standing alone as a number (or -1)."""
    pattern = r"(?<![\d.])" + re.escape(token) + (r"(?!\d)" if token[-1].isdigit() else "")
    m = re.compile(pattern).search(line, pos)
    return m.end() if m else -1


def check_excerpts(path: Path, tables: Mapping[str, Table], rows: list[SourceRow]) -> None:
    """Every row's printed tokens stand, in column order, in its verbatim line."""
    by_line: dict[tuple[str, int], list[SourceRow]] = {}
    for r in rows:
        by_line.setdefault((r.table, r.excerpt_line), []).append(r)
    for (tid, i), group in by_line.items():
        t, pos = tables[tid], 0
        line = t.lines[i]
        for r in group:
            texts = {"value": r.printed, "noise": r.noise_printed, "change": r.change_printed}
            for token in (texts[k] for k in t.token_order if texts[k]):
                end = _found(token, line, pos)
                if end < 0:
                    raise DevsetError(path, f"table {tid} line {i}", f"{r.kernel} "
                                      f"{r.quantity}: {token!r} is not printed in order in "
                                      f"{line!r}")
                pos = end


def check_changes(path: Path, tables: Mapping[str, Table], rows: list[SourceRow]) -> None:
    """Every printed change follows from its printed values under the source's rounding."""
    index = {(r.table, r.condition, r.quantity, r.kernel): r for r in rows}
    for r in rows:
        if not r.change_printed:
            continue
        t = tables[r.table]
        ref = index.get((r.table, r.condition, r.quantity, t.reference))
        if ref is None:
            raise DevsetError(path, f"table {r.table} {r.quantity}", f"no row of the "
                              f"reference kernel {t.reference!r} to derive the change from")
        lo, hi = derive(_formula(r.change_printed),
                         value_interval(ref.printed, ref.value, t.integer_rounding),
                         value_interval(r.printed, r.value, t.integer_rounding))
        plo, phi = _change_interval(r.change_printed, t.change_rounding)
        if not (lo <= phi + 1e-9 and plo <= hi + 1e-9):
            raise DevsetError(path, f"table {r.table} {r.quantity} {r.kernel}", f"printed "
                              f"change {r.change_printed!r} does not follow from {ref.printed} "
                              f"-> {r.printed} ({t.change_rounding}: [{lo:.4g}, {hi:.4g}])")

