"""Compiled scanner of the trace text format: bytes to ``OP_DTYPE`` columns, no Python per line.

It accepts exactly the lines :func:`memcglab.trace.parse_text` accepts *syntactically*
(keywords, field counts, ``max=``, ``nested``, decimal integers and their ranges,
the single ``cpus`` line before any operation); the semantic rules (known CPUs and
memcgs, offlined memcgs, ...) are the validator's. At the first line it cannot
accept it stops and reports that line; the caller then asks ``parse_text`` for
the exact message (see :mod:`memcglab.engine.textread`).

The header line is the caller's; the scanner starts on line 2. ``st`` carries the
state between calls: ``st[ST_CPUS_SEEN]``, ``st[ST_CPUS]``, ``st[ST_ROWS]`` (rows
emitted so far, all calls) and, after a refusal, ``st[ST_BAD_LINE]`` with the
line's byte range ``st[ST_BAD_START]:st[ST_BAD_END]``.

>>> import numpy as np
>>> from memcglab.trace import OP_DTYPE
>>> text = b"cpus 2\\ncgroup 5 0 max=9 # x\\n\\tcharge 1 5 3 nested\\r\\n"
>>> out, st = np.zeros(4, dtype=OP_DTYPE), new_scan_state()
>>> scan(np.frombuffer(text, np.uint8), 0, 1, True, st, out)
(2, 50, 4)
>>> out[:2].tolist()
[(0, False, -1, 5, 0, 9, 3, False), (1, True, 1, 5, -1, 3, 4, False)]
"""

from __future__ import annotations

import numpy as np

from memcglab.engine.jit import kernel
from memcglab.trace import (
    MAX_CPUS,
    MAX_NODES,
    MEMCG_ID_MAX,
    NR_MAX,
    OBJ_BYTES_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_NAMES,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    PAGES_MAX,
)

__all__ = ["scan", "new_scan_state", "ST_CPUS_SEEN", "ST_CPUS", "ST_ROWS", "ST_BAD_LINE",
           "ST_BAD_START", "ST_BAD_END", "ST_NODES", "ST_CPUS_LINE"]

(ST_CPUS_SEEN, ST_CPUS, ST_ROWS, ST_BAD_LINE, ST_BAD_START, ST_BAD_END, ST_NODES_SEEN,
 ST_NODES) = range(8)
_ST_TOKENS = 8  # st[8:20]: start/end of up to 6 tokens of the current line
ST_CPUS_LINE = 20  # the line of ``cpus N``

# Words 0..9 are the operations (their codes), then "cpus", "nested", "max=", "irq" and
# "nodes" (the last two from docs/trace-extensions.md).
_WORDS = (*OP_NAMES, "cpus", "nested", "max=", "irq", "nodes")
_W_CPUS = len(OP_NAMES)
_W_NESTED, _W_MAX, _W_IRQ, _W_NODES = _W_CPUS + 1, _W_CPUS + 2, _W_CPUS + 3, _W_CPUS + 4
_KW = np.zeros((len(_WORDS), 16), dtype=np.uint8)
_KWLEN = np.array([len(w) for w in _WORDS], dtype=np.int64)
for _i, _w in enumerate(_WORDS):
    _KW[_i, :len(_w)] = np.frombuffer(_w.encode(), dtype=np.uint8)

_U10 = np.uint64(10)
_CPU_HI, _ID_HI = np.uint64(MAX_CPUS - 1), np.uint64(MEMCG_ID_MAX)
_NR_HI, _PAGES_HI = np.uint64(NR_MAX), np.uint64(PAGES_MAX)
_CPUS_HI = np.uint64(MAX_CPUS)
_BYTES_HI, _NODES_HI = np.uint64(OBJ_BYTES_MAX), np.uint64(MAX_NODES)


def new_scan_state() -> np.ndarray:
    """A fresh scanner state (nothing seen yet)."""
    return np.zeros(ST_CPUS_LINE + 1, dtype=np.int64)


@kernel
def _is_word(buf, s, e, w):
    if e - s != _KWLEN[w]:
        return False
    for j in range(e - s):
        if buf[s + j] != _KW[w, j]:
            return False
    return True


@kernel
def _number(buf, s, e, lo, hi):
    # Decimal digits in buf[s:e] whose value is within lo..hi (uint64); (ok, value).
    v = np.uint64(0)
    if s >= e:
        return False, v
    for j in range(s, e):
        d = np.int64(buf[j]) - 48
        if d < 0 or d > 9:
            return False, v
        du = np.uint64(d)
        if v > (hi - du) // _U10:
            return False, v
        v = v * _U10 + du
    return v >= lo, v


@kernel
def _tokens(buf, s, e, st):
    # Split buf[s:e] at runs of spaces and tabs; -1 if there are more than 6 tokens.
    n = 0
    j = s
    while j < e:
        while j < e and (buf[j] == 32 or buf[j] == 9):
            j += 1
        if j >= e:
            break
        start = j
        while j < e and buf[j] != 32 and buf[j] != 9:
            j += 1
        if n == 6:
            return -1
        st[_ST_TOKENS + 2 * n] = start
        st[_ST_TOKENS + 2 * n + 1] = j
        n += 1
    return n


@kernel
def _field(buf, st, t, lo, hi):
    return _number(buf, st[_ST_TOKENS + 2 * t], st[_ST_TOKENS + 2 * t + 1], lo, hi)


@kernel
def _line(buf, st, ntok, line, out, k):
    # Parse one non-empty line into out[k]; 1 if a row was written, 0 for cpus, -1 if refused.
    w0 = -1
    for w in range(_W_NODES + 1):
        if (w <= _W_CPUS or w == _W_NODES) and _is_word(buf, st[_ST_TOKENS],
                                                         st[_ST_TOKENS + 1], w):
            w0 = w
    if w0 == _W_CPUS:
        if st[ST_CPUS_SEEN] or st[ST_ROWS] or ntok != 2:
            return -1
        ok, v = _field(buf, st, 1, np.uint64(1), _CPUS_HI)
        if not ok:
            return -1
        st[ST_CPUS_SEEN] = 1
        st[ST_CPUS] = np.int64(v)
        st[ST_CPUS_LINE] = line
        st[ST_NODES] = 1
        return 0
    if w0 == _W_NODES:
        if not st[ST_CPUS_SEEN] or st[ST_NODES_SEEN] or st[ST_ROWS] or ntok != 2:
            return -1
        ok, v = _field(buf, st, 1, np.uint64(1), _NODES_HI)
        if not ok or np.int64(v) > st[ST_CPUS] or st[ST_CPUS] % np.int64(v):
            return -1
        st[ST_NODES_SEEN] = 1
        st[ST_NODES] = np.int64(v)
        return 0
    if w0 < 0 or not st[ST_CPUS_SEEN]:
        return -1
    last = st[_ST_TOKENS + 2 * (ntok - 1)]
    nested = ntok > 1 and _is_word(buf, last, st[_ST_TOKENS + 2 * ntok - 1], _W_NESTED)
    nargs = ntok - 1 - (1 if nested else 0)
    irq = False
    if nargs > 0:
        t = nargs  # the token before nested, if any
        irq = _is_word(buf, st[_ST_TOKENS + 2 * t], st[_ST_TOKENS + 2 * t + 1], _W_IRQ)
    if irq:
        if not (w0 == OP_CHARGE or w0 == OP_UNCHARGE or w0 == OP_UNCHARGE_DIRECT
                or w0 == OP_OBJ_CHARGE or w0 == OP_OBJ_UNCHARGE):
            return -1
        nargs -= 1
    row = out[k]
    row.op = w0
    row.nested = nested
    row.irq = irq
    row.cpu = -1
    row.memcg = 0
    row.parent = -1
    row.arg = 0
    row.line = line
    if w0 == OP_CGROUP:
        if nargs != 2 and nargs != 3:
            return -1
        ok1, ident = _field(buf, st, 1, np.uint64(1), _ID_HI)
        ok2, par = _field(buf, st, 2, np.uint64(0), _ID_HI)
        limit = np.uint64(PAGE_COUNTER_MAX)
        ok3 = True
        if nargs == 3:
            s3 = st[_ST_TOKENS + 6]
            ok3 = _is_word(buf, s3, min(s3 + 4, st[_ST_TOKENS + 7]), _W_MAX)
            if ok3:
                ok3, limit = _number(buf, s3 + 4, st[_ST_TOKENS + 7], np.uint64(1), _PAGES_HI)
        if not (ok1 and ok2 and ok3):
            return -1
        row.memcg = np.int64(ident)
        row.parent = np.int64(par)
        row.arg = limit
    elif w0 == OP_CHARGE or w0 == OP_UNCHARGE or w0 == OP_UNCHARGE_DIRECT:
        ok1, c = _field(buf, st, 1, np.uint64(0), _CPU_HI)
        ok2, m = _field(buf, st, 2, np.uint64(0), _ID_HI)
        ok3, nr = _field(buf, st, 3, np.uint64(1), _NR_HI)
        if nargs != 3 or not (ok1 and ok2 and ok3):
            return -1
        row.cpu = np.int32(c)
        row.memcg = np.int64(m)
        row.arg = nr
    elif w0 == OP_OBJ_CHARGE or w0 == OP_OBJ_UNCHARGE:
        ok1, c = _field(buf, st, 1, np.uint64(0), _CPU_HI)
        ok2, m = _field(buf, st, 2, np.uint64(0), _ID_HI)
        ok3, nbytes = _field(buf, st, 3, np.uint64(1), _BYTES_HI)
        if nargs != 3 or not (ok1 and ok2 and ok3):
            return -1
        row.cpu = np.int32(c)
        row.memcg = np.int64(m)
        row.arg = nbytes
    elif w0 == OP_DRAIN_ALL:
        ok1, c = _field(buf, st, 1, np.uint64(0), _CPU_HI)
        ok2, m = _field(buf, st, 2, np.uint64(0), _ID_HI)
        if nargs != 2 or not (ok1 and ok2):
            return -1
        row.cpu = np.int32(c)
        row.memcg = np.int64(m)
    elif w0 == OP_CPU_DEAD:
        ok1, c = _field(buf, st, 1, np.uint64(0), _CPU_HI)
        if nargs != 1 or not ok1:
            return -1
        row.cpu = np.int32(c)
    elif w0 == OP_SET_MAX:
        ok1, m = _field(buf, st, 1, np.uint64(0), _ID_HI)
        ok2, pages = _field(buf, st, 2, np.uint64(1), _PAGES_HI)
        if nargs != 2 or not (ok1 and ok2):
            return -1
        row.memcg = np.int64(m)
        row.arg = pages
    elif w0 == OP_OFFLINE:
        ok1, m = _field(buf, st, 1, np.uint64(0), _ID_HI)
        if nargs != 1 or not ok1:
            return -1
        row.memcg = np.int64(m)
    return 1


@kernel
def scan(buf, pos, line, final, st, out):
    """Scan lines from ``buf[pos:]`` (``line`` is the number of the line before ``pos``).

    Stops at the end of the buffer (without ``final``, before a last line that has
    no newline yet), when ``out`` is full, or at a refused line (``st[ST_BAD_LINE]``
    is then set). Returns ``(rows written, position reached, last line number)``.
    """
    end = buf.shape[0]
    n = 0
    while pos < end and n < out.shape[0]:
        le = pos
        while le < end and buf[le] != 10:
            le += 1
        if le == end and not final:
            break
        ls = pos
        pos = le + 1
        line += 1
        ce = le
        if ce > ls and buf[ce - 1] == 13:
            ce -= 1
        j = ls
        while j < ce and buf[j] != 35:
            j += 1
        ntok = _tokens(buf, ls, j, st)
        if ntok == 0:
            continue
        got = -1 if ntok < 0 else _line(buf, st, ntok, line, out, n)
        if got < 0:
            st[ST_BAD_LINE] = line
            st[ST_BAD_START] = ls
            st[ST_BAD_END] = le
            return n, min(pos, end), line
        n += got
        st[ST_ROWS] += got
    return n, min(pos, end), line
