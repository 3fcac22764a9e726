"""The development set: published before/after measurements, checked, beside their scenarios.

``data/validation/`` holds one table per source (``SOURCE.csv``, tidy: one printed value
per row, with the sidecar ``SOURCE.json`` that gives each printed table's provenance, its
verbatim lines, machine and workload), or a sidecar alone that points at a table of
``data/published/``; ``cases.csv`` names one scenario file per case with its measured
change; ``scenarios/SOURCE/CASE.toml`` are the scenario files. Loading checks that every
CSV row is printed in its excerpt line, that every printed change follows from the printed
values under the source's rounding, that every case's values and change follow from its
source, that every scenario file exists and parses, and that every table has provenance.
Errors name the file and the field. Only the statistics and validation layers may import
this module: it is where measured values enter memcglab.

>>> cases = load_cases()
>>> c = next(c for c in cases if c.case_id == "sk_forward_alloc_regression/lazy_vs_eager")
>>> c.measured_change_pct, c.base_value, c.new_value, c.unit
(-69.4, 15855.0, 4854.0, 'Mbps')
>>> case_profile(c)["new"]["children"]["page_counter_try_charge"]
2.2
>>> [round(s, 1) for s in calibration_point().rows[0].hold_time_ns]
[105.7, 120.8]
"""

from memcglab.validation.devset.calibration import calibration_point, check
from memcglab.validation.devset.cases import (
    CASE_COLUMNS,
    CONTRACT_TOP_LEVEL,
    case_profile,
    case_profile_noise,
    load_cases,
)
from memcglab.validation.devset.records import (
    CalibrationPoint,
    CalibrationRow,
    Case,
    DevsetError,
    Source,
    SourceRow,
    Table,
)
from memcglab.validation.devset.sources import ROW_COLUMNS, VALIDATION_DIR, load_source, source_ids

__all__ = ["VALIDATION_DIR", "CONTRACT_TOP_LEVEL", "CASE_COLUMNS", "ROW_COLUMNS", "DevsetError",
           "SourceRow", "Table", "Source", "Case", "CalibrationRow", "CalibrationPoint",
           "source_ids", "load_source", "load_cases", "case_profile", "case_profile_noise",
           "calibration_point",
           "check"]
