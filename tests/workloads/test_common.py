"""The generators' building blocks: checks, hierarchy, delays, timelines, statistics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import parse_text
from memcglab.workloads.common import (
    Streams,
    Timeline,
    bounded_delay,
    check_choice,
    check_float,
    check_int,
    hierarchy,
    other_cpu,
    rng_for,
)
from memcglab.workloads.describe import (
    held_range,
    memcgs_per_cpu,
    pages_by_memcg,
    remote_release_fraction,
    switch_fraction,
)


def test_checks_name_the_field_the_value_and_what_is_valid():
    with pytest.raises(ValueError, match=r"^x=7: must be an integer between 1 and 5 \(why\)$"):
        check_int("x", 7, 1, 5, "why")
    with pytest.raises(ValueError, match=r"^x='7': must be an integer"):
        check_int("x", "7", 1, 9)
    with pytest.raises(ValueError, match=r"^r=inf: must be a number in \[0, 1\]$"):
        check_float("r", float("inf"), 0, 1)
    with pytest.raises(ValueError, match=r"^r=0: must be a number in \(0, 1\]$"):
        check_float("r", 0, 0, 1, low_open=True)
    with pytest.raises(ValueError, match=r"^m='b': must be one of a, c$"):
        check_choice("m", "b", ("a", "c"))
    check_int("x", np.int64(3), 1, 5)
    check_float("r", 1, 0, 1)


def test_rng_streams_differ_by_workload_and_seed():
    draw = [rng_for(w, s).integers(0, 2**62) for w in ("a", "b") for s in (0, 1)]
    assert len(set(draw)) == 4
    assert rng_for("a", 0).integers(0, 2**62) == draw[0]


def test_hierarchy_without_ancestors_puts_tenants_under_the_root():
    ops, tenants = hierarchy(3, 0)
    assert ops["memcg"].tolist() == tenants.tolist() == [1, 2, 3]
    assert ops["parent"].tolist() == [0, 0, 0]


@given(n=st.integers(1, 2000), mean=st.integers(1, 50), seed=st.integers(0, 99))
def test_bounded_delay_stays_in_range(n, mean, seed):
    d = bounded_delay(np.random.default_rng(seed), n, mean)
    assert d.min() >= 1 and d.max() <= 2 * mean - 1


def test_bounded_delay_has_the_given_mean():
    assert bounded_delay(np.random.default_rng(1), 100_000, 9).mean() == pytest.approx(9, rel=0.01)


def test_other_cpu_is_never_the_same_and_covers_the_rest():
    cpu = np.zeros(10_000, dtype=np.int64)
    moved = other_cpu(np.random.default_rng(0), cpu, 5)
    assert sorted(np.unique(moved).tolist()) == [1, 2, 3, 4]


def test_timeline_without_migrations_keeps_every_task_where_it_started():
    tl = Timeline.draw(np.random.default_rng(0), np.array([4, 0, 2]), 1000, 0.0, 8)
    steps = np.arange(1000)
    for task, cpu in enumerate([4, 0, 2]):
        assert (tl.at(np.full(1000, task), steps) == cpu).all()
    assert tl.migrations == 0


def test_timeline_migrates_at_the_given_rate_to_other_cpus():
    tasks, steps, rate = 50, 4000, 0.01
    tl = Timeline.draw(np.random.default_rng(3), np.zeros(tasks, dtype=np.int64), steps,
                       rate, 16)
    expect = tasks * (steps - 1) * rate
    assert abs(tl.migrations - expect) < 5 * np.sqrt(expect)
    task = np.repeat(np.arange(tasks), steps)
    cpu = tl.at(task, np.tile(np.arange(steps), tasks)).reshape(tasks, steps)
    changes = (np.diff(cpu, axis=1) != 0).sum()
    assert changes == tl.migrations  # every migration lands on another CPU
    assert (cpu[:, 0] == 0).all() and cpu.min() >= 0 and cpu.max() < 16


@settings(max_examples=30)
@given(starts=st.lists(st.integers(0, 6), min_size=1, max_size=8), steps=st.integers(1, 60),
       rate=st.floats(0, 1), seed=st.integers(0, 999))
def test_timeline_placements_are_valid_cpus(starts, steps, rate, seed):
    tl = Timeline.draw(np.random.default_rng(seed), np.array(starts), steps, rate, 7)
    task = np.repeat(np.arange(len(starts)), steps)
    cpu = tl.at(task, np.tile(np.arange(steps), len(starts))).reshape(len(starts), steps)
    assert cpu[:, 0].tolist() == starts
    assert ((cpu >= 0) & (cpu < 7)).all()
    assert ((np.diff(cpu, axis=1) != 0).sum()) == tl.migrations


TRACE = parse_text("""memcglab-trace 1
cpus 3
cgroup 1 0
cgroup 2 0
charge 0 1 4
charge 0 2 1
charge 1 1 2
uncharge 2 1 3
uncharge_direct 1 1 3
uncharge 2 2 1
charge 0 1 1
""")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=60), st.integers(0, 5))
def test_streams_step_finds_each_operation_and_counts_on_past_the_end(group, beyond):
    g = np.array(group, dtype=np.int64)
    s = Streams.of(g, 5)
    rank = s.rank()
    # The j-th operation of a stream is where rank says; past the end, m + j - count.
    assert s.step(g, rank).tolist() == list(range(len(g)))
    live = np.flatnonzero(s.counts)
    j = s.counts[live] + beyond
    assert s.step(live, j).tolist() == (len(g) + beyond + np.zeros(len(live), int)).tolist()
    assert all(sorted(rank[g == k].tolist()) == list(range(s.counts[k])) for k in range(5))


def test_statistics_of_a_hand_worked_trace():
    assert pages_by_memcg(TRACE) == {1: (7, 6), 2: (1, 1)}
    assert held_range(TRACE) == {1: (0, 6), 2: (0, 1)}
    # Releases after memcg 1's charge on CPU 1: on 2 (remote) and 1 (local); memcg 2's on
    # CPU 2 after a charge on 0 (remote).
    assert remote_release_fraction(TRACE) == pytest.approx(2 / 3)
    assert memcgs_per_cpu(TRACE).tolist() == [2, 1, 0]
    assert switch_fraction(TRACE) == pytest.approx(2 / 2)  # CPU 0: 1 -> 2 -> 1


def test_held_range_sees_a_release_before_its_charge():
    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\nuncharge 0 1 2\ncharge 0 1 2\n")
    assert held_range(t) == {1: (-2, 0)}
