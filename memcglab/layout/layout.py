"""Where each field of a struct lies: offsets, holes, padding and the cache lines it spans.

:func:`layout` turns a :class:`~memcglab.layout.abi.Record` into a
:class:`StructLayout`, the table pahole prints: one row per member (anonymous
structs and unions expanded in place, as pahole does), the holes between members,
the tail padding, and for any placement address the cache lines each field touches.
:meth:`StructLayout.locate` resolves a C member path such as ``cached[3]``,
``work.entry`` or ``memory_events_local[8]`` to an offset and a size.

>>> from memcglab.layout.abi import Array, Member, Pointer, Record, U8
>>> r = Record("struct", "s", (Member("lock", U8), Member("nr_pages", Array(U8, 7)),
...                            Member("cached", Array(Pointer("struct mem_cgroup"), 7))))
>>> lay = layout(r)
>>> lay.locate("cached[6]")
Location(offset=56, size=8)
>>> list(lay.span_lines(0, 64, placement=0x60))
[1, 2]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcglab.layout.abi import Array, CType, Record

__all__ = ["CACHELINE", "FieldLayout", "Hole", "Location", "StructLayout", "layout"]

#: x86-64 L1 cache line (SMP_CACHE_BYTES and INTERNODE_CACHE_BYTES on x86).
CACHELINE = 64


@dataclass(frozen=True)
class FieldLayout:
    """One member as placed in the outermost struct.

    ``path`` is the C expression that names it from the outer struct (members of an
    anonymous struct or union are named directly, as in C); ``depth`` is the
    nesting level for display; ``anonymous`` marks the header row of an anonymous
    struct/union whose members follow at ``depth + 1``.
    """

    path: str
    type: CType
    offset: int
    size: int
    align: int
    depth: int = 0
    anonymous: bool = False

    def lines(self, placement: int = 0, line: int = CACHELINE) -> range:
        """The indices of the cache lines this field touches (empty for a 0-byte field)."""
        return _span(placement + self.offset, self.size, line)


@dataclass(frozen=True)
class Hole:
    """Unused bytes before ``before`` (or at the end of an anonymous struct)."""

    offset: int
    size: int
    before: str


@dataclass(frozen=True)
class Location:
    """Where a member lives: byte ``offset`` from the start of the struct, ``size`` bytes."""

    offset: int
    size: int


def _span(start: int, size: int, line: int) -> range:
    if size <= 0:
        return range(start // line, start // line)
    return range(start // line, (start + size - 1) // line + 1)


_PATH_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_]\w*)|\[\s*(?P<idx>\d+)\s*\]|(?P<dot>\.))")


@dataclass(frozen=True)
class StructLayout:
    """The layout of one struct or union type: what pahole shows."""

    name: str
    record: Record
    fields: tuple[FieldLayout, ...]
    holes: tuple[Hole, ...]

    @property
    def size(self) -> int:
        """``sizeof`` the struct."""
        return self.record.size

    @property
    def align(self) -> int:
        """``_Alignof`` the struct."""
        return self.record.align

    @property
    def padding(self) -> int:
        """Tail padding: bytes after the last member up to ``sizeof``."""
        r = self.record
        if not r.members:
            return 0
        end = max(off + m.type.size for off, m in zip(r.offsets, r.members, strict=True))
        return r.size - end

    def field(self, path: str) -> FieldLayout:
        """The member at ``path``; KeyError lists the members."""
        for f in self.fields:
            if f.path == path:
                return f
        raise KeyError(f"{self.name}: no member {path!r}; members are "
                       f"{', '.join(f.path for f in self.fields if not f.anonymous)}")

    def locate(self, path: str) -> Location:
        """Offset and size of a member path: ``a``, ``a.b``, ``a[3]``, ``a[3].b``."""
        t: CType = self.record
        offset = 0
        pos = 0
        expect_name = True
        while pos < len(path):
            m = _PATH_TOKEN.match(path, pos)
            if not m:
                raise KeyError(f"{self.name}: cannot parse member path {path!r} at {pos}")
            pos = m.end()
            if m.group("dot"):
                expect_name = True
                continue
            if m.group("name"):
                if not expect_name or not isinstance(t, Record):
                    raise KeyError(f"{self.name}: {path!r}: {m.group('name')!r} is not a "
                                   "member of a struct or union here")
                found = _find_member(t, m.group("name"))
                if found is None:
                    raise KeyError(f"{self.name}: {path!r}: no member {m.group('name')!r} "
                                   f"in {t.kind} {t.tag or '<anonymous>'}")
                off, t = found
                offset += off
                expect_name = False
            else:
                if not isinstance(t, Array):
                    raise KeyError(f"{self.name}: {path!r}: subscript on a non-array")
                i = int(m.group("idx"))
                if t.count is not None and i >= t.count:
                    raise KeyError(f"{self.name}: {path!r}: index {i} out of range "
                                   f"(array of {t.count})")
                offset += i * t.elem.size
                t = t.elem
        if t is self.record:
            raise KeyError(f"{self.name}: empty member path")
        return Location(offset, t.size)

    def span_lines(self, offset: int, size: int, placement: int = 0,
                   line: int = CACHELINE) -> range:
        """Cache lines touched by ``size`` bytes at ``offset`` when placed at ``placement``."""
        return _span(placement + offset, size, line)

    def lines_of(self, paths: list[str], placement: int = 0, line: int = CACHELINE) -> set[int]:
        """The set of lines touched by all the named member paths together."""
        out: set[int] = set()
        for p in paths:
            loc = self.locate(p)
            out.update(self.span_lines(loc.offset, loc.size, placement, line))
        return out


def _find_member(rec: Record, name: str) -> tuple[int, CType] | None:
    """Find ``name`` in ``rec``, looking through anonymous members as C does."""
    for off, m in zip(rec.offsets, rec.members, strict=True):
        if m.name == name:
            return off, m.type
        if m.name is None and isinstance(m.type, Record):
            inner = _find_member(m.type, name)
            if inner is not None:
                return off + inner[0], inner[1]
    return None


def layout(record: Record, name: str | None = None) -> StructLayout:
    """Lay out ``record``; anonymous struct/union members are expanded in place."""
    fields: list[FieldLayout] = []
    holes: list[Hole] = []
    _walk(record, 0, 0, fields, holes)
    label = name or (f"{record.kind} {record.tag}" if record.tag else record.kind)
    return StructLayout(label, record, tuple(fields), tuple(holes))


def _walk(rec: Record, base: int, depth: int, fields: list[FieldLayout],
          holes: list[Hole]) -> None:
    end = 0
    for off, m in zip(rec.offsets, rec.members, strict=True):
        if rec.kind == "struct" and off > end:
            holes.append(Hole(base + end, off - end, m.name or "<anonymous>"))
        anon = m.name is None and isinstance(m.type, Record)
        fields.append(FieldLayout(m.name or "", m.type, base + off, m.type.size,
                                  m.effective_align, depth, anon))
        if anon:
            assert isinstance(m.type, Record)
            _walk(m.type, base + off, depth + 1, fields, holes)
        end = max(end, off + m.type.size)
