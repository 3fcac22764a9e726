"""loopback_rr: netperf's TCP_RR, UDP_RR and SCTP_RR over loopback, many instances.

A transaction is one small request from the client and one small response from the
server (``netperf -t TCP_RR -- -r 1,1``). Each instance is one netperf/netserver
pair with its own memcg (a sibling below ``ancestors`` shared cgroups), its two
tasks on different CPUs. Socket memory goes through the rules of
:mod:`memcglab.workloads.sockmem`; what differs per protocol is which events
touch the socket reserve, and on which CPU:

* **TCP** (net/ipv4/tcp.c, tcp_input.c, tcp_output.c). ``tcp_sendmsg_locked``
  allocates the skb with ``tcp_stream_alloc_skb`` (``sk_forced_mem_schedule`` when
  the write queues are empty, as they are between transactions) and charges it to
  the reserve (task context, the sender's CPU). Over loopback, ``loopback_xmit``
  -> ``netif_rx`` queues the clone to the sending CPU's backlog, so the peer's
  ``tcp_v4_rcv`` runs in softirq on the *sender's* CPU: ``tcp_ack`` ->
  ``tcp_clean_rtx_queue`` frees the peer's previous segment (its ACK rides on this
  one: ``sk_wmem_free_skb`` -> ``sk_mem_uncharge``), then ``tcp_data_queue`` ->
  ``tcp_try_rmem_schedule`` -> ``sk_rmem_schedule`` charges the received skb
  (truesize of the clone = the sender's). ``tcp_recvmsg`` -> ``tcp_eat_recv_skb``
  -> ``sock_rfree`` -> ``sk_mem_uncharge`` releases it on the reader's CPU. Since
  ``sk_mem_uncharge`` reclaims every whole page, each small skb costs its socket one
  page charged and released: 4 charges per transaction.
* **UDP** (net/ipv4/udp.c). The send path charges nothing (``ip_make_skb`` ->
  ``sock_alloc_send_skb`` only counts ``sk_wmem_alloc``; UDP never calls
  ``sk_wmem_schedule``). The receiver's softirq (on the sender's CPU) runs
  ``__udp_enqueue_schedule_skb`` -> ``udp_rmem_schedule``; ``recvmsg`` ->
  ``udp_skb_destructor`` -> ``udp_rmem_release(partial=1)`` keeps up to a page in
  the reserve, so after its first datagram a socket receiving small datagrams never
  charges or releases again until ``udp_destruct_common`` at close.
* **SCTP** (net/sctp/socket.c, ulpevent.c, include/net/sctp/sctp.h).
  ``sctp_sendmsg_to_asoc`` schedules the message length (``sk_wmem_schedule``) and
  ``sctp_set_owner_w`` charges the chunk skb's truesize; the chunk is freed
  (``sctp_wfree`` -> ``sk_mem_uncharge``) when the peer's SACK arrives, bundled
  before the DATA of the response. ``sctp_ulpevent_make_rcvmsg`` schedules the
  chunk length (``sk_rmem_schedule(sk, skb, datalen)``) but
  ``sctp_skb_set_owner_r`` charges ``rmem_len`` = data + ``sizeof(struct
  sk_buff)``; ``sctp_sock_rfree`` releases it on ``recvmsg``.

Modelling choices: the byte sizes are estimates for x86-64 (:data:`TRUESIZE`); an
SCTP message is one DATA chunk (below the association's ``frag_point``); a
transaction's steps happen together, instances interleave at random (equal counts);
each task migrates, with probability ``migration_rate`` per transaction of its
instance, to a uniformly random other CPU (after which the two ends may share a
CPU). At the end the last segments are acknowledged and UDP sockets closed, so every
memcg ends holding nothing.

>>> from memcglab.workloads.describe import pages_by_memcg
>>> t = loopback_rr(LoopbackRRSpec(cpus=4, instances=2, transactions=10))
>>> pages_by_memcg(t)
{2: (20, 20), 3: (20, 20)}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, Trace
from memcglab.workloads.common import (
    MAX_ANCESTORS,
    MEM_CGROUP_ID_MAX,
    SEED_MAX,
    Timeline,
    check_choice,
    check_float,
    check_int,
    hierarchy,
    other_cpu,
    rng_for,
)
from memcglab.workloads.sockmem import (
    RECLAIM,
    SCHEDULE,
    UDP_CLOSE,
    UDP_ENQUEUE,
    UDP_RELEASE,
    SocketEvents,
)

__all__ = ["LoopbackRRSpec", "loopback_rr", "PROTOCOLS", "PLACEMENTS", "SERVERS", "TRUESIZE",
           "SCTP_DATA_HEADER", "SK_BUFF_SIZE", "UDP_FORWARD_THRESHOLD"]

PROTOCOLS = {
    "tcp": "TCP_RR: both directions charge on send and on receive (sk_mem_charge)",
    "udp": "UDP_RR: receive only, and udp_rmem_release keeps a page in the reserve",
    "sctp": "SCTP_RR: chunk truesize on send, data + sizeof(sk_buff) on receive",
}
PLACEMENTS = {
    "spread": "client of instance i on CPU 2i, server on 2i+1 (modulo cpus)",
    "random": "client on a uniformly random CPU, server on a random other one",
}
SERVERS = {
    "instance": "each netserver child in its instance's memcg (both ends in one container)",
    "shared": "every server socket in one memcg of its own (one netserver daemon)",
}
#: skb->truesize less the payload, bytes, x86-64: SKB_TRUESIZE(320) = 320 + 256 + 320,
#: a head from skb_small_head_cache (SKB_HEAD_ALIGN(MAX_TCP_HEADER) = 640 bytes, of
#: which 320 are skb_shared_info) plus SKB_DATA_ALIGN(sizeof(struct sk_buff)). TCP:
#: tcp_stream_alloc_skb sets truesize = SKB_TRUESIZE(skb_end_offset) of its
#: alloc_skb_fclone(MAX_TCP_HEADER) head, and the payload is copied into page frags
#: (truesize += copy). UDP (sock_alloc_send_skb) and SCTP (_sctp_make_chunk) build
#: small linear skbs from the same cache. An estimate: heads past ~300 bytes of
#: payload come from kmalloc and round up to a power of two, which is not modelled.
TRUESIZE = {"tcp": 896, "udp": 896, "sctp": 896}
SCTP_DATA_HEADER = 16  # sizeof(struct sctp_data_chunk): the DATA chunk length's overhead
SK_BUFF_SIZE = 232  # sizeof(struct sk_buff), x86-64: in SCTP's rmem_len
#: net.core.rmem_default (212992) >> 2: udp_lib_init_sock's forward_threshold
UDP_FORWARD_THRESHOLD = 212992 >> 2


@dataclass(frozen=True, slots=True)
class LoopbackRRSpec:
    """Parameters of :func:`loopback_rr`; each default says where it comes from."""

    #: transport, a key of :data:`PROTOCOLS`: TCP_RR is netperf's default RR test.
    protocol: str = "tcp"
    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: concurrent netperf instances, one memcg each: 36 fills the 72 CPUs with
    #: one client and one server each (seed 000's largest row).
    instances: int = 36
    #: transactions in the trace (all instances together); a length, not a rate.
    transactions: int = 100_000
    #: request bytes: netperf's ``-r 1,1`` default.
    request_size: int = 1
    #: response bytes: netperf's ``-r 1,1`` default.
    response_size: int = 1
    #: where tasks start, a key of :data:`PLACEMENTS`: "spread", as the scheduler
    #: puts new tasks on idle CPUs.
    placement: str = "spread"
    #: probability that a task migrates per transaction of its instance; 0 keeps
    #: every instance's two ends on their own CPUs.
    migration_rate: float = 0.0
    #: which memcg server sockets charge, a key of :data:`SERVERS`.
    server: str = "instance"
    #: shared cgroups between the root and the instances' memcgs (a workload slice).
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("protocol", self.protocol, PROTOCOLS)
        check_int("cpus", self.cpus, 2, MAX_CPUS, "two ends need two CPUs")
        check_int("ancestors", self.ancestors, 0, MAX_ANCESTORS)
        check_int("instances", self.instances, 1, MEM_CGROUP_ID_MAX - self.ancestors - 1,
                  f"MEM_CGROUP_ID_MAX minus {self.ancestors} ancestor(s) and a server memcg")
        check_int("transactions", self.transactions, 1, 2**28)
        check_int("request_size", self.request_size, 1, 2**24, "bytes")
        check_int("response_size", self.response_size, 1, 2**24, "bytes")
        check_choice("placement", self.placement, PLACEMENTS)
        check_float("migration_rate", self.migration_rate, 0.0, 1.0)
        check_choice("server", self.server, SERVERS)
        check_int("seed", self.seed, 0, SEED_MAX)


def _sizes(protocol: str, payload: int) -> tuple[int, int, int, int]:
    """(send sched, send charge, receive sched, receive charge) bytes of one message."""
    truesize = TRUESIZE[protocol] + payload
    if protocol == "tcp":
        return truesize, truesize, truesize, truesize
    if protocol == "udp":
        return 0, 0, truesize, truesize
    return payload, truesize, SCTP_DATA_HEADER + payload, SK_BUFF_SIZE + payload


def _start(spec: LoopbackRRSpec, rng: np.random.Generator) -> np.ndarray:
    """Initial CPUs of the clients (tasks 0..n-1) and the servers (n..2n-1)."""
    i = np.arange(spec.instances, dtype=np.int64)
    if spec.placement == "spread":
        return np.concatenate([2 * i, 2 * i + 1]) % spec.cpus
    client = rng.integers(0, spec.cpus, spec.instances)
    return np.concatenate([client, other_cpu(rng, client, spec.cpus)])


def loopback_rr(spec: LoopbackRRSpec = LoopbackRRSpec()) -> Trace:
    """Generate the request/response mix described by ``spec`` (see the module docstring)."""
    rng = rng_for("loopback_rr", spec.seed)
    n, m = spec.instances, spec.transactions
    head, tenants = hierarchy(n + (spec.server == "shared"), spec.ancestors)
    inst = rng.permutation(np.arange(m, dtype=np.int64) % n)
    step = np.arange(m, dtype=np.int64)
    tasks = Timeline.draw(rng, _start(spec, rng), m, spec.migration_rate / n, spec.cpus)
    c, s = tasks.at(inst, step), tasks.at(n + inst, step)
    first = np.zeros(m, dtype=bool)
    first[np.unique(inst, return_index=True)[1]] = True
    client, server = 2 * inst, 2 * inst + 1
    q_send, q_tx, q_rsched, q_rx = _sizes(spec.protocol, spec.request_size)
    r_send, r_tx, r_rsched, r_rx = _sizes(spec.protocol, spec.response_size)
    udp = spec.protocol == "udp"
    full = np.ones(m, dtype=bool)
    sends = ~full if udp else full  # UDP's send path charges nothing
    acks = ~full if udp else ~first  # nor does it acknowledge
    enqueue, release = (UDP_ENQUEUE, UDP_RELEASE) if udp else (SCHEDULE, RECLAIM)
    # (sub-step, socket, event, sched, amount, cpu, present) of each step of a transaction
    steps = [
        (0.1, client, SCHEDULE, q_send, q_tx, c, sends),  # client sends the request
        (0.2, server, RECLAIM, 0, r_tx, c, acks),  # its ACK frees the last response
        (0.3, server, enqueue, q_rsched, q_rx, c, full),  # softirq on the client's CPU
        (0.4, server, release, 1, q_rx, s, full),  # the server reads it
        (0.5, server, SCHEDULE, r_send, r_tx, s, sends),  # and responds
        (0.6, client, RECLAIM, 0, q_tx, s, sends),  # the response ACKs the request
        (0.7, client, enqueue, r_rsched, r_rx, s, full),  # softirq on the server's CPU
        (0.8, client, release, 1, r_rx, c, full),  # the client reads it
    ]
    events = SocketEvents()
    for sub, sock, event, sched, amount, cpu, present in steps:
        events.add(step + sub, sock, event, sched, amount, cpu, where=present)
    # The end: the client's last ACK frees each server's last response (TCP, SCTP);
    # UDP sockets close (udp_destruct_common) on their tasks' CPUs.
    seen = np.unique(inst)
    last = np.full(len(seen), m - 1)
    c_end, s_end = tasks.at(seen, last), tasks.at(n + seen, last)
    if udp:
        for sock, cpu in [(2 * seen, c_end), (2 * seen + 1, s_end)]:
            events.add(float(m), sock, UDP_CLOSE, 0, 0, cpu, size=len(seen))
    else:
        events.add(float(m), 2 * seen + 1, RECLAIM, 0, r_tx, c_end, size=len(seen))
    memcg = np.repeat(tenants[:n], 2)
    if spec.server == "shared":
        memcg[1::2] = tenants[n]
    threshold = np.full(2 * n, UDP_FORWARD_THRESHOLD, dtype=np.int64)
    return events.trace(spec.cpus, head, memcg, f"<loopback_rr {spec.protocol}>", threshold)
