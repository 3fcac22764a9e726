"""What a notebook declares about being swept, and which parameters its code reads.

A sweep over a parameter that the notebook ignores, or replaces with a value of its
own, produces runs that differ only in the column naming that parameter. The
sweep's parameter check (:func:`memcglab.sweep.params.check_grid`) refuses such
parameters; this module reads what it needs for that from the notebook.

The declaration lives in the notebook's metadata, under ``memcglab.sweep``
(JupyterLab: the property inspector's notebook metadata)::

    "memcglab": {"sweep": {
      "vary": ["slots", "profile", "seeds", "samples", "quick"],
      "fixed": {"policy": "every run compares random and LRU itself"},
      "overridden": [
        {"param": "seeds", "when": {"quick": true}, "value": 3, "why": "..."},
        {"param": "samples", "when": {"quick": true}, "max": 256, "why": "..."}
      ]
    }}

* ``vary``: the parameters a sweep may set. Any other parameter of the parameters
  cell is refused, with its reason when ``fixed`` gives one.
* ``fixed``: parameter -> why a sweep may not set it (it does not change what the
  notebook computes, or the notebook computes that axis itself).
* ``overridden``: a parameter the notebook replaces while every parameter in
  ``when`` has the value given there (the value a run gets: swept, or the default).
  With ``value`` the notebook uses that value whatever it is given; with ``max`` it
  uses ``min(given, max)``. ``why`` says where (optional).

A notebook without a declaration may be swept over any parameter that some code cell
other than the parameters cell names (comments aside): a name no other cell mentions
is never read, so every run would be the same.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Declaration", "DeclarationError", "Override", "names_read", "read_declaration",
           "read_notebook"]

_NAME = re.compile(r"[^\W\d]\w*")
_SKIPPED_TAGS = frozenset({"parameters", "injected-parameters"})
_KEYS = frozenset({"vary", "fixed", "overridden"})
_OVERRIDE_KEYS = frozenset({"param", "when", "value", "max", "why"})


class DeclarationError(ValueError):
    """The notebook's ``memcglab.sweep`` metadata is malformed; the message names the key."""


@dataclass(frozen=True)
class Override:
    """``param`` is replaced by the notebook while every ``when`` parameter has its value."""

    param: str
    when: Mapping[str, Any]
    #: the value the notebook uses instead (when ``sets``), or the most it uses (``max``)
    value: Any = None
    sets: bool = False
    max: float | None = None
    why: str = ""


@dataclass(frozen=True)
class Declaration:
    """A notebook's ``memcglab.sweep`` metadata; ``vary`` is None when it declares none."""

    vary: tuple[str, ...] | None = None
    fixed: Mapping[str, str] = field(default_factory=dict)
    overridden: tuple[Override, ...] = ()


def read_notebook(path: str | Path) -> Any:
    """The notebook at ``path`` as an nbformat v4 node."""
    import nbformat

    return nbformat.read(str(path), as_version=4)


def _source_names(source: str) -> set[str]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        text = " ".join(t.string for t in tokens if t.type != tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError):  # not Python (a cell magic): keep it whole
        text = source
    return set(_NAME.findall(text))


def names_read(nb: Any) -> set[str]:
    """Every name in the code cells other than the parameters cells, comments aside.

    A superset of the parameters the notebook reads: a name in a string (an f-string,
    a shell magic's ``{x}``) counts, so nothing the code does read is missed.
    """
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and not _SKIPPED_TAGS & set(cell.metadata.get("tags", [])):
            names |= _source_names(cell.source)
    return names


def _names(value: Any, where: str, params: Collection[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DeclarationError(f"{where} must be a list of parameter names, not {value!r}")
    unknown = [v for v in value if v not in params]
    if unknown:
        raise DeclarationError(f"{where} names {', '.join(unknown)}, not a parameter of the "
                               f"parameters cell; parameters: {', '.join(sorted(params))}")
    return value


def _override(entry: Any, where: str, params: Collection[str]) -> Override:
    if not isinstance(entry, dict) or not {"param", "when"} <= set(entry) \
            or set(entry) - _OVERRIDE_KEYS or ("value" in entry) == ("max" in entry):
        raise DeclarationError(f"{where} must be {{\"param\": NAME, \"when\": {{NAME: VALUE}}, "
                               f"\"value\": V or \"max\": M, \"why\": TEXT}}, not {entry!r}")
    _names([entry["param"]], f"{where}.param", params)
    when = entry["when"]
    if not isinstance(when, dict) or not when:
        raise DeclarationError(f"{where}.when must map parameters to values, not {when!r}")
    _names(list(when), f"{where}.when", params)
    limit = entry.get("max")
    if "max" in entry and (isinstance(limit, bool) or not isinstance(limit, int | float)):
        raise DeclarationError(f"{where}.max must be a number, not {limit!r}")
    return Override(entry["param"], dict(when), entry.get("value"), "value" in entry, limit,
                    str(entry.get("why", "")))


def read_declaration(nb: Any, params: Collection[str]) -> Declaration:
    """The notebook's ``memcglab.sweep`` metadata, checked against its ``params``."""
    raw = nb.metadata.get("memcglab", {}).get("sweep")
    if raw is None:
        return Declaration()
    where = "metadata memcglab.sweep"
    if not isinstance(raw, dict) or set(raw) - _KEYS:
        raise DeclarationError(f"{where} must be a mapping with keys among "
                               f"{', '.join(sorted(_KEYS))}, not {raw!r}")
    vary = raw.get("vary")
    fixed = raw.get("fixed", {})
    if not isinstance(fixed, dict) or not all(isinstance(v, str) for v in fixed.values()):
        raise DeclarationError(f"{where}.fixed must map parameters to reasons, not {fixed!r}")
    _names(list(fixed), f"{where}.fixed", params)
    if vary is not None:
        both = set(_names(vary, f"{where}.vary", params)) & set(fixed)
        if both:
            raise DeclarationError(f"{where}: {', '.join(sorted(both))} both in vary and fixed")
    entries = raw.get("overridden", [])
    if not isinstance(entries, list):
        raise DeclarationError(f"{where}.overridden must be a list, not {entries!r}")
    overridden = tuple(_override(e, f"{where}.overridden[{i}]", params)
                       for i, e in enumerate(entries))
    return Declaration(None if vary is None else tuple(vary), dict(fixed), overridden)
