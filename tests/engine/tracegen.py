"""Small random valid traces for differential and property tests of the engine.

The generators are :mod:`memcglab.tracegen` (shipped in the package, so that a plugin's
tests in ``docs/extending.md`` run from an installed memcglab too); this module keeps
the tests' list of the contract's models beside them.
"""

from __future__ import annotations

from memcglab.tracegen import random_obj_trace, random_trace, with_irq, without_nested

__all__ = ["MODELS", "random_obj_trace", "random_trace", "with_irq", "without_nested"]

#: every model of the replay contract, in the contract's order
MODELS = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2", "pcstock", "pcstock-v4")
