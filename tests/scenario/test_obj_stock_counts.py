"""A design's obj_stock runs that era beside the model in the scenario's counts."""

from __future__ import annotations

from memcglab.events import OBJ_ERA_EVENTS
from memcglab.scenario.counts import kernel_counts
from memcglab.scenario.spec import Design
from memcglab.workloads.catalogue import BenchmarkSpec, Machine

SPEC = BenchmarkSpec("hackbench", "socket", {"groups": 2}, Machine(8, 1, 2), operations=64)


def test_an_older_era_counts_its_own_events_per_operation():
    own = kernel_counts(SPEC, Design("multi"))
    v59 = kernel_counts(SPEC, Design("multi", obj_stock="v5.9"))
    assert not set(OBJ_ERA_EVENTS) & set(own.per_op)  # the model's own era counts none
    # v5.9 updates the slab stats once per object: one mod_objcg_state per obj charge and
    # per freed object, each a __mod_memcg_lruvec_state
    assert v59.per_op["mod_objcg_state"] > 0
    assert v59.per_op["memcg_stat_updates"] == v59.per_op["mod_objcg_state"]
    assert v59.per_op["obj_cgroup_charge"] == own.per_op["obj_cgroup_charge"]  # same trace


def test_naming_the_models_own_era_is_the_default_replay():
    own = kernel_counts(SPEC, Design("multi"))
    named = kernel_counts(SPEC, Design("multi", obj_stock="v6.16"))
    assert {k: named.per_op[k] for k in own.per_op} == own.per_op
