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


def _state_bytes(engine: Engine) -> int:
    return sum(a.nbytes for a in engine.state) + engine.validator.keys.nbytes


def test_memory_does_not_grow_with_the_number_of_operations():
    trace = random_trace(11)
    body = trace.ops[trace.ops["op"] != 0]
    engine = Engine(trace.cpus, "multi", 7, 0, events=True)
    engine.feed(trace.ops)
    engine.feed(body)
    before = _state_bytes(engine)
    for _ in range(200):
        engine.feed(body)
    assert _state_bytes(engine) == before
    assert engine.result()["ops"] == len(trace.ops) + 201 * len(body)


@pytest.mark.slow
def test_the_largest_slot_count():
    from memcglab.trace import parse_text

    text = "memcglab-trace 1\ncpus 1\ncgroup 1 0\ncgroup 2 0\ncharge 0 1 1\ncharge 0 2 1\n"
    for model in ("multi", "multi-rr", "multi-lru"):
        r = replay_compiled(parse_text(text), model, 2**24, 2**64 - 1)
        stock = r["stocks"][0]
        assert len(stock) == 2**24 and stock[:3] == [[1, 63], [2, 63], None]
        assert stock[-1] is None
