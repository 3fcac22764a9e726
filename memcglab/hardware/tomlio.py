"""Write the small TOML subset the hardware files use (``tomllib`` only reads).

Tables of scalars (str, int, float, bool), lists of scalars and nested tables; strings
as TOML basic strings (JSON's escapes are a subset of TOML's), floats with ``repr`` so
they read back to the same bits.

>>> import tomllib
>>> doc = {"schema": 1, "machine": {"cpus": 2, "model": 'a "b"'},
...        "priors": {"x": {"low": 0.1, "xs": [1, 2]}}}
>>> print(dumps(doc))
schema = 1
<BLANKLINE>
[machine]
cpus = 2
model = "a \\"b\\""
<BLANKLINE>
[priors.x]
low = 0.1
xs = [1, 2]
<BLANKLINE>
>>> tomllib.loads(dumps(doc)) == doc
True
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps"]

_BARE = re.compile(r"[A-Za-z0-9_-]+\Z")


def _string(s: str) -> str:
    # JSON escapes every control character TOML forbids in a basic string except DEL
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r}: the hardware files hold finite numbers only")
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    raise TypeError(f"{type(v).__name__} value {v!r}: not writable as TOML here")


def _table(path: list[str], t: Mapping[str, Any], out: list[str]) -> None:
    subs = [(k, v) for k, v in t.items() if isinstance(v, Mapping)]
    plain = [(k, v) for k, v in t.items() if not isinstance(v, Mapping)]
    if path and (plain or not subs):
        out.append(f"[{'.'.join(_key(p) for p in path)}]")
    out.extend(f"{_key(k)} = {_scalar(v)}" for k, v in plain)
    if plain or (path and not subs):
        out.append("")
    for k, v in subs:
        _table([*path, k], v, out)


def dumps(doc: Mapping[str, Any]) -> str:
    """``doc`` as TOML text; ``tomllib.loads(dumps(doc)) == doc`` for what it accepts."""
    out: list[str] = []
    _table([], doc, out)
    return "\n".join(out)
