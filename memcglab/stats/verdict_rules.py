"""The pre-registered verdict rules, applied by one function: :func:`judge`.

The rules are declared in ``data/preregistration/verdict_rules.md`` (the words) and
``verdict_rules.toml`` (what this module reads); both are pinned by SHA-256 in the
tests. A claim that is a number (``value``) or a difference between arms
(``difference``) is judged on a prediction interval that must include parameter
uncertainty; an exact structural fact (``structural``) is checked for equality.

>>> judge("value", 1.0, 3.0, 0.5, 3.5, sources={"parameters", "seeds"}, coverage=0.9).word
'reproduced'
>>> judge("value", 1.0, 3.0, 0.5, 4.0, sources={"parameters", "seeds"}, coverage=0.9).word
'undetermined'
>>> judge("difference", 1.0, 3.0, -0.1, 4.9, sources={"parameters"}, coverage=0.9).word
'undetermined'
>>> judge("value", 4.38, 4.38, 1.0, 9.0, sources={"seeds"}, coverage=0.9).reason[:40]
'the interval carries no parameters uncer'
>>> judge("structural", 0x88, None, 0x88).word
'reproduced'
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcglab.resources import data_dir

__all__ = ["KINDS", "VERDICTS", "Rules", "Verdict", "judge", "load_rules", "rules_path"]

#: the verdict words
VERDICTS: tuple[str, ...] = ("reproduced", "refuted", "undetermined")
#: the kinds of claim the rules file must define
KINDS: tuple[str, ...] = ("value", "difference", "structural")
_SOURCES = ("parameters", "alternatives", "seeds")
_MATCHES = ("contains", "within")


def rules_path() -> Path:
    """``data/preregistration/verdict_rules.toml`` (installed or in a checkout)."""
    return data_dir() / "preregistration" / "verdict_rules.toml"


@dataclass(frozen=True)
class Rules:
    """The validated rules file; ``sha256`` identifies the version that judged."""

    path: str
    sha256: str
    coverage: float
    required_sources: frozenset[str]
    touching_overlaps: bool
    reproduced_when: dict[str, tuple[str, ...]]
    exclude_zero: dict[str, bool]
    max_width_ratio: dict[str, float]


@dataclass(frozen=True)
class Verdict:
    """A verdict word, the sentence that justifies it, and the rules version used."""

    word: str
    reason: str
    kind: str
    rules_sha256: str

    def __str__(self) -> str:
        return f"{self.word}: {self.reason}"


def _field(path: Path, table: dict[str, Any], key: str, prefix: str = "") -> Any:
    if key not in table:
        raise ValueError(f"{path}: field {prefix}{key} is missing")
    return table[key]


def _bool(path: Path, table: dict[str, Any], key: str, prefix: str) -> bool:
    v = _field(path, table, key, prefix)
    if not isinstance(v, bool):
        raise ValueError(f"{path}: field {prefix}{key}={v!r}: must be true or false")
    return v


def load_rules(path: str | os.PathLike[str] | None = None) -> Rules:
    """Read and validate the rules file; errors name the file and the field."""
    path = Path(path) if path is not None else rules_path()
    raw = path.read_bytes()
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from e
    version = _field(path, doc, "schema_version")
    if version != 1:
        raise ValueError(f"{path}: field schema_version={version!r}: this memcglab reads 1")
    cov = _field(path, doc, "coverage")
    if isinstance(cov, bool) or not isinstance(cov, int | float) or not 0 < cov < 1:
        raise ValueError(f"{path}: field coverage={cov!r}: must be a number in (0, 1)")
    req = _field(path, doc, "required_sources")
    if not isinstance(req, list) or not req or any(s not in _SOURCES for s in req):
        raise ValueError(f"{path}: field required_sources={req!r}: must be a non-empty list "
                         f"drawn from {list(_SOURCES)}")
    touching = _bool(path, doc, "touching_counts_as_overlap", "")
    kinds = _field(path, doc, "kinds")
    if not isinstance(kinds, dict) or set(kinds) != set(KINDS):
        got = sorted(kinds) if isinstance(kinds, dict) else kinds
        raise ValueError(f"{path}: field kinds={got!r}: must define exactly {list(KINDS)}")
    when, zero, ratio = {}, {}, {}
    for k in ("value", "difference"):
        t = kinds[k]
        w = _field(path, t, "reproduced_when", f"kinds.{k}.")
        if not isinstance(w, list) or not w or any(m not in _MATCHES for m in w):
            raise ValueError(f"{path}: field kinds.{k}.reproduced_when={w!r}: must be a "
                             f"non-empty list drawn from {list(_MATCHES)}")
        when[k], zero[k] = tuple(w), _bool(path, t, "exclude_zero", f"kinds.{k}.")
        m = _field(path, t, "max_width_ratio", f"kinds.{k}.")
        if isinstance(m, bool) or not isinstance(m, int | float) or not m > 0:
            raise ValueError(f"{path}: field kinds.{k}.max_width_ratio={m!r}: must be a "
                             "number > 0")
        ratio[k] = float(m)
    if _field(path, kinds["structural"], "exact", "kinds.structural.") is not True:
        raise ValueError(f"{path}: field kinds.structural.exact must be true: structural "
                         "claims are checked exactly")
    return Rules(str(path), hashlib.sha256(raw).hexdigest(), float(cov), frozenset(req),
                 touching, when, zero, ratio)


def _number(name: str, v: Any, default: float | None) -> float:
    if v is None:
        if default is None:
            raise ValueError(f"{name} is missing: a value or difference claim needs it")
        return default
    if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v):
        raise ValueError(f"{name}={v!r}: must be a number")
    return float(v)


def _fmt(a: float, b: float) -> str:
    return f"[{a:.4g}, {b:.4g}]"


def judge(claim_kind: str, published_low: Any = None, published_high: Any = None,
          predicted_low: Any = None, predicted_high: Any = None, *,
          sources: Iterable[str] | None = None, coverage: float | None = None,
          interval: Any = None, rules: Rules | str | os.PathLike[str] | None = None
          ) -> Verdict:
    """The verdict on one claim under the pre-registered rules (see the module doc).

    ``value``/``difference``: the published band ``[published_low, published_high]``
    (equal for a point; ``None`` for an open side) against the prediction interval,
    given as ``predicted_low``/``predicted_high`` with ``sources`` and ``coverage``
    (keywords), or as ``interval`` (e.g. a :class:`memcglab.uncertainty.UncertainResult`:
    anything with ``low``, ``high``, ``sources`` and ``coverage``). ``structural``:
    ``published_low`` against ``predicted_low``, exactly.
    """
    r = rules if isinstance(rules, Rules) else load_rules(rules)
    if claim_kind not in KINDS:
        raise ValueError(f"claim_kind={claim_kind!r}: must be one of {list(KINDS)}")

    def out(word: str, reason: str) -> Verdict:
        return Verdict(word, reason, claim_kind, r.sha256)

    if claim_kind == "structural":
        for name, hi, lo in (("published_high", published_high, published_low),
                             ("predicted_high", predicted_high, predicted_low)):
            if hi is not None and hi != lo:
                raise ValueError(f"{name}={hi!r}: a structural claim is one exact value; "
                                 "leave it None or equal to the low side")
        if published_low is None or predicted_low is None:
            raise ValueError("a structural claim needs published_low and predicted_low")
        if published_low == predicted_low:
            return out("reproduced", f"computed {predicted_low!r} equals the published "
                                     f"{published_low!r} exactly")
        return out("refuted", f"computed {predicted_low!r} differs from the published "
                              f"{published_low!r}")

    if interval is not None:
        predicted_low, predicted_high = interval.low, interval.high
        sources, coverage = interval.sources, interval.coverage
    if sources is None or coverage is None:
        raise ValueError("sources and coverage are required with predicted_low/high: say "
                         "which uncertainty the interval includes (e.g. {'parameters', "
                         "'seeds'}) and its coverage")
    if abs(float(coverage) - r.coverage) > 1e-9:
        raise ValueError(f"coverage={coverage}: the rules in {r.path} (field coverage) judge "
                         f"{r.coverage:g} intervals only")
    lo = _number("predicted_low", predicted_low, None)
    hi = _number("predicted_high", predicted_high, None)
    b_lo = _number("published_low", published_low, -math.inf)
    b_hi = _number("published_high", published_high, math.inf)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"predicted interval {_fmt(lo, hi)}: need finite low <= high")
    if b_lo > b_hi or (published_low is None and published_high is None):
        raise ValueError(f"published band {_fmt(b_lo, b_hi)}: need low <= high, at least "
                         "one side given")
    if r.exclude_zero[claim_kind] and b_lo <= 0 <= b_hi:
        raise ValueError(f"published band {_fmt(b_lo, b_hi)} includes zero: a claim of no "
                         "difference is a 'value' claim with its equivalence band")
    sources = frozenset(sources)
    unknown = sources - set(_SOURCES)
    if unknown:
        raise ValueError(f"sources={sorted(sources)}: valid sources are {list(_SOURCES)}")
    band = "published " + (f"{b_lo:.4g}" if b_lo == b_hi else _fmt(b_lo, b_hi))
    pred = f"the {r.coverage:.0%} interval {_fmt(lo, hi)}"
    missing = r.required_sources - sources
    if missing:
        return out("undetermined", f"the interval carries no {', '.join(sorted(missing))} "
                                   f"uncertainty (only {', '.join(sorted(sources)) or 'none'}); "
                                   f"{r.path} requires it for a verdict")
    apart = (hi < b_lo or lo > b_hi) if r.touching_overlaps else (hi <= b_lo or lo >= b_hi)
    if apart:
        return out("refuted", f"{pred} does not overlap the {band}")
    contains = lo <= b_lo and b_hi <= hi
    within = b_lo < b_hi and b_lo <= lo and hi <= b_hi
    agree = ("contains" in r.reproduced_when[claim_kind] and contains) or \
        ("within" in r.reproduced_when[claim_kind] and within)
    how = "contains the" if contains else "lies inside the"
    magnitude = max(abs(v) for v in (b_lo, b_hi) if math.isfinite(v))
    if agree and not within and hi - lo > r.max_width_ratio[claim_kind] * magnitude:
        return out("undetermined", f"{pred} {how} {band} but is too wide to decide: wider "
                                   f"than {r.max_width_ratio[claim_kind]:g} x the published "
                                   f"magnitude {magnitude:.4g}")
    if agree and r.exclude_zero[claim_kind] and lo <= 0 <= hi:
        return out("undetermined", f"{pred} {how} {band} but includes zero: the sign of "
                                   "the difference is not settled")
    if agree:
        return out("reproduced", f"{pred} {how} {band}"
                   + (" and excludes zero" if r.exclude_zero[claim_kind] else ""))
    return out("undetermined", f"{pred} overlaps the {band} only in part: too wide or too "
                               "far to one side to decide")
