"""The pre-registered verdict rules: the base file and its dated addendum, read as one.

The rules are declared in ``data/preregistration/verdict_rules.md`` (the base, in words)
and ``verdict_rules.toml`` (its twin), amended by
``verdict_rules_addendum_2026-12-01.md`` and its twin ``.toml``; all four are pinned by
SHA-256 in the tests. :func:`load_rules` validates both twins (every error names the
file and the field) and returns one :class:`Rules`; :func:`memcglab.stats.judge`
(:mod:`memcglab.stats.judging`) applies it. ``Rules.sha256`` is the digest of the two
TOML files' bytes, base first: the rule set a verdict was decided by.

>>> r = load_rules()
>>> r.coverage, r.words["measured"], r.words["exact"][0]
(0.9, ('agrees', 'misses', 'undetermined'), 'matches')
>>> sorted(r.words)
['exact', 'goal', 'measured', 'port', 'prediction', 'qualitative', 'shape']
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcglab.resources import data_dir

__all__ = ["ADDENDUM", "RULE_KINDS", "Rules", "addendum_path", "load_rules", "rules_path",
           "verdict_words"]

#: the dated addendum's twin, beside the base file
ADDENDUM = "verdict_rules_addendum_2026-12-01.toml"
#: the rule kinds the addendum must give words for
RULE_KINDS: tuple[str, ...] = ("measured", "qualitative", "shape", "prediction", "exact",
                               "goal", "port")
_SOURCES = ("parameters", "alternatives", "seeds")
_BASE_KINDS = ("value", "difference", "structural")
_MATCHES = ("contains", "within")


def rules_path() -> Path:
    """``data/preregistration/verdict_rules.toml`` (installed or in a checkout)."""
    return data_dir() / "preregistration" / "verdict_rules.toml"


def addendum_path() -> Path:
    """The addendum's twin, ``data/preregistration/`` :data:`ADDENDUM`."""
    return data_dir() / "preregistration" / ADDENDUM


@dataclass(frozen=True)
class Rules:
    """The validated rule set; ``sha256`` identifies the pair of files that judged."""

    path: str
    addendum: str
    sha256: str
    coverage: float
    required_sources: frozenset[str]
    touching_overlaps: bool
    words: dict[str, tuple[str, ...]]
    retired: tuple[str, ...]
    default_relative_noise: float
    informative_width_ratio: float
    default_tolerance_share: float
    min_draws_per_option: int
    shape_tolerance: float
    default_margin_pct: float


def _toml(path: Path) -> tuple[bytes, dict[str, Any]]:
    raw = path.read_bytes()
    try:
        return raw, tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from e


def _field(path: Path, table: Any, key: str, prefix: str = "") -> Any:
    if not isinstance(table, dict) or key not in table:
        raise ValueError(f"{path}: field {prefix}{key} is missing")
    return table[key]


def _bool(path: Path, table: dict[str, Any], key: str, prefix: str) -> bool:
    v = _field(path, table, key, prefix)
    if not isinstance(v, bool):
        raise ValueError(f"{path}: field {prefix}{key}={v!r}: must be true or false")
    return v


def _positive(path: Path, table: dict[str, Any], key: str, prefix: str,
              below_one: bool = False) -> float:
    v = _field(path, table, key, prefix)
    ok = not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v) and v > 0
    if not ok or (below_one and v >= 1):
        need = "a number in (0, 1)" if below_one else "a number > 0"
        raise ValueError(f"{path}: field {prefix}{key}={v!r}: must be {need}")
    return float(v)


def _check_base(path: Path, doc: dict[str, Any]) -> tuple[float, frozenset[str], bool]:
    """The base file's fields that still apply (the rest is retired by the addendum but
    still validated, so a malformed base is never read silently)."""
    version = _field(path, doc, "schema_version")
    if version != 1:
        raise ValueError(f"{path}: field schema_version={version!r}: this memcglab reads 1")
    cov = _positive(path, doc, "coverage", "", below_one=True)
    req = _field(path, doc, "required_sources")
    if not isinstance(req, list) or not req or any(s not in _SOURCES for s in req):
        raise ValueError(f"{path}: field required_sources={req!r}: must be a non-empty list "
                         f"drawn from {list(_SOURCES)}")
    touching = _bool(path, doc, "touching_counts_as_overlap", "")
    kinds = _field(path, doc, "kinds")
    if not isinstance(kinds, dict) or set(kinds) != set(_BASE_KINDS):
        got = sorted(kinds) if isinstance(kinds, dict) else kinds
        raise ValueError(f"{path}: field kinds={got!r}: must define exactly {list(_BASE_KINDS)}")
    for k in ("value", "difference"):
        w = _field(path, kinds[k], "reproduced_when", f"kinds.{k}.")
        if not isinstance(w, list) or not w or any(m not in _MATCHES for m in w):
            raise ValueError(f"{path}: field kinds.{k}.reproduced_when={w!r}: must be a "
                             f"non-empty list drawn from {list(_MATCHES)}")
        _bool(path, kinds[k], "exclude_zero", f"kinds.{k}.")
        _positive(path, kinds[k], "max_width_ratio", f"kinds.{k}.")
    if _field(path, kinds["structural"], "exact", "kinds.structural.") is not True:
        raise ValueError(f"{path}: field kinds.structural.exact must be true: structural "
                         "claims are checked exactly")
    return cov, frozenset(req), touching


def _words(path: Path, doc: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    table = _field(path, doc, "words")
    if not isinstance(table, dict) or set(table) != set(RULE_KINDS):
        got = sorted(table) if isinstance(table, dict) else table
        raise ValueError(f"{path}: field words={got!r}: must define exactly "
                         f"{list(RULE_KINDS)}")
    out = {}
    for kind in RULE_KINDS:
        w = table[kind]
        bad = not isinstance(w, list) or not all(isinstance(x, str) and x for x in w) \
            or len(set(w)) != len(w) or (kind == "prediction") != (not w)
        if bad:
            need = "an empty list (a prediction has no verdict)" if kind == "prediction" \
                else "a list of distinct non-empty words"
            raise ValueError(f"{path}: field words.{kind}={w!r}: must be {need}")
        out[kind] = tuple(w)
    return out


def load_rules(path: str | os.PathLike[str] | None = None,
               addendum: str | os.PathLike[str] | None = None) -> Rules:
    """Read and validate the base file and its addendum (defaults: the shipped pair)."""
    path = Path(path) if path is not None else rules_path()
    apath = Path(addendum) if addendum is not None else addendum_path()
    raw, doc = _toml(path)
    araw, add = _toml(apath)
    coverage, required, touching = _check_base(path, doc)
    version = _field(apath, add, "schema_version")
    if version != 1:
        raise ValueError(f"{apath}: field schema_version={version!r}: this memcglab reads 1")
    amends = _field(apath, add, "amends_sha256")
    if amends != hashlib.sha256(raw).hexdigest():
        raise ValueError(f"{apath}: field amends_sha256={amends!r}: the addendum amends a "
                         f"different base file than {path}")
    words = _words(apath, add)
    retired = _field(apath, add, "retired_words")
    if not isinstance(retired, list) or any(w in v for w in retired for v in words.values()):
        raise ValueError(f"{apath}: field retired_words={retired!r}: must be a list of "
                         "words no rule kind uses")
    m, s, p = (_field(apath, add, k) for k in ("measured", "shape", "prediction"))
    draws = _field(apath, m, "min_draws_per_option", "measured.")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 2:
        raise ValueError(f"{apath}: field measured.min_draws_per_option={draws!r}: must be "
                         "an integer >= 2")
    return Rules(
        str(path), str(apath), hashlib.sha256(raw + araw).hexdigest(), coverage, required,
        touching, words, tuple(retired),
        _positive(apath, m, "default_relative_noise", "measured.", below_one=True),
        _positive(apath, m, "informative_width_ratio", "measured."),
        _positive(apath, m, "default_tolerance_share", "measured."), draws,
        _positive(apath, s, "shape_tolerance", "shape."),
        _positive(apath, p, "default_margin_pct", "prediction."))


def verdict_words(rules: Rules | None = None) -> frozenset[str]:
    """Every verdict word any rule kind may emit.

    >>> sorted(verdict_words())[:3]
    ['agrees', 'differs', 'goal met']
    """
    r = rules or load_rules()
    return frozenset(w for words in r.words.values() for w in words)
