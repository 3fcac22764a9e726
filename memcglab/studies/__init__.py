"""The studies behind the numbered notebooks: each notebook is a thin story over one module.

Every study module exposes the same few functions, which its notebook calls in order:

* ``Params.from_notebook(...)`` (a frozen dataclass named for the study) turns the
  notebook's papermill parameters into a validated problem size; ``quick=True`` is the
  CI-sized run;
* ``run(params) -> DataFrame``: the tidy simulated results (one row per replay);
* ``verdict(df, params)``: the statistical verdict against the published table (a
  DataFrame, or :class:`memcglab.stats.NetperfVerdict` for study 1);
* ``figure(df, ...) -> matplotlib Figure`` (one or more per study);
* ``conclusion(df, verdict, ...) -> str``: the conclusion, a sentence built from this
  run's numbers by :mod:`memcglab.studies.text` (shown with IPython's ``Markdown``);
* ``summary(df, verdict, ...) -> dict``: scalars for
  :func:`memcglab.sweep.record_result`;
* ``claims(df, verdict, ...) -> list[dict]``: the published claims the study addresses.

Claim rows
----------
Each row that ``claims`` returns is a dict with exactly the keys of :data:`CLAIM_KEYS`,
every value a ``str`` ready for a report table:

``claim``
    the published claim, named by seed, in a few words
    (``"seed 000: improvement grows with clients (table shape)"``);
``published``
    what the seed thread states, with its numbers (``"14% at 6 -> 145% at 36 clients"``);
``simulated``
    what this run of memcglab found, with its numbers and the test used;
``verdict``
    the judgement in a few words (``"reproduced"``, ``"missed: MAPE 23% > 10%"``, ...).

Studies 1-3 address: seed 000's table shape and its out-of-sample MAPE (study 1),
"the dumb one was always better by 1% to 3%" (study 2), and seed 003's "negligible
performance differences" (study 3, plus the netperf mix the RFC did not test).

In the sidecar
--------------
:func:`memcglab.sweep.record_result` accepts scalars only (a sweep's table has one
column per result), so a notebook records its claims as a JSON *string* under the key
``"claims"`` (:func:`claims_json`); :func:`read_claims` turns a ``result.json`` (its
path, its directory, or its loaded dict) back into the list of rows.

>>> rows = [claim_row("seed 003: negligible", "-1.2%", "+0.4%", "reproduced")]
>>> text = claims_json(rows)
>>> read_claims({"claims": text}) == rows
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CLAIM_KEYS", "claim_row", "check_claims", "claims_json", "read_claims"]

#: the keys of every claim row, in report column order
CLAIM_KEYS: tuple[str, ...] = ("claim", "published", "simulated", "verdict")


def claim_row(claim: str, published: str, simulated: str, verdict: str) -> dict[str, str]:
    """One claim row; every field must be a non-empty string.

    >>> claim_row("seed 000: MAPE", "table", "12%", "")
    Traceback (most recent call last):
    ...
    ValueError: claim row field verdict='': must be a non-empty str
    """
    row = {"claim": claim, "published": published, "simulated": simulated, "verdict": verdict}
    return check_claims([row])[0]


def check_claims(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Validate claim rows (exactly :data:`CLAIM_KEYS`, non-empty strings); return plain dicts."""
    out = []
    for i, row in enumerate(rows):
        keys = tuple(row)
        if set(keys) != set(CLAIM_KEYS):
            raise ValueError(f"claim row {i} has keys {sorted(keys)}; need exactly "
                             f"{', '.join(CLAIM_KEYS)}")
        for key in CLAIM_KEYS:
            if not isinstance(row[key], str) or not row[key]:
                raise ValueError(f"claim row field {key}={row[key]!r}: must be a non-empty str")
        out.append({k: row[k] for k in CLAIM_KEYS})
    return out


def claims_json(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a JSON list in one string: the sidecar's ``"claims"`` value."""
    return json.dumps(check_claims(rows), ensure_ascii=False)


def read_claims(result: Mapping[str, Any] | str | os.PathLike[str]) -> list[dict[str, str]]:
    """Claim rows from a sidecar: a loaded ``result.json`` dict, its path, or its directory.

    Accepts the value as the JSON string :func:`claims_json` writes or as a list.
    """
    if not isinstance(result, Mapping):
        path = Path(result)
        path = path / "result.json" if path.is_dir() else path
        result = json.loads(path.read_text(encoding="utf-8"))
    if "claims" not in result:
        raise KeyError(f"sidecar has no 'claims' key; has {', '.join(sorted(result))}")
    value = result["claims"]
    return check_claims(json.loads(value) if isinstance(value, str) else value)
