"""Streaming: any split of a trace into chunks replays to the same result as the whole."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.engine import Engine, replay_chunks, replay_compiled
from memcglab.replay import dumps

from .tracegen import random_trace


@pytest.mark.parametrize("number", range(20))
@pytest.mark.parametrize("model", ["multi", "multi-lru", "pcstock"])
def test_chunks_equal_the_whole(number, model):
    trace = random_trace(number)
    whole = dumps(replay_compiled(trace, model, 2, number))
    rng = np.random.default_rng(number)
    cuts = np.sort(rng.integers(0, len(trace.ops) + 1, size=int(rng.integers(0, 6))))
    chunks = np.split(trace.ops, cuts)
    assert dumps(replay_chunks(trace.cpus, chunks, model, 2, number)) == whole
    singles = (trace.ops[i:i + 1] for i in range(len(trace.ops)))
    assert dumps(replay_chunks(trace.cpus, singles, model, 2, number)) == whole


def test_results_can_be_read_between_chunks():
    trace = random_trace(7)
    engine = Engine(trace.cpus, "multi", 7, 0)
    half = len(trace.ops) // 2
    engine.feed(trace.ops[:half])
    from memcglab.trace import Trace

    first = replay_compiled(Trace(trace.cpus, trace.ops[:half]), "multi", 7, 0)
    assert engine.result() == first
    engine.feed(trace.ops[half:])
    assert engine.result() == replay_compiled(trace, "multi", 7, 0)


def test_a_chunk_of_the_wrong_dtype_is_refused():
    engine = Engine(2)
    with pytest.raises(TypeError, match="OP_DTYPE"):
        engine.feed(np.zeros(3, dtype=np.int64))
