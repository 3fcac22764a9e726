"""loopback_rr, loopback_stream, unix_stream: thin aliases of the benchmark catalogue."""

from __future__ import annotations

import pytest

from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads.catalogue import BenchmarkSpec, Machine, build
from memcglab.workloads.loopback_rr import LoopbackRRSpec, loopback_rr
from memcglab.workloads.loopback_stream import LoopbackStreamSpec, loopback_stream
from memcglab.workloads.unix_stream import UnixStreamSpec, unix_stream
from tests.workloads.checks import assert_contract, same_ops


def body(trace):
    return trace.ops[trace.ops["op"] != 0]


@pytest.mark.parametrize("protocol, test", [("tcp", "TCP_RR"), ("udp", "UDP_RR"),
                                            ("sctp", "SCTP_RR")])
def test_loopback_rr_is_the_catalogues_rr_test(protocol, test):
    alias = loopback_rr(LoopbackRRSpec(protocol=protocol, cpus=8, instances=4,
                                       transactions=400, seed=3))
    direct = build(BenchmarkSpec("netperf", test, {"instances": 4}, Machine(8),
                                 layout="per-instance", seed=3, operations=92,
                                 alternatives={"server_memcg": "instance"})).trace
    assert same_ops(alias, direct)
    assert_contract(alias)


def test_tcp_rr_charges_one_page_per_send_and_gives_it_back_on_the_read():
    """Each end: the forced skb head charges a page, its reader's sock_rfree gives the
    reserve back; the receive softirq's fast path needs no call (issue 18's reading)."""
    trace = loopback_rr(LoopbackRRSpec(cpus=8, instances=4, transactions=400))
    ops = body(trace)
    charges, uncharges = ops[ops["op"] == OP_CHARGE], ops[ops["op"] == OP_UNCHARGE]
    assert set(charges["arg"].tolist()) == {1} and set(uncharges["arg"].tolist()) == {1}
    assert len(charges) == 2 * 400 + 4  # + the warm-up's first softirq charge of each server
    assert charges["irq"].sum() == 4  # those four, in the receive softirq
    for i in range(4):  # client i on CPU 2i, server on 2i+1
        mine = ops[ops["memcg"] == 2 + i]
        assert set(mine["cpu"].tolist()) == {2 * i, 2 * i + 1}


def test_loopback_rr_server_shared_charges_one_sibling_memcg():
    trace = loopback_rr(LoopbackRRSpec(cpus=8, instances=4, transactions=200, server="shared"))
    cg = trace.ops[trace.ops["op"] == 0]
    assert cg["memcg"].tolist() == [1, 2, 3, 4, 5, 6] and set(cg["parent"][1:]) == {1}
    assert 6 in set(body(trace)["memcg"].tolist())


def test_loopback_stream_is_the_catalogues_tcp_stream():
    alias = loopback_stream(LoopbackStreamSpec(cpus=8, instances=2, messages=200,
                                               message_size=1024, ack="softirq"))
    direct = build(BenchmarkSpec("netperf", "TCP_STREAM", {"instances": 2, "send_size": 1024},
                                 Machine(8), layout="per-instance", operations=92,
                                 alternatives={"ack": "softirq", "server_memcg": "instance",
                                               "queue_depth": 4})).trace
    assert same_ops(alias, direct)


def test_unix_stream_is_the_catalogues_bw_unix():
    alias = unix_stream(UnixStreamSpec(cpus=8, pairs=2, messages=100))
    direct = build(BenchmarkSpec("lmbench", "bw_unix", {"instances": 2}, Machine(8),
                                 layout="per-instance", operations=42)).trace
    assert same_ops(alias, direct)


@pytest.mark.parametrize("make, field, value, message", [
    (LoopbackRRSpec, "protocol", "quic", "protocol='quic': must be one of tcp, udp, sctp"),
    (LoopbackRRSpec, "response_size", 7, "response_size=7: must equal request_size"),
    (LoopbackRRSpec, "ancestors", 0, "ancestors=0: must be an integer between 1 and 15"),
    (LoopbackStreamSpec, "queue_depth", 3, "queue_depth=3: must be one of 1, 2, 4"),
    (LoopbackStreamSpec, "ack", "never", "ack='never': must be one of backlog, softirq"),
    (UnixStreamSpec, "pairs", 0, "pairs=0: must be an integer between 1 and 16384"),
])
def test_alias_specs_name_the_bad_field(make, field, value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make(**{field: value})
