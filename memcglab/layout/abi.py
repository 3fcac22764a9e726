"""C types for x86-64 (System V, LP64) and the rules that give them a size and alignment.

A type here is an immutable value: a :class:`Scalar`, a :class:`Pointer`, an
:class:`Array`, an :class:`Enum` or a :class:`Record` (struct or union). Sizes follow
the System V x86-64 psABI with the GNU extensions the kernel relies on: an empty
struct has size 0, a zero-length array ``T x[0]`` has size 0, a flexible array
member ``T x[]`` has size 0 and the element's alignment, and ``__aligned(n)`` on a
member or a struct raises (never lowers) the alignment to ``n``.

>>> s = Record("struct", "pair", (Member("c", CHAR), Member("p", Pointer("void"))))
>>> s.size, s.align
(16, 8)
>>> Record("struct", "empty", ()).size
0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

__all__ = [
    "CType", "Scalar", "Pointer", "Array", "Enum", "Record", "Member",
    "SCALARS", "CHAR", "SHORT", "INT", "LONG", "BOOL", "U8", "U16", "U32", "U64",
    "align_up", "type_name",
]


def align_up(value: int, align: int) -> int:
    """Round ``value`` up to a multiple of ``align`` (a power of two)."""
    return (value + align - 1) & -align


class CType:
    """Base class: every C type has a ``size`` and an ``align`` in bytes."""

    size: int
    align: int


@dataclass(frozen=True)
class Scalar(CType):
    """An arithmetic type: ``name`` is its C spelling, e.g. ``unsigned long``."""

    name: str
    size: int
    align: int


@dataclass(frozen=True)
class Pointer(CType):
    """A pointer (data or function); ``target`` is only for display."""

    target: str = "void"
    size: int = 8
    align: int = 8


@dataclass(frozen=True)
class Array(CType):
    """``elem[count]``; ``count=None`` is a flexible array member ``elem[]``."""

    elem: CType
    count: int | None

    @property
    def size(self) -> int:  # type: ignore[override]
        """``sizeof``: the element size times the count (0 for a flexible array)."""
        return 0 if self.count is None else self.elem.size * self.count

    @property
    def align(self) -> int:  # type: ignore[override]
        """``_Alignof``: the element's alignment."""
        return self.elem.align


@dataclass(frozen=True)
class Enum(CType):
    """An enum: 4 bytes, or 8 when a value does not fit in int/unsigned int (GNU C)."""

    tag: str | None
    values: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:  # type: ignore[override]
        """4 bytes when every value fits in int or unsigned int, else 8 (gcc's rule)."""
        vals = [v for _, v in self.values] or [0]
        lo, hi = min(vals), max(vals)
        fits = (lo >= -(2**31) and hi < 2**31) or (lo >= 0 and hi < 2**32)
        return 4 if fits else 8

    @property
    def align(self) -> int:  # type: ignore[override]
        """An enum is aligned to its size."""
        return self.size


@dataclass(frozen=True)
class Member:
    """One member of a struct or union; ``name=None`` for an anonymous struct/union.

    ``align`` is an ``__aligned(n)`` / ``_Alignas(n)`` request on the member (0: none);
    ``decl`` is the member's C declaration as written (``struct mem_cgroup *cached[7]``),
    kept for display when the member came from C text.
    """

    name: str | None
    type: CType
    align: int = 0
    decl: str = field(default="", compare=False)

    @property
    def effective_align(self) -> int:
        """The member's alignment: its type's, raised by an ``__aligned`` request."""
        return max(self.type.align, self.align)


@dataclass(frozen=True)
class Record(CType):
    """A struct or union. ``align`` requests ``__aligned(n)`` on the type itself.

    The member offsets are computed once and cached; ``offsets[i]`` is the byte
    offset of ``members[i]`` (0 for every member of a union).
    """

    kind: str  # "struct" or "union"
    tag: str | None
    members: tuple[Member, ...]
    align_attr: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("struct", "union"):
            raise ValueError(f"kind={self.kind!r}: must be 'struct' or 'union'")
        for i, m in enumerate(self.members):
            if isinstance(m.type, Array) and m.type.count is None and i != len(self.members) - 1:
                raise ValueError(
                    f"{self.kind} {self.tag or '<anonymous>'}: flexible array member "
                    f"{m.name!r} must be the last member")
            if m.align and m.align & (m.align - 1):
                raise ValueError(f"member {m.name!r}: alignment {m.align} is not a power of two")

    @cached_property
    def _layout(self) -> tuple[tuple[int, ...], int, int]:
        align = max([self.align_attr, 1] + [m.effective_align for m in self.members])
        offsets = []
        end = 0
        for m in self.members:
            off = 0 if self.kind == "union" else align_up(end, m.effective_align)
            offsets.append(off)
            end = max(end, off + m.type.size)
        return tuple(offsets), align_up(end, align), align

    @property
    def offsets(self) -> tuple[int, ...]:
        """Byte offset of each member, in declaration order."""
        return self._layout[0]

    @property
    def size(self) -> int:  # type: ignore[override]
        """``sizeof`` the struct or union, tail padding included."""
        return self._layout[1]

    @property
    def align(self) -> int:  # type: ignore[override]
        """``_Alignof`` the struct or union: its most aligned member's."""
        return self._layout[2]


def _scalar(name: str, size: int) -> Scalar:
    return Scalar(name, size, size)


CHAR = _scalar("char", 1)
SHORT = _scalar("short", 2)
INT = _scalar("int", 4)
LONG = _scalar("long", 8)
BOOL = _scalar("_Bool", 1)
U8 = _scalar("unsigned char", 1)
U16 = _scalar("unsigned short", 2)
U32 = _scalar("unsigned int", 4)
U64 = _scalar("unsigned long", 8)

#: The arithmetic types by their canonical C spelling (LP64: long is 8 bytes).
SCALARS: dict[str, Scalar] = {s.name: s for s in [
    CHAR, _scalar("signed char", 1), U8, SHORT, U16, INT, U32, LONG, U64,
    _scalar("long long", 8), _scalar("unsigned long long", 8), BOOL,
    _scalar("float", 4), _scalar("double", 8), _scalar("long double", 16),
    _scalar("__int128", 16), _scalar("unsigned __int128", 16),
]}


def type_name(t: CType) -> str:
    """The C spelling of a type as used in a declaration's specifier (no declarator)."""
    if isinstance(t, Scalar):
        return t.name
    if isinstance(t, Pointer):
        return f"{t.target} *"
    if isinstance(t, Array):
        return type_name(t.elem)
    if isinstance(t, Enum):
        return f"enum {t.tag}" if t.tag else "enum"
    if isinstance(t, Record):
        return f"{t.kind} {t.tag}" if t.tag else t.kind
    raise TypeError(f"not a C type: {t!r}")
