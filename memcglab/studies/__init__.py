"""The studies behind the numbered notebooks: one package per notebook, side by side.

* :mod:`~memcglab.studies.s01_single_vs_multi`: ``01_single_vs_multi.ipynb``
* :mod:`~memcglab.studies.s02_policy_and_slots`: ``02_policy_and_slots.ipynb``
* :mod:`~memcglab.studies.s03_pcstock_vs_multi`: ``03_pcstock_vs_multi.ipynb``
* :mod:`~memcglab.studies.s04_layout_false_sharing`: ``04_layout_false_sharing.ipynb``
* :mod:`~memcglab.studies.s05_history`: ``05_history.ipynb``
* :mod:`~memcglab.studies.s06_page_counter_stock_v4`: ``06_page_counter_stock_v4.ipynb``

Each package splits its study the same way where the study has the part: ``counts``
(the replays' exact counts), ``pricing`` (those counts priced with 90% intervals),
``claims`` or ``verdict``/``score`` (the published claims judged), ``views`` (figures and
words) and ``study`` (the notebook's entry points). Its ``__init__`` names the modules.
A study never imports another study: what they share is below them, in
:mod:`memcglab.studies.common` (replay measurement, figure plumbing, the report's row
contract) and :mod:`memcglab.pricing` (the charge-path throughput pricing that
``memcglab predict`` uses too).

Every study exposes the same few functions, which its notebook calls in order:

* ``Params.from_notebook(...)`` (a frozen dataclass named for the study) turns the
  notebook's papermill parameters into a validated problem size; ``quick=True`` is the
  CI-sized run;
* ``run(params) -> DataFrame``: the tidy simulated results (one row per replay);
* ``verdict(df, params)``: the statistical verdict against the published table;
* ``figure(df, ...) -> matplotlib Figure`` (one or more per study);
* ``conclusion(df, verdict, ...) -> str``: the conclusion, sentences built from this
  run's numbers (shown with IPython's ``Markdown``);
* ``summary(df, verdict, ...) -> dict``: scalars for
  :func:`memcglab.sweep.record_result`;
* ``claims(df, verdict, ...) -> list[dict]``: the published claims the study addresses;
* optionally ``counts(df, ...) -> list[dict]``: the exact counts behind them.

The claim and count rows, their validation and their sidecar JSON are
:mod:`memcglab.studies.common.rows`', re-exported here; a claim row is made from the
verdict :func:`memcglab.stats.judge` returns, so every verdict word is judge's.
"""

from __future__ import annotations

from memcglab.studies.common.rows import (
    CLAIM_COLUMNS,
    CLAIM_KEYS,
    CLAIM_NUMBERS,
    COUNT_KEYS,
    OPTIONAL_KEYS,
    check_claims,
    check_counts,
    claim_row,
    claims_json,
    count_row,
    counts_json,
    interval_columns,
    read_claims,
    read_counts,
)

__all__ = ["CLAIM_COLUMNS", "CLAIM_KEYS", "CLAIM_NUMBERS", "COUNT_KEYS", "OPTIONAL_KEYS",
           "check_claims", "check_counts", "claim_row", "claims_json", "count_row",
           "counts_json", "interval_columns", "read_claims", "read_counts"]
