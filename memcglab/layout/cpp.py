"""A small C preprocessor for struct definitions: config switches and kernel annotations.

Kernel headers choose fields with ``#ifdef CONFIG_...`` and align them with
attribute macros that pycparser does not know. :func:`preprocess` does the part of
cpp that struct definitions need: it drops comments, keeps or drops lines under
``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else`` for a given set of enabled
``CONFIG_`` options, expands ``#define`` constants and function-like macros (a call
must sit on one line, as the padding macros of kernel headers do), and rewrites the
kernel's layout annotations into standard C11:

* ``____cacheline_aligned_in_smp``, ``____cacheline_internodealigned_in_smp``,
  ``____cacheline_aligned``, ``__aligned(n)`` and ``__attribute__((aligned(n)))``
  on a member become ``_Alignas(n)`` in front of that member; after a struct's
  closing brace they become a zero-size marker member that raises the struct's
  alignment (``__memcglab_struct_align__``), which is what gcc does with the
  attribute on a type;
* ``CACHELINE_PADDING(name)`` becomes ``struct cacheline_padding name``
  (include/linux/cache.h), nothing when ``CONFIG_SMP`` is off;
* sparse and bounds annotations (``__percpu``, ``__rcu``, ``__counted_by(x)``, ...)
  are dropped; ``__packed`` is refused, it is outside the supported subset.

Line numbers are preserved so that errors point at the user's line.

>>> src = "struct a {\\n#ifdef CONFIG_X\\n int x;\\n#endif\\n"
>>> src += " long p ____cacheline_aligned_in_smp;\\n};"
>>> out = preprocess(src, config={"CONFIG_SMP"})
>>> print(out)
struct a {
<BLANKLINE>
<BLANKLINE>
<BLANKLINE>
 _Alignas(64) long p                             ;
};
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

__all__ = ["CppError", "preprocess", "STRUCT_ALIGN_MARKER", "PREDEFINED"]

#: Name of the zero-size member that carries a struct-level alignment attribute.
STRUCT_ALIGN_MARKER = "__memcglab_struct_align__"

#: Constants every kernel build on x86-64 defines (4 KiB pages, 64-byte lines).
PREDEFINED: dict[str, str] = {
    "BITS_PER_LONG": "64",
    "PAGE_SHIFT": "12",
    "L1_CACHE_SHIFT": "6",
    "L1_CACHE_BYTES": "64",
    "SMP_CACHE_BYTES": "64",
    "INTERNODE_CACHE_SHIFT": "6",
}

_CACHELINE_ATTRS = {
    "____cacheline_aligned": False,  # value: only under CONFIG_SMP?
    "__cacheline_aligned": False,
    "____cacheline_aligned_in_smp": True,
    "__cacheline_aligned_in_smp": True,
    "____cacheline_internodealigned_in_smp": True,
}
_DROPPED = {"__percpu", "__rcu", "__iomem", "__user", "__force", "__private", "__bitwise",
            "__randomize_layout", "__no_randomize_layout", "__read_mostly", "__kernel",
            "__safe", "__nocast"}
_DROPPED_CALLS = {"__counted_by", "__counted_by_ptr", "__guarded_by", "__pt_guarded_by"}
_REFUSED = {"__packed": "packed structs are outside the supported layout subset"}

_TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|\S")


class CppError(ValueError):
    """A preprocessing error; the message names the input line."""


def _strip_comments(text: str) -> str:
    """Remove /* */ and // comments, keeping newlines so line numbers hold."""
    def repl(m: re.Match[str]) -> str:
        return "".join(ch if ch == "\n" else " " for ch in m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", repl, text, flags=re.S)


def _expand(line: str, macros: Mapping[str, str], depth: int = 0) -> str:
    if depth > 20:
        return line
    out = re.sub(r"\b[A-Za-z_]\w*\b",
                 lambda m: macros.get(m.group(0), m.group(0)), line)
    return out if out == line else _expand(out, macros, depth + 1)


def _call_end(line: str, start: int) -> int:
    """Index just past the ')' closing the '(' at ``start``; -1 if the line ends first."""
    depth = 0
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return i + 1
    return -1


def _split_args(text: str) -> list[str]:
    """A macro call's arguments: commas split them only outside parentheses."""
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    args.append(cur.strip())
    return args


_Funcs = dict[str, tuple[list[str], str]]


def _substitute(body: str, value: Mapping[str, str]) -> str:
    """A macro body with each parameter replaced by its argument."""
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda t: value.get(t.group(0), t.group(0)), body)


def _expand_calls(line: str, funcs: _Funcs, lineno: int, depth: int = 0) -> str:
    """Expand the calls of function-like macros on one line (parameters substituted).

    A call whose closing parenthesis is on a later line is left as written: kernel
    struct headers call their padding macros on one line.
    """
    if not funcs or depth > 20:
        return line
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", line):
        if m.start() < pos or m.group(1) not in funcs:
            continue
        stop = _call_end(line, m.end() - 1)
        if stop < 0:
            continue
        params, body = funcs[m.group(1)]
        args = _split_args(line[m.end():stop - 1])
        if args == [""] and not params:
            args = []
        if len(args) != len(params):
            raise CppError(f"line {lineno}: {m.group(1)} takes {len(params)} argument(s), "
                           f"given {len(args)}")
        out += [line[pos:m.start()], _substitute(body, dict(zip(params, args, strict=True)))]
        pos = stop
    if not out:
        return line
    return _expand_calls("".join(out) + line[pos:], funcs, lineno, depth + 1)


def _eval_if(expr: str, enabled: set[str], macros: Mapping[str, str], lineno: int) -> bool:
    def is_on(name: str) -> str:
        return "1" if (name in enabled or name in macros) else "0"
    e = re.sub(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)",
               lambda m: is_on(m.group(1) or m.group(2)), expr)
    e = re.sub(r"\bIS_ENABLED\s*\(\s*(\w+)\s*\)", lambda m: is_on(m.group(1)), e)
    e = _expand(e, macros)
    e = re.sub(r"\b[A-Za-z_]\w*\b", "0", e)  # C: remaining identifiers are 0
    e = re.sub(r"(\d+)[uUlL]+", r"\1", e)
    py = e.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    try:
        tree = ast.parse(py.strip(), mode="eval")
    except SyntaxError as exc:
        raise CppError(f"line {lineno}: cannot evaluate #if {expr.strip()!r}") from exc
    allowed = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant,
               ast.And, ast.Or, ast.Not, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod,
               ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor, ast.Invert,
               ast.USub, ast.UAdd, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise CppError(f"line {lineno}: unsupported operator in #if {expr.strip()!r}")
    return bool(eval(compile(tree, "<if>", "eval"), {"__builtins__": {}}))  # noqa: S307


def _directives(text: str, enabled: set[str], macros: dict[str, str]) -> list[str]:
    """Resolve conditionals and #define; return the kept lines (blank for dropped ones)."""
    lines = text.replace("\\\n", " \n").split("\n")
    out: list[str] = []
    funcs: _Funcs = {}  # function-like macros: name -> (parameters, body)
    # Each frame: (this branch is live, some branch was taken, parent is live)
    stack: list[tuple[bool, bool, bool]] = []
    live = True
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        m = re.match(r"#\s*(\w+)\s*(.*)", s)
        if not m:
            out.append(_expand(_expand_calls(_expand(raw, macros), funcs, n), macros)
                       if live else "")
            continue
        word, rest = m.group(1), m.group(2).strip()
        out.append("")
        if word in ("ifdef", "ifndef"):
            name = rest.split()[0] if rest else ""
            on = (name in enabled or name in macros or name in funcs) == (word == "ifdef")
            stack.append((live and on, on, live))
            live = live and on
        elif word == "if":
            on = _eval_if(rest, enabled, macros, n) if live else False
            stack.append((live and on, on, live))
            live = live and on
        elif word in ("elif", "else"):
            if not stack:
                raise CppError(f"line {n}: #{word} without #if")
            _, taken, parent = stack.pop()
            on = (not taken) and (word == "else" or (parent and _eval_if(rest, enabled, macros, n)))
            stack.append((parent and on, taken or on, parent))
            live = parent and on
        elif word == "endif":
            if not stack:
                raise CppError(f"line {n}: #endif without #if")
            live = stack.pop()[2]
        elif not live:
            continue
        elif word == "define":
            dm = re.match(r"(\w+)(\([^)]*\))?\s*(.*)", rest)
            if dm and not dm.group(2):
                macros[dm.group(1)] = dm.group(3).strip()
            elif dm:
                params = [p.strip() for p in dm.group(2)[1:-1].split(",") if p.strip()]
                if "..." in params or any(p.endswith("...") for p in params):
                    raise CppError(f"line {n}: variadic macro {dm.group(1)} is not supported")
                funcs[dm.group(1)] = (params, dm.group(3).strip())
        elif word == "undef":
            macros.pop(rest.split()[0] if rest else "", None)
            funcs.pop(rest.split()[0] if rest else "", None)
        elif word == "error":
            raise CppError(f"line {n}: #error {rest}")
        elif word in ("include", "pragma", "line"):
            continue
        else:
            raise CppError(f"line {n}: unsupported directive #{word}")
    if stack:
        raise CppError(f"unterminated #if at end of input ({len(stack)} open)")
    return out


def _balanced_end(text: str, start: int) -> int:
    """Index just past the ')' that closes the '(' at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise CppError(f"unbalanced parentheses at line {text.count(chr(10), 0, start) + 1}")


def _blank(s: str) -> str:
    return "".join(ch if ch == "\n" else " " for ch in s)


def _annotations(text: str, smp: bool) -> str:
    """Rewrite the kernel's alignment annotations into C11 (see the module doc)."""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    inserts: list[tuple[int, str]] = []
    deletes: list[tuple[int, int]] = []
    stmt = [0]          # token index where the current declaration starts
    brace_open: list[tuple[int, int]] = []  # (token index of '{', stmt start before it)
    last_closed: int | None = None  # token index of the '{' of the last closed brace
    i = 0

    def attr_align(align: int, at: int, prev: str) -> None:
        if align <= 0:
            return
        if prev == "}" and last_closed is not None:
            pos = toks[last_closed][2]
            inserts.append((pos, f" _Alignas({align}) char {STRUCT_ALIGN_MARKER}[0];"))
        elif prev in ("struct", "union"):
            j = at
            while j < len(toks) and toks[j][0] != "{":
                j += 1
            if j == len(toks):
                raise CppError("alignment attribute on a struct with no body")
            inserts.append((toks[j][2], f" _Alignas({align}) char {STRUCT_ALIGN_MARKER}[0];"))
        else:
            inserts.append((toks[stmt[-1]][1], f"_Alignas({align}) "))

    prev = ""  # the last token that was kept
    while i < len(toks):
        tok, start, end = toks[i]
        kept = len(deletes)
        if tok == "{":
            brace_open.append((i, stmt[-1]))
            stmt.append(i + 1)
        elif tok == "}":
            if not brace_open:
                raise CppError(f"unbalanced '}}' at line {text.count(chr(10), 0, start) + 1}")
            last_closed, outer = brace_open.pop()
            stmt.pop()
            stmt[-1] = outer
        elif tok == ";":
            stmt[-1] = i + 1
        elif tok in _CACHELINE_ATTRS:
            deletes.append((start, end))
            attr_align(64 if (smp or not _CACHELINE_ATTRS[tok]) else 0, i, prev)
        elif tok in _DROPPED:
            deletes.append((start, end))
        elif tok in _REFUSED:
            raise CppError(f"line {text.count(chr(10), 0, start) + 1}: {tok}: {_REFUSED[tok]}")
        elif tok in _DROPPED_CALLS or tok in ("__aligned", "__attribute__", "CACHELINE_PADDING",
                                                "context_lock_struct"):
            if i + 1 >= len(toks) or toks[i + 1][0] != "(":
                raise CppError(f"line {text.count(chr(10), 0, start) + 1}: {tok} without '('")
            stop = _balanced_end(text, toks[i + 1][1])
            arg = text[toks[i + 1][2]:stop - 1]
            deletes.append((start, stop))
            if tok == "__aligned":
                attr_align(_const(arg), i, prev)
            elif tok == "__attribute__":
                attr_align(_gnu_attribute(arg, text.count("\n", 0, start) + 1), i, prev)
            elif tok == "CACHELINE_PADDING":
                if smp:
                    inserts.append((start, f"struct cacheline_padding {arg.strip()}"))
                else:  # empty macro: drop the whole declaration, ';' included
                    semi = text.index(";", stop)
                    deletes[-1] = (start, semi + 1)
            elif tok == "context_lock_struct":
                inserts.append((start, f"struct {arg.strip()}"))
            while i + 1 < len(toks) and toks[i + 1][1] < stop:
                i += 1
        if len(deletes) == kept:
            prev = tok
        i += 1
    chars = list(text)
    for a, b in deletes:
        chars[a:b] = list(_blank(text[a:b]))
    for pos, s in sorted(inserts, reverse=True):
        chars.insert(pos, s)
    return "".join(chars)


_SIZEOF = {"long": 8, "unsigned long": 8, "long long": 8, "void *": 8, "int": 4,
           "unsigned int": 4, "u64": 8, "u32": 4, "short": 2, "char": 1}


def _const(expr: str) -> int:
    e = re.sub(r"(\d+)[uUlL]+", r"\1", expr.strip())
    e = re.sub(r"sizeof\s*\(\s*([\w\s*]+?)\s*\)",
               lambda m: str(_SIZEOF.get(" ".join(m.group(1).split()), m.group(0))), e)
    if not re.fullmatch(r"[\d\s()+\-*<>x a-fA-F]*", e):
        raise CppError(f"alignment {expr.strip()!r} is not an integer constant")
    try:
        return int(eval(e, {"__builtins__": {}}))  # noqa: S307 - digits and operators only
    except (SyntaxError, NameError) as exc:
        raise CppError(f"alignment {expr.strip()!r} is not an integer constant") from exc


def _gnu_attribute(arg: str, lineno: int) -> int:
    """The alignment an ``__attribute__((...))`` asks for (0 for none)."""
    inner = arg.strip()[1:-1] if arg.strip().startswith("(") else arg
    m = re.fullmatch(r"\s*(?:__aligned__|aligned)\s*(?:\((.*)\))?\s*", inner, flags=re.S)
    if m:
        return _const(m.group(1)) if m.group(1) else 16  # bare "aligned": the ABI maximum
    name = re.match(r"\s*(\w+)", inner)
    word = name.group(1).strip("_") if name else inner
    if word in ("packed", "mode", "vector_size", "scalar_storage_order"):
        raise CppError(f"line {lineno}: __attribute__(({inner.strip()})) changes layout in a "
                       "way the model does not support")
    return 0


def preprocess(text: str, config: Iterable[str] = (),
               defines: Mapping[str, int | str] | None = None) -> str:
    """Preprocess struct definitions for ``config`` (the enabled ``CONFIG_*`` options).

    ``defines`` overrides or adds object-like macros (e.g. ``{"NR_MEMCG_STOCK": 8}``);
    an override wins over a ``#define`` of the same name in ``text``.
    """
    enabled = set(config)
    macros: dict[str, str] = dict(PREDEFINED)
    overrides = {k: str(v) for k, v in (defines or {}).items()}
    macros.update(overrides)

    class _Pinned(dict):  # a #define in the text must not replace an override
        def __setitem__(self, key: str, value: str) -> None:
            if key not in overrides:
                super().__setitem__(key, value)

    lines = _directives(_strip_comments(text), enabled, _Pinned(macros))
    return _annotations("\n".join(lines), smp="CONFIG_SMP" in enabled)
