"""loopback_rr and loopback_stream: accounting per protocol, placement, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads.describe import pages_by_memcg
from memcglab.workloads.loopback_rr import (
    PLACEMENTS,
    PROTOCOLS,
    LoopbackRRSpec,
    loopback_rr,
)
from memcglab.workloads.loopback_stream import ACKS, LoopbackStreamSpec, loopback_stream
from tests.workloads.checks import assert_conserved, assert_contract, same_ops


def body(trace):
    return trace.ops[trace.ops["op"] != 0]


def test_tcp_rr_charges_a_page_per_skb_four_per_transaction():
    trace = loopback_rr(LoopbackRRSpec(cpus=8, instances=4, transactions=400))
    ops = body(trace)
    assert (ops["op"] == OP_CHARGE).sum() == 4 * 400
    assert set(ops["arg"].tolist()) == {1}
    assert_conserved(trace, most=2)


def test_udp_rr_charges_only_the_first_datagram_of_each_socket():
    trace = loopback_rr(LoopbackRRSpec(protocol="udp", cpus=8, instances=4, transactions=400))
    ops = body(trace)
    assert (ops["op"] == OP_CHARGE).sum() == 8  # two sockets per instance, once each
    assert_conserved(trace)


def test_sctp_rr_is_balanced_and_charges_every_transaction():
    trace = loopback_rr(LoopbackRRSpec(protocol="sctp", cpus=8, instances=4, transactions=400))
    assert (body(trace)["op"] == OP_CHARGE).sum() >= 2 * 400
    assert_conserved(trace)


def test_rr_ends_run_on_different_cpus_and_charges_follow_the_sender():
    """Client i on CPU 2i, server on 2i+1: a request is charged (both sockets) on the
    client's CPU, the server's reads release on the server's CPU."""
    trace = loopback_rr(LoopbackRRSpec(cpus=8, instances=4, transactions=200))
    ops = body(trace)
    for i in range(4):
        mine = ops[ops["memcg"] == 2 + i]
        assert set(mine["cpu"].tolist()) == {2 * i, 2 * i + 1}
    random = loopback_rr(LoopbackRRSpec(cpus=3, instances=30, transactions=300,
                                        placement="random"))
    # Every memcg is charged on exactly its two tasks' CPUs, which differ.
    for memcg in np.unique(body(random)["memcg"]):
        assert len(set(body(random)["cpu"][body(random)["memcg"] == memcg].tolist())) == 2


def test_shared_server_memcg_takes_every_server_socket():
    trace = loopback_rr(LoopbackRRSpec(cpus=8, instances=3, transactions=90, server="shared"))
    assert sorted(pages_by_memcg(trace)) == [2, 3, 4, 5]
    assert pages_by_memcg(trace)[5][0] == 2 * 90  # the servers' half of the charges


@settings(max_examples=20, deadline=None)
@given(protocol=st.sampled_from(sorted(PROTOCOLS)), placement=st.sampled_from(sorted(PLACEMENTS)),
       cpus=st.integers(2, 12), instances=st.integers(1, 8), transactions=st.integers(1, 300),
       request=st.integers(1, 20_000), response=st.integers(1, 20_000), rate=st.floats(0, 1),
       seed=st.integers(0, 2**64 - 1))
def test_any_rr_spec_gives_a_valid_balanced_trace(protocol, placement, cpus, instances,
                                                  transactions, request, response, rate, seed):
    trace = loopback_rr(LoopbackRRSpec(protocol=protocol, cpus=cpus, instances=instances,
                                       transactions=transactions, request_size=request,
                                       response_size=response, placement=placement,
                                       migration_rate=rate, seed=seed))
    assert_contract(trace)
    assert_conserved(trace)


@settings(max_examples=20, deadline=None)
@given(cpus=st.integers(2, 12), instances=st.integers(1, 6), messages=st.integers(1, 200),
       size=st.integers(1, 50_000), skb=st.integers(256, 70_000), depth=st.integers(1, 5),
       ack=st.sampled_from(sorted(ACKS)), rate=st.floats(0, 1), seed=st.integers(0, 2**64 - 1))
def test_any_stream_spec_gives_a_valid_balanced_trace(cpus, instances, messages, size, skb,
                                                      depth, ack, rate, seed):
    trace = loopback_stream(LoopbackStreamSpec(cpus=cpus, instances=instances,
                                               messages=messages, message_size=size,
                                               skb_bytes=skb, queue_depth=depth, ack=ack,
                                               migration_rate=rate, seed=seed))
    assert_contract(trace)
    assert_conserved(trace)


def test_small_sends_charge_less_often_than_large_ones():
    def charges_per_send(size: int) -> float:
        spec = LoopbackStreamSpec(cpus=8, instances=4, messages=2000, message_size=size)
        return float((body(loopback_stream(spec))["op"] == OP_CHARGE).sum() / 2000)

    assert charges_per_send(1024) < 0.5 < charges_per_send(65536)


def test_ack_chooses_where_the_sender_releases():
    def sender_release_cpus(ack: str) -> set[int]:
        spec = LoopbackStreamSpec(cpus=8, instances=1, messages=500, ack=ack)
        ops = body(loopback_stream(spec))
        return set(ops["cpu"][ops["op"] == OP_UNCHARGE].tolist())

    assert sender_release_cpus("softirq") == {1}  # the reader's CPU releases everything
    assert sender_release_cpus("backlog") == {0, 1}


@pytest.mark.parametrize("make, spec", [
    (loopback_rr, LoopbackRRSpec(cpus=8, instances=4, transactions=300, migration_rate=0.1)),
    (loopback_stream, LoopbackStreamSpec(cpus=8, instances=4, messages=300, migration_rate=0.1)),
])
def test_deterministic_for_a_seed(make, spec):
    from dataclasses import replace

    assert same_ops(make(spec), make(spec))
    assert not same_ops(make(spec), make(replace(spec, seed=1)))


@pytest.mark.parametrize("make, field, value, message", [
    (LoopbackRRSpec, "protocol", "quic", "protocol='quic': must be one of tcp, udp, sctp"),
    (LoopbackRRSpec, "cpus", 1, "cpus=1: must be an integer between 2 and 8192"),
    (LoopbackRRSpec, "instances", 0, "instances=0: must be an integer between 1 and"),
    (LoopbackRRSpec, "request_size", 0, "request_size=0: must be an integer between 1"),
    (LoopbackRRSpec, "server", "own", "server='own': must be one of instance, shared"),
    (LoopbackRRSpec, "migration_rate", -0.1, "migration_rate=-0.1: must be a number in"),
    (LoopbackStreamSpec, "message_size", 0, "message_size=0: must be an integer between 1"),
    (LoopbackStreamSpec, "ack", "late", "ack='late': must be one of backlog, softirq"),
    (LoopbackStreamSpec, "skb_bytes", 0, "skb_bytes=0: must be an integer between 1"),
])
def test_invalid_parameters_name_the_field(make, field, value, message):
    with pytest.raises(ValueError) as info:
        make(**{field: value})
    assert str(info.value).startswith(message)
