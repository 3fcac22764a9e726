"""The rows a study hands the report: claims and counts, validated, and their sidecar JSON.

Every study's ``claims`` returns claim rows and its ``counts`` count rows; a notebook
records both in its sidecar (``result.json``), and ``memcglab reproduce`` gathers them into
``claims.parquet``, ``counts.parquet`` and the report. :mod:`memcglab.studies` re-exports
everything here, so ``from memcglab.studies import claim_row`` is the public spelling.

Claim rows
----------
A claim row is made by :func:`claim_row` from a :class:`memcglab.stats.Verdict`, so its
verdict word (or, for an unmeasured prediction, its ``prediction`` phrase), its reason,
its rule kind and the rules' SHA-256 all come from :func:`memcglab.stats.judge`; no study
writes a verdict word itself. The required keys (:data:`CLAIM_KEYS`), each a non-empty
``str``:

``claim``
    what is claimed, in a few words ("random victim beats LRU by 1% to 3%");
``source``
    where the claim comes from, named as its readers know it
    (:func:`memcglab.studies.common.sources.name`: "memcg: multi-memcg percpu charge cache
    (Shakeel Butt, April 2025)");
``rule``
    the rule kind that judged it (:data:`memcglab.stats.verdict_rules.RULE_KINDS`);
``published``
    what the source states, with its numbers;
``simulated``
    what this run of memcglab found, with its numbers;
``reason``, ``rules_sha256``
    the verdict's sentence and the digest of the rules that decided it;
``verdict`` or ``prediction``
    exactly one of the two: the rule's word, or a prediction's phrase.

The optional keys (:data:`OPTIONAL_KEYS`): ``measurement`` (the measured value with its
noise, as the first table prints it); the price, ``estimate`` (the median), ``low`` and
``high`` (the 90% interval over the priors, alternatives and seeds) and ``unit``, which a
row has all of or none of but ``estimate``; ``p_holds`` and ``p_text`` (P(holds), the
share of draws inside the measurement widened by its noise, and how it prints: ``"< 1/n"``
when none is); ``driver`` and ``driver_st`` (the input with the largest total Sobol index,
and that index as a number: an estimator's noise may put it a little outside [0, 1]);
``would_take`` (what it would take to reach the measured value). A key whose value is None
counts as absent; rows keep their keys in :data:`CLAIM_COLUMNS` order.

Count rows
----------
Counts (walks per 1000 charges, evictions, active memcgs per CPU) come from the replay,
not from the cost model: for a given trace they are exact. A study's ``counts`` returns
dicts with exactly :data:`COUNT_KEYS`: ``study`` (``"02"``), ``quantity`` (with its unit),
``configuration``, ``value`` (int or finite float) and ``note`` (may be empty).

In the sidecar
--------------
:func:`memcglab.sweep.record_result` accepts scalars only, so a notebook records its
claims as a JSON *string* under ``"claims"`` (:func:`claims_json`) and its counts under
``"counts"`` (:func:`counts_json`); :func:`read_claims` and :func:`read_counts` turn a
``result.json`` (its path, its directory, or its loaded dict) back into rows.

>>> from memcglab.stats import Measurement, judge
>>> from types import SimpleNamespace as N
>>> v = judge("measured", measured=Measurement.point(4.38, 1.2, "%"),
...           interval=N(low=0.3, high=2.3, sources={"parameters"}, coverage=0.9))
>>> row = claim_row("regression", "a patch thread", "4.38%", "+0.8% [0.3, 2.3]", v,
...                 low=0.3, high=2.3, unit="%")
>>> row["verdict"], row["rule"], read_claims({"claims": claims_json([row])}) == [row]
('misses', 'measured', True)
>>> counts = [count_row("02", "walks per 1000 charges", "multi, 7 slots", 92.6)]
>>> read_counts({"counts": counts_json(counts)}) == counts, read_counts({})
(True, [])
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memcglab.stats import Verdict
from memcglab.stats.verdict_rules import RULE_KINDS, load_rules

__all__ = ["CLAIM_COLUMNS", "CLAIM_KEYS", "CLAIM_NUMBERS", "COUNT_KEYS", "OPTIONAL_KEYS",
           "check_claims", "check_counts", "claim_row", "claims_json", "count_row",
           "counts_json", "interval_columns", "read_claims", "read_counts"]

#: the keys every claim row has (and one of verdict / prediction)
CLAIM_KEYS: tuple[str, ...] = ("claim", "source", "rule", "published", "simulated", "reason",
                               "rules_sha256")
#: the optional keys of a claim row
OPTIONAL_KEYS: tuple[str, ...] = ("measurement", "estimate", "low", "high", "unit", "p_holds",
                                  "p_text", "driver", "driver_st", "would_take")
#: every claim key, in report and ``claims.parquet`` column order
CLAIM_COLUMNS: tuple[str, ...] = ("claim", "source", "rule", "published", "measurement",
                                  "simulated", "estimate", "low", "high", "unit", "p_holds",
                                  "p_text", "driver", "driver_st", "would_take", "verdict",
                                  "prediction", "reason", "rules_sha256")
#: the keys of every count row, in report and ``counts.parquet`` column order
COUNT_KEYS: tuple[str, ...] = ("study", "quantity", "configuration", "value", "note")
#: the claim keys whose values are floats (the rest are str)
CLAIM_NUMBERS: tuple[str, ...] = ("estimate", "low", "high", "p_holds", "driver_st")
_PRICE = ("low", "high", "unit")
_HEX = re.compile(r"[0-9a-f]{64}\Z")


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


def _check_claim(i: int, row: Mapping[str, Any], words: Mapping[str, tuple[str, ...]]
                 ) -> dict[str, Any]:
    what = f"claim row {i}"
    if not isinstance(row, Mapping):
        raise ValueError(f"{what}={row!r}: must be a dict with keys {', '.join(CLAIM_KEYS)}")
    given = {k: v for k, v in row.items() if v is not None}
    unknown = [k for k in given if k not in CLAIM_COLUMNS]
    if unknown:
        raise ValueError(f"{what} has unknown keys {sorted(map(str, unknown))}; a claim row "
                         f"has {', '.join(CLAIM_COLUMNS)}")
    missing = [k for k in CLAIM_KEYS if k not in given]
    if missing:
        raise ValueError(f"{what} lacks {', '.join(missing)}; every claim row needs "
                         f"{', '.join(CLAIM_KEYS)} (claim_row takes them from judge's verdict)")
    out: dict[str, Any] = {}
    for key in CLAIM_COLUMNS:
        if key in given:
            value = given[key]
            out[key] = _number(what, key, value) if key in CLAIM_NUMBERS else \
                _text(what, key, value)
    rule = out["rule"]
    if rule not in RULE_KINDS:
        raise ValueError(f"{what} field rule={rule!r}: must be one of {', '.join(RULE_KINDS)}")
    if rule == "prediction":
        if "verdict" in out or "prediction" not in out:
            raise ValueError(f"{what}: a prediction row has a prediction phrase and no verdict")
    elif "prediction" in out or out.get("verdict") not in words[rule]:
        raise ValueError(f"{what} field verdict={out.get('verdict')!r}: a {rule} row's verdict "
                         f"is one of {', '.join(words[rule])} (memcglab.stats.judge's words)")
    if not _HEX.match(out["rules_sha256"]):
        raise ValueError(f"{what} field rules_sha256={out['rules_sha256']!r}: must be a "
                         "SHA-256 in hex")
    have = [k for k in _PRICE if k in out]
    if have and len(have) != len(_PRICE):
        raise ValueError(f"{what} has {', '.join(have)} but not all of {', '.join(_PRICE)}")
    if have and out["low"] > out["high"]:
        raise ValueError(f"{what} fields low={out['low']!r}, high={out['high']!r}: low must "
                         "not exceed high")
    if "p_holds" in out and not 0.0 <= out["p_holds"] <= 1.0:
        raise ValueError(f"{what} field p_holds={out['p_holds']!r}: must be in [0, 1]")
    return out


def interval_columns(result: Any, unit: str | None = None) -> dict[str, Any]:
    """``estimate``, ``low``, ``high``, ``unit``, ``driver`` and ``driver_st`` of a priced
    result (a :class:`memcglab.uncertainty.UncertainResult`)."""
    st = float(result.sobol_total.get(result.driver, math.nan))
    return {"estimate": float(result.median), "low": float(result.low),
            "high": float(result.high), "unit": unit or result.unit,
            "driver": str(result.driver), "driver_st": st if math.isfinite(st) else None}


def claim_row(claim: str, source: str, published: str, simulated: str, verdict: Verdict, *,
              measurement: str | None = None, estimate: float | None = None,
              low: float | None = None, high: float | None = None, unit: str | None = None,
              driver: str | None = None, driver_st: float | None = None,
              would_take: str | None = None) -> dict[str, Any]:
    """One validated claim row, its verdict (or prediction) taken from ``verdict``.

    >>> claim_row("c", "thread", "p", "s", "agrees")
    Traceback (most recent call last):
    ...
    ValueError: verdict='agrees': pass the Verdict memcglab.stats.judge returned
    """
    if not isinstance(verdict, Verdict):
        raise ValueError(f"verdict={verdict!r}: pass the Verdict memcglab.stats.judge returned")
    row = {"claim": claim, "source": source, "rule": verdict.rule, "published": published,
           "measurement": measurement, "simulated": simulated, "estimate": estimate,
           "low": low, "high": high, "unit": unit, "p_holds": verdict.p_holds,
           "p_text": verdict.p_text or None, "driver": driver, "driver_st": driver_st,
           "would_take": would_take or verdict.would_take, "verdict": verdict.word,
           "prediction": verdict.prediction, "reason": verdict.reason,
           "rules_sha256": verdict.rules_sha256}
    return check_claims([row])[0]


def check_claims(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate claim rows (the module docstring's contract); return plain dicts, numbers as
    floats, keys in :data:`CLAIM_COLUMNS` order, None values dropped."""
    words = load_rules().words
    return [_check_claim(i, row, words) for i, row in enumerate(rows)]


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
