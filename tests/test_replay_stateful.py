"""Hypothesis state machines: every operation, every model, conservation after each step.

CI runs up to ``STEPS_PER_MODEL`` = 2,500 operations per model (about 15,000 over
the six models; ``-s`` prints the count). To hammer the models locally with a
million operations, set ``MEMCGLAB_STATEFUL_SCALE``, which multiplies the number of
generated examples:

    MEMCGLAB_STATEFUL_SCALE=80 pytest tests/test_replay_stateful.py -s

``multi-fix2`` is excluded on purpose: it leaks pages (tests/kernel/test_eras.py).
The machines make object charges and frees too (docs/trace-extensions.md), with
``irq`` and ``nested``, on three CPUs in three NUMA nodes (per-node objcgs in the
2026 eras); the invariant then covers the bytes of every objcg (kernel notes §11.11).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memcglab.replay import Replayer, conservation_violation
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
)

SCALE = int(os.environ.get("MEMCGLAB_STATEFUL_SCALE", "1"))
STEPS = 50
EXAMPLES = 50 * SCALE
STEPS_PER_MODEL = STEPS * EXAMPLES
CPUS = 3
executed = {"ops": 0}


class ChargePath(RuleBasedStateMachine):
    model = "multi"
    slots = 3
    refill = "always"

    def __init__(self) -> None:
        super().__init__()
        self.r = Replayer(CPUS, self.model, self.slots, seed=7, batch=16, nodes=CPUS,
                          refill=self.refill)
        self.online: list[int] = []
        self.children: dict[int, set[int]] = {0: set()}
        self.parent: dict[int, int] = {}
        self.next_id = 1

    def _op(self, op, cpu=-1, memcg=0, parent=-1, arg=0, nested=False, irq=False):
        executed["ops"] += 1
        self.r.machine.in_task = not irq
        if nested and cpu >= 0:
            self.r._nested(op, cpu, memcg, parent, arg)
        else:
            self.r.step(op, cpu, memcg, parent, arg)
        self.r.machine.in_task = True

    memcgs = property(lambda self: self.online)

    @rule(parent_pick=st.integers(0, 10), limit=st.one_of(st.none(), st.integers(1, 200)))
    def create(self, parent_pick, limit):
        parents = [0] + self.online
        parent = parents[parent_pick % len(parents)]
        memcg = self.next_id
        self.next_id += 1
        self._op(OP_CGROUP, memcg=memcg, parent=parent,
                 arg=limit if limit is not None else (2**63 - 1) // 4096)
        self.online.append(memcg)
        self.children[memcg] = set()
        self.children[parent].add(memcg)
        self.parent[memcg] = parent

    @precondition(lambda self: self.online)
    @rule(pick=st.integers(0, 99), cpu=st.integers(0, CPUS - 1), nr=st.integers(1, 40),
          kind=st.sampled_from([OP_CHARGE, OP_CHARGE, OP_UNCHARGE, OP_UNCHARGE_DIRECT]),
          nested=st.booleans())
    def pages(self, pick, cpu, nr, kind, nested):
        memcg = self.online[pick % len(self.online)]
        self._op(kind, cpu, memcg, arg=nr, nested=nested and self.model != "single")

    @precondition(lambda self: self.online)
    @rule(pick=st.integers(0, 99), cpu=st.integers(0, CPUS - 1),
          nbytes=st.one_of(st.integers(1, 600), st.integers(3000, 9000),
                           st.integers(60000, 70000)),
          kind=st.sampled_from([OP_OBJ_CHARGE, OP_OBJ_CHARGE, OP_OBJ_UNCHARGE]),
          nested=st.booleans(), irq=st.booleans())
    def objects(self, pick, cpu, nbytes, kind, nested, irq):
        memcg = self.online[pick % len(self.online)]
        self._op(kind, cpu, memcg, arg=nbytes, nested=nested and self.model != "single",
                 irq=irq)

    @rule(pick=st.integers(0, 99), cpu=st.integers(0, CPUS - 1))
    def drain_all(self, pick, cpu):
        targets = [0] + self.online
        self._op(OP_DRAIN_ALL, cpu, targets[pick % len(targets)])

    @rule(cpu=st.integers(0, CPUS - 1))
    def cpu_dead(self, cpu):
        self._op(OP_CPU_DEAD, cpu)

    @precondition(lambda self: self.online)
    @rule(pick=st.integers(0, 99), pages=st.integers(1, 300))
    def set_max(self, pick, pages):
        self._op(OP_SET_MAX, memcg=self.online[pick % len(self.online)], arg=pages)

    @precondition(lambda self: any(not self.children[m] for m in self.online))
    @rule(pick=st.integers(0, 99))
    def offline(self, pick):
        leaves = [m for m in self.online if not self.children[m]]
        memcg = leaves[pick % len(leaves)]
        self._op(OP_OFFLINE, memcg=memcg)
        self.online.remove(memcg)
        self.children[self.parent[memcg]].discard(memcg)

    @invariant()
    def conserved(self):
        problem = conservation_violation(self.r.machine, self.r.held)
        assert problem is None, problem
        assert self.r.observer.warnings == 0


def machine_for(model: str, slots: int = 3, refill: str = "always"):
    return type(f"ChargePath_{model}", (ChargePath,),
                {"model": model, "slots": slots, "refill": refill})


@pytest.mark.parametrize("model", ["single", "multi", "multi-rr", "multi-lru", "pcstock",
                                   "pcstock-v4"])
def test_conservation_holds_for_every_operation(model):
    before = executed["ops"]
    test_case = machine_for(model).TestCase
    test_case.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS,
                                  deadline=None, derandomize=True)
    test_case("runTest").runTest()
    assert executed["ops"] - before >= STEPS_PER_MODEL // 2  # most runs reach full length


@pytest.mark.parametrize(("model", "refill"), [("multi", "not-in-irq"), ("single", "never"),
                                               ("pcstock-v4", "not-in-irq")])
def test_conservation_holds_with_refill_variants(model, refill):
    test_case = machine_for(model, refill=refill).TestCase
    test_case.settings = settings(max_examples=max(EXAMPLES // 5, 5), stateful_step_count=STEPS,
                                  deadline=None, derandomize=True)
    test_case("runTest").runTest()


def test_report_operation_count(capsys):
    """Runs last in this module: says how many operations the machines executed."""
    with capsys.disabled():
        print(f"\nstateful replay operations executed: {executed['ops']}")
