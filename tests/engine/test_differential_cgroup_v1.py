"""Differential test of cgroup v1 (kmem, and memsw with swap): compiled against faithful.

Random traces (``random_v1_trace``, tests/engine/tracegen.py: object operations, slab
workloads, page bursts) x every model that runs on v1 x {v1, v1 + swap} x slots {1, 7},
with ``--check``: byte for byte as ``memcglab.replay.dumps`` (same outcome, same first
violation), and the same ``counts`` (the operations, ``memcglab.events.CALL_EVENTS`` and
``V1_EVENTS``). Then the older obj-stock eras beside ``multi`` and ``multi-rr`` on v1.
"""

from __future__ import annotations

import pytest

from memcglab.engine import replay_chunks, replay_compiled
from memcglab.replay import InvariantViolation, dumps, replay

from .tracegen import OBJ_STOCK_ERAS, V1_MODELS, random_v1_trace, without_nested

TRACES, ERA_TRACES = 60, 15
CGROUPS = ((1, False), (1, True))


def _outcome(fn, *args, **kwargs) -> str | tuple:
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))


def _compare(trace, model: str, slots: int, seed: int, swap: bool,
             obj_stock: str | None = None) -> tuple | None:
    kw = {"check": True, "cgroup_version": 1, "swap": swap, "obj_stock": obj_stock}
    want_counts: dict[str, int] = {}
    got_counts: dict[str, int] = {}
    want = _outcome(replay, trace, model, slots, seed, counts=want_counts, **kw)
    got = _outcome(replay_compiled, trace, model, slots, seed, counts=got_counts, **kw)
    if got != want:
        return (trace.source, model, slots, swap, obj_stock, want, got)
    if got_counts != want_counts:
        return (trace.source, model, slots, swap, obj_stock, "counts",
                {k: (want_counts.get(k), got_counts.get(k)) for k in want_counts | got_counts
                 if want_counts.get(k) != got_counts.get(k)})
    return None


@pytest.mark.parametrize("block", range(4))
def test_compiled_matches_faithful_on_v1(block):
    bad, walked = [], 0
    for number in range(block, TRACES, 4):
        trace = random_v1_trace(number)
        for model in V1_MODELS:
            t = without_nested(trace) if model == "single" else trace
            for _version, swap in CGROUPS:
                for slots in (1, 7):
                    problem = _compare(t, model, slots, number, swap)
                    if problem is not None:
                        bad.append(problem)
        out = replay(trace, cgroup_version=1, swap=True)
        walked += out["v1_counters"]["memsw_walks"] > 0
    assert not bad, bad[:3]
    assert walked  # the traces reach memsw (and, with objects, kmem) at all


@pytest.mark.parametrize("era", OBJ_STOCK_ERAS)
def test_compiled_matches_faithful_on_v1_obj_eras(era):
    bad, kmem = [], 0
    for number in range(ERA_TRACES):
        trace = random_v1_trace(3 * number + 1)  # the slab workloads
        for model in ("multi", "multi-rr"):
            for _version, swap in CGROUPS:
                problem = _compare(trace, model, 7, number, swap, era)
                if problem is not None:
                    bad.append(problem)
        kmem += replay(trace, obj_stock=era, cgroup_version=1)["v1_counters"]["kmem_walks"]
    assert not bad, bad[:3]
    assert kmem


def test_chunks_carry_the_v1_state():
    """replay_chunks: the v1 counters persist between chunks, as in one call."""
    trace = random_v1_trace(0)
    half = len(trace.ops) // 2
    got = replay_chunks(trace.cpus, [trace.ops[:half], trace.ops[half:]], nodes=trace.nodes,
                        cgroup_version=1, swap=True)
    assert dumps(got) == dumps(replay(trace, cgroup_version=1, swap=True))


def test_v2_output_has_no_v1_key_in_either_engine():
    trace = random_v1_trace(0)
    for fn in (replay, replay_compiled):
        assert dumps(fn(trace)) == dumps(fn(trace, cgroup_version=2, swap=False))
        assert "v1_counters" not in fn(trace)


def test_compiled_refuses_what_the_faithful_refuses():
    trace = random_v1_trace(2)
    for model, kw in (("pcstock", {"cgroup_version": 1}), ("multi", {"swap": True})):
        for fn in (replay, replay_compiled):
            with pytest.raises(ValueError):
                fn(trace, model, **kw)
