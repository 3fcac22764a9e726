"""Parse C struct definitions (the subset kernel headers use) into layout types.

:func:`parse_c` runs :func:`~memcglab.layout.cpp.preprocess`, hands the result to
pycparser and converts the declarations into :mod:`memcglab.layout.abi` types. The
subset: base and fixed-width integer types, ``bool``, pointers (to anything,
function pointers included), arrays (``[0]`` and flexible ``[]`` too), nested and
anonymous structs and unions, enums, typedefs, ``_Alignas`` and the kernel
alignment annotations that :mod:`~memcglab.layout.cpp` rewrites. Bit-fields and
packed structs are refused with a message that says so.

The kernel's base typedefs (``u8`` ... ``s64``, ``uint8_t``, ``atomic_t``,
``atomic_long_t``, ``refcount_t``; include/linux/types.h) are predefined unless the
text defines them itself.

>>> ts = parse_c('''
... struct memcg_stock_pcp {
...     u8 lock;
...     uint8_t nr_pages[7];
...     struct mem_cgroup *cached[7];
... };''')
>>> lay = ts.layout("memcg_stock_pcp")
>>> lay.size, lay.locate("cached").offset
(64, 8)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pycparser import c_ast, c_generator, c_parser
from pycparser.c_parser import ParseError

from memcglab.layout.abi import SCALARS, Array, CType, Enum, Member, Pointer, Record, type_name
from memcglab.layout.cpp import STRUCT_ALIGN_MARKER, CppError, preprocess
from memcglab.layout.layout import StructLayout, layout

__all__ = ["CParseError", "TypeSpace", "parse_c", "prelude_for", "PRELUDE"]

#: include/linux/types.h and the atomic types, as x86-64 defines them.
PRELUDE: dict[str, str] = {
    "bool": "typedef _Bool bool;",
    **{n: f"typedef unsigned char {n};" for n in ("u8", "__u8", "uint8_t")},
    **{n: f"typedef signed char {n};" for n in ("s8", "__s8", "int8_t")},
    **{n: f"typedef unsigned short {n};" for n in ("u16", "__u16", "uint16_t")},
    **{n: f"typedef short {n};" for n in ("s16", "__s16", "int16_t")},
    **{n: f"typedef unsigned int {n};" for n in ("u32", "__u32", "uint32_t", "gfp_t")},
    **{n: f"typedef int {n};" for n in ("s32", "__s32", "int32_t")},
    **{n: f"typedef unsigned long long {n};" for n in ("u64", "__u64", "uint64_t")},
    **{n: f"typedef long long {n};" for n in ("s64", "__s64", "int64_t")},
    **{n: f"typedef unsigned long {n};" for n in ("size_t", "uintptr_t", "phys_addr_t")},
    **{n: f"typedef long {n};" for n in ("ssize_t", "intptr_t", "ptrdiff_t")},
    "atomic_t": "typedef struct { int counter; } atomic_t;",
    "atomic64_t": "typedef struct { long long counter; } atomic64_t;",
    "atomic_long_t": "typedef struct { long long counter; } atomic_long_t;",
    "refcount_t": "typedef struct refcount_struct { atomic_t refs; } refcount_t;",
    "cacheline_padding": "#ifdef CONFIG_SMP\n"
                         "struct cacheline_padding { char x[0]; } "
                         "____cacheline_internodealigned_in_smp;\n#endif",
}

_INT_WORDS = {"signed", "unsigned", "char", "short", "int", "long", "_Bool",
              "float", "double"}


class CParseError(ValueError):
    """The struct text is outside the supported subset or malformed; names the line."""


@dataclass
class TypeSpace:
    """The named types one C text defines: struct/union/enum tags and typedefs."""

    tags: dict[str, CType] = field(default_factory=dict)   # "struct foo" -> Record
    typedefs: dict[str, CType] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)  # enumerators
    order: list[str] = field(default_factory=list)  # the text's own tags, in order

    def get(self, name: str) -> CType:
        """Look up ``struct foo``, ``union foo``, a bare tag ``foo`` or a typedef."""
        key = " ".join(name.split())
        if key in self.tags:
            return self.tags[key]
        if key in self.typedefs:
            return self.typedefs[key]
        for kind in ("struct", "union"):
            if f"{kind} {key}" in self.tags:
                return self.tags[f"{kind} {key}"]
        known = [t for t in self.order if t.startswith(("struct ", "union "))]
        raise KeyError(f"unknown type {name!r}; defined: {', '.join(known) or 'none'}")

    def layout(self, name: str) -> StructLayout:
        """The layout of struct or union ``name``; KeyError for any other type."""
        t = self.get(name)
        if not isinstance(t, Record):
            raise KeyError(f"{name!r} is a {type_name(t)}, not a struct or union")
        label = name if name.startswith(("struct ", "union ")) else type_name(t)
        return layout(t, label if t.tag else name)


def prelude_for(text: str) -> str:
    """The :data:`PRELUDE` definitions ``text`` needs: those it does not make itself."""
    own = set(re.findall(r"\btypedef\b[^;{]*?(\w+)\s*;", text))
    own |= set(re.findall(r"\}\s*(\w+)\s*;", text))
    prelude = "\n".join(v for k, v in PRELUDE.items() if k not in own)
    if re.search(r"\bstruct\s+cacheline_padding\s*\{", text):
        prelude = prelude.replace(PRELUDE["cacheline_padding"], "")
    return prelude


def parse_c(text: str, config: Iterable[str] = (),
            defines: Mapping[str, int | str] | None = None) -> TypeSpace:
    """Parse struct/union/enum/typedef definitions for the enabled ``config`` options."""
    prelude = prelude_for(text)
    try:
        pre = preprocess(prelude, config, defines)
        body = preprocess(text, config, defines)
    except CppError as exc:
        raise CParseError(str(exc)) from exc
    source = f"{pre}\n# 1 \"<input>\"\n{body}\n"
    parser = c_parser.CParser()
    try:
        ast = parser.parse(source, filename="<prelude>")
    except ParseError as exc:
        raise CParseError(_syntax_error(parser, str(exc))) from exc
    space = TypeSpace()
    _Converter(space).file(ast)
    return space


def _syntax_error(parser: c_parser.CParser, msg: str) -> str:
    """Name the line and token of a pycparser error (it does not always say)."""
    m = re.match(r"<input>:(\d+):(\d+): (.*)", msg)
    if m:
        return f"C syntax error at line {m.group(1)}, column {m.group(2)}: {m.group(3)}"
    try:  # pycparser 3 keeps its token stream; the offending token is the next one
        toks = parser._tokens
        tok = toks._buffer[min(toks._index, len(toks._buffer) - 1)]
        hint = ""
        if tok.type == "ID":
            hint = (f" ({tok.value!r} is not a known type: define it, or a typedef for it, "
                    "before use)")
        return (f"C syntax error at line {tok.lineno}, column {tok.column} near "
                f"{tok.value!r}{hint}: {msg.split(': ', 1)[-1]}")
    except (AttributeError, IndexError):
        return f"C syntax error: {msg}"


class _Converter:
    def __init__(self, space: TypeSpace) -> None:
        self.s = space

    def _err(self, node: c_ast.Node, msg: str) -> CParseError:
        coord = getattr(node, "coord", None)
        where = f"line {coord.line}: " if coord and coord.file == "<input>" else ""
        return CParseError(f"{where}{msg}")

    def file(self, ast: c_ast.FileAST) -> None:
        for ext in ast.ext:
            if isinstance(ext, c_ast.Typedef):
                self.s.typedefs[ext.name] = self.decl_type(ext.type, ext)
            elif isinstance(ext, c_ast.Decl):
                if ext.name is not None:
                    raise self._err(ext, f"{ext.name!r}: only type definitions are supported "
                                         "(no variables or functions)")
                self.decl_type(ext.type, ext)
            else:
                raise self._err(ext, f"unsupported top-level {type(ext).__name__}")

    # -- types ---------------------------------------------------------------
    def decl_type(self, node: c_ast.Node, ctx: c_ast.Node) -> CType:
        if isinstance(node, c_ast.TypeDecl):
            return self.decl_type(node.type, ctx)
        if isinstance(node, c_ast.PtrDecl):
            return Pointer(self.pointee(node.type))
        if isinstance(node, c_ast.ArrayDecl):
            elem = self.decl_type(node.type, ctx)
            count = None if node.dim is None else self.const(node.dim)
            if count is not None and count < 0:
                raise self._err(ctx, f"negative array size {count}")
            return Array(elem, count)
        if isinstance(node, c_ast.IdentifierType):
            return self.named(node.names, node)
        if isinstance(node, (c_ast.Struct, c_ast.Union)):
            return self.record(node)
        if isinstance(node, c_ast.Enum):
            return self.enum(node)
        if isinstance(node, c_ast.FuncDecl):
            raise self._err(ctx, "a function is not a member type (use a function pointer)")
        raise self._err(ctx, f"unsupported declarator {type(node).__name__}")

    def pointee(self, node: c_ast.Node) -> str:
        """What a pointer points to, for display only (no layout needed)."""
        if isinstance(node, c_ast.TypeDecl):
            t = node.type
            if isinstance(t, c_ast.IdentifierType):
                return " ".join(t.names)
            kind = "struct" if isinstance(t, c_ast.Struct) else (
                "union" if isinstance(t, c_ast.Union) else "enum")
            if t.decls is not None if not isinstance(t, c_ast.Enum) else t.values is not None:
                self.decl_type(t, node)  # a definition behind a pointer still defines the tag
            return f"{kind} {t.name}" if t.name else kind
        if isinstance(node, c_ast.PtrDecl):
            return self.pointee(node.type) + " *"
        if isinstance(node, c_ast.FuncDecl):
            return f"{self.pointee(node.type)} (*)()"
        if isinstance(node, c_ast.ArrayDecl):
            return self.pointee(node.type) + "[]"
        return "void"

    def named(self, names: list[str], node: c_ast.Node) -> CType:
        if len(names) == 1 and names[0] in self.s.typedefs:
            return self.s.typedefs[names[0]]
        if not set(names) <= _INT_WORDS:
            unknown = next(n for n in names if n not in _INT_WORDS)
            raise self._err(node, f"unknown type name {unknown!r}")
        signed = "signed" in names
        unsigned = "unsigned" in names
        longs = names.count("long")
        base = next((b for b in ("char", "short", "_Bool", "float", "double") if b in names),
                    "int")
        if base == "char":
            key = "unsigned char" if unsigned else ("signed char" if signed else "char")
        elif base == "double":
            key = "long double" if longs else "double"
        elif base in ("_Bool", "float"):
            key = base
        elif base == "short":
            key = "unsigned short" if unsigned else "short"
        else:
            word = {0: "int", 1: "long", 2: "long long"}.get(longs)
            if word is None:
                raise self._err(node, f"invalid type {' '.join(names)!r}")
            key = f"unsigned {word}" if unsigned else word
        return SCALARS[key]

    def record(self, node: c_ast.Struct | c_ast.Union) -> CType:
        kind = "struct" if isinstance(node, c_ast.Struct) else "union"
        key = f"{kind} {node.name}" if node.name else None
        if node.decls is None:  # a reference: struct foo x;
            if key and key in self.s.tags:
                return self.s.tags[key]
            raise self._err(node, f"{key or kind} is incomplete here (declare it before use, "
                                  "or use a pointer)")
        members: list[Member] = []
        align_attr = 0
        for d in node.decls:
            if d.name == STRUCT_ALIGN_MARKER:
                align_attr = max(align_attr, self.alignas(d))
                continue
            if getattr(d, "bitsize", None) is not None:
                raise self._err(d, f"bit-field {d.name!r}: bit-fields are outside the "
                                   "supported subset")
            t = self.decl_type(d.type, d)
            members.append(Member(d.name, t, self.alignas(d), _spelling(d)))
        try:
            rec = Record(kind, node.name, tuple(members), align_attr)
        except ValueError as exc:
            raise self._err(node, str(exc)) from exc
        if key:
            if key in self.s.tags and self.s.tags[key] != rec:
                raise self._err(node, f"{key} is defined twice, differently")
            if key not in self.s.tags and _user(node):
                self.s.order.append(key)
            self.s.tags[key] = rec
        return rec

    def alignas(self, d: c_ast.Decl) -> int:
        align = 0
        for a in d.align or []:
            if isinstance(a.alignment, c_ast.Typename):
                align = max(align, self.decl_type(a.alignment.type, d).align)
            else:
                align = max(align, self.const(a.alignment))
        if align & (align - 1):
            raise self._err(d, f"alignment {align} is not a power of two")
        return align

    def enum(self, node: c_ast.Enum) -> CType:
        key = f"enum {node.name}" if node.name else None
        if node.values is None:
            if key and key in self.s.tags:
                return self.s.tags[key]
            raise self._err(node, f"{key} is incomplete here")
        values: list[tuple[str, int]] = []
        nxt = 0
        for e in node.values.enumerators:
            nxt = self.const(e.value) if e.value is not None else nxt
            values.append((e.name, nxt))
            self.s.constants[e.name] = nxt
            nxt += 1
        t = Enum(node.name, tuple(values))
        if key:
            self.s.tags[key] = t
            if _user(node):
                self.s.order.append(key)
        return t

    # -- constant expressions -------------------------------------------------
    def const(self, node: c_ast.Node) -> int:
        if isinstance(node, c_ast.Constant):
            v = node.value.rstrip("uUlL")
            if node.type == "char":
                return ord(v.strip("'")[-1])
            return int(v, 0) if not re.fullmatch(r"0\d+", v) else int(v, 8)
        if isinstance(node, c_ast.ID):
            if node.name in self.s.constants:
                return self.s.constants[node.name]
            raise self._err(node, f"{node.name!r} is not a known constant (define it with "
                                  "#define or an enum before use)")
        if isinstance(node, c_ast.UnaryOp):
            if node.op == "sizeof":
                return self.decl_type(node.expr.type, node).size
            if node.op == "_Alignof":
                return self.decl_type(node.expr.type, node).align
            v = self.const(node.expr)
            return {"-": -v, "+": v, "~": ~v, "!": int(not v)}[node.op]
        if isinstance(node, c_ast.BinaryOp):
            a, b = self.const(node.left), self.const(node.right)
            ops = {"+": a + b, "-": a - b, "*": a * b, "<<": a << b if b >= 0 else 0,
                   ">>": a >> b if b >= 0 else 0, "&": a & b, "|": a | b, "^": a ^ b,
                   "<": int(a < b), ">": int(a > b), "<=": int(a <= b), ">=": int(a >= b),
                   "==": int(a == b), "!=": int(a != b), "&&": int(bool(a and b)),
                   "||": int(bool(a or b))}
            if node.op in ("/", "%"):
                if b == 0:
                    raise self._err(node, "division by zero in a constant expression")
                q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates
                return q if node.op == "/" else a - q * b
            return ops[node.op]
        if isinstance(node, c_ast.TernaryOp):
            c = self.const(node.cond)
            return self.const(node.iftrue) if c else self.const(node.iffalse)
        if isinstance(node, c_ast.Cast):
            return self.const(node.expr)
        raise self._err(node, f"unsupported constant expression {type(node).__name__}")


def _user(node: c_ast.Node) -> bool:
    """Whether ``node`` comes from the user's text rather than the prelude."""
    coord = getattr(node, "coord", None)
    return coord is None or coord.file == "<input>"


def _spelling(d: c_ast.Decl) -> str:
    """The member declaration as C text, with any inline struct body elided."""
    bodies: list[tuple[c_ast.Node, object]] = []
    node = d.type
    while not isinstance(node, (c_ast.TypeDecl, c_ast.IdentifierType)) and node is not None:
        node = getattr(node, "type", None)
    base = node.type if isinstance(node, c_ast.TypeDecl) else None
    if isinstance(base, (c_ast.Struct, c_ast.Union)) and base.decls is not None:
        bodies.append((base, base.decls))
        base.decls = None
    elif isinstance(base, c_ast.Enum) and base.values is not None:
        bodies.append((base, base.values))
        base.values = None
    try:
        align, d.align = d.align, []
        text = c_generator.CGenerator().visit(d)
    finally:
        d.align = align
        for n, body in bodies:
            if isinstance(n, c_ast.Enum):
                n.values = body
            else:
                n.decls = body
    return " ".join(text.split())
