"""Per-CPU placement of the charge stock: which cache lines a slot lookup touches.

``consume_stock()`` scans every slot: it reads the lock, then ``cached[i]`` for each
slot and ``nr_pages[i]`` of the match (mm/memcontrol.c, E2-E4). Whether that scan
stays in one cache line depends on the struct layout and on where the linker put the
per-CPU variable: ``DEFINE_PER_CPU`` only gives the type's own alignment (8 here),
``DEFINE_PER_CPU_ALIGNED`` gives a whole line (``____cacheline_aligned``). Vlastimil
Babka's review of the multi-memcg stock (seed 000) found the 0x88-byte struct at a
32-byte phase with ``DEFINE_PER_CPU``, so its 64 lookup bytes straddled two lines;
fix 4 made it ``DEFINE_PER_CPU_ALIGNED``.

The functions here feed the cost model's slot-count sweeps:

>>> slot_scan_lines(7), slot_scan_lines(7, aligned=False), slot_scan_lines(8)
(1, 2, 2)
>>> slot_table(slots=range(6, 9))[["slots", "sizeof", "lines_aligned", "slots_in_line0"]]
   slots  sizeof  lines_aligned  slots_in_line0
0      6      96              1               6
1      7     104              1               7
2      8     120              2               6
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from memcglab.layout.catalogue import CatalogueError, struct_layout
from memcglab.layout.layout import CACHELINE, StructLayout

__all__ = ["LOOKUP_FIELDS", "SLOT_ERAS", "lookup_lines", "slot_scan_lines", "slot_table",
           "unaligned_phases"]

#: The memcg_stock_pcp members a charge lookup reads, per era (lock first).
LOOKUP_FIELDS: dict[str, tuple[str, ...]] = {
    "v6.14": ("stock_lock", "cached", "nr_pages"),
    "v6.15": ("stock_lock", "cached", "nr_pages"),
    "2025-04": ("stock_lock", "nr_pages", "cached"),
    "v6.16": ("lock", "nr_pages", "cached"),
    "2026": ("lock", "nr_pages", "cached"),
}
#: The eras with an NR_MEMCG_STOCK slot array.
SLOT_ERAS = ("2025-04", "v6.16", "2026")


def _stock(era: str, slots: int | None, config: Iterable[str] | Mapping[str, bool] | None
           ) -> StructLayout:
    if era not in LOOKUP_FIELDS:
        raise CatalogueError(f"unknown era {era!r} for memcg_stock_pcp; valid: "
                             f"{', '.join(LOOKUP_FIELDS)}")
    if slots is None:
        return struct_layout("memcg_stock_pcp", era, config)
    if era not in SLOT_ERAS:
        raise CatalogueError(f"era {era!r} has a single cached memcg; slot counts need one "
                             f"of {', '.join(SLOT_ERAS)}")
    if not 1 <= slots <= 255:
        raise ValueError(f"slots={slots}: must be between 1 and 255 (uint8_t nr_pages[] "
                         "indexes and drain_idx)")
    return struct_layout("memcg_stock_pcp", era, config, {"NR_MEMCG_STOCK": slots})


def unaligned_phases(lay: StructLayout, line: int = CACHELINE) -> range:
    """Phases (address mod line) DEFINE_PER_CPU may give: multiples of the type's alignment."""
    return range(0, line, lay.align)


def _lines(lay: StructLayout, fields: Iterable[str], phase: int, line: int) -> int:
    return len(lay.lines_of(list(fields), phase, line))


def lookup_lines(era: str = "v6.16", placement: int | None = None, aligned: bool = True,
                 config: Iterable[str] | Mapping[str, bool] | None = None,
                 slots: int | None = None, line: int = CACHELINE) -> dict[str, list[int]]:
    """Start addresses of the cache lines each lookup field touches.

    ``placement`` is the per-CPU variable's address (``objdump -t``); without one,
    an aligned stock sits at 0 and an unaligned one at its worst phase.
    """
    lay = _stock(era, slots, config)
    fields = LOOKUP_FIELDS[era]
    if placement is None:
        placement = 0 if aligned else max(
            unaligned_phases(lay, line), key=lambda p: _lines(lay, fields, p, line))
    out: dict[str, list[int]] = {}
    for f in fields:
        loc = lay.locate(f)
        out[f] = [i * line for i in lay.span_lines(loc.offset, loc.size, placement, line)]
    return out


def slot_scan_lines(slots: int, era: str = "v6.16", aligned: bool = True,
                    placement: int | None = None,
                    config: Iterable[str] | Mapping[str, bool] | None = None,
                    line: int = CACHELINE) -> int:
    """Cache lines a full slot scan (lock, nr_pages[], cached[]) touches.

    ``aligned`` is DEFINE_PER_CPU_ALIGNED; unaligned, the worst phase DEFINE_PER_CPU
    can give. A ``placement`` address overrides both.
    """
    lay = _stock(era, slots, config)
    fields = LOOKUP_FIELDS[era]
    if placement is not None:
        return _lines(lay, fields, placement, line)
    if aligned:
        return _lines(lay, fields, 0, line)
    return max(_lines(lay, fields, p, line) for p in unaligned_phases(lay, line))


def _slots_in_line0(lay: StructLayout, slots: int, era: str, line: int) -> int:
    """Slots whose nr_pages[i] and cached[i] share the lock's (aligned) first line."""
    lock = LOOKUP_FIELDS[era][0]
    if lay.locate(lock).offset >= line:
        return 0
    n = 0
    for i in range(slots):
        ends = [lay.locate(f"{f}[{i}]") for f in ("nr_pages", "cached")]
        if all(loc.offset + loc.size <= line for loc in ends):
            n += 1
    return n


def slot_table(era: str = "v6.16", slots: Iterable[int] = range(1, 33),
               config: Iterable[str] | Mapping[str, bool] | None = None,
               line: int = CACHELINE) -> pd.DataFrame:
    """One row per slot count: struct size and the lines a full scan touches.

    Columns: ``slots``, ``sizeof``, ``lookup_bytes`` (lock to the end of cached[]),
    ``lines_aligned`` (DEFINE_PER_CPU_ALIGNED), ``lines_unaligned_worst`` and
    ``lines_unaligned_mean`` (DEFINE_PER_CPU over the phases its alignment allows),
    ``slots_in_line0`` (slots fully in the lock's line when aligned).
    """
    rows = []
    for n in slots:
        lay = _stock(era, n, config)
        fields = LOOKUP_FIELDS[era]
        phases = list(unaligned_phases(lay, line))
        per_phase = [_lines(lay, fields, p, line) for p in phases]
        end = max(lay.locate(f).offset + lay.locate(f).size for f in fields)
        rows.append({
            "slots": n,
            "sizeof": lay.size,
            "lookup_bytes": end - lay.locate(fields[0]).offset,
            "lines_aligned": _lines(lay, fields, 0, line),
            "lines_unaligned_worst": max(per_phase),
            "lines_unaligned_mean": sum(per_phase) / len(per_phase),
            "slots_in_line0": _slots_in_line0(lay, n, era, line),
        })
    return pd.DataFrame(rows)
