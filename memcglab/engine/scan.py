"""Scanner of the trace text format: bytes to ``OP_DTYPE`` columns, no Python per line.

The scanner is C (``memcglab/engine/native/scan.c``, built with the engine's C core by
:mod:`memcglab.engine.native`); this module holds its state, its constants (which the
C code reads from the header generated from them) and :func:`scan`, its entry point.

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
[(0, False, -1, 5, 0, 9, 3, False, 0), (1, True, 1, 5, -1, 3, 4, False, 0)]
"""

from __future__ import annotations

import ctypes

import numpy as np

from memcglab.engine import native
from memcglab.trace import OP_DTYPE, OP_NAMES

__all__ = ["scan", "new_scan_state", "ST_CPUS_SEEN", "ST_CPUS", "ST_ROWS", "ST_BAD_LINE",
           "ST_BAD_START", "ST_BAD_END", "ST_NODES", "ST_CPUS_LINE"]

(ST_CPUS_SEEN, ST_CPUS, ST_ROWS, ST_BAD_LINE, ST_BAD_START, ST_BAD_END, ST_NODES_SEEN,
 ST_NODES) = range(8)
ST_TOKENS = 8  # st[8:22]: start/end of up to 7 tokens of the current line
ST_CPUS_LINE = 22  # the line of ``cpus N``

# Words 0..9 are the operations (their codes), then "cpus", "nested", "max=", "irq",
# "nodes", "kmem" and "kmem=" (the last four from docs/trace-extensions.md).
WORDS = (*OP_NAMES, "cpus", "nested", "max=", "irq", "nodes", "kmem", "kmem=")
W_CPUS = len(OP_NAMES)
W_NESTED, W_MAX, W_IRQ, W_NODES = W_CPUS + 1, W_CPUS + 2, W_CPUS + 3, W_CPUS + 4
W_KMEM, W_KMEMEQ = W_CPUS + 5, W_CPUS + 6


def new_scan_state() -> np.ndarray:
    """A fresh scanner state (nothing seen yet)."""
    return np.zeros(ST_CPUS_LINE + 1, dtype=np.int64)


def scan(buf: np.ndarray, pos: int, line: int, final: bool, st: np.ndarray, out: np.ndarray
         ) -> tuple[int, int, int]:
    """Scan lines from ``buf[pos:]`` (``line`` is the number of the line before ``pos``).

    Stops at the end of the buffer (without ``final``, before a last line that has
    no newline yet), when ``out`` is full, or at a refused line (``st[ST_BAD_LINE]``
    is then set). Returns ``(rows written, position reached, last line number)``.
    """
    lib = native.load()
    buf = np.ascontiguousarray(buf, dtype=np.uint8)
    if st.dtype != np.int64 or st.shape != (ST_CPUS_LINE + 1,) or not st.flags.c_contiguous:
        raise ValueError("st must be a new_scan_state() array")
    if out.dtype != OP_DTYPE or out.ndim != 1 or not out.flags.writeable:
        raise ValueError("out must be a writable 1-D OP_DTYPE array")
    if not 0 <= pos <= len(buf):
        raise ValueError(f"pos={pos} outside the buffer of {len(buf)} bytes")
    res = (ctypes.c_int64 * 2)()
    n = lib.scan(buf.ctypes.data, len(buf), pos, line, bool(final), st.ctypes.data,
                 out.ctypes.data, len(out), out.strides[0] if len(out) else OP_DTYPE.itemsize,
                 res)
    return int(n), int(res[0]), int(res[1])
