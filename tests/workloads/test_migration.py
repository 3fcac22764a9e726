"""Migration workloads and the AF_UNIX trace: shape, conservation, validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE
from memcglab.workloads.describe import memcgs_per_cpu, remote_release_fraction
from memcglab.workloads.migration import (
    ManyCgroupsSpec,
    NetperfMigratingSpec,
    SchedMigrationSpec,
    many_cgroups,
    netperf_migrating,
    sched_migration,
)
from memcglab.workloads.netperf import NetperfRxSpec, netperf_rx
from memcglab.workloads.unix_stream import UnixStreamSpec, unix_stream
from tests.workloads.checks import assert_conserved, assert_contract, same_ops


def test_netperf_migrating_is_netperf_rx_at_its_rate():
    spec = NetperfMigratingSpec(cpus=8, clients=4, messages=500, migration_rate=0.3)
    expect = netperf_rx(NetperfRxSpec(cpus=8, clients=4, messages=500, migration_rate=0.3))
    assert same_ops(netperf_migrating(spec), expect)


def test_migration_rate_moves_releases_off_the_charging_cpu():
    def remote(rate: float) -> float:
        spec = SchedMigrationSpec(cpus=16, cgroups=16, operations=8000, migration_rate=rate)
        return remote_release_fraction(sched_migration(spec))

    assert remote(0.0) == 0.0
    assert 0.0 < remote(0.01) < remote(0.2)


def test_many_cgroups_puts_far_more_than_seven_memcgs_on_each_cpu():
    trace = many_cgroups(ManyCgroupsSpec(cpus=4, operations=6000, migration_rate=0.0))
    assert memcgs_per_cpu(trace).tolist() == [32] * 4


@settings(max_examples=20, deadline=None)
@given(cpus=st.integers(1, 12), cgroups=st.integers(1, 30), operations=st.integers(1, 500),
       rate=st.floats(0, 1), max_pages=st.integers(1, 9), hold=st.integers(1, 6),
       seed=st.integers(0, 2**64 - 1))
def test_any_sched_spec_gives_a_valid_conserving_trace(cpus, cgroups, operations, rate,
                                                       max_pages, hold, seed):
    spec = SchedMigrationSpec(cpus=cpus, cgroups=cgroups, operations=operations,
                              migration_rate=rate, max_pages=max_pages, hold=hold, seed=seed)
    trace = sched_migration(spec)
    assert_contract(trace)
    assert_conserved(trace, most=(2 * hold - 1) * max_pages)


def test_deterministic_for_a_seed():
    spec = SchedMigrationSpec(cpus=8, cgroups=12, operations=600)
    assert same_ops(sched_migration(spec), sched_migration(spec))
    other = SchedMigrationSpec(cpus=8, cgroups=12, operations=600, seed=3)
    assert not same_ops(sched_migration(spec), sched_migration(other))


def test_unix_stream_charges_every_write_to_the_writer():
    # bw_unix's writer is task 2i+1 of pair i: CPUs 1, 3, 5, 7, 1; a 64 KiB write
    # charges frag pages of 8, 4, 2 and 1 pages (alloc_skb_with_frags)
    trace = unix_stream(UnixStreamSpec(cpus=8, pairs=5, messages=100))
    assert_contract(trace)
    ops = trace.ops[trace.ops["op"] == OP_CHARGE]
    assert len(ops) == 4 * 5 * (100 // 5) and set(ops["arg"].tolist()) == {8, 4, 2, 1}
    assert set(ops["cpu"].tolist()) == {1, 3, 5, 7}


@pytest.mark.parametrize("make, field, value, message", [
    (SchedMigrationSpec, "migration_rate", 2.0, "migration_rate=2.0: must be a number in"),
    (SchedMigrationSpec, "cgroups", 0, "cgroups=0: must be an integer between 1 and"),
    (SchedMigrationSpec, "hold", 0, "hold=0: must be an integer between 1 and"),
    (ManyCgroupsSpec, "cgroups_per_cpu", 0, "cgroups_per_cpu=0: must be an integer between 1"),
    (NetperfMigratingSpec, "release", "ack", "release='ack': must be one of task, softirq"),
    (NetperfMigratingSpec, "clients", 0, "clients=0: must be an integer between 1 and"),
    (UnixStreamSpec, "pairs", 0, "pairs=0: must be an integer between 1 and"),
])
def test_invalid_parameters_name_the_field(make, field, value, message):
    with pytest.raises(ValueError) as info:
        make(**{field: value})
    assert str(info.value).startswith(message)
