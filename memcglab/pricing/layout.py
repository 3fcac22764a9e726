"""The page_counter layout priced field by field: which lines a walk level touches after its write.

Every level of a page_counter walk starts with the atomic update of ``usage``; the replay
counts that write's transfers exactly (``usage_transfers``: the level's counter was last
written by another CPU). What the layout decides is what the same level touches *after*
that write, and where it sits (:func:`memcglab.layout.pclines.page_counter_lines`, the
gcc-checked struct catalogue):

* a field on ``usage``'s own line (``max``, ``min``, ``min_usage``... in the v5.11 and
  v5.12 layouts) is read on a line that other CPUs are queueing to write. If one of them
  took the line between the level's write and these reads, the level fetches it back:
  one more transfer of that line. The chance is the line's utilisation at the network's
  solution (the share of time a transfer of it is under way, so another writer is
  waiting), :func:`reacquisitions` times that chance, solved as a fixed point with the
  network (:meth:`memcglab.scenario.model.ScenarioModel`);
* a field on a line that walks also *write* (``min_usage`` / ``low_usage`` with
  ``protection``) is that line's station, as the scenario layer prices protection;
* a field on a read-mostly line is a hit.

The accesses per level, in program order, are :data:`WALK_ACCESSES`, read from the kernel
at each layout's era (``docs/audit/page-counter-fields-comparison.md``); ``usage`` itself
and the ``atomic_long_*`` of the first access are not in them. A modelling alternative,
the adjacent-line prefetch pair (Feng Tang's 2020 analysis of struct mem_cgroup found the
spatial prefetcher's 128-byte pairs mattered on those machines), is ``pair=True`` in
every function here: the two lines of an aligned 128-byte pair move together, so the
unit of sharing is the pair (line ``k // 2``), and a field on ``usage``'s pair partner
is as good as on ``usage``'s line.

Lines are numbered as in struct mem_cgroup, where the memory counter is embedded
(:func:`memcg_placement`: ``memory`` follows the 200-byte ``css`` and the 8-byte ``id``,
at byte 208 in the v5.x layouts, rounded up to 256 by the cache-line-aligned ones), so
``usage``'s line in v5.11 and v5.12 also holds ``css.parent`` (byte 192), the field
``parent_mem_cgroup`` reads from Wei Yang's patch on. :func:`parent_on_usage_line`
says whether a read-only walk through ``parent_mem_cgroup`` (the socket-pressure check,
the pre-rstat stat flushes, the event thresholds: :mod:`memcglab.scenario.walkers`)
reads ``usage``'s line at each level.

>>> reacquisitions("v5.12", protection=False)
(1.0, 1.0)
>>> reacquisitions("aligned", protection=False), reacquisitions("v6.1", protection=True)
((0.0, 0.0), (0.0, 0.0))
>>> written_lines("v5.12", protection=True), written_lines("v6.1", protection=True)
((4,), (5,))
>>> reacquisitions("v6.1", protection=True, pair=True), written_lines("v6.1", True, pair=True)
((1.0, 1.0), ())
>>> [parent_on_usage_line(x, "css.parent") for x in ("v5.11", "v5.12", "v6.1", "aligned")]
[True, True, False, False]
>>> parent_on_usage_line("v5.11", "memory.parent"), parent_on_usage_line("v5.12", "memory.parent")
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from memcglab.layout.catalogue import struct_layout
from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS, page_counter_lines

__all__ = ["Access", "CSS_PARENT_OFFSET", "MEMCG_MEMORY_OFFSET", "WALK_ACCESSES", "WalkAccesses",
           "line_of", "memcg_placement", "parent_on_usage_line", "reacquisitions",
           "written_lines"]

#: where ``memory`` would start in struct mem_cgroup with no alignment of its own: after
#: ``css`` (200 bytes, ``parent`` its last member at 192) and ``struct mem_cgroup_id id``
#: (8 bytes). Both readings of ``docs/audit/page-counter-fields-comparison.md`` (x86-64,
#: no lockdep: v5.11 include/linux/memcontrol.h and cgroup-defs.h; v5.19 and v6.0-rc1 the
#: same). A cache-line-aligned page_counter (v6.1's ``CACHELINE_PADDING``, Eric Dumazet's
#: test patch) rounds it up to its alignment: :func:`memcg_placement`
MEMCG_MEMORY_OFFSET = 208
#: ``memcg->css.parent``, the last member of struct cgroup_subsys_state
CSS_PARENT_OFFSET = 192


@dataclass(frozen=True)
class Access:
    """One access of a walk level after its ``usage`` update: a field and whether it is
    written (an ``atomic_long_xchg``), and whether it happens only with protection set
    (``propagate_protected_usage``'s exchanges when ``min`` / ``low`` are set)."""

    field: str
    write: bool = False
    protection_only: bool = False


@dataclass(frozen=True)
class WalkAccesses:
    """One era's accesses per walk level, after the level's ``usage`` update, in order."""

    era: str
    charge: tuple[Access, ...]
    uncharge: tuple[Access, ...]
    source: str


def _propagate(*, has_parent_test: bool = True) -> tuple[Access, ...]:
    # propagate_protected_usage: returns at the root (reads parent); reads min and, when
    # min is 0, min_usage; exchanges min_usage when protected; the same for low
    head = (Access("parent"),) if has_parent_test else ()
    return head + (Access("min"), Access("min_usage"),
                   Access("min_usage", write=True, protection_only=True),
                   Access("low"), Access("low_usage"),
                   Access("low_usage", write=True, protection_only=True))


_CHARGE = (Access("max"), *_propagate(), Access("watermark"), Access("parent"))
_UNCHARGE = (*_propagate(), Access("parent"))

#: layout -> the accesses of its era's page_counter_try_charge and page_counter_cancel
#: per level (mm/page_counter.c at the layout's commit)
WALK_ACCESSES: dict[str, WalkAccesses] = {
    layout: WalkAccesses(layout, _CHARGE, _UNCHARGE, "mm/page_counter.c")
    for layout in PAGE_COUNTER_LAYOUTS
}


def memcg_placement(layout: str) -> int:
    """The byte of struct mem_cgroup where ``memory`` starts with page_counter ``layout``:
    :data:`MEMCG_MEMORY_OFFSET` rounded up to the struct's alignment (the catalogue's).

    >>> [memcg_placement(x) for x in ("v5.11", "v5.12", "v6.1", "aligned")]
    [208, 208, 256, 256]
    """
    align = struct_layout("page_counter", layout).align
    return -(-MEMCG_MEMORY_OFFSET // align) * align


@lru_cache(maxsize=64)
def _field_lines(layout: str) -> dict[str, int]:
    place = memcg_placement(layout)
    first = place // 64
    out = {f: first + ln.line for ln in page_counter_lines(layout, place) for f in ln.fields}
    out["css.parent"] = CSS_PARENT_OFFSET // 64
    out["memory.parent"] = out["parent"]
    return out


def line_of(layout: str, field: str, pair: bool = False) -> int:
    """The line of struct mem_cgroup that holds page_counter field ``field`` of its
    ``memory`` counter in ``layout`` (or ``css.parent``, ``memory.parent``); with
    ``pair``, the 128-byte pair of lines that holds it."""
    if layout not in PAGE_COUNTER_LAYOUTS:
        raise KeyError(f"page_counter_layout {layout!r} is unknown; valid: "
                       f"{', '.join(PAGE_COUNTER_LAYOUTS)}")
    lines = _field_lines(layout)
    if field not in lines:
        raise KeyError(f"page_counter {layout} has no field {field!r}; fields: "
                       f"{', '.join(lines)}")
    return lines[field] // 2 if pair else lines[field]


def parent_on_usage_line(layout: str, parent_field: str, pair: bool = False) -> bool:
    """Whether ``parent_mem_cgroup``'s read (``parent_field``: ``memory.parent`` up to
    Wei Yang's patch, ``css.parent`` after it) falls on ``usage``'s line (pair)."""
    return line_of(layout, parent_field, pair) == line_of(layout, "usage", pair)


def _accesses(layout: str, which: str, protection: bool) -> tuple[Access, ...]:
    walk = getattr(WALK_ACCESSES[layout], which)
    return tuple(a for a in walk if protection or not a.protection_only)


def reacquisitions(layout: str, protection: bool, pair: bool = False) -> tuple[float, float]:
    """(charge, uncharge): per walk level, whether the level touches ``usage``'s line again
    after its update: 1 when any later access falls on that line (they all come within a
    few cycles, so at most one re-fetch), else 0."""
    usage = line_of(layout, "usage", pair)
    return tuple(float(any(line_of(layout, a.field, pair) == usage
                           for a in _accesses(layout, which, protection)))
                 for which in ("charge", "uncharge"))


def written_lines(layout: str, protection: bool, pair: bool = False) -> tuple[int, ...]:
    """Lines (pairs, with ``pair``) other than ``usage``'s that a walk level writes:
    protection's exchanges of ``min_usage`` and ``low_usage``."""
    usage = line_of(layout, "usage", pair)
    out = {line_of(layout, a.field, pair) for which in ("charge", "uncharge")
           for a in _accesses(layout, which, protection) if a.write}
    return tuple(sorted(out - {usage}))
