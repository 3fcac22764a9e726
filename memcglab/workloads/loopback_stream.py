"""loopback_stream: netperf's TCP_STREAM over loopback, small or large sends.

Each instance is one netperf sender and one netserver receiver on different CPUs,
with its own memcg. Socket memory follows :mod:`memcglab.workloads.sockmem`:

* The sender (task context, its CPU): ``tcp_sendmsg_locked`` starts an skb with
  ``tcp_stream_alloc_skb`` (the head's truesize, ``sk_wmem_schedule`` or
  ``sk_forced_mem_schedule``) and copies each piece of a send into it after
  ``tcp_wmem_schedule`` -> ``sk_wmem_schedule(copy)``, then ``sk_mem_charge``:
  one reserve event per (send, skb) piece. An skb carries ``skb_bytes`` of payload
  (``tcp_xmit_size_goal``: loopback's 64 KiB GSO size).
* Transmission: ``loopback_xmit`` -> ``netif_rx``; the receiver's softirq runs on
  the sender's CPU and charges the skb's truesize to the receiver
  (``tcp_data_queue`` -> ``tcp_try_rmem_schedule`` -> ``sk_rmem_schedule``).
* The receiver reads an skb ``1..2*queue_depth-1`` sends later (``tcp_recvmsg`` ->
  ``tcp_eat_recv_skb`` -> ``sock_rfree`` -> ``sk_mem_uncharge``, its CPU) and
  acknowledges it (``tcp_cleanup_rbuf``); the ACK frees the sender's copy
  (``tcp_clean_rtx_queue`` -> ``sk_wmem_free_skb`` -> ``sk_mem_uncharge``) on the CPU
  chosen by ``ack`` (:data:`ACKS`).

Small sends mostly fit the reserve a previous piece left (no charge); large sends
charge pages per piece. Sends of all instances interleave at random (equal
counts). At the end every skb is read and acknowledged.

>>> from memcglab.workloads.describe import pages_by_memcg
>>> t = loopback_stream(LoopbackStreamSpec(cpus=4, instances=2, messages=40))
>>> all(c == r for c, r in pages_by_memcg(t).values())
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, Trace
from memcglab.workloads.common import (
    SEED_MAX,
    Streams,
    Timeline,
    bounded_delay,
    check_choice,
    check_float,
    check_int,
    check_tenants,
    hierarchy,
    rng_for,
)
from memcglab.workloads.loopback_rr import PLACEMENTS, TRUESIZE
from memcglab.workloads.loopback_rr import _start as _rr_start
from memcglab.workloads.sockmem import RECLAIM, SCHEDULE, SocketEvents

__all__ = ["LoopbackStreamSpec", "loopback_stream", "ACKS"]

ACKS = {
    "backlog": "the sender's CPU: a bulk sender holds the socket lock in sendmsg, so the ACK "
               "waits in the backlog until release_sock processes it",
    "softirq": "the receiver's CPU: the ACK is processed in softirq where it was sent",
}


@dataclass(frozen=True, slots=True)
class LoopbackStreamSpec:
    """Parameters of :func:`loopback_stream`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: concurrent netperf instances, one memcg each (sender and receiver): 36
    #: fills 72 CPUs with one task each.
    instances: int = 36
    #: sends in the trace (all instances together); a length, not a rate.
    messages: int = 100_000
    #: bytes per send: 16 KiB, netperf's TCP_STREAM default (the send socket buffer
    #: size); 1 KiB is a small-message run, 64 KiB a large one.
    message_size: int = 16 * 1024
    #: payload bytes per skb: tcp_xmit_size_goal on loopback (GSO up to 64 KiB).
    skb_bytes: int = 64 * 1024
    #: mean sends of the instance between an skb's transmission and its read.
    queue_depth: int = 4
    #: where the sender's ACK processing runs, a key of :data:`ACKS`.
    ack: str = "backlog"
    #: where tasks start, a key of loopback_rr's PLACEMENTS (sender = client).
    placement: str = "spread"
    #: probability that a task migrates per send of its instance.
    migration_rate: float = 0.0
    #: shared cgroups between the root and the instances' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 2, MAX_CPUS, "two ends need two CPUs")
        check_tenants("instances", self.instances, self.ancestors)
        check_int("messages", self.messages, 1, 2**26)
        check_int("message_size", self.message_size, 1, 2**24, "bytes")
        check_int("skb_bytes", self.skb_bytes, 1, 2**20, "bytes")
        check_int("queue_depth", self.queue_depth, 1, 2**20)
        check_choice("ack", self.ack, ACKS)
        check_choice("placement", self.placement, PLACEMENTS)
        check_float("migration_rate", self.migration_rate, 0.0, 1.0)
        check_int("seed", self.seed, 0, SEED_MAX)


def _layout(sends: int, size: int, skb: int) -> tuple[np.ndarray, ...]:
    """One instance's byte stream: pieces (send, length, starts an skb) and skbs
    (length, send that completes it)."""
    total = sends * size
    cuts = np.union1d(np.arange(0, total, size, dtype=np.int64),
                      np.arange(0, total, skb, dtype=np.int64))
    ends = np.append(cuts[1:], total)
    skb_end = np.minimum(np.arange(skb, total + skb, skb, dtype=np.int64), total)
    skb_len = skb_end - np.arange(0, total, skb, dtype=np.int64)
    return cuts // size, ends - cuts, cuts % skb == 0, skb_len, (skb_end - 1) // size


def loopback_stream(spec: LoopbackStreamSpec = LoopbackStreamSpec()) -> Trace:
    """Generate the bulk-transfer mix described by ``spec`` (see the module docstring)."""
    rng = rng_for("loopback_stream", spec.seed)
    n, m = spec.instances, spec.messages
    head, tenants = hierarchy(n, spec.ancestors)
    inst = rng.permutation(np.arange(m, dtype=np.int64) % n)
    tasks = Timeline.draw(rng, _rr_start(spec, rng), m, spec.migration_rate / n, spec.cpus)
    sends_of = Streams.of(inst, n)
    counts = sends_of.counts
    overhead = TRUESIZE["tcp"]
    events = SocketEvents()
    for sends in np.unique(counts[counts > 0]).tolist():
        group = np.flatnonzero(counts == sends)
        send, length, starts, skb_len, done = _layout(sends, spec.message_size, spec.skb_bytes)
        i = np.repeat(group, len(send))
        t = sends_of.step(i, np.tile(send, len(group))).astype(np.float64)
        sender = tasks.at(i, t.astype(np.int64))
        new = np.tile(starts, len(group))
        events.add(t[new] + 0.1, 2 * i[new], SCHEDULE, overhead, overhead, sender[new])  # skb head
        piece = np.tile(length, len(group))
        events.add(t + 0.2, 2 * i, SCHEDULE, piece, piece, sender)  # the copy into it
        k = np.repeat(group, len(skb_len))
        sent = sends_of.step(k, np.tile(done, len(group)))
        truesize = overhead + np.tile(skb_len, len(group))
        events.add(sent + 0.3, 2 * k + 1, SCHEDULE, truesize, truesize,
                   tasks.at(k, sent))  # received in softirq on the sender's CPU
        read_j = np.tile(done, len(group)) + bounded_delay(rng, len(k), spec.queue_depth)
        read = sends_of.step(k, read_j)
        at = np.minimum(read, m - 1)
        reader = tasks.at(n + k, at)
        events.add(read + 0.4, 2 * k + 1, RECLAIM, 0, truesize, reader)
        acker = tasks.at(k, at) if spec.ack == "backlog" else reader
        events.add(read + 0.5, 2 * k, RECLAIM, 0, truesize, acker)
    return events.trace(spec.cpus, head, np.repeat(tenants, 2), "<loopback_stream>")
