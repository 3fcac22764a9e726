"""netperf_rx: contract, conservation, and the shape each parameter controls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads.describe import (
    memcgs_per_cpu,
    remote_release_fraction,
    switch_fraction,
)
from memcglab.workloads.netperf import PLACEMENTS, RELEASES, NetperfRxSpec, netperf_rx
from tests.workloads.checks import assert_conserved, assert_contract, same_ops

SMALL = NetperfRxSpec(cpus=8, clients=6, messages=3000)


def test_deterministic_for_a_seed_and_different_across_seeds():
    assert same_ops(netperf_rx(SMALL), netperf_rx(SMALL))
    other = netperf_rx(NetperfRxSpec(cpus=8, clients=6, messages=3000, seed=1))
    assert not same_ops(netperf_rx(SMALL), other)


def test_contract_and_conservation_with_defaults_shortened():
    spec = NetperfRxSpec(messages=5000)
    trace = netperf_rx(spec)
    assert_contract(trace)
    assert_conserved(trace, most=(2 * spec.queue_depth - 1) * spec.pages)
    body = trace.ops[trace.ops["op"] != 0]
    assert (body["op"] == OP_CHARGE).sum() == (body["op"] == OP_UNCHARGE).sum() == 5000
    assert set(np.unique(body["arg"]).tolist()) == {3}  # ceil(10240 / 4096)


def test_each_client_is_one_memcg_below_the_ancestors():
    trace = netperf_rx(NetperfRxSpec(cpus=8, clients=5, messages=500, ancestors=2))
    cgroups = trace.ops[trace.ops["op"] == 0]
    assert cgroups["memcg"].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert cgroups["parent"].tolist() == [0, 1, 2, 2, 2, 2, 2]
    charged = np.unique(trace.ops["memcg"][trace.ops["op"] == OP_CHARGE])
    assert charged.tolist() == [3, 4, 5, 6, 7]


@settings(max_examples=25, deadline=None)
@given(cpus=st.integers(1, 16), clients=st.integers(1, 12), messages=st.integers(1, 400),
       placement=st.sampled_from(sorted(PLACEMENTS)), release=st.sampled_from(sorted(RELEASES)),
       rate=st.floats(0, 1), depth=st.integers(1, 6), pages=st.integers(1, 200),
       seed=st.integers(0, 2**64 - 1), data=st.data())
def test_any_spec_gives_a_valid_conserving_trace(cpus, clients, messages, placement, release,
                                                  rate, depth, pages, seed, data):
    interleave = data.draw(st.integers(1, clients))
    spec = NetperfRxSpec(cpus=cpus, clients=clients, messages=messages, placement=placement,
                         release=release, migration_rate=rate, queue_depth=depth,
                         pages_per_message=pages, interleave=interleave, seed=seed)
    trace = netperf_rx(spec)
    assert_contract(trace)
    assert_conserved(trace, most=(2 * depth - 1) * pages)


def test_migration_rate_moves_releases_to_other_cpus():
    """Paired tasks release where they charge until one of them migrates."""
    def remote(rate: float) -> float:
        spec = NetperfRxSpec(cpus=16, clients=4, messages=20_000, placement="paired",
                             migration_rate=rate)
        return remote_release_fraction(netperf_rx(spec))

    still, some, often = remote(0.0), remote(0.002), remote(0.05)
    assert still == 0.0
    assert 0.0 < some < often


def test_release_chooses_the_cpu_of_the_uncharge():
    def remote(release: str) -> float:
        spec = NetperfRxSpec(cpus=16, clients=4, messages=4000, migration_rate=0.0,
                             release=release)
        return remote_release_fraction(netperf_rx(spec))

    assert remote("softirq") == 0.0
    assert remote("task") == 1.0  # spread: the receiver has its own CPU
    assert 0.8 < remote("random") < 1.0  # 15 in 16 CPUs are not the charging one


def test_interleave_sets_how_many_flows_a_softirq_cpu_charges():
    for interleave in (1, 3, 6):
        spec = NetperfRxSpec(cpus=72, clients=12, messages=6000, migration_rate=0.0,
                             interleave=interleave)
        trace = netperf_rx(spec)
        per_cpu = memcgs_per_cpu(trace)
        assert sorted(per_cpu[per_cpu > 0].tolist()) == [interleave] * (12 // interleave)
        # Packets of k flows arrive in random order: a switch with probability 1 - 1/k.
        assert switch_fraction(trace) == pytest.approx(1 - 1 / interleave, abs=0.03)


def test_placement_spread_gives_each_task_its_own_cpu():
    spec = NetperfRxSpec(cpus=72, clients=36, messages=7200, migration_rate=0.0)
    trace = netperf_rx(spec)
    assert memcgs_per_cpu(trace, OP_CHARGE).tolist() == [1, 0] * 36
    assert memcgs_per_cpu(trace, OP_UNCHARGE).tolist() == [0, 1] * 36


def test_random_placement_shares_cpus_and_migration_spreads_flows():
    still = NetperfRxSpec(cpus=72, clients=36, messages=20_000, placement="random",
                          migration_rate=0.0)
    moving = NetperfRxSpec(cpus=72, clients=36, messages=20_000, migration_rate=0.2)
    assert memcgs_per_cpu(netperf_rx(still)).max() >= 2  # 36 senders rarely all apart
    assert memcgs_per_cpu(netperf_rx(moving)).mean() > 3


def test_message_size_sets_pages_unless_given():
    assert NetperfRxSpec(message_size=4096).pages == 1
    assert NetperfRxSpec(message_size=4097).pages == 2
    assert NetperfRxSpec(message_size=4097, pages_per_message=7).pages == 7
    trace = netperf_rx(NetperfRxSpec(cpus=4, clients=2, messages=10, message_size=65536))
    assert set(trace.ops["arg"][trace.ops["op"] == OP_CHARGE].tolist()) == {16}


def test_queue_depth_bounds_the_pages_in_flight():
    for depth in (1, 3, 10):
        spec = NetperfRxSpec(cpus=8, clients=3, messages=3000, queue_depth=depth)
        assert_conserved(netperf_rx(spec), most=(2 * depth - 1) * 3)


@pytest.mark.parametrize("field, value, message", [
    ("clients", 0, "clients=0: must be an integer between 1 and 65534"),
    ("cpus", 8193, "cpus=8193: must be an integer between 1 and 8192"),
    ("messages", 0, "messages=0: must be an integer between 1 and"),
    ("pages_per_message", 0, "pages_per_message=0: must be an integer between 1 and 4294967295"),
    ("placement", "pinned", "placement='pinned': must be one of spread, paired, random"),
    ("migration_rate", 1.5, "migration_rate=1.5: must be a number in [0.0, 1.0]"),
    ("migration_rate", float("nan"), "migration_rate=nan: must be a number in"),
    ("interleave", 37, "interleave=37: must be an integer between 1 and 36 (at most the"),
    ("release", "ack", "release='ack': must be one of task, softirq, random"),
    ("queue_depth", 0, "queue_depth=0: must be an integer between 1 and"),
    ("seed", -1, "seed=-1: must be an integer between 0 and 18446744073709551615"),
    ("clients", 2.0, "clients=2.0: must be an integer"),
])
def test_invalid_parameters_name_the_field_and_what_is_valid(field, value, message):
    with pytest.raises(ValueError) as info:
        NetperfRxSpec(**{field: value})
    assert str(info.value).startswith(message)
