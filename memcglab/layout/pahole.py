"""Print a struct layout the way pahole does, with the cache lines each member spans.

Each member line carries pahole's ``/* offset size */`` comment plus the cache
lines it touches (``L0``, ``L0-1`` when it straddles a boundary); cache-line
boundaries are marked as pahole marks them. With a placement address (where the
object sits in memory, e.g. a per-CPU variable's address from ``objdump -t``) the
boundaries and line numbers follow the object's real phase in its cache lines.

>>> from memcglab.layout.cparse import parse_c
>>> ts = parse_c("struct s { char lock; unsigned char nr[7]; void *cached[7]; long flags; };")
>>> print(render(ts.layout("s")).expandtabs(8))
struct s {
	char                       lock;                 /*     0     1  L0 */
	unsigned char              nr[7];                /*     1     7  L0 */
	void *                     cached[7];            /*     8    56  L0 */
	/* --- cacheline 1 boundary (64 bytes) --- */
	long                       flags;                /*    64     8  L1 */
<BLANKLINE>
	/* size: 72, cachelines: 2, members: 4 */
	/* last cacheline: 8 bytes */
};
"""

from __future__ import annotations

import re

from memcglab.layout.abi import Array, Member, Record, type_name
from memcglab.layout.layout import CACHELINE, StructLayout

__all__ = ["render", "member_decl"]


def member_decl(m: Member) -> tuple[str, str]:
    """(type column, name column) for a member, pahole style, with numeric array sizes."""
    t = m.type
    dims = ""
    while isinstance(t, Array):
        dims += "[]" if t.count is None else f"[{t.count}]"
        t = t.elem
    if m.decl and m.name:
        # The type as written ("struct mem_cgroup *", "local_trylock_t") is what
        # precedes the member name; function pointers are printed whole.
        head = m.decl.split("[", 1)[0]
        idx = [i.start() for i in re.finditer(rf"\b{re.escape(m.name)}\b", head)]
        if idx and "(" not in head:
            spelled = re.sub(r"\s*(\*+)$", r" \1", head[: idx[-1]].strip())
            return spelled, f"{m.name}{dims}"
        if "(" in head:
            return m.decl, ""
    return type_name(t), f"{m.name or ''}{dims}"


def _line(indent: int, decl: str, name: str, off: int, size: int, lines: range) -> str:
    col = f"{decl:<26} {name};" if name else f"{decl};"
    ltxt = "" if not len(lines) else (
        f"L{lines.start}" if len(lines) == 1 else f"L{lines.start}-{lines.stop - 1}")
    return f"{chr(9) * indent}{col:<48} /* {off:5d} {size:5d}  {ltxt} */"


class _Printer:
    def __init__(self, placement: int, line: int) -> None:
        self.phase = placement % line
        self.placement = placement
        self.line = line
        self.out: list[str] = []
        self.next_k = 1  # the next boundary to announce: offset line*k - phase
        self.prev_end = 0

    def boundary(self, k: int) -> int:
        return self.line * k - self.phase

    def announce(self, offset: int, indent: int) -> None:
        while self.boundary(self.next_k) <= offset:
            b = self.boundary(self.next_k)
            if b > 0 or self.phase == 0:
                at = "" if not self.placement else f" at {self.placement + b:#x}"
                ago = "" if b == offset else f" was {max(self.prev_end, offset) - b} bytes ago"
                if b < offset and self.prev_end <= b:
                    ago = f" was {offset - b} bytes ago"
                self.out.append(f"{chr(9) * indent}/* --- cacheline {self.next_k} boundary "
                                f"({b} bytes){at}{ago} --- */")
            self.next_k += 1

    def record(self, rec: Record, base: int, indent: int) -> None:
        for off, m in zip(rec.offsets, rec.members, strict=True):
            pos = base + off
            self.announce(pos, indent)
            span = range(0)
            if m.type.size:
                first = (self.phase + pos) // self.line
                last = (self.phase + pos + m.type.size - 1) // self.line
                span = range(first, last + 1)
            if m.name is None and isinstance(m.type, Record):
                self.out.append(f"{chr(9) * indent}{m.type.kind} {{")
                self.record(m.type, pos, indent + 1)
                self.out.append(_line(indent, "}", "", pos, m.type.size, span))
            else:
                decl, name = member_decl(m)
                self.out.append(_line(indent, decl, name, pos, m.type.size, span))
            self.prev_end = max(self.prev_end, pos + m.type.size)


def render(lay: StructLayout, placement: int | None = None, line: int = CACHELINE,
           title: str | None = None) -> str:
    """pahole-style text for ``lay``; ``placement`` is the object's address, if known."""
    p = _Printer(placement or 0, line)
    rec = lay.record
    head = title or lay.name
    p.out.append(f"{head} {{")
    if placement is not None:
        p.out.append(f"\t/* placed at {placement:#x}: {placement % line} bytes into a "
                     f"{line}-byte cacheline */")
    p.record(rec, 0, 1)
    top = [(o, m) for o, m in zip(rec.offsets, rec.members, strict=True)]
    sum_members = sum(m.type.size for _, m in top)
    holes = [h for h in lay.holes]
    lines = -(-lay.size // line)
    p.out.append("")
    p.out.append(f"\t/* size: {lay.size}, cachelines: {lines}, members: {len(top)} */")
    if holes:
        p.out.append(f"\t/* sum members: {sum_members}, holes: {len(holes)}, "
                     f"sum holes: {sum(h.size for h in holes)} */")
    if lay.padding:
        p.out.append(f"\t/* padding: {lay.padding} */")
    if lay.align > 8:
        p.out.append(f"\t/* alignment: {lay.align} */")
    if lay.size % line:
        p.out.append(f"\t/* last cacheline: {lay.size % line} bytes */")
    if placement is not None and lay.size:
        touched = (p.phase + lay.size - 1) // line + 1
        first = placement - p.phase
        p.out.append(f"\t/* placed: touches {touched} cachelines "
                     f"({first:#x}..{first + touched * line - 1:#x}) */")
    p.out.append("};")
    return "\n".join(p.out)
