"""The cache lines of struct page_counter per layout: which fields each holds, and ``usage``.

Every charge and uncharge writes ``usage`` at each level of the walk, so the line
that holds it is the one CPUs fight over; whatever else sits on it is dragged along
(a read of a field there is a transfer when another CPU has just written ``usage``).
:func:`page_counter_lines` gives, for one layout of the catalogue (the scenario
contract's ``page_counter_layout`` values: :data:`PAGE_COUNTER_LAYOUTS`, or any other
page_counter era), each line the struct touches with the fields on it and a flag for
``usage``. A pricing step can then count, per walk and per level, the reads and
writes that fall on each line. Nothing here prices anything.

Lines are numbered from the one holding the struct's first byte. ``placement`` is
where the struct starts: a byte offset or an address (only its phase in a 64-byte line
matters). The aligned layouts start on a line boundary wherever they are embedded;
v5.11 and v5.12 are 8-byte aligned, so inside struct mem_cgroup their lines depend on
what precedes ``memory`` (``css`` and what follows it), which the caller must supply.

>>> for ln in page_counter_lines("v5.12"):
...     print(ln.line, ln.usage, " ".join(ln.fields))
0 True usage min low high max emin min_usage children_min_usage
1 False elow low_usage children_low_usage watermark failcnt parent
>>> [ln.fields for ln in page_counter_lines("v6.1") if ln.usage]
[('usage',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memcglab.layout.catalogue import struct_layout
from memcglab.layout.catalogue_pc import PAGE_COUNTER_RELAYOUTS
from memcglab.layout.layout import CACHELINE

__all__ = ["PAGE_COUNTER_LAYOUTS", "CounterLine", "page_counter_lines", "usage_line"]

#: The scenario contract's page_counter_layout values (revision 2), in its order: the
#: catalogue's page_counter texts (a new layout is one entry there)
PAGE_COUNTER_LAYOUTS: tuple[str, ...] = tuple(PAGE_COUNTER_RELAYOUTS)


@dataclass(frozen=True)
class CounterLine:
    """One cache line of a struct page_counter.

    ``line`` counts from the line holding the struct's first byte; ``fields`` are
    the members with at least one byte on it, in offset order (the zero-size padding
    members hold none and are left out); ``usage`` says whether ``usage`` is one of
    them.
    """

    line: int
    fields: tuple[str, ...]
    usage: bool

    def to_dict(self) -> dict[str, object]:
        """The line as plain data: ``{"line": 0, "fields": [...], "usage": True}``."""
        return {"line": self.line, "fields": list(self.fields), "usage": self.usage}


def page_counter_lines(layout: str, placement: int = 0,
                       config: Iterable[str] | Mapping[str, bool] | None = None,
                       ) -> tuple[CounterLine, ...]:
    """The cache lines of struct page_counter in ``layout``, first to last.

    ``layout`` is a catalogue era of ``page_counter`` (the contract's values are
    :data:`PAGE_COUNTER_LAYOUTS`); ``config`` as for
    :func:`~memcglab.layout.catalogue.struct_layout` (``CONFIG_SMP`` decides the
    padding). An unknown layout raises
    :class:`~memcglab.layout.catalogue.CatalogueError` naming the valid ones; a
    ``placement`` the struct's alignment forbids raises ValueError.
    """
    lay = struct_layout("page_counter", layout, config)
    if placement < 0:
        raise ValueError(f"placement={placement}: must be >= 0 (a byte offset or address)")
    if placement % lay.align:
        raise ValueError(f"placement={placement:#x}: page_counter {layout} is {lay.align}-byte "
                         f"aligned, so it starts at a multiple of {lay.align}")
    phase = placement % CACHELINE
    on: dict[int, list[str]] = {}
    for f in lay.fields:
        if f.depth or f.size == 0:
            continue
        for k in f.lines(phase):
            on.setdefault(k, []).append(f.path)
    return tuple(CounterLine(k, tuple(names), "usage" in names)
                 for k, names in sorted(on.items()))


def usage_line(layout: str, placement: int = 0,
               config: Iterable[str] | Mapping[str, bool] | None = None) -> CounterLine:
    """The line that holds ``usage`` (see :func:`page_counter_lines`).

    >>> usage_line("v5.11").fields[-3:]
    ('parent', 'emin', 'min_usage')
    """
    return next(ln for ln in page_counter_lines(layout, placement, config) if ln.usage)
