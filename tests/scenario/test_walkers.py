"""Read-only ancestor walks, counted by hand (memcglab.scenario.walkers)."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.scenario.walkers import (
    CHARGE_STREAMS,
    STAT_BATCH,
    THRESHOLD_EVENTS,
    UNCHARGE_STREAMS,
    _walks,
    walker_era,
)


def run(kind, arg, stat=True, threshold=True, cpu=None, measured_from=0):
    kind = np.asarray(kind, dtype=np.int8)
    n = len(kind)
    cpu = np.zeros(n, dtype=np.int64) if cpu is None else np.asarray(cpu, dtype=np.int64)
    return _walks(kind, cpu, np.zeros(n, dtype=np.int64), np.asarray(arg, dtype=np.int64),
                  measured_from, 1, int(cpu.max()) + 1, stat, threshold, STAT_BATCH,
                  THRESHOLD_EVENTS, float(CHARGE_STREAMS), float(UNCHARGE_STREAMS))


def test_66_one_page_faults_then_66_frees_on_one_cpu():
    # faults: the four state accumulators pass 32 at the 33rd and 66th page (4 walks
    # each), PGPGIN too (1 each); mem_cgroup_event_ratelimit fires at the first event
    # (target 0) and next at 129: 1 walk. 8 + 2 + 1 = 11
    assert run([1] * 66, [1] * 66, threshold=True).sum() == 11
    # the frees: the state goes -33 and -66 (8), PGPGOUT passes 32 twice (2), and the
    # events 67..132 cross 129 once (1)
    both = run([1] * 66 + [2] * 66, [1] * 132, measured_from=66)
    assert both.sum() == 11


def test_rstat_kernels_walk_only_for_sockets():
    assert run([1] * 100 + [2] * 100, [1] * 200, stat=False, threshold=False).sum() == 0
    assert run([3] * 7, [5] * 7, stat=False, threshold=False).sum() == 7  # one per call


def test_each_cpu_has_its_own_accumulators():
    # 40 pages on each of two CPUs: each state passes 32 once (4 + PGPGIN 1), no more
    out = run([1] * 80, [1] * 80, threshold=False, cpu=[0, 1] * 40)
    assert out.tolist() == [[5.0, 5.0]]


def test_a_batch_of_510_freed_pages_flushes_once_per_accumulator():
    assert run([2], [510], threshold=False).sum() == UNCHARGE_STREAMS + 1


@pytest.mark.parametrize(("layout", "kernel", "field", "stat"), [
    ("v5.11", "v6.15", "memory.parent", True),   # only kernels up to v5.11 have the layout
    ("v5.12", "v5.9", "memory.parent", True),
    ("v5.12", "v6.15", "css.parent", False),
    ("v6.1", "v6.16", "css.parent", False),
])
def test_which_kernel_walks_what(layout, kernel, field, stat):
    era = walker_era(layout, kernel)
    assert (era.parent_field, era.stat_walks, era.threshold_walks) == (field, stat, True)
    # memcg_check_events' thresholds are gone from the v6.18 era's cgroup v2 path
    assert not walker_era("v6.1", "multi-objcg").threshold_walks
