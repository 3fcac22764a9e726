"""memcglab.engine: a compiled (numba) engine that reproduces the faithful replay exactly.

Every replay model of the contract (``single``, ``multi``, ``multi-rr``,
``multi-lru``, ``multi-fix2``, ``pcstock``) over the numpy trace form, with the
contract's JSON object as result, optional per-CPU/per-memcg event counts, the
``--check`` invariant, chunked streaming for traces of any length, and a fast
reader of the text format. Differential tests hold it to ``memcglab.replay``.
"""

from memcglab.engine.engine import (
    Engine,
    InvariantViolation,
    check_args,
    replay_chunks,
    replay_compiled,
)
from memcglab.engine.state import MODELS

__all__ = ["Engine", "InvariantViolation", "MODELS", "check_args", "replay_chunks",
           "replay_compiled"]
