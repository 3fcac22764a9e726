"""mremap_pageout: the access stream of the swap-fail event and stat-update paths."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memcglab.layout.access import ACCESS_DTYPE
from memcglab.workloads.mremap import (
    EVENTS,
    EVENTS_LOCAL,
    FIELDS,
    SWAP_EVENTS_FILE,
    VMSTATS,
    VMSTATS_PERCPU,
    MremapPageoutSpec,
    mremap_pageout,
)
from memcglab.workloads.mremap_stats import READ_RANGE

SPEC = MremapPageoutSpec(cpus=16, duration=0.02)


def _count(stream, field: int, write: bool | None = None) -> int:
    a = stream.accesses
    mask = a["field"] == field
    if write is not None:
        mask &= a["write"] == write
    return int(mask.sum())


def test_deterministic_for_a_seed_and_different_across_seeds():
    a, b = mremap_pageout(SPEC), mremap_pageout(SPEC)
    assert a.accesses.tobytes() == b.accesses.tobytes() and a.field_names == b.field_names
    other = mremap_pageout(dataclasses.replace(SPEC, seed=5))
    assert a.accesses.tobytes() != other.accesses.tobytes()


def test_stream_uses_the_shared_access_format_and_field_names():
    s = mremap_pageout(SPEC)
    assert s.accesses.dtype == ACCESS_DTYPE and s.struct == "mem_cgroup"
    assert s.field_names == ("memory_events_local[8]", "memory_events[8]", "swap_events_file",
                             "vmstats_percpu", "vmstats") == FIELDS
    a = s.accesses
    assert (np.diff(a["time"]) >= 0).all()
    assert a["time"].min() >= 0 and a["time"].max() < s.duration == 0.02
    assert set(np.unique(a["size"]).tolist()) == {8}
    assert ((a["cpu"] >= 0) & (a["cpu"] < 16)).all()


def test_event_rate_is_the_parameter():
    # Seed 004's description: ~20e6 events per 60 s, i.e. 333,333 per second.
    for rate in (20e6 / 60, 1e5):
        s = mremap_pageout(dataclasses.replace(SPEC, swap_fail_rate=rate))
        expect = rate * 0.02
        assert abs(_count(s, EVENTS_LOCAL) - expect) < 5 * np.sqrt(expect)  # Poisson


def test_each_event_writes_the_local_counter_and_every_level_below_the_root():
    for ancestors in (0, 1, 3):
        s = mremap_pageout(dataclasses.replace(SPEC, ancestors=ancestors))
        events = _count(s, EVENTS_LOCAL, write=True)
        assert _count(s, EVENTS_LOCAL) == events  # only ever written
        assert _count(s, EVENTS, write=True) == events * (1 + ancestors)
        assert _count(s, SWAP_EVENTS_FILE, write=False) == events * (1 + ancestors)


def test_stat_updates_read_vmstats_percpu_of_the_cpus_memcg():
    spec = dataclasses.replace(SPEC, memcgs=4, stat_updates_per_event=5, flush_interval=1e9)
    s = mremap_pageout(spec)
    a = s.accesses
    stat = a[a["field"] == VMSTATS_PERCPU]
    assert not stat["write"].any()
    assert len(stat) == 5 * _count(s, EVENTS_LOCAL)
    assert (stat["instance"] == stat["cpu"] % 4).all()
    # Updates fall between a CPU's events, so they track the event rate on each CPU.
    local = a[a["field"] == EVENTS_LOCAL]
    assert np.array_equal(np.bincount(stat["cpu"], minlength=16),
                          5 * np.bincount(local["cpu"], minlength=16))


def test_the_default_read_rate_is_the_derived_one_and_fractions_average_out():
    # The default changed from 3 (a failed pageout's own updates) to the derivation over
    # the whole stressor loop (memcglab.workloads.mremap_stats), about 48 per event.
    assert MremapPageoutSpec().stat_updates_per_event == READ_RANGE.typical
    spec = dataclasses.replace(SPEC, stat_updates_per_event=2.25, flush_interval=1e9)
    s = mremap_pageout(spec)
    per_event = _count(s, VMSTATS_PERCPU) / _count(s, EVENTS_LOCAL)
    events = _count(s, EVENTS_LOCAL)
    assert abs(per_event - 2.25) < 5 * np.sqrt(0.25 * 0.75 / events)  # binomial extra load
    stat = s.accesses[s.accesses["field"] == VMSTATS_PERCPU]
    assert set(np.unique(stat["cpu"]).tolist()) == set(range(16))  # every CPU reads


def test_whole_rates_keep_the_random_stream_of_integer_rates():
    a = mremap_pageout(dataclasses.replace(SPEC, stat_updates_per_event=3))
    b = mremap_pageout(dataclasses.replace(SPEC, stat_updates_per_event=3.0))
    assert a.accesses.tobytes() == b.accesses.tobytes()


def test_notify_writes_at_most_once_per_window_per_memcg():
    spec = dataclasses.replace(SPEC, notify_interval=0.001)
    a = mremap_pageout(spec).accesses
    writes = a[(a["field"] == SWAP_EVENTS_FILE) & a["write"]]
    for instance in (0, 1):
        windows = np.floor(writes["time"][writes["instance"] == instance] / 0.001)
        assert len(windows) == len(np.unique(windows)) == 20  # events in every window


def test_flush_reads_vmstats_and_the_pointer_every_flush_interval():
    spec = dataclasses.replace(SPEC, flush_interval=0.005, memcgs=2, ancestors=1)
    a = mremap_pageout(spec).accesses
    flush = a[a["field"] == VMSTATS]
    assert len(flush) == 4 * 3  # 4 flushes in 20 ms, over 2 memcgs and 1 ancestor
    assert sorted(np.unique(flush["instance"]).tolist()) == [0, 1, 2]
    assert np.diff(np.unique(flush["time"])) == pytest.approx([0.005] * 3)


def test_events_follow_program_order_within_one_event():
    a = mremap_pageout(dataclasses.replace(SPEC, ancestors=2)).accesses
    t = a["time"][a["field"] == EVENTS_LOCAL][7]
    fields = a["field"][(a["time"] == t) & (a["field"] != VMSTATS_PERCPU)].tolist()
    notify = [f for f in fields if f == SWAP_EVENTS_FILE]
    assert fields[:2] == [EVENTS_LOCAL, EVENTS] and len(notify) >= 3
    assert fields.count(EVENTS) == 3


@pytest.mark.parametrize("changes, message", [
    ({"cpus": 0}, "cpus=0: must be an integer between 1 and 8192"),
    ({"swap_fail_rate": -1.0}, "swap_fail_rate=-1.0: must be a number in [0.0, "),
    ({"duration": 0.0}, "duration=0.0: must be a number in (0.0, 3600.0] (seconds)"),
    ({"duration": 60.0}, "duration=60.0: about 9.81e+08 accesses; must stay below 5e8"),
    ({"memcgs": 177}, "memcgs=177: must be an integer between 1 and 176 (at most the CPUs"),
    ({"stat_updates_per_event": -1}, "stat_updates_per_event=-1: must be a number in [0.0, "),
    ({"notify_interval": 0}, "notify_interval=0: must be a number in (0.0, 3600.0]"),
])
def test_invalid_parameters_name_the_field_and_what_is_valid(changes, message):
    with pytest.raises(ValueError) as info:
        MremapPageoutSpec(**changes)
    assert str(info.value).startswith(message)
