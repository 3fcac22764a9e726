"""memcglab.engine: a compiled (numba) engine that reproduces the faithful replay exactly.

Every replay model of the contract (``single``, ``multi``, ``multi-rr``,
``multi-lru``, ``multi-fix2``, ``pcstock``) over the numpy trace form, with the
contract's JSON object as result, optional per-CPU/per-memcg event counts
(:class:`memcglab.events.ChargeEvents`), the ``--check`` invariant, chunked
streaming for traces of any length, and a compiled reader of the text format.
Differential tests hold it to ``memcglab.replay``, byte for byte.

* :func:`replay_compiled` - a :class:`~memcglab.trace.Trace` in memory;
* :func:`replay_chunks` / :class:`Engine` - an iterator of ``OP_DTYPE`` chunks;
* :func:`replay_text` - a trace file streamed block by block;
* :func:`parse_text_fast` / :func:`read_trace_fast` - ``parse_text`` / ``read_trace``.
"""

from memcglab.engine.engine import (
    Engine,
    InvariantViolation,
    check_args,
    replay_chunks,
    replay_compiled,
)
from memcglab.engine.state import MODELS
from memcglab.engine.textread import parse_text_fast, read_trace_fast, replay_text

__all__ = ["Engine", "InvariantViolation", "MODELS", "check_args", "parse_text_fast",
           "read_trace_fast", "replay_chunks", "replay_compiled", "replay_text"]
