"""The development set's typed records, and its one error type.

Rows of a source table, the printed tables themselves with their provenance, sources,
cases and the calibration point, all frozen: they are read once from ``data/validation/``
by :mod:`memcglab.validation.devset` and never change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DevsetError", "SourceRow", "Table", "Source", "Case", "CalibrationRow",
           "CalibrationPoint"]


class DevsetError(ValueError):
    """A development-set file is wrong; the message names the file and the field."""

    def __init__(self, file: object, where: str, what: str) -> None:
        super().__init__(f"{file}: {where}: {what}")


@dataclass(frozen=True)
class SourceRow:
    """One printed value of a source table (one kernel, one quantity)."""

    table: str
    condition: str
    kernel: str
    quantity: str
    function: str
    kind: str
    unit: str
    printed: str
    value: float
    noise_printed: str = ""
    noise_pct: float | None = None
    change_printed: str = ""
    excerpt_line: int = -1
    noise_abs: float | None = None  # a spread printed in the row's unit (seed 003's stddev)


@dataclass(frozen=True)
class Table:
    """One printed table of a source: its message, its kernels and how it rounds."""

    table_id: str
    source: Mapping[str, str]
    reference: str
    kernels: Mapping[str, str]
    token_order: tuple[str, ...] = ()
    integer_rounding: str = "round"
    change_rounding: str = "round"
    noise_hidden_below_pct: float | None = None
    header: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """A source: its tables (with provenance), its rows, machine, workload and notes."""

    source_id: str
    title: str
    role: str
    tables: Mapping[str, Table]
    rows: tuple[SourceRow, ...]
    meta: Mapping[str, Any] = field(repr=False)

    def row(self, table: str, condition: str, quantity: str, kernel: str) -> SourceRow | None:
        """The row printed for ``kernel`` in ``table`` (None if the source has none)."""
        for r in self.rows:
            if (r.table, r.condition, r.quantity, r.kernel) == (table, condition, quantity,
                                                                 kernel):
                return r
        return None


@dataclass(frozen=True)
class Case:
    """One development case: a scenario file and the change the source measured for it.

    ``digits_low``/``digits_high`` bound the change the printed values allow (their
    rounding), before any run-to-run noise.
    """

    case_id: str
    source: str
    scenario: Path
    table: str
    condition: str
    quantity: str
    base_kernel: str
    new_kernel: str
    unit: str
    base_value: float
    new_value: float
    direction: str
    measured_change_pct: float
    change_decimals: int
    change_origin: str
    noise_pct: float | None
    noise_origin: str
    noise_hidden_below_pct: float | None
    profile: str
    digits_low: float
    digits_high: float
    notes: str = ""


@dataclass(frozen=True)
class CalibrationRow:
    """A rate of the calibration table and what a fit may read from it."""

    kernel: str
    quantity: str
    use: str
    kops_per_s: float
    rmw_per_op: tuple[float, ...]
    line: str
    basis: str

    @property
    def hold_time_ns(self) -> tuple[float, float] | None:
        """``s = 1 / (k X)`` over the row's range of k, shortest first (None: no line)."""
        if len(self.rmw_per_op) != 2:
            return None
        x = self.kops_per_s * 1000.0
        return 1e9 / (self.rmw_per_op[1] * x), 1e9 / (self.rmw_per_op[0] * x)


@dataclass(frozen=True)
class CalibrationPoint:
    """The contended-line calibration point: its machine, threads and usable rows."""

    source_id: str
    provenance: Mapping[str, str]
    machine: Mapping[str, Any]
    threads: int
    rows: tuple[CalibrationRow, ...]
    not_usable: Mapping[str, str]
    how: str
    caveat: str

    @property
    def other_work_ns(self) -> float:
        """Per-thread time of one operation without accounting, in ns."""
        row = next(r for r in self.rows if r.use == "other_work")
        return self.threads * 1e9 / (row.kops_per_s * 1000.0)

