"""A new victim policy is one small class and one register_policy call."""

from __future__ import annotations

import pytest

from memcglab import registry
from memcglab.engine import replay_compiled
from memcglab.replay import replay
from memcglab.trace import parse_text
from tests.kernel.scenario import run_log


class FifoVictim:
    """First in, first out: evict the slot filled longest ago (a test-only policy)."""

    def __init__(self, slots: int, random=None) -> None:
        self.slots = slots
        self.filled: dict[int, list[tuple[int, object]]] = {}  # cpu -> (slot, memcg) fills

    def victim(self, stock) -> int:
        order = self.filled[stock.cpu]
        while True:  # skip fills whose slot was drained and refilled since
            slot, memcg = order.pop(0)
            if stock.cached[slot] is memcg:
                return slot

    def touch(self, stock, slot: int) -> None:
        order = self.filled.setdefault(stock.cpu, [])
        if (slot, stock.cached[slot]) not in order:
            order.append((slot, stock.cached[slot]))  # a fill; hits leave the order alone


@pytest.fixture
def fifo():
    registry.register_policy("fifo", FifoVictim)
    yield
    registry.unregister_policy("fifo")


BODY = ("cpus 1\ncgroup 1 0\ncgroup 2 0\ncgroup 3 0\ncgroup 4 0\n"
        "charge 0 1 1\ncharge 0 2 1\ncharge 0 1 1\ncharge 0 3 1\ncharge 0 4 1\n")


def test_fifo_evicts_in_fill_order_where_lru_would_not(fifo):
    log, out = run_log(BODY, slots=2, policy="fifo")
    # memcg 1 was filled first: FIFO evicts it although it was just used
    assert [e[3] for e in log if e[0] == "evict"] == [1, 2]
    lru, _ = run_log(BODY, slots=2, model="multi-lru")
    assert [e[3] for e in lru if e[0] == "evict"] == [2, 1]


def test_policy_errors_name_the_valid_choices():
    trace = parse_text("memcglab-trace 1\n" + BODY)
    with pytest.raises(ValueError, match="policy='clock': unknown; valid: random, rr, lru"):
        replay(trace, policy="clock")
    with pytest.raises(ValueError, match="only the multi\\* models"):
        replay(trace, model="single", policy="lru")


def test_a_registered_policy_name_reproduces_its_model():
    trace = parse_text("memcglab-trace 1\n" + BODY)
    assert replay(trace, slots=2, policy="rr") == replay(trace, model="multi-rr", slots=2) | {
        "model": "multi", "policy": "rr"}


def test_a_python_policy_is_refused_by_name_in_the_compiled_engine(fifo):
    trace = parse_text("memcglab-trace 1\n" + BODY)
    assert replay(trace, slots=2, policy="fifo")["policy"] == "fifo"
    with pytest.raises(ValueError) as info:
        replay_compiled(trace, slots=2, policy="fifo")
    assert str(info.value) == ("policy 'fifo' has no compiled implementation; the compiled "
                               "engine runs: random, rr, lru; use the faithful replay "
                               "(memcglab.replay.replay)")


def test_registering_a_name_twice_or_a_contract_name_is_refused(fifo):
    registry.register_policy("fifo", FifoVictim)  # the same entry again: nothing happens
    with pytest.raises(ValueError, match="'fifo' is already registered .*FifoVictim.*replace"):
        registry.register_policy("fifo", FifoVictim, compiled="random")
    with pytest.raises(ValueError, match="'lru' is one of the replay contract's"):
        registry.register_policy("lru", FifoVictim)
    with pytest.raises(ValueError, match="needs victim\\(stock\\) and touch"):
        registry.register_policy("clock", object)
    with pytest.raises(ValueError, match="model='pcstock' is not a registered model with a "
                                         "victim policy; valid: multi, multi-rr"):
        registry.register_policy("clock", FifoVictim, model="pcstock")
