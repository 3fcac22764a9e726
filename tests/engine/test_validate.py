"""The engine refuses exactly the traces memcglab.trace.validate refuses, with its message."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.engine import replay_chunks, replay_compiled
from memcglab.replay import replay
from memcglab.trace import (
    NR_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    Trace,
    TraceError,
)

from .tracegen import random_trace


def _mutations(trace: Trace, rng: np.random.Generator) -> list[tuple[str, Trace]]:
    """Corruptions of one row each, covering every rule of the checker."""
    ops, out = trace.ops, []
    live = [int(m) for m in ops["memcg"][ops["op"] == OP_CGROUP]]
    offlined = [int(m) for m in ops["memcg"][ops["op"] == OP_OFFLINE]]

    def put(name: str, index: int, row: tuple) -> None:
        new = np.insert(ops, index, np.array([row + (0, False, 0)], dtype=OP_DTYPE))
        out.append((name, Trace(trace.cpus, new, trace.source)))

    at = int(rng.integers(1, len(ops) + 1))
    some = live[int(rng.integers(0, len(live)))] if live else 1
    put("cpu too big", at, (OP_CHARGE, False, trace.cpus, some, -1, 1))
    put("cpu negative", at, (OP_DRAIN_ALL, False, -1, 0, -1, 0))
    put("cpu_dead cpu", at, (OP_CPU_DEAD, False, 9000, 0, -1, 0))
    put("unknown memcg", at, (OP_UNCHARGE, False, 0, 999_999_999, -1, 1))
    put("negative memcg", at, (OP_SET_MAX, False, -1, -5, -1, 1))
    put("charge root", at, (OP_CHARGE, False, 0, 0, -1, 1))
    put("nr zero", len(ops), (OP_CHARGE, False, 0, some, -1, 0))
    put("nr too big", len(ops), (OP_UNCHARGE, False, 0, some, -1, NR_MAX + 1))
    put("set_max root", at, (OP_SET_MAX, False, -1, 0, -1, 5))
    put("set_max zero", len(ops), (OP_SET_MAX, False, -1, some, -1, 0))
    put("offline root", at, (OP_OFFLINE, False, -1, 0, -1, 0))
    put("unknown op", at, (9, False, 0, 0, -1, 0))
    put("cgroup id 0", at, (OP_CGROUP, False, -1, 0, 0, 5))
    put("cgroup unknown parent", at, (OP_CGROUP, False, -1, 77_777, 55_555, 5))
    put("cgroup max 0", at, (OP_CGROUP, False, -1, 77_777, 0, 0))
    put("cgroup self parent", at, (OP_CGROUP, False, -1, 77_777, 77_777, 5))
    if live:
        put("duplicate cgroup", len(ops), (OP_CGROUP, False, -1, live[0], 0, 5))
        put("use before creation", 0, (OP_CHARGE, False, 0, live[-1], -1, 1))
    if offlined:
        put("use after offline", len(ops), (OP_DRAIN_ALL, False, 0, offlined[0], -1, 0))
        put("parent offline", len(ops), (OP_CGROUP, False, -1, 88_888, offlined[0], 5))
    made = ops[ops["op"] == OP_CGROUP]
    busy = [int(p) for c, p in zip(made["memcg"], made["parent"], strict=True)
            if p > 0 and int(c) not in offlined and int(p) not in offlined]
    if busy:
        put("offline with a child", len(ops), (OP_OFFLINE, False, -1, busy[0], -1, 0))
    return out


def _message(fn, *args, **kw) -> str:
    with pytest.raises(TraceError) as info:
        fn(*args, **kw)
    return str(info.value)


@pytest.mark.parametrize("number", range(40))
def test_every_corruption_gets_the_faithful_message(number):
    trace = random_trace(number)
    rng = np.random.default_rng(number)
    for _name, bad in _mutations(trace, rng):
        want = _message(replay, bad, "multi")
        assert _message(replay_compiled, bad, "multi") == want
        chunks = np.array_split(bad.ops, 3)
        assert _message(replay_chunks, bad.cpus, chunks, "multi", source=bad.source) == want


def test_nested_is_refused_for_single_only():
    trace = random_trace(3)
    assert trace.ops["nested"].any()
    assert _message(replay_compiled, trace, "single") == _message(replay, trace, "single")
    replay_compiled(trace, "multi")


@pytest.mark.parametrize("cpus", [0, 8193])
def test_cpu_count_out_of_range(cpus):
    trace = Trace(cpus, np.zeros(0, dtype=OP_DTYPE), "t")
    assert _message(replay_compiled, trace) == _message(replay, trace)


def test_text_line_numbers_are_kept():
    from memcglab.trace import parse_text

    good = parse_text("memcglab-trace 1\ncpus 2\n\n# c\ncgroup 4 0\ncharge 1 4 2\n")
    ops = good.ops.copy()
    ops[1]["cpu"] = 5
    bad = Trace(2, ops, "file.trace")
    assert _message(replay_compiled, bad) == "file.trace:6: charge: cpu 5 out of range 0..1"
