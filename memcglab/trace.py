"""The memcglab trace: its text format, its numpy form, and validation.

The text format is specified in ``shared/spec/replay-contract.md``; this module is
its only reader and writer. A parsed trace is a :class:`Trace`: the CPU count and
one structured numpy array with a row per operation line (``OP_DTYPE``), which is
what the faithful replay, the compiled engine and the workload generators share.

>>> t = parse_text("memcglab-trace 1\\ncpus 2\\ncgroup 1 0\\ncharge 1 1 3 nested\\n")
>>> t.cpus, len(t.ops), OP_NAMES[t.ops[1]["op"]], int(t.ops[1]["arg"]), bool(t.ops[1]["nested"])
(2, 2, 'charge', 3, True)
>>> print(to_text(t), end="")
memcglab-trace 1
cpus 2
cgroup 1 0
charge 1 1 3 nested

The extensions of ``docs/trace-extensions.md``: object charges and frees in bytes,
the ``irq`` word (before ``nested``) and the ``nodes`` header line:

>>> t = parse_text("memcglab-trace 1\\ncpus 4\\nnodes 2\\ncgroup 1 0\\n"
...                "obj_charge 3 1 200 irq nested\\nobj_uncharge 0 1 200\\n")
>>> t.nodes, [OP_NAMES[o] for o in t.ops["op"]], t.ops["irq"].tolist(), node_of(t, 3)
(2, ['cgroup', 'obj_charge', 'obj_uncharge'], [False, True, False], 1)
>>> print(to_text(t), end="")
memcglab-trace 1
cpus 4
nodes 2
cgroup 1 0
obj_charge 3 1 200 irq nested
obj_uncharge 0 1 200
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "HEADER",
    "MAX_CPUS",
    "NR_MAX",
    "PAGES_MAX",
    "MEMCG_ID_MAX",
    "PAGE_COUNTER_MAX",
    "OP_CGROUP",
    "OP_CHARGE",
    "OP_UNCHARGE",
    "OP_UNCHARGE_DIRECT",
    "OP_DRAIN_ALL",
    "OP_CPU_DEAD",
    "OP_SET_MAX",
    "OP_OFFLINE",
    "OP_OBJ_CHARGE",
    "OP_OBJ_UNCHARGE",
    "OP_NAMES",
    "OBJ_OPS",
    "IRQ_OPS",
    "KMEM_OPS",
    "OBJ_BYTES_MAX",
    "MAX_NODES",
    "STOCK_SLOTS_MAX",
    "check_per_memcg",
    "check_stock_slots",
    "OP_DTYPE",
    "Trace",
    "TraceError",
    "make_ops",
    "node_of",
    "parse_text",
    "read_trace",
    "to_text",
    "validate",
]

HEADER = "memcglab-trace 1"
MAX_CPUS = 8192
NR_MAX = 2**32 - 1  # unsigned int nr_pages
PAGES_MAX = 2**64 - 1  # unsigned long
MEMCG_ID_MAX = 2**63 - 1
# LONG_MAX / PAGE_SIZE with 4 KiB pages (include/linux/page_counter.h).
PAGE_COUNTER_MAX = (2**63 - 1) // 4096

OP_CGROUP, OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT = 0, 1, 2, 3
OP_DRAIN_ALL, OP_CPU_DEAD, OP_SET_MAX, OP_OFFLINE = 4, 5, 6, 7
# The extensions of docs/trace-extensions.md (appended: the contract's codes stay).
OP_OBJ_CHARGE, OP_OBJ_UNCHARGE = 8, 9
OP_NAMES = ("cgroup", "charge", "uncharge", "uncharge_direct", "drain_all", "cpu_dead",
            "set_max", "offline", "obj_charge", "obj_uncharge")
#: the byte-sized object operations
OBJ_OPS = (OP_OBJ_CHARGE, OP_OBJ_UNCHARGE)
#: the operations that may carry the ``irq`` word
IRQ_OPS = (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, OP_OBJ_CHARGE, OP_OBJ_UNCHARGE)
#: the operations that may carry the ``kmem`` word (``kmem=K`` on uncharge_direct)
KMEM_OPS = (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT)
#: BYTES of obj_charge / obj_uncharge: 1 to 2^29. The largest byte charge a kernel
#: caller makes is a percpu area, pcpu_obj_full_size() (mm/percpu-internal.h) of at
#: most PCPU_MIN_UNIT_SIZE (32 KiB, "the maximum supported allocation size") on each
#: of at most 8192 CPUs plus its obj_cgroup pointer vector: 2^28 + 2^15 bytes. Below
#: 2^29, the kernel's ``unsigned int`` byte sums (a stock plus the size) cannot wrap.
OBJ_BYTES_MAX = 2**29
#: ``nodes K``: MAX_NUMNODES with x86-64's largest CONFIG_NODES_SHIFT (10)
MAX_NODES = 1024
#: the machine's memcg stock slots (cpus x --slots) for the multi* models (the
#: contract, under --slots)
STOCK_SLOTS_MAX = 2**24

#: One row per operation line. ``cpu`` is -1 where the operation names none;
#: ``memcg`` is the memcg operated on (for ``cgroup``, the new ID); ``arg`` is NR for
#: the (un)charges, BYTES for the object operations, PAGES for ``set_max`` and the
#: limit for ``cgroup``; ``parent`` is the parent ID of ``cgroup`` (else -1); ``line``
#: is the 1-based line in the text (0 for traces built in memory); ``irq`` is the
#: ``irq`` word (appended after ``line``, so the contract's fields keep their order);
#: ``kmem`` (appended after ``irq``) is how many of the NR pages are kernel-memory pages:
#: NR for ``charge ... kmem`` and ``uncharge ... kmem``, K for ``uncharge_direct ...
#: kmem=K``, else 0.
OP_DTYPE = np.dtype([
    ("op", "u1"),
    ("nested", "?"),
    ("cpu", "<i4"),
    ("memcg", "<i8"),
    ("parent", "<i8"),
    ("arg", "<u8"),
    ("line", "<i8"),
    ("irq", "?"),
    ("kmem", "<u8"),
])


class TraceError(ValueError):
    """A malformed trace: ``str()`` is ``TRACE:LINE: what is wrong``."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source, self.line, self.message = source, line, message


@dataclass(slots=True)
class Trace:
    """A parsed trace: the number of CPUs, the operations in order, the NUMA nodes.

    ``nodes`` is the ``nodes K`` header line (default 1): CPUs split into ``nodes``
    equal contiguous blocks (:func:`node_of`).
    """

    cpus: int
    ops: np.ndarray
    source: str = field(default="<memory>")
    nodes: int = 1
    #: the line of ``cpus N`` in the text (0 for traces built in memory)
    cpus_line: int = 0

    def __post_init__(self) -> None:
        if self.ops.dtype != OP_DTYPE:
            raise TypeError(f"ops must have dtype OP_DTYPE, not {self.ops.dtype}")


def check_stock_slots(source: str, line: int, cpus: int, slots: int | None) -> None:
    """Refuse ``cpus`` CPUs of ``slots`` memcg stock slots each past 2^24 (the contract).

    ``slots`` is None for the models without slots. The error names the ``cpus`` line.

    >>> try:
    ...     check_stock_slots("t", 2, 64, 2**24)
    ... except TraceError as exc:
    ...     print(exc)
    t:2: cpus 64 with --slots 16777216: 64×16777216 stock slots exceed 2^24 (cpus x slots)
    """
    if slots is not None and cpus * slots > STOCK_SLOTS_MAX:
        raise TraceError(source, line, f"cpus {cpus} with --slots {slots}: {cpus}×{slots} "
                                       "stock slots exceed 2^24 (cpus x slots)")


#: what grows with each memcg, per ``per_memcg`` kind: (the factor's name, what it is)
_PER_MEMCG = {"cpus": ("CPUs", "per-CPU page_counter stocks", "memcgs x cpus"),
              "nodes": ("nodes", "per-node objcgs", "memcgs x nodes")}


def check_per_memcg(source: str, line: int, memcg: int, memcgs: int, per_memcg: str | None,
                    cpus: int, nodes: int) -> None:
    """Refuse the ``cgroup`` line that takes a model's per-memcg state past 2^24 entries.

    ``per_memcg`` is ``"cpus"`` for the page_counter-stock models (one stock per CPU
    per memcg), ``"nodes"`` for the 2026 eras' per-node objcgs, None for no bound;
    ``memcgs`` counts the root. A factor of 1 bounds nothing (the state then grows
    with the trace's own lines).

    >>> try:
    ...     check_per_memcg("t", 9, 5, 2049, "cpus", 8192, 1)
    ... except TraceError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    t:9: cgroup 5: 2049 memcgs on 8192 CPUs: 2049×8192 per-CPU page_counter stocks exceed...
    """
    if per_memcg is None:
        return
    factor = cpus if per_memcg == "cpus" else nodes
    if factor > 1 and memcgs * factor > STOCK_SLOTS_MAX:
        name, what, label = _PER_MEMCG[per_memcg]
        raise TraceError(source, line, f"cgroup {memcg}: {memcgs} memcgs on {factor} {name}: "
                                       f"{memcgs}×{factor} {what} exceed 2^24 ({label})")


def node_of(trace: Trace, cpu: int) -> int:
    """The NUMA node of ``cpu``: CPUs ``0..cpus-1`` in ``nodes`` equal contiguous blocks."""
    return cpu // (trace.cpus // trace.nodes)


def make_ops(rows: Iterable[tuple], *, irq: bool | Iterable[bool] = False,
             kmem: int | Iterable[int] = 0) -> np.ndarray:
    """Build an ``OP_DTYPE`` array from ``(op, cpu, memcg, arg[, parent[, nested]])`` rows.

    ``irq`` marks the rows that run outside task context: one flag for every row,
    or one per row. ``kmem`` is the ``kmem`` field (the kernel-memory pages among NR:
    NR or 0 for charge and uncharge, 0..NR for uncharge_direct): one value for every
    row, or one per row; the default 0 is no ``kmem`` word.

    >>> ops = make_ops([(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0), (OP_CHARGE, 0, 1, 5)])
    >>> [OP_NAMES[o] for o in ops["op"]]
    ['cgroup', 'charge']
    >>> make_ops([(OP_OBJ_CHARGE, 0, 1, 200)], irq=[True])["irq"].tolist()
    [True]
    """
    rows = list(rows)
    flags = [bool(irq)] * len(rows) if isinstance(irq, bool | np.bool_) else \
        [bool(f) for f in irq]
    if len(flags) != len(rows):
        raise ValueError(f"irq: {len(flags)} flags for {len(rows)} rows; give one per row "
                         "or a single bool")
    kmems = [int(kmem)] * len(rows) if isinstance(kmem, int | np.integer) else \
        [int(k) for k in kmem]
    if len(kmems) != len(rows):
        raise ValueError(f"kmem: {len(kmems)} values for {len(rows)} rows; give one per row "
                         "or a single int")
    out = []
    for row, flag, k in zip(rows, flags, kmems, strict=True):
        op, cpu, memcg, arg, *rest = row
        parent = rest[0] if rest else -1
        nested = bool(rest[1]) if len(rest) > 1 else False
        out.append((op, nested, cpu, memcg, parent, arg, 0, flag, k))
    return np.array(out, dtype=OP_DTYPE)


# --------------------------------------------------------------------------- text

_DIGITS = re.compile(r"[0-9]+\Z")
_SPLIT = re.compile(r"[ \t]+")

# keyword -> field names after the keyword (without the optional max= and nested)
_SHAPES = {
    "cgroup": ("ID", "PARENT"),
    "charge": ("CPU", "MEMCG", "NR"),
    "uncharge": ("CPU", "MEMCG", "NR"),
    "uncharge_direct": ("CPU", "MEMCG", "NR"),
    "drain_all": ("CPU", "MEMCG"),
    "cpu_dead": ("CPU",),
    "set_max": ("MEMCG", "PAGES"),
    "offline": ("MEMCG",),
    "obj_charge": ("CPU", "MEMCG", "BYTES"),
    "obj_uncharge": ("CPU", "MEMCG", "BYTES"),
}
_OPCODE = {name: code for code, name in enumerate(OP_NAMES)}


class _Checker:
    """Line-by-line semantic validation shared by the text parser and ``validate``."""

    def __init__(self, source: str, single: bool, per_memcg: str | None = None) -> None:
        self.source = source
        self.single = single
        self.per_memcg = per_memcg
        self.cpus = 0
        self.nodes = 1
        self.parent: dict[int, int] = {0: -1}
        self.online: dict[int, bool] = {0: True}
        self.children_online: dict[int, int] = {0: 0}

    def fail(self, line: int, message: str) -> TraceError:
        return TraceError(self.source, line, message)

    def memcg(self, line: int, memcg: int, what: str, root_ok: bool) -> None:
        if memcg not in self.parent:
            raise self.fail(line, f"{what}: unknown memcg {memcg} "
                                  "(create it with a cgroup line first)")
        if memcg == 0 and not root_ok:
            raise self.fail(line, f"{what}: the root memcg 0 cannot be used here")
        if not self.online[memcg]:
            raise self.fail(line, f"{what}: memcg {memcg} is offline")

    def cpu(self, line: int, cpu: int, what: str) -> None:
        if not 0 <= cpu < self.cpus:
            raise self.fail(line, f"{what}: cpu {cpu} out of range 0..{self.cpus - 1}")

    def op(self, line: int, op: int, cpu: int, memcg: int, parent: int, arg: int,
           nested: bool, irq: bool = False, kmem: int = 0) -> None:
        if op >= len(OP_NAMES):
            raise self.fail(line, f"unknown operation code {op}")
        name = OP_NAMES[op]
        if irq and op not in IRQ_OPS:
            raise self.fail(line, f"{name}: 'irq' is valid only on "
                                  f"{', '.join(OP_NAMES[o] for o in IRQ_OPS)}")
        if kmem:
            if op not in KMEM_OPS:
                raise self.fail(line, f"{name}: 'kmem' is valid only on charge, uncharge "
                                      "and uncharge_direct (kmem=K)")
            if op == OP_UNCHARGE_DIRECT and kmem > arg:
                raise self.fail(line, f"uncharge_direct: kmem={kmem} exceeds NR {arg} "
                                      f"(valid: kmem=0..{arg}, the kmem pages of the batch)")
            if op != OP_UNCHARGE_DIRECT and kmem != arg:
                raise self.fail(line, f"{name}: kmem field {kmem} must be 0 or NR {arg} "
                                      "(the 'kmem' word marks all NR pages)")
        if nested and self.single:
            raise self.fail(line, f"{name}: 'nested' is invalid with the single model "
                                  "(its v6.15 charge path disables interrupts)")
        if op == OP_CGROUP:
            if not 1 <= memcg <= MEMCG_ID_MAX:
                raise self.fail(line, f"cgroup: ID {memcg} out of range 1..{MEMCG_ID_MAX}")
            if memcg in self.parent:
                raise self.fail(line, f"cgroup: memcg {memcg} already exists")
            self.memcg(line, parent, "cgroup", root_ok=True)
            check_per_memcg(self.source, line, memcg, len(self.parent) + 1, self.per_memcg,
                            self.cpus, self.nodes)
            if not 1 <= arg <= PAGES_MAX:
                raise self.fail(line, f"cgroup: max={arg} out of range 1..{PAGES_MAX}")
            self.parent[memcg] = parent
            self.online[memcg] = True
            self.children_online[memcg] = 0
            self.children_online[parent] += 1
        elif op in (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT):
            self.cpu(line, cpu, name)
            self.memcg(line, memcg, name, root_ok=op != OP_CHARGE)
            if not 1 <= arg <= NR_MAX:
                raise self.fail(line, f"{name}: NR {arg} out of range 1..{NR_MAX}")
        elif op in OBJ_OPS:
            self.cpu(line, cpu, name)
            self.memcg(line, memcg, name, root_ok=op != OP_OBJ_CHARGE)
            if not 1 <= arg <= OBJ_BYTES_MAX:
                raise self.fail(line, f"{name}: BYTES {arg} out of range 1..{OBJ_BYTES_MAX}")
        elif op == OP_DRAIN_ALL:
            self.cpu(line, cpu, name)
            self.memcg(line, memcg, name, root_ok=True)
        elif op == OP_CPU_DEAD:
            self.cpu(line, cpu, name)
        elif op == OP_SET_MAX:
            self.memcg(line, memcg, name, root_ok=False)
            if not 1 <= arg <= PAGES_MAX:
                raise self.fail(line, f"set_max: PAGES {arg} out of range 1..{PAGES_MAX}")
        elif op == OP_OFFLINE:
            self.memcg(line, memcg, name, root_ok=False)
            if self.children_online[memcg]:
                raise self.fail(line, f"offline: memcg {memcg} has an online child "
                                      "(cgroup v2 refuses to remove it)")
            self.online[memcg] = False
            self.children_online[self.parent[memcg]] -= 1
        else:
            raise self.fail(line, f"unknown operation code {op}")


def _shown(token: str) -> str:
    """``token`` shortened for a message: a 5000-digit field is not worth echoing."""
    return token if len(token) <= 40 else f"{token[:20]}...{token[-10:]} ({len(token)} chars)"


def _integer(checker: _Checker, line: int, token: str, what: str, low: int, high: int) -> int:
    if not _DIGITS.match(token):
        raise checker.fail(line, f"{what} must be a decimal integer, not {_shown(token)!r}")
    # Leading zeros are allowed, so the length alone does not bound the value; but
    # more significant digits than the bound has is out of range, and int() refuses
    # strings past sys.get_int_max_str_digits() with a plain ValueError.
    significant = token.lstrip("0")
    if len(significant) > len(str(high)) or not low <= int(significant or "0") <= high:
        raise checker.fail(line, f"{what} {_shown(token)} out of range {low}..{high}")
    return int(significant or "0")


def parse_text(text: str | bytes, source: str = "<memory>", *, single: bool = False,
               slots: int | None = None, per_memcg: str | None = None) -> Trace:
    """Parse and validate a whole trace; raise :class:`TraceError` at the first error.

    ``single`` rejects ``nested``, as the ``single`` model requires. ``slots`` (the
    ``--slots`` of a ``multi*`` model) refuses, at its line, a ``cpus`` line whose
    CPUs would hold more than 2^24 stock slots (:func:`check_stock_slots`);
    ``per_memcg`` refuses the ``cgroup`` line past the model's per-memcg bound
    (:func:`check_per_memcg`).
    """
    checker = _Checker(source, single, per_memcg)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text.count(b"\n", 0, exc.start) + 1
            raise checker.fail(line, "not valid UTF-8") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows: list[tuple] = []
    seen_cpus = seen_nodes = False
    nodes, cpus_line = 1, 0
    for number, raw in enumerate(lines, start=1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if number == 1:
            if raw != HEADER:
                raise checker.fail(1, f"the first line must be exactly {HEADER!r}")
            continue
        content = raw.split("#", 1)[0]
        tokens = [t for t in _SPLIT.split(content) if t]
        if not tokens:
            continue
        keyword, args = tokens[0], tokens[1:]
        if keyword == "cpus":
            if seen_cpus:
                raise checker.fail(number, "'cpus' appears more than once")
            if rows:
                raise checker.fail(number, "'cpus' must come before any operation")
            if len(args) != 1:
                raise checker.fail(number, "'cpus' takes exactly one field: cpus N")
            checker.cpus = _integer(checker, number, args[0], "cpus", 1, MAX_CPUS)
            check_stock_slots(source, number, checker.cpus, slots)
            seen_cpus, cpus_line = True, number
            continue
        if keyword == "nodes":
            nodes = _nodes_line(checker, number, args, seen_cpus, seen_nodes, bool(rows))
            checker.nodes = nodes
            seen_nodes = True
            continue
        if keyword not in _SHAPES:
            raise checker.fail(number, f"unknown word {keyword!r} (valid: cpus, nodes, "
                                       f"{', '.join(OP_NAMES)})")
        if not seen_cpus:
            raise checker.fail(number, "'cpus N' must appear before the first operation")
        nested = bool(args) and args[-1] == "nested"
        if nested:
            args = args[:-1]
        irq = bool(args) and args[-1] == "irq"
        if irq:
            if _OPCODE[keyword] not in IRQ_OPS:
                raise checker.fail(number, f"{keyword}: 'irq' is valid only on "
                                           f"{', '.join(OP_NAMES[o] for o in IRQ_OPS)}")
            args = args[:-1]
        if "nested" in args:
            raise checker.fail(number, f"{keyword}: 'nested' must be the last field "
                                       "(after 'irq')")
        kmem = _kmem_word(checker, number, keyword, args)
        if kmem is not None:
            args = args[:-1]
        if any(a == "kmem" or a.startswith("kmem=") for a in args):
            raise checker.fail(number, f"{keyword}: 'kmem' must come right after NR "
                                       "(before 'irq' and 'nested')")
        shape = _SHAPES[keyword]
        limit = None
        if keyword == "cgroup" and len(args) == 3:
            if not args[2].startswith("max="):
                raise checker.fail(number, "cgroup: expected max=PAGES or 'nested', "
                                           f"not {args[2]!r}")
            limit = _integer(checker, number, args[2][4:], "cgroup: max=", 1, PAGES_MAX)
            args = args[:2]
        usage = " ".join((keyword, *shape)) + (" [max=PAGES]" if keyword == "cgroup" else "")
        usage += (" [kmem=K]" if keyword == "uncharge_direct" else
                  " [kmem]" if _OPCODE[keyword] in KMEM_OPS else "")
        usage += " [irq]" if _OPCODE[keyword] in IRQ_OPS else ""
        if len(args) != len(shape):
            raise checker.fail(number, f"{keyword}: expected '{usage} [nested]', "
                                       f"got {len(tokens) - 1} field(s)")
        values = {}
        for name, token in zip(shape, args, strict=True):
            if name == "CPU":
                values[name] = _integer(checker, number, token, f"{keyword}: CPU", 0, MAX_CPUS - 1)
            elif name == "NR":
                values[name] = _integer(checker, number, token, f"{keyword}: NR", 1, NR_MAX)
            elif name == "BYTES":
                values[name] = _integer(checker, number, token, f"{keyword}: BYTES", 1,
                                        OBJ_BYTES_MAX)
            elif name == "PAGES":
                values[name] = _integer(checker, number, token, f"{keyword}: PAGES", 1, PAGES_MAX)
            elif name == "ID":
                values[name] = _integer(checker, number, token, "cgroup: ID", 1, MEMCG_ID_MAX)
            else:  # MEMCG, PARENT
                values[name] = _integer(checker, number, token, f"{keyword}: {name}", 0,
                                        MEMCG_ID_MAX)
        op = _OPCODE[keyword]
        cpu = values.get("CPU", -1)
        memcg = values.get("MEMCG", values.get("ID", 0))
        parent = values.get("PARENT", -1)
        arg = values.get("NR", values.get("BYTES", values.get(
            "PAGES", limit if limit is not None else PAGE_COUNTER_MAX if op == OP_CGROUP
            else 0)))
        kmem = 0 if kmem is None else arg if kmem < 0 else kmem
        checker.op(number, op, cpu, memcg, parent, arg, nested, irq, kmem)
        rows.append((op, nested, cpu, memcg, parent, arg, number, irq, kmem))
    if not lines:
        raise checker.fail(1, f"empty trace: the first line must be exactly {HEADER!r}")
    if not seen_cpus:
        raise checker.fail(len(lines), "missing 'cpus N' line")
    return Trace(checker.cpus, np.array(rows, dtype=OP_DTYPE), source, nodes, cpus_line)


def _kmem_word(checker: _Checker, number: int, keyword: str, args: list[str]) -> int | None:
    """The optional ``kmem`` word at the end of ``args`` (irq and nested stripped): None
    without it, -1 for the bare word (all NR pages), K for ``kmem=K``."""
    if not args:
        return None
    last = args[-1]
    if last != "kmem" and not last.startswith("kmem="):
        return None
    if _OPCODE[keyword] not in KMEM_OPS:
        raise checker.fail(number, f"{keyword}: 'kmem' is valid only on charge, uncharge "
                                   "and uncharge_direct (kmem=K)")
    if keyword == "uncharge_direct":
        if last == "kmem":
            raise checker.fail(number, "uncharge_direct: expected kmem=K (K of the NR pages "
                                       "are kmem pages, 0 <= K <= NR), not a bare 'kmem'")
        return _integer(checker, number, last[5:], "uncharge_direct: kmem=", 0, NR_MAX)
    if last != "kmem":
        raise checker.fail(number, f"{keyword}: 'kmem' takes no value here (kmem=K is "
                                   "uncharge_direct's); write 'kmem'")
    return -1


def _nodes_line(checker: _Checker, number: int, args: list[str], seen_cpus: bool,
                seen_nodes: bool, after_ops: bool) -> int:
    """The optional ``nodes K`` line: once, after ``cpus``, before any operation."""
    if seen_nodes:
        raise checker.fail(number, "'nodes' appears more than once")
    if not seen_cpus or after_ops:
        raise checker.fail(number, "'nodes' must come after 'cpus' and before any operation")
    if len(args) != 1:
        raise checker.fail(number, "'nodes' takes exactly one field: nodes K")
    nodes = _integer(checker, number, args[0], "nodes", 1, MAX_NODES)
    _check_nodes(checker, number, nodes)
    return nodes


def _check_nodes(checker: _Checker, line: int, nodes: int) -> None:
    cpus = checker.cpus
    if not 1 <= nodes <= min(cpus, MAX_NODES) or cpus % nodes:
        raise checker.fail(line, f"nodes {nodes}: must divide cpus {cpus} into equal "
                                 f"contiguous blocks (1 <= K <= min(cpus, {MAX_NODES}), "
                                 "cpus a multiple of K)")


def read_trace(path: str, *, single: bool = False, slots: int | None = None,
               per_memcg: str | None = None) -> Trace:
    """Read and validate a trace file (``-`` reads standard input); options as
    :func:`parse_text`."""
    import sys

    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise TraceError(path, 0, f"cannot read trace: {exc.strerror}") from None
    return parse_text(data, path, single=single, slots=slots, per_memcg=per_memcg)


def validate(trace: Trace, *, single: bool = False, slots: int | None = None,
             per_memcg: str | None = None) -> None:
    """Check an in-memory trace (e.g. from a generator) by the rules of the text format;
    options as :func:`parse_text`."""
    checker = _Checker(trace.source, single, per_memcg)
    checker.nodes = trace.nodes
    if not 1 <= trace.cpus <= MAX_CPUS:
        raise checker.fail(0, f"cpus {trace.cpus} out of range 1..{MAX_CPUS}")
    check_stock_slots(trace.source, trace.cpus_line, trace.cpus, slots)
    checker.cpus = trace.cpus
    _check_nodes(checker, 0, trace.nodes)
    for index, row in enumerate(trace.ops.tolist()):
        op, nested, cpu, memcg, parent, arg, line, irq, kmem = row
        checker.op(line or index + 1, op, cpu, memcg, parent, arg, nested, irq, kmem)


def to_text(trace: Trace) -> str:
    """Write a trace in the text format (the inverse of :func:`parse_text`)."""
    out = [HEADER, f"cpus {trace.cpus}"]
    if trace.nodes != 1:
        out.append(f"nodes {trace.nodes}")
    for op, nested, cpu, memcg, parent, arg, _line, irq, kmem in trace.ops.tolist():
        name = OP_NAMES[op]
        if op == OP_CGROUP:
            fields = [name, str(memcg), str(parent)]
            if arg != PAGE_COUNTER_MAX:
                fields.append(f"max={arg}")
        elif op in (OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT, *OBJ_OPS):
            fields = [name, str(cpu), str(memcg), str(arg)]
            if kmem:
                fields.append(f"kmem={kmem}" if op == OP_UNCHARGE_DIRECT else "kmem")
        elif op == OP_DRAIN_ALL:
            fields = [name, str(cpu), str(memcg)]
        elif op == OP_CPU_DEAD:
            fields = [name, str(cpu)]
        elif op == OP_SET_MAX:
            fields = [name, str(memcg), str(arg)]
        else:
            fields = [name, str(memcg)]
        if irq:
            fields.append("irq")
        if nested:
            fields.append("nested")
        out.append(" ".join(fields))
    return "\n".join(out) + "\n"
