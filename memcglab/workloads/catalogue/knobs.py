"""A test's knobs: the contract's workload keys (:class:`Key`) and the modelling
alternatives (:class:`Alternative`, :data:`ALTERNATIVES`) a test may read.

Each test's record (:mod:`memcglab.workloads.catalogue.tests`) names its keys and the
alternatives it reads; this module holds the classes and the alternatives' table, which
several tests share.

>>> Key(None, 1, 4).check("instances", 5)
Traceback (most recent call last):
...
ValueError: keys.instances: 5 is invalid (valid: an integer from 1 to 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ALTERNATIVES", "MAX_INSTANCES", "Alternative", "Key"]

#: the scenario contract's bound on instances (pairs, groups, jobs)
MAX_INSTANCES = 16384


@dataclass(frozen=True, slots=True)
class Key:
    """One workload key: its default (None: required) and what is valid."""

    default: Any
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    unit: str = ""

    @property
    def valid(self) -> str:
        """What is valid, as an error message says it."""
        if self.choices:
            return ", ".join(self.choices)
        return f"an integer from {self.low} to {self.high}{self.unit}"

    def check(self, name: str, value: Any) -> Any:
        """``value`` if valid for key ``name``, else a ValueError naming both."""
        if self.choices:
            ok = value in self.choices
        else:
            ok = (isinstance(value, int) and not isinstance(value, bool)
                  and self.low <= value <= self.high)
        if not ok:
            raise ValueError(f"keys.{name}: {value!r} is invalid (valid: {self.valid})")
        return value


@dataclass(frozen=True, slots=True)
class Alternative:
    """A modelling alternative: valid values, the default and the prior weight of each."""

    values: tuple[Any, ...]
    default: Any
    prior: tuple[float, ...]
    why: str

    def check(self, name: str, value: Any) -> Any:
        """``value`` if it is one of the alternative's, else a ValueError naming it."""
        if value not in self.values:
            raise ValueError(f"alternatives.{name}: {value!r} is invalid "
                             f"(valid: {', '.join(map(str, self.values))})")
        return value


ALTERNATIVES: dict[str, Alternative] = {
    "placement": Alternative(
        ("scheduler", "random"), "scheduler", (0.8, 0.2),
        "where tasks run: 'scheduler', the order an idle machine's scheduler gives them "
        "(placement.spread_order: idle cores first, a pair inside one LLC, SMT siblings "
        "last); 'random', each task on a uniformly random CPU, an instance's tasks on "
        "different CPUs while there are enough (a machine whose load balancer has "
        "scattered them)"),
    "server_memcg": Alternative(
        ("hierarchy", "instance", "root"), "hierarchy", (0.6, 0.2, 0.2),
        "the memcg of the server daemon (netserver, bw_tcp -s, lat_tcp -s): an accepted "
        "socket takes the acceptor's memcg (__inet_accept -> mem_cgroup_sk_alloc), and every "
        "server child inherits the daemon's cgroup. 'hierarchy': the daemon in a memcg of "
        "its own inside the measured hierarchy (with lkp and shared: the benchmark's memcg, "
        "since the robot starts the daemon from the job; with per-instance: a leaf sibling "
        "of the instances, as cgroup v2 keeps processes out of inner nodes); 'instance': one "
        "daemon per instance, in the instance's memcg; 'root': the daemon outside any "
        "memcg, so server sockets charge nothing. Prior: the robot's jobs start netserver "
        "from the job itself (lkp-tests programs/netserver/daemon), and the two earlier "
        "runs of the multi-memcg stock's author that issue 18 quotes kept netserver inside "
        "the measured hierarchy; a daemon started by hand outside it stays plausible"),
    "ack": Alternative(
        ("backlog", "softirq"), "backlog", (0.7, 0.3),
        "where a bulk TCP sender's ACKs free its skbs: 'backlog', on the sender's CPU in task "
        "context (the sender holds the socket lock in tcp_sendmsg, tcp_v4_rcv queues the ACK "
        "to the backlog, release_sock or sk_flush_backlog processes it); 'softirq', in the "
        "receive softirq on the CPU that sent the ACK (the receiver's)"),
    "rx": Alternative(
        ("softirq", "backlog"), "softirq", (0.6, 0.4),
        "where a stream's data is charged to the receiving socket: 'softirq', on the "
        "sender's CPU (loopback_xmit -> __netif_rx queues to the local backlog; the "
        "receiver waits in recvmsg without the lock); 'backlog', on the receiver's CPU "
        "in task context (the receiver is copying with the socket lock held: "
        "tcp_add_backlog, or sctp_add_backlog for SCTP_STREAM_MANY)"),
    "segments": Alternative(
        ("coalesced", "per_send"), "coalesced", (0.6, 0.4),
        "how a TCP stream's sends become skbs: 'coalesced', every skb filled to size_goal "
        "(one loopback MSS), because tcp_write_xmit's Nagle test in Minshall's form "
        "(tcp_nagle_check, tcp_minshall_check) holds the partial tail while an earlier "
        "sub-MSS segment is unacknowledged and the next send appends to it; 'per_send', "
        "each send's tail pushed at once (the ACK of the previous segment was processed, "
        "at release_sock, before the push), so skbs also end at every send. "
        "tcp_sendmsg_locked allows both: which one runs depends on when the receiver's "
        "ACK is processed relative to the sender's next tcp_push, a timing neither source "
        "fixes"),
    "rr_rx": Alternative(
        ("softirq", "backlog"), "softirq", (0.85, 0.15),
        "where an SCTP request/response message is received: 'softirq', on the sender's "
        "CPU (the receiver sleeps in sctp_wait_for_packet without the socket lock, so "
        "sctp_rcv processes the SACK and the DATA at once); 'backlog', on the receiver's "
        "CPU in task context (the message arrives while the receiver still holds the lock "
        "at the end of its own sctp_sendmsg or before it sleeps in sctp_recvmsg, so "
        "sctp_rcv queues it with sctp_add_backlog and release_sock processes it). A race "
        "the source leaves to timing; the receiver is usually asleep by the time its "
        "peer has woken, read and answered"),
    "napi_cache": Alternative(
        ("empty", "warm"), "empty", (0.8, 0.2),
        "whether __alloc_skb finds an sk_buff in the CPU's napi_alloc_cache (6.18: "
        "napi_skb_cache_get(false) in task context). Only softirq frees refill it, so an "
        "AF_UNIX benchmark on an otherwise idle machine finds it 'empty' and charges the "
        "sk_buff through __GFP_ACCOUNT; 'warm' (network traffic on the same CPUs) takes "
        "uncharged ones"),
    "queue_depth": Alternative(
        (1, 2, 4, 8, 16, 32, 64, 128, 256), 4,
        (0.05, 0.15, 0.3, 0.15, 0.1, 0.075, 0.075, 0.05, 0.05),
        "how far a reader falls behind its writer, in messages: for the streams and bw_unix "
        "a lag of 1..2*depth-1 (mean depth) messages per message; for hackbench the mean "
        "messages a receiver drains each time it wakes. It sets how many skbs or pipe pages "
        "are in flight at once: a timing quantity neither source fixes; the prior is for "
        "the general default of 4 (TEST_DEFAULTS moves it per test)"),
}

