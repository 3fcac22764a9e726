"""The space a charge-path price is drawn over, built from plain inputs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memcglab.cost import CostParams
from memcglab.hardware import load_profile
from memcglab.pricing import (
    BUSIEST_CPU_SHARE,
    HARDWARE_PRIORS,
    OTHER_CYCLES,
    SMT_GAIN_FALLBACK,
    WORKLOADS,
    busiest_cpu_prior,
    chargepath_space,
    cross_socket_prior,
    other_cycles_prior,
)

TWO_SOCKETS = load_profile("butt-netperf-72cpu")
ONE_SOCKET = load_profile("hahn-madvise-40cpu")


def test_the_space_holds_the_profiles_priors_then_the_workloads_in_a_fixed_order():
    space = chargepath_space(TWO_SOCKETS, "sctp_rr", 2, {}, [0, 1, 2])
    names = [p.name for p in space.priors]
    assert names == [*HARDWARE_PRIORS, "other_cycles", "smt_gain", "cross_socket_fraction",
                     "busiest_cpu_share"]
    assert set(CostParams.names()) <= set(names) and len(set(names)) == len(names)
    for n in HARDWARE_PRIORS:
        assert space[n] == TWO_SOCKETS.priors[n]
    assert space["other_cycles"] == OTHER_CYCLES["sctp_rr"]
    assert space["smt_gain"] == TWO_SOCKETS.priors["smt_gain"]


def test_a_choice_with_one_option_is_fixed_and_several_are_drawn():
    space = chargepath_space(TWO_SOCKETS, "tcp_stream_1k", 2,
                             {"ack": ("backlog", "softirq"), "fixed": ("only",)}, [0])
    assert [a.name for a in space.alternatives] == ["ack"]
    assert space["ack"].options == ("backlog", "softirq")


def test_netperf_rx_takes_the_profiles_work_per_packet_renamed():
    prior = other_cycles_prior(TWO_SOCKETS, "netperf_rx")
    assert prior == replace(TWO_SOCKETS.priors["other_cycles_per_packet"], name="other_cycles")
    assert set(WORKLOADS) == {"netperf_rx", *OTHER_CYCLES}


def test_an_unknown_workload_is_named_with_the_valid_ones():
    with pytest.raises(ValueError, match=r"workload='tcp_crr'.*valid: netperf_rx, tcp_rr"):
        chargepath_space(TWO_SOCKETS, "tcp_crr", 2, {}, [0])


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_cpus_per_flow_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="cpus_per_flow"):
        chargepath_space(TWO_SOCKETS, "tcp_rr", bad, {}, [0])


def test_no_transfer_crosses_on_one_socket_and_at_most_an_even_spread_on_two():
    one = cross_socket_prior(ONE_SOCKET)
    assert (one.shape, one.high) == ("point", 0.0)
    two = cross_socket_prior(TWO_SOCKETS)
    assert (two.low, two.typical, two.high) == (0.25, 0.5, 0.5)


def test_a_flow_on_one_cpu_runs_all_its_cycles_there():
    assert (busiest_cpu_prior(1).shape, busiest_cpu_prior(1).typical) == ("point", 1.0)
    assert busiest_cpu_prior(2) is BUSIEST_CPU_SHARE
    space = chargepath_space(ONE_SOCKET, "madvise_fault", 1, {}, [0])
    assert space["busiest_cpu_share"].high == 1.0


def test_a_profile_without_smt_gain_takes_the_fallback():
    bare = replace(TWO_SOCKETS, priors={k: v for k, v in TWO_SOCKETS.priors.items()
                                        if k != "smt_gain"})
    assert chargepath_space(bare, "tcp_rr", 2, {}, [0])["smt_gain"] == SMT_GAIN_FALLBACK
