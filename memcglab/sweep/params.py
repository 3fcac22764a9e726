"""Check sweep parameters against the notebook before anything runs.

papermill injects whatever it is given, so a misspelt name (``slot=4``) or a value
of the wrong type (``slots=abc``) would only surface minutes later, in one failed run
out of many, or not at all. :func:`check_grid` reads the notebook's ``parameters``
cell with ``papermill.inspect_notebook`` and converts each command-line string to
the parameter's type, refusing what does not fit with a message that names the
parameter, the value and what is valid.

The type of a parameter is its annotation (``slots: int = 7``) when papermill reports
one, else the type of its default literal (``rate = 0.5`` is a float).
``Optional[int]`` accepts ``none`` as well. papermill does not recognise PEP 604
annotations (``int | None``): such a line is not a parameter at all, so notebooks
write ``Optional[int]`` instead.

A parameter the notebook ignores or overrides would give runs that differ only in the
column naming it, so it is refused too (:func:`check_sweepable`): one that no other
code cell names, one the notebook's ``memcglab.sweep`` metadata does not let a sweep
vary, and values the notebook replaces under a condition the grid meets (the
declaration is described in :mod:`memcglab.sweep.declared`). So is a grid of more runs
than :data:`memcglab.sweep.limits.MAX_RUNS`, before its values are even converted, and a
``model`` or ``policy`` that :mod:`memcglab.registry` does not hold, once the grid's
``plugins`` are loaded (:mod:`memcglab.sweep.registered`).

>>> convert("slots", "int", "8")
8
>>> convert("quick", "bool", "yes")
True
>>> convert("slots", "int", "abc")
Traceback (most recent call last):
...
memcglab.sweep.params.ParameterError: slots=abc: not an int (e.g. 7)
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memcglab.sweep.declared import (
    Declaration,
    DeclarationError,
    names_read,
    read_declaration,
    read_notebook,
)
from memcglab.sweep.limits import check_grid_size
from memcglab.sweep.registered import check_registered
from memcglab.sweep.spec import expand_grid

__all__ = [
    "RESERVED", "ParameterError", "check_grid", "check_sweepable", "convert", "notebook_defaults",
    "notebook_types",
]

# Set by the sweep itself, never from the command line: see the sidecar convention.
RESERVED = ("output_dir",)

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_SUPPORTED = ("int", "float", "bool", "str")
_EXAMPLE = {"int": "7", "float": "0.5", "bool": "true or false", "str": "lru"}
_OPTIONAL = re.compile(r"^Optional\[\s*(\w+)\s*\]$")


class ParameterError(ValueError):
    """A sweep parameter that the notebook does not accept; the message says why."""


def _literal_type(default: str) -> str | None:
    """The type name of a default written as a Python literal, else None."""
    try:
        value = ast.literal_eval(default)
    except (ValueError, SyntaxError):
        return None
    for name in ("bool", "int", "float", "str"):  # bool before int: True is an int
        if type(value).__name__ == name:
            return name
    return None


def _inspect(notebook: str | Path) -> dict[str, dict[str, Any]]:
    import papermill

    path = Path(notebook)
    if not path.is_file():
        raise ParameterError(f"notebook {str(notebook)!r}: no such file")
    try:
        return papermill.inspect_notebook(str(path))
    except Exception as exc:  # papermill raises bare exceptions on unreadable notebooks
        raise ParameterError(
            f"notebook {str(notebook)!r}: cannot read its parameters: {exc}"
        ) from None


def notebook_defaults(notebook: str | Path) -> dict[str, Any]:
    """Map each parameter of ``notebook`` whose default is a Python literal to that value."""
    defaults = {}
    for name, info in _inspect(notebook).items():
        try:
            defaults[name] = ast.literal_eval(info.get("default", ""))
        except (ValueError, SyntaxError):
            continue  # an expression default (e.g. range(4)): not needed by the table
    return defaults


def notebook_types(notebook: str | Path) -> dict[str, str]:
    """Map each parameter of ``notebook`` to its type name (``"int"``, ``"Optional[str]"``...).

    A parameter whose type cannot be told (no annotation, default not a literal)
    maps to ``"?"``; :func:`convert` refuses values for it with a hint to annotate it.
    """
    types = {}
    for name, info in _inspect(notebook).items():
        annotation = info.get("inferred_type_name") or "None"
        if annotation == "None":
            annotation = _literal_type(info.get("default", "")) or "?"
        types[name] = annotation
    return types


def convert(name: str, type_name: str, text: str) -> Any:
    """Convert the command-line string ``text`` for parameter ``name`` to ``type_name``."""
    m = _OPTIONAL.match(type_name)
    if m:
        if text.strip().lower() == "none":
            return None
        type_name = m.group(1)
    if type_name not in _SUPPORTED:
        raise ParameterError(
            f"{name}={text}: the notebook gives {name} the type {type_name!r}, which a sweep "
            f"cannot set from text; valid types are {', '.join(_SUPPORTED)} and Optional of "
            f"them (annotate the parameter, e.g. '{name}: int = 7')"
        )
    s = text.strip()
    try:
        if type_name == "int":
            return int(s, 10)
        if type_name == "float":
            return float(s)
    except ValueError:
        raise ParameterError(
            f"{name}={text}: not an {type_name} (e.g. {_EXAMPLE[type_name]})"
            if type_name == "int"
            else f"{name}={text}: not a {type_name} (e.g. {_EXAMPLE[type_name]})"
        ) from None
    if type_name == "bool":
        if s.lower() in _TRUE:
            return True
        if s.lower() in _FALSE:
            return False
        raise ParameterError(
            f"{name}={text}: not a bool; valid are {', '.join(_TRUE)} or {', '.join(_FALSE)}"
        )
    return s


def _describe(types: Mapping[str, str]) -> str:
    usable = [f"{n} ({t})" for n, t in sorted(types.items()) if n not in RESERVED]
    return ", ".join(usable) if usable else "none"


def check_grid(
    notebook: str | Path, raw: Sequence[tuple[str, str]], types: Mapping[str, str] | None = None
) -> dict[str, list[Any]]:
    """Turn ``-p NAME VALUES`` pairs into a typed grid, checked against ``notebook``.

    ``VALUES`` is comma-separated. Raises :class:`ParameterError` for an unknown or
    reserved name, a name given twice, an empty value list or a value of the wrong
    type, and when the notebook lacks the ``output_dir`` parameter the sidecar
    convention needs. ``types`` skips reading the notebook (for tests).

    >>> check_grid("n.ipynb", [("slots", "1,2"), ("policy", "lru")],
    ...            {"slots": "int", "policy": "str", "output_dir": "str"})
    {'slots': [1, 2], 'policy': ['lru']}
    >>> check_grid("n.ipynb", [("slot", "1")], {"slots": "int", "output_dir": "str"})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memcglab.sweep.params.ParameterError: unknown parameter 'slot' ... 'slots'?); valid: slots (int)
    """
    read_it = types is None
    types = notebook_types(notebook) if types is None else types
    label = Path(notebook).name
    for reserved in RESERVED:
        if reserved not in types:
            raise ParameterError(
                f"notebook {label} has no '{reserved}' parameter; a swept notebook declares "
                f"'{reserved} = \"\"' in its parameters cell and calls "
                f"memcglab.sweep.record_result({reserved}, {{...}}) at its end"
            )
    grid: dict[str, list[Any]] = {}
    for name, values in raw:
        if name in RESERVED:
            raise ParameterError(f"{name}: set by the sweep itself (one per run); do not pass it")
        if name not in types:
            close = difflib.get_close_matches(name, [t for t in types if t not in RESERVED], 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParameterError(
                f"unknown parameter {name!r} for {label}{hint}; valid: {_describe(types)}"
            )
        if name in grid:
            raise ParameterError(
                f"{name}: given twice; give all its values in one -p, comma-separated"
            )
        grid[name] = values.split(",")
    try:
        check_grid_size(grid, flag="-p ")  # before converting a value of an oversized grid
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    for name, parts in grid.items():
        if any(p.strip() == "" for p in parts):
            raise ParameterError(f"{name}={','.join(parts)}: empty value in the list; "
                                 f"write e.g. 1,2,4")
        grid[name] = [convert(name, types[name], p) for p in parts]
    try:
        expand_grid(label, grid)  # duplicates after conversion ("2,02"), unhashable values
    except (ValueError, TypeError) as exc:
        raise ParameterError(str(exc)) from None
    if read_it:
        check_sweepable(notebook, grid, types)
    check_registered(grid)  # models, policies and plugins: memcglab.sweep.registered
    return grid


def _sweepable(decl: Declaration, types: Mapping[str, str], read: set[str]) -> str:
    names = decl.vary if decl.vary is not None else [
        n for n in types if n in read and n not in decl.fixed]
    return ", ".join(sorted(n for n in names if n not in RESERVED)) or "none"


def _holds(when: Mapping[str, Any], grid: Mapping[str, Sequence[Any]],
           defaults: Mapping[str, Any]) -> bool:
    """Whether some run of ``grid`` has every parameter of ``when`` at its value there."""
    return all(v in (grid[k] if k in grid else [defaults.get(k)]) for k, v in when.items())


def check_sweepable(notebook: str | Path, grid: Mapping[str, Sequence[Any]],
                    types: Mapping[str, str] | None = None) -> None:
    """Refuse grid parameters that ``notebook`` ignores or overrides; see the module doc.

    ``grid`` holds converted values (from :func:`check_grid`). A parameter given one
    value is checked like a swept one: a run would carry a value it did not use.
    """
    label = Path(notebook).name
    types = notebook_types(notebook) if types is None else types
    nb = read_notebook(notebook)
    try:
        decl = read_declaration(nb, [n for n in types if n not in RESERVED])
    except DeclarationError as exc:
        raise ParameterError(f"notebook {label}: {exc}") from None
    read = names_read(nb)
    for name in grid:
        if name in decl.fixed:
            raise ParameterError(f"{name}: {label} does not let a sweep set it: "
                                 f"{decl.fixed[name]}; sweepable: {_sweepable(decl, types, read)}")
        if decl.vary is not None and name not in decl.vary:
            raise ParameterError(f"{name}: {label} does not declare it sweepable (its metadata "
                                 f"memcglab.sweep.vary); sweepable: "
                                 f"{_sweepable(decl, types, read)}")
        if decl.vary is None and name not in read:
            raise ParameterError(f"{name}: {label} never reads it (no code cell but the "
                                 f"parameters cell names it), so every run would be the same; "
                                 f"sweepable: {_sweepable(decl, types, read)}")
    defaults = notebook_defaults(notebook)
    for o in decl.overridden:
        if o.param not in grid or not _holds(o.when, grid, defaults):
            continue
        cond = ", ".join(f"{k}={v!r}" for k, v in o.when.items())
        why = f" ({o.why})" if o.why else ""
        if o.sets:
            bad = [v for v in grid[o.param] if v != o.value]
            if bad:
                raise ParameterError(
                    f"{o.param}={bad[0]!r}: with {cond}, {label} runs {o.param}={o.value!r} "
                    f"whatever it is given{why}; sweep {o.param} without {cond}")
        else:
            bad = [v for v in grid[o.param]
                   if isinstance(v, int | float) and not isinstance(v, bool) and v > o.max]
            if bad:
                raise ParameterError(
                    f"{o.param}={bad[0]!r}: with {cond}, {label} caps {o.param} at "
                    f"{o.max!r}{why}; give values up to {o.max!r}, or sweep {o.param} "
                    f"without {cond}")
