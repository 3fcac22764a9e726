"""Differential test: the compiled engine against the faithful replay, byte for byte.

300 random traces (every other one with bursts of small charges on one CPU and
memcg, to hit per-counter stocks) x every model x slots {1, 2, 7, 16} x 2 seeds, compared as
``memcglab.replay.dumps`` output; with ``check=True`` (one seed each), the first
invariant failure (``multi-fix2`` leaks pages) must be the same operation with the
same message. Traces come from a seeded generator (tests/engine/tracegen.py), so a
failure names the trace seed that reproduces it.
"""

from __future__ import annotations

import pytest

from memcglab.engine import InvariantViolation as CompiledViolation
from memcglab.engine import replay_compiled
from memcglab.replay import InvariantViolation, dumps, replay

from .tracegen import MODELS, random_trace, without_nested

SLOTS = (1, 2, 7, 16)
TRACES = 300
BATCHES = (64, 64, 8, 3)  # the default batch, and small ones for more overflows


def _outcome(fn, *args, **kwargs) -> str | tuple:
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))


@pytest.mark.parametrize("block", range(10))
def test_compiled_equals_faithful(block: int) -> None:
    mismatches = []
    for number in range(block * TRACES // 10, (block + 1) * TRACES // 10):
        batch = BATCHES[number % len(BATCHES)]
        trace = random_trace(number, batch=batch, bursts=number % 2 == 1)
        for model in MODELS:
            t = without_nested(trace) if model == "single" else trace
            for slots in SLOTS:
                seeds = (number, 2**64 - 1 - number)
                for seed in seeds:
                    want = dumps(replay(t, model, slots, seed, batch))
                    got = dumps(replay_compiled(t, model, slots, seed, batch))
                    if got != want:
                        mismatches.append((number, model, slots, seed, batch))
                want = _outcome(replay, t, model, slots, seeds[0], batch, check=True)
                got = _outcome(replay_compiled, t, model, slots, seeds[0], batch, check=True)
                if got != want:
                    mismatches.append((number, model, slots, seeds[0], batch, "check"))
    assert not mismatches, f"(trace seed, model, slots, seed, batch): {mismatches[:10]}"


def test_compiled_violation_is_the_faithful_exception_type() -> None:
    trace = random_trace(0, batch=64)
    with pytest.raises(InvariantViolation) as info:
        replay_compiled(trace, "multi-fix2", 7, 0, 64, check=True)
    assert isinstance(info.value, CompiledViolation)


@pytest.mark.parametrize("refill", ["not-in-irq", "never"])
def test_compiled_equals_faithful_with_refill_variants(refill: str) -> None:
    from .tracegen import with_irq

    mismatches = []
    for number in range(60):
        batch = BATCHES[number % len(BATCHES)]
        trace = with_irq(random_trace(number, batch=batch, bursts=number % 2 == 1), number)
        for model in MODELS:
            t = without_nested(trace) if model == "single" else trace
            want = dumps(replay(t, model, 7, number, batch, refill=refill))
            got = dumps(replay_compiled(t, model, 7, number, batch, refill=refill))
            if got != want:
                mismatches.append((number, model))
    assert not mismatches, f"(trace seed, model): {mismatches[:10]}"
