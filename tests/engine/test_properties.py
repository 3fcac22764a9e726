"""Slow property tests: the engine and the faithful replayer, operation by operation.

A hypothesis state machine grows one valid trace and feeds every operation to both
a compiled :class:`~memcglab.engine.Engine` (one-row chunks) and the faithful
:class:`~memcglab.replay.Replayer`; after each step the contract objects must be
equal, and with ``--check`` the two must fail at the same operation with the same
message. Run with ``pytest -m slow tests/engine``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from memcglab.engine import Engine, replay_compiled
from memcglab.replay import InvariantViolation, Replayer, dumps, replay
from memcglab.trace import (
    MEMCG_ID_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    Trace,
)

from .tracegen import MODELS, random_trace, without_nested

pytestmark = pytest.mark.slow

NR = st.one_of(st.integers(1, 8), st.integers(1, 140), st.integers(1, 2**32 - 1))


class EngineMatchesFaithful(RuleBasedStateMachine):
    @initialize(model=st.sampled_from(MODELS), cpus=st.integers(1, 4),
                slots=st.sampled_from([1, 2, 3, 7, 16, 300]),
                seed=st.integers(0, 2**64 - 1), batch=st.sampled_from([1, 3, 8, 64, 127]))
    def start(self, model, cpus, slots, seed, batch):
        self.model, self.cpus = model, cpus
        self.engine = Engine(cpus, model, slots, seed, batch, check=True)
        self.faithful = Replayer(cpus, model, slots, seed, batch, check=True)
        self.online, self.parent, self.broken = {0}, {0: -1}, False

    def _step(self, op, cpu=-1, memcg=0, parent=-1, arg=0, nested=False):
        if self.model == "single":
            nested = False
        row = np.array([(op, nested, cpu, memcg, parent, arg, 0, False, 0)],
                       dtype=OP_DTYPE)
        got = want = None
        try:
            self.faithful.run(Trace(self.cpus, row))
        except InvariantViolation as exc:
            want = exc.message
        try:
            self.engine.feed(row)
        except InvariantViolation as exc:
            got = exc.message.replace(f"operation {self.engine.replayed + 1} ", "operation 1 ")
        assert got == want
        self.broken = want is not None

    def _live(self, data, root=False):
        choices = sorted(m for m in self.online if root or m)
        return data.draw(st.sampled_from(choices)) if choices else None

    @precondition(lambda self: not self.broken)
    @rule(data=st.data(), memcg=st.one_of(st.integers(1, 40), st.just(MEMCG_ID_MAX)),
          limit=st.one_of(st.just(PAGE_COUNTER_MAX), st.integers(1, 300)))
    def cgroup(self, data, memcg, limit):
        if memcg in self.parent:
            return
        parent = self._live(data, root=True)
        self._step(OP_CGROUP, memcg=memcg, parent=parent, arg=limit)
        self.online.add(memcg)
        self.parent[memcg] = parent

    @precondition(lambda self: not self.broken and len(self.online) > 1)
    @rule(data=st.data(), nr=NR, nested=st.booleans())
    def charge(self, data, nr, nested):
        cpu = data.draw(st.integers(0, self.cpus - 1))
        self._step(OP_CHARGE, cpu, self._live(data), arg=nr, nested=nested)

    @precondition(lambda self: not self.broken)
    @rule(data=st.data(), nr=NR, nested=st.booleans(), direct=st.booleans())
    def uncharge(self, data, nr, nested, direct):
        cpu = data.draw(st.integers(0, self.cpus - 1))
        op = OP_UNCHARGE_DIRECT if direct else OP_UNCHARGE
        self._step(op, cpu, self._live(data, root=True), arg=nr, nested=nested)

    @precondition(lambda self: not self.broken)
    @rule(data=st.data(), nested=st.booleans())
    def drain_all(self, data, nested):
        cpu = data.draw(st.integers(0, self.cpus - 1))
        self._step(OP_DRAIN_ALL, cpu, self._live(data, root=True), nested=nested)

    @precondition(lambda self: not self.broken)
    @rule(data=st.data())
    def cpu_dead(self, data):
        self._step(OP_CPU_DEAD, data.draw(st.integers(0, self.cpus - 1)))

    @precondition(lambda self: not self.broken and len(self.online) > 1)
    @rule(data=st.data(), pages=st.integers(1, 400))
    def set_max(self, data, pages):
        self._step(OP_SET_MAX, memcg=self._live(data), arg=pages)

    @precondition(lambda self: not self.broken and len(self.online) > 1)
    @rule(data=st.data())
    def offline(self, data):
        leaves = sorted(m for m in self.online
                        if m and not any(self.parent[c] == m for c in self.online))
        if leaves:
            memcg = data.draw(st.sampled_from(leaves))
            self._step(OP_OFFLINE, memcg=memcg)
            self.online.discard(memcg)

    @precondition(lambda self: self.broken)
    @rule()
    def stop_after_the_violation(self):
        pass  # both replays refused the same operation; nothing more to compare

    @invariant()
    def same_state(self):
        if hasattr(self, "engine") and not self.broken:
            assert dumps(self.engine.result()) == dumps(self.faithful.result())


TestEngineMatchesFaithful = EngineMatchesFaithful.TestCase
TestEngineMatchesFaithful.settings = settings(max_examples=300, stateful_step_count=60,
                                              deadline=None)


# 300 traces of 400 operations (CI's 15 minutes hold 6 blocks; the differential tests
# of tests/engine replay many more, shorter ones)
@pytest.mark.parametrize("block", range(6))
def test_longer_random_traces(block):
    for number in range(10_000 + 50 * block, 10_000 + 50 * (block + 1)):
        trace = random_trace(number, n_ops=400, batch=(64, 8, 127)[number % 3])
        batch = int((64, 8, 127)[number % 3])
        for model in MODELS:
            t = without_nested(trace) if model == "single" else trace
            for slots in (3, 7):
                assert dumps(replay_compiled(t, model, slots, number, batch)) == \
                    dumps(replay(t, model, slots, number, batch)), (number, model, slots)
