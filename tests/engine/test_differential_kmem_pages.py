"""Differential test of the trace's ``kmem`` word: compiled against faithful.

Random traces of the cgroup v1 test (``random_v1_trace``) have the kmem field added at
random: ``charge`` and ``uncharge`` rows take the bare word (all NR pages) or not,
``uncharge_direct`` rows take ``kmem=K`` with K from 0 to NR, so flagged and unflagged
pages mix and some uncharges ask for more kmem pages than are held (clipped into
``short_uncharges``). Every model that runs on v1, the model's own obj-stock era and
every older one (v5.x forms of the charge), v1 with and without swap, ``--check``: byte
for byte and the same ``counts``. On v2 the word changes nothing, in either engine.
A hypothesis test draws small traces of kmem page operations directly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcglab.engine import replay_compiled
from memcglab.replay import InvariantViolation, dumps, replay
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    Trace,
    make_ops,
    parse_text,
    to_text,
)

from .tracegen import OBJ_STOCK_ERAS, V1_MODELS, random_v1_trace, without_nested

TRACES = 24


def with_kmem(trace: Trace, seed: int) -> Trace:
    """``trace`` with the kmem field set at random on its page (un)charges."""
    rng = np.random.default_rng(seed)
    ops = trace.ops.copy()
    for i in range(len(ops)):
        op, nr = int(ops[i]["op"]), int(ops[i]["arg"])
        if op in (OP_CHARGE, OP_UNCHARGE) and rng.random() < 0.5:
            ops[i]["kmem"] = nr
        elif op == OP_UNCHARGE_DIRECT and rng.random() < 0.6:
            ops[i]["kmem"] = int(rng.integers(0, nr + 1))
    return Trace(trace.cpus, ops, trace.source + " kmem", trace.nodes)


def with_directs(trace: Trace, seed: int) -> Trace:
    """Turn some of the uncharges into direct ones (random_v1_trace has few)."""
    rng = np.random.default_rng(seed + 1)
    ops = trace.ops.copy()
    turn = (ops["op"] == OP_UNCHARGE) & (rng.random(len(ops)) < 0.3)
    ops["op"][turn] = OP_UNCHARGE_DIRECT
    return Trace(trace.cpus, ops, trace.source, trace.nodes)


def _outcome(fn, *args, **kwargs):
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))
    except ValueError as exc:  # an option the model refuses: both must refuse
        return ("refused", type(exc).__name__)


def _compare(trace, model, slots, seed, swap, obj_stock):
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
def test_compiled_matches_faithful_with_kmem_pages(block):
    bad, walks = [], 0
    for number in range(block, TRACES, 4):
        trace = with_kmem(with_directs(random_v1_trace(number), number), number)
        for model in V1_MODELS:
            t = without_nested(trace) if model == "single" else trace
            for swap in (False, True):
                for slots in (1, 7):
                    problem = _compare(t, model, slots, number, swap, None)
                    if problem is not None:
                        bad.append(problem)
        walks += replay(trace, cgroup_version=1)["v1_counters"]["kmem_walks"]
    assert not bad, bad[:3]
    assert walks


@pytest.mark.parametrize("era", ("v6.16", "multi-objcg", *OBJ_STOCK_ERAS))
def test_compiled_matches_faithful_with_kmem_pages_per_era(era):
    bad = []
    for number in range(8):
        trace = with_kmem(with_directs(random_v1_trace(number), number), 100 + number)
        for model in ("multi", "multi-rr"):
            for swap in (False, True):
                problem = _compare(trace, model, 7, number, swap, era)
                if problem is not None:
                    bad.append(problem)
    assert not bad, bad[:3]


def _strip(trace: Trace) -> Trace:
    ops = trace.ops.copy()
    ops["kmem"] = 0
    return Trace(trace.cpus, ops, trace.source, trace.nodes)


@pytest.mark.parametrize("number", range(6))
def test_v2_is_byte_identical_with_the_word(number):
    trace = with_kmem(with_directs(random_v1_trace(number), number), number)
    plain = _strip(trace)
    for model in ("single", "multi", "multi-rr", "pcstock", "pcstock-v4"):
        t, p = ((without_nested(trace), without_nested(plain)) if model == "single"
                else (trace, plain))
        for fn in (replay, replay_compiled):
            assert _outcome(fn, t, model, check=True) == _outcome(fn, p, model, check=True)
    # and the text round trip keeps the word
    back = parse_text(to_text(trace)).ops
    assert back["kmem"].tolist() == trace.ops["kmem"].tolist()


_PAGE_OP = st.tuples(st.sampled_from((OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT)),
                     st.integers(0, 1), st.sampled_from((0, 1, 2)), st.integers(1, 70),
                     st.floats(0, 1), st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PAGE_OP, min_size=1, max_size=40),
       st.sampled_from((None, "v5.9", "v5.14", "memcg-caches", "v6.16")), st.booleans())
def test_hypothesis_kmem_page_traces(rows, era, swap):
    head = [(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0), (OP_CGROUP, -1, 2, PAGE_COUNTER_MAX, 1)]
    body, kmem = [], [0, 0]
    for op, cpu, memcg, nr, frac, flag in rows:
        if op == OP_CHARGE and memcg == 0:
            memcg = 2
        body.append((op, cpu, memcg, nr))
        kmem.append(int(frac * nr) if op == OP_UNCHARGE_DIRECT else nr if flag else 0)
    trace = Trace(2, make_ops(head + body, kmem=kmem))
    assert _compare(trace, "multi", 7, 0, swap, era) is None
    assert _outcome(replay, trace, obj_stock=era, check=True) == \
        _outcome(replay, _strip(trace), obj_stock=era, check=True)
