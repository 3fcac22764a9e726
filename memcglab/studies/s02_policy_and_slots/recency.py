"""Where an LRU stock would keep its recency state, and which cache lines that costs.

Random and round-robin need no per-slot state (round-robin one ``uint8_t drain_idx``
outside the lookup's line); LRU needs to know, per slot, when it was last used. No
LRU patch was posted (the multi-memcg thread only reports trying one), so the layout is a choice.
The one this module takes as the most plausible for a kernel patch mirrors the
replay model (:class:`memcglab.kernel.victim.LruVictim`: a stock-local clock, each
slot stamped with it when consume_stock or refill_stock finds or fills it, the
oldest stamp evicted): an ``unsigned int clock`` and ``unsigned int
last_used[NR_MEMCG_STOCK]``, 32 bits so a stamp does not wrap within a stock's life
(a ``uint8_t`` stamp wraps after 256 touches and then evicts the wrong slot; jiffies
are too coarse: thousands of packets share one). Two places are plausible:

``after cached[]`` (the default)
    appended after the slot arrays, as the round-robin patch appended ``drain_idx``:
    a scan still reads the lock's line only, and each recency write (and each LRU
    victim search) touches the line after it;
``beside nr_pages[]``
    the small arrays packed together before ``cached[]``: ``cached[]`` moves down,
    so every scan reads two lines.

v6.16's stock fills its first line exactly at 7 slots (a 1-byte lock, 7 one-byte
``nr_pages``, 7 eight-byte ``cached``: 64 bytes), so any recency state, of any
width, lands in a second line: :func:`recency_lines` counts the lines, with
:mod:`memcglab.layout` laying out the C text below.

>>> t = recency_table(slots=(6, 7))
>>> t[["layout", "slots", "scan_lines", "extra_lines_per_write"]].values.tolist()
[['none (random)', 6, 1, 0], ['none (random)', 7, 1, 0], ['after cached[]', 6, 1, 1], \
['after cached[]', 7, 1, 1], ['beside nr_pages[]', 6, 2, 0], ['beside nr_pages[]', 7, 2, 0]]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import pandas as pd

from memcglab.layout.cparse import parse_c
from memcglab.layout.kernel_types import KERNEL_TYPES
from memcglab.layout.layout import CACHELINE, StructLayout

__all__ = ["LAYOUTS", "DEFAULT_LAYOUT", "RecencyLines", "stock_text", "recency_layout",
           "recency_lines", "recency_table"]

_HEAD = "#define NR_MEMCG_STOCK {slots}\nstruct memcg_stock_pcp {{\n    local_trylock_t lock;\n"
_TAIL = "    struct work_struct work;\n    unsigned long flags;\n};\n"
_NR = "    uint8_t nr_pages[NR_MEMCG_STOCK];\n"
_CACHED = "    struct mem_cgroup *cached[NR_MEMCG_STOCK];\n"
_RECENCY = "    unsigned int clock;\n    unsigned int last_used[NR_MEMCG_STOCK];\n"

#: layout name -> the members between the lock and ``work``, in order (v6.16's stock
#: otherwise: mm/memcontrol.c, DEFINE_PER_CPU_ALIGNED)
LAYOUTS: dict[str, str] = {
    "none (random)": _NR + _CACHED,
    "after cached[]": _NR + _CACHED + _RECENCY,
    "beside nr_pages[]": _NR + _RECENCY + _CACHED,
}
#: the layout the study prices by default (see the module doc)
DEFAULT_LAYOUT = "after cached[]"
_SCAN = ("lock", "nr_pages", "cached")
_TOUCH = ("clock", "last_used")


def stock_text(layout: str, slots: int = 7) -> str:
    """The C text of ``struct memcg_stock_pcp`` with recency state placed as ``layout``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r}: unknown; valid: {', '.join(LAYOUTS)}")
    if not 1 <= slots <= 255:
        raise ValueError(f"slots={slots}: must be between 1 and 255 (NR_MEMCG_STOCK)")
    return _HEAD.format(slots=slots) + LAYOUTS[layout] + _TAIL


@cache
def recency_layout(layout: str, slots: int = 7) -> StructLayout:
    """:func:`stock_text` laid out for x86-64 by :mod:`memcglab.layout`."""
    return parse_c(KERNEL_TYPES + stock_text(layout, slots)).layout("struct memcg_stock_pcp")


@dataclass(frozen=True)
class RecencyLines:
    """Cache lines of one layout at one slot count (the stock at a line boundary).

    ``scan_lines``: lines a full scan (lock, ``nr_pages[]``, ``cached[]``) touches;
    ``extra_lines_per_write``: lines a recency write (the clock and a stamp) adds
    beyond those; ``sizeof``: the struct's size.
    """

    layout: str
    slots: int
    scan_lines: int
    extra_lines_per_write: int
    sizeof: int


def recency_lines(layout: str = DEFAULT_LAYOUT, slots: int = 7,
                  line: int = CACHELINE) -> RecencyLines:
    """The lines :class:`RecencyLines` describes, from the C layout."""
    lay = recency_layout(layout, slots)
    scan = lay.lines_of(list(_SCAN), 0, line)
    touch = lay.lines_of(list(_TOUCH), 0, line) if layout != "none (random)" else set()
    return RecencyLines(layout, slots, len(scan), len(touch - scan), lay.size)


def recency_table(layouts: Iterable[str] = tuple(LAYOUTS),
                  slots: Iterable[int] = range(1, 17)) -> pd.DataFrame:
    """One row per (layout, slot count): :class:`RecencyLines` as columns, plus
    ``lookup_bytes`` (from the lock to the end of the last scanned or recency field)."""
    rows = []
    for name in layouts:
        for n in slots:
            r = recency_lines(name, n)
            lay = recency_layout(name, n)
            fields = _SCAN + (_TOUCH if name != "none (random)" else ())
            end = max(lay.locate(f).offset + lay.locate(f).size for f in fields)
            rows.append({"layout": name, "slots": n, "scan_lines": r.scan_lines,
                         "extra_lines_per_write": r.extra_lines_per_write,
                         "lookup_bytes": end, "sizeof": r.sizeof})
    return pd.DataFrame(rows)
