"""The replay loop: one trace operation after another, and the --check invariant.

Both are C (``memcglab/engine/native/loop.c``, ``run_ops`` and ``conservation``,
built and loaded by :mod:`memcglab.engine.native`); this module is their entry point
over a :class:`~memcglab.engine.state.State`. Replay-level rules of the contract that
are not kernel code live in loop.c: the pages each memcg holds (successful charges not
yet uncharged), ``min(NR, held)`` releases with ``short_uncharges`` for the rest,
``failed_charges``, ``set_max_busy`` and the conservation invariant. Everything else
calls the ported functions of the other C files.
"""

from __future__ import annotations

import numpy as np

from memcglab.engine import native
from memcglab.engine.state import State

__all__ = ["run_chunk", "conservation"]


def run_chunk(s: State, ops: np.ndarray, dense: np.ndarray) -> int:
    """run_ops() over an ``OP_DTYPE`` chunk and its dense column, on the arrays of ``s``:
    -1, or the row after which the ``--check`` invariant failed (the state is then that
    right after the row)."""
    return native.run_ops(s, ops, dense)


def conservation(s: State) -> bool:
    """Whether the contract's conservation invariant holds for ``s`` (loop.c)."""
    return native.conservation(s)
