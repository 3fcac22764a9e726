"""C struct layout for x86-64, the kernel struct catalogue, and cache-line coherence.

The public names, by job:

* layout model: :func:`parse_c` (C text -> types), :func:`layout`, :func:`render`
  (pahole view), :func:`to_c` (types -> C, for gcc);
* the catalogue: :func:`struct_layout`, :data:`CATALOGUE`, :func:`resolve_config`;
* per-CPU placement: :func:`slot_scan_lines`, :func:`slot_table`, :func:`lookup_lines`;
* struct page_counter per layout: :func:`page_counter_lines` (the fields on each cache
  line, ``usage``'s flagged), :data:`PAGE_COUNTER_LAYOUTS`; gcc's view of any catalogue
  entry: :func:`gcc_check`;
* coherence: :func:`simulate`; seed 004: :func:`compare_eras`, :func:`run_stream`,
  :func:`contention_stream`; the stream type :class:`AccessStream`.

Names resolve lazily, so importing :mod:`memcglab.layout.access` (as the workload
generators do) does not load numba or pycparser.

>>> from memcglab.layout import struct_layout
>>> hex(struct_layout("memcg_stock_pcp", era="2025-04").size)
'0x88'
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_c": "cparse", "CParseError": "cparse", "TypeSpace": "cparse",
    "layout": "layout", "StructLayout": "layout", "CACHELINE": "layout",
    "render": "pahole", "to_c": "cemit",
    "struct_layout": "catalogue", "CATALOGUE": "catalogue", "resolve_config": "catalogue",
    "CatalogueError": "catalogue", "DEFAULT_CONFIG": "catalogue",
    "slot_scan_lines": "percpu", "slot_table": "percpu", "lookup_lines": "percpu",
    "page_counter_lines": "pclines", "CounterLine": "pclines",
    "PAGE_COUNTER_LAYOUTS": "pclines", "gcc_check": "gcccheck", "GccCheck": "gcccheck",
    "simulate": "coherence", "CoherenceResult": "coherence",
    "compare_eras": "scenario", "run_stream": "scenario", "contention_stream": "scenario",
    "AccessStream": "access", "ACCESS_DTYPE": "access",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'memcglab.layout' has no attribute {name!r}")
    return getattr(importlib.import_module(f"memcglab.layout.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
