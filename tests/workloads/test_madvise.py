"""madvise_fault: contract, per-iteration conservation, batching and placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE, OP_UNCHARGE_DIRECT, Trace
from memcglab.workloads.describe import remote_release_fraction
from memcglab.workloads.madvise import PLACEMENTS, MadviseFaultSpec, madvise_fault, trial_bounds
from tests.workloads.checks import assert_conserved, assert_contract, same_ops

SMALL = MadviseFaultSpec(cpus=8, cgroups=4, region_pages=40, iterations=3, trials=2)


def _trial(trace: Trace, spec: MadviseFaultSpec, t: int) -> np.ndarray:
    bounds = trial_bounds(spec)
    return trace.ops[bounds[t]:bounds[t + 1]]


def test_deterministic_for_a_seed_and_different_across_seeds():
    assert same_ops(madvise_fault(SMALL), madvise_fault(SMALL))
    other = MadviseFaultSpec(cpus=8, cgroups=4, region_pages=40, iterations=3, trials=2, seed=9)
    assert not same_ops(madvise_fault(SMALL), madvise_fault(other))


def test_seed_003_defaults_have_the_described_shape():
    spec = MadviseFaultSpec(iterations=2, trials=2)  # the defaults, shortened
    trace = madvise_fault(spec)
    assert_contract(trace)
    assert trace.cpus == 40
    body = trace.ops[trace.ops["op"] != 0]
    charges, releases = body[body["op"] == OP_CHARGE], body[body["op"] != OP_CHARGE]
    assert len(charges) == 32 * 2 * 2 * 256 and set(charges["arg"].tolist()) == {1}
    assert set(releases["op"].tolist()) == {OP_UNCHARGE_DIRECT}
    # 256 pages free as 8 folio batches of 31 and one of 8, per iteration and task.
    assert np.bincount(releases["arg"].astype(np.int64)).nonzero()[0].tolist() == [8, 31]
    assert (releases["arg"] == 31).sum() == 8 * (releases["arg"] == 8).sum()


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
def test_every_trial_releases_what_it_faulted(placement):
    spec = MadviseFaultSpec(cpus=8, cgroups=5, tasks_per_cgroup=2, region_pages=70,
                            iterations=4, trials=3, placement=placement, migration_rate=0.01)
    trace = madvise_fault(spec)
    assert_contract(trace)
    assert_conserved(trace, most=2 * 70)
    bounds = trial_bounds(spec)
    assert bounds[-1] == len(trace.ops)
    for t in range(spec.trials):
        ops = _trial(trace, spec, t)
        for memcg in np.unique(ops["memcg"]):
            mine = ops[ops["memcg"] == memcg]
            charged = mine["arg"][mine["op"] == OP_CHARGE].sum()
            assert charged == mine["arg"][mine["op"] == OP_UNCHARGE_DIRECT].sum() == 2 * 4 * 70


def test_pinned_tasks_never_leave_their_cpu():
    spec = MadviseFaultSpec(cpus=3, cgroups=5, region_pages=10, iterations=2, trials=3,
                            placement="pinned")
    ops = madvise_fault(spec).ops[trial_bounds(spec)[0]:]
    for memcg in range(2, 7):  # task i (memcg i + 2) on CPU i mod 3
        assert set(ops["cpu"][ops["memcg"] == memcg].tolist()) == {(memcg - 2) % 3}


def test_spread_tasks_have_distinct_cpus_fixed_within_a_trial():
    spec = MadviseFaultSpec(cpus=40, cgroups=32, region_pages=5, iterations=2, trials=4)
    trace = madvise_fault(spec)
    per_trial = []
    for t in range(spec.trials):
        ops = _trial(trace, spec, t)
        cpus = [set(ops["cpu"][ops["memcg"] == m].tolist()) for m in range(2, 34)]
        assert all(len(c) == 1 for c in cpus)
        assert len(set().union(*cpus)) == 32
        per_trial.append([c.pop() for c in cpus])
    assert per_trial[0] != per_trial[1]  # a fresh placement each trial
    assert remote_release_fraction(trace) == 0.0


def test_migration_rate_moves_releases_to_other_cpus():
    def remote(rate: float) -> float:
        spec = MadviseFaultSpec(cpus=40, cgroups=4, region_pages=64, iterations=10, trials=2,
                                placement="migrating", migration_rate=rate)
        return remote_release_fraction(madvise_fault(spec))

    assert remote(0.0) == 0.0
    assert 0.0 < remote(0.01) < remote(0.1)


def test_tasks_run_concurrently_one_operation_each_in_turn():
    spec = MadviseFaultSpec(cpus=8, cgroups=3, region_pages=4, iterations=1, trials=1)
    ops = madvise_fault(spec).ops[trial_bounds(spec)[0]:]
    turns = ops["memcg"].reshape(-1, 3)  # 5 operations per task, 3 tasks
    assert all(sorted(row.tolist()) == [2, 3, 4] for row in turns)
    assert ops["op"].reshape(-1, 3)[:, 0].tolist() == [OP_CHARGE] * 4 + [OP_UNCHARGE_DIRECT]


@settings(max_examples=20, deadline=None)
@given(cpus=st.integers(1, 12), cgroups=st.integers(1, 6), tpc=st.integers(1, 3),
       pages=st.integers(1, 80), batch=st.integers(1, 40), iterations=st.integers(1, 3),
       trials=st.integers(1, 3), placement=st.sampled_from(sorted(PLACEMENTS)),
       rate=st.floats(0, 1), seed=st.integers(0, 2**32))
def test_any_spec_gives_a_valid_conserving_trace(cpus, cgroups, tpc, pages, batch, iterations,
                                                  trials, placement, rate, seed):
    spec = MadviseFaultSpec(cpus=cpus, cgroups=cgroups, tasks_per_cgroup=tpc,
                            region_pages=pages, uncharge_batch=batch, iterations=iterations,
                            trials=trials, placement=placement, migration_rate=rate, seed=seed)
    trace = madvise_fault(spec)
    assert_contract(trace)
    assert_conserved(trace, most=tpc * pages)
    releases = trace.ops[trace.ops["op"] == OP_UNCHARGE_DIRECT]
    assert releases["arg"].max() <= batch


@pytest.mark.parametrize("field, value, message", [
    ("cgroups", 0, "cgroups=0: must be an integer between 1 and 65534"),
    ("cpus", 0, "cpus=0: must be an integer between 1 and 8192"),
    ("region_pages", 0, "region_pages=0: must be an integer between 1 and"),
    ("uncharge_batch", 0, "uncharge_batch=0: must be an integer between 1 and 4294967295"),
    ("placement", "pinnned", "placement='pinnned': must be one of pinned, spread, migrating"),
    ("migration_rate", -0.1, "migration_rate=-0.1: must be a number in [0.0, 1.0]"),
    ("trials", True, "trials=True: must be an integer"),
])
def test_invalid_parameters_name_the_field_and_what_is_valid(field, value, message):
    with pytest.raises(ValueError) as info:
        MadviseFaultSpec(**{field: value})
    assert str(info.value).startswith(message)
