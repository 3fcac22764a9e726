"""Write a layout type back out as C, so a compiler can check the model.

:func:`to_c` renders a :class:`~memcglab.layout.abi.Record` built in Python (or
parsed) as a C definition that gcc accepts: nested records are written inline,
member alignment as ``_Alignas(n)``, a struct's own alignment as
``__attribute__((aligned(n)))``. Enumerators are renamed to be unique in the file.
:func:`leaf_paths` lists the member paths ``offsetof`` can name.

>>> from memcglab.layout.abi import Array, Member, Pointer, Record, U8
>>> r = Record("struct", "s", (Member("a", U8), Member("p", Array(Pointer(), 2), align=16)))
>>> print(to_c(r))
struct s {
    unsigned char a;
    _Alignas(16) void *p[2];
};
>>> leaf_paths(r)
['a', 'p']
"""

from __future__ import annotations

import itertools

from memcglab.layout.abi import Array, CType, Enum, Pointer, Record, Scalar

__all__ = ["to_c", "leaf_paths"]


def _declarator(t: CType, inner: str, counter: itertools.count, indent: int) -> str:
    """C declaration of ``inner`` (a name or declarator) with type ``t``."""
    if isinstance(t, Array):
        dim = "" if t.count is None else str(t.count)
        return _declarator(t.elem, f"{inner}[{dim}]", counter, indent)
    if isinstance(t, Pointer):
        return f"{t.target} *{inner}"
    if isinstance(t, Scalar):
        return f"{t.name} {inner}".rstrip()
    if isinstance(t, Enum):
        n = next(counter)
        vals = ", ".join(f"E{n}_{i} = {v}" for i, (_, v) in enumerate(t.values))
        return f"enum {{ {vals} }} {inner}".rstrip()
    if isinstance(t, Record):
        return f"{_body(t, counter, indent)} {inner}".rstrip()
    raise TypeError(f"cannot write {t!r} as C")


def _body(rec: Record, counter: itertools.count, indent: int) -> str:
    pad = "    " * (indent + 1)
    lines = [f"{rec.kind} {{" if not rec.tag else f"{rec.kind} {rec.tag} {{"]
    for m in rec.members:
        align = f"_Alignas({m.align}) " if m.align else ""
        lines.append(f"{pad}{align}{_declarator(m.type, m.name or '', counter, indent + 1)};")
    lines.append("    " * indent + "}")
    head = "\n".join(lines)
    if rec.align_attr:
        head += f" __attribute__((aligned({rec.align_attr})))"
    return head


def to_c(rec: Record, tag: str | None = None, counter: itertools.count | None = None) -> str:
    """A complete C definition of ``rec`` (tagged ``tag`` if given), ending in ``;``."""
    if tag is not None:
        rec = Record(rec.kind, tag, rec.members, rec.align_attr)
    if rec.tag is None:
        raise ValueError("to_c needs a tag for the outermost struct or union")
    return _body(rec, counter or itertools.count(), 0) + ";"


def leaf_paths(rec: Record, prefix: str = "") -> list[str]:
    """Every member path ``offsetof`` accepts, through named and anonymous records."""
    out: list[str] = []
    for m in rec.members:
        if m.name is None:
            if isinstance(m.type, Record):
                out += leaf_paths(m.type, prefix)
            continue
        path = f"{prefix}{m.name}"
        out.append(path)
        if isinstance(m.type, Record):
            out += leaf_paths(m.type, path + ".")
    return out
