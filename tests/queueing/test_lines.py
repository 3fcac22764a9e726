"""Shared and private usage lines from the compiled engine's event counts."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.engine import replay_compiled
from memcglab.queueing.lines import line_counts, trace_parents
from memcglab.queueing.netperf import netperf_load
from memcglab.trace import parse_text
from memcglab.workloads import NetperfRxSpec, netperf_rx

# Root 0 <- 1 <- {2, 3}; 4 under the root alone. With batch 1 a stock never holds a
# spare page, so every charge walks; the CPUs alternate so shared lines move.
TRACE = """memcglab-trace 1
cpus 2
cgroup 1 0
cgroup 2 1
cgroup 3 1
cgroup 4 0
charge 0 2 1
charge 1 3 1
charge 0 2 1
charge 1 4 1
"""


def test_hand_worked_lines():
    """Single stock, batch 1: each 1-page charge walks and leaves nothing in the stock.

    Walks: 2 (cpu 0): 2,1,0; 3 (cpu 1): 3,1,0; 2 (cpu 0): 2,1,0; 4 (cpu 1): 4,0.
    Lines 0 and 1 are written by walks from several memcgs: shared (line 0 by 2, 3, 4;
    line 1 by 2 and 3). Lines 2, 3, 4 are private. Transfers (writer differs from the
    last one): line 0 at walks 2, 3, 4 = 3; line 1 at walks 2, 3 = 2; line 2: written
    twice, both by cpu 0 = 0. Four messages.
    """
    t = parse_text(TRACE)
    _, ev = replay_compiled(t, model="single", slots=1, seed=0, batch=1, events=True)
    assert trace_parents(t) == {1: 0, 2: 1, 3: 1, 4: 0}
    c = line_counts(ev, trace_parents(t))
    assert ev.per_memcg["walks"].tolist()[2:] == [2, 1, 1]   # the walks the docstring lists
    assert c.names == ("usage:0", "usage:1")
    assert c.shared.tolist() == [3 / 4, 2 / 4]
    assert c.private == 0.0
    assert c.messages == 4


def test_netperf_lines_conserve_transfers():
    t = netperf_rx(NetperfRxSpec(clients=6, messages=5000, seed=3))
    _, ev = replay_compiled(t, model="single", slots=7, seed=3, batch=64, events=True)
    c = line_counts(ev, trace_parents(t))
    assert c.names == ("usage:0", "usage:1")                 # root and the workload directory
    total = ev.per_memcg["usage_transfers"].sum()
    assert (c.shared.sum() + c.private) * c.messages == pytest.approx(total)


def test_missing_parent_is_named():
    t = parse_text(TRACE)
    _, ev = replay_compiled(t, model="single", slots=1, seed=0, batch=1, events=True)
    with pytest.raises(ValueError, match="memcg 2: no parent"):
        line_counts(ev, {1: 0, 3: 1, 4: 0})


def test_netperf_load_shapes():
    load = netperf_load([2, 5], "multi", messages=3000, seed=1)
    assert load.flows == (2, 5) and load.shared_names == ("usage:0", "usage:1")
    assert np.asarray(load.shared).shape == (2, 2)
    assert np.all(np.asarray(load.memcg_cycles) > 0)
    with pytest.raises(ValueError, match="model='nope'"):
        netperf_load([2], "nope")
