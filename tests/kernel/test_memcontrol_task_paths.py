"""try_charge_memcg's branches that a replay never takes, reached through the port's API.

Each test holds one place where the port once differed from linux-mm 030321517fd4
mm/memcontrol.c: the ``force:`` label raises MEMCG_MAX on ``mem_over_limit`` with
the call's ``allow_spinning``; ``__memcg_memory_event`` is a do/while that always
counts its first memcg; an OOM victim whose mm has ``MMF_OOM_SKIP`` fails the
charge before any MEMCG_MAX event. The replay's task sets none of these states,
so the replay contract's outputs do not change (tests/test_replay_cli.py).
"""

from __future__ import annotations

import pytest

from memcglab.kernel.memcontrol import GFP_KERNEL, Gfp, MemcgCharge, MemcgEvent
from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import ENOMEM
from memcglab.models import build_model

MAX = MemcgEvent.MEMCG_MAX
MODELS = ["single", "multi", "pcstock", "pcstock-v4"]


def machine(model: str) -> tuple[MemcgCharge, Observer]:
    """One CPU; memcg 1 (max 10) under the root, memcg 2 (no limit) under memcg 1."""
    obs = Observer(log=[])
    m = build_model(model, nr_cpus=1, observer=obs)
    for memcg_id, parent, limit in ((1, 0, 10), (2, 1, None)):
        memcg = m.mem_cgroup_css_alloc(memcg_id, m.memcgs[parent], limit)
        m.mem_cgroup_css_online(memcg)
    obs.log.clear()
    return m, obs


def events(log: list[tuple]) -> list[tuple]:
    return [e for e in log if e[0] == "event"]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("gfp, spinning", [(GFP_KERNEL, True), (Gfp.HIGH, False)])
def test_force_raises_max_on_mem_over_limit_with_the_calls_allow_spinning(model, gfp,
                                                                          spinning):
    m, obs = machine(model)
    m.current.pf_memalloc = True
    assert m.try_charge(m.memcgs[2], gfp, 20, cpu=0) == 0
    # memcg 1 refused the charge: it is mem_over_limit, and it alone gets the event
    assert events(obs.log) == [("event", 1, "MEMCG_MAX", spinning)]
    assert m.memcgs[1].memory_events_local[MAX] == 1
    assert m.memcgs[2].memory_events_local[MAX] == 0
    # force: charged past the limit, to the memcg that asked
    assert obs.log[-1] == ("walk", 2, 20, "charge")
    assert m.memcgs[1].memory.usage == m.memcgs[2].memory.usage == 20


@pytest.mark.parametrize("model", MODELS)
def test_nofail_after_the_retries_forces_without_a_second_event_per_pass(model):
    m, obs = machine(model)
    m.current.oom_victim = m.current.mmf_oom_skip = True
    assert m.try_charge(m.memcgs[2], GFP_KERNEL | Gfp.NOFAIL, 20, cpu=0) == 0
    # nomem before any MEMCG_MAX: force raises the one event, on memcg 1
    assert events(obs.log) == [("event", 1, "MEMCG_MAX", True)]
    assert m.memcgs[2].memory.usage == 20


def test_memory_event_is_a_do_while_that_counts_its_first_memcg():
    m, obs = machine("multi")
    m.memcg_memory_event(m.root_mem_cgroup, MemcgEvent.MEMCG_OOM, True)
    assert m.root_mem_cgroup.memory_events[MemcgEvent.MEMCG_OOM] == 1
    assert m.root_mem_cgroup.memory_events_local[MemcgEvent.MEMCG_OOM] == 1
    m.memcg_memory_event(m.memcgs[2], MAX, False)
    # memcg 2 and memcg 1 count hierarchically; the root never does for a descendant
    assert [m.memcgs[i].memory_events[MAX] for i in (0, 1, 2)] == [0, 1, 1]
    assert [m.memcgs[i].memory_events_local[MAX] for i in (0, 1, 2)] == [0, 0, 1]


@pytest.mark.parametrize("model", MODELS)
def test_an_oom_victim_with_mmf_oom_skip_fails_before_any_max_event(model):
    m, obs = machine(model)
    m.current.oom_victim = m.current.mmf_oom_skip = True
    assert m.try_charge(m.memcgs[2], GFP_KERNEL, 20, cpu=0) == -ENOMEM
    assert events(obs.log) == []
    # one pass: the batch of 64, then exactly 20 (single and multi retry at the exact
    # size; both pcstock models try both sizes inside the page_counter call)
    assert [e[2] for e in obs.log if e[0] == "walk"] == [64, 20]


@pytest.mark.parametrize("model", MODELS)
def test_an_oom_victim_without_mmf_oom_skip_charges_on_as_usual(model):
    m, obs = machine(model)
    m.current.oom_victim = True
    assert m.try_charge(m.memcgs[2], GFP_KERNEL, 20, cpu=0) == -ENOMEM
    assert events(obs.log) == [("event", 1, "MEMCG_MAX", True)] * 18
