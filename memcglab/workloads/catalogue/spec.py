"""What to generate: :class:`BenchmarkSpec`, its keys, its modelling alternatives, its bounds.

The keys are the scenario contract's ("Workloads" and "Cgroup layouts",
``shared/spec/scenario-contract.md``), with its defaults; the scenario layer
(:mod:`memcglab.scenario.keys`) checks a file with the same table, and a test keeps
the two equal. On top of them, each test names the modelling alternatives it reads
(:data:`ALTERNATIVES`): choices the kernel and benchmark sources leave to the
machine's timing or to how the benchmark was started, each with its valid values,
its default and the prior weight the pricing layer may give it.

>>> spec = BenchmarkSpec("netperf", "TCP_RR", {"instances": 4}, Machine(8, 1, 2))
>>> spec.resolved_keys()
{'instances': 4, 'ip': 'ipv4', 'rr_size': 1}
>>> BenchmarkSpec("netperf", "TCP_RR", {"instances": 4, "send_size": 9}, Machine(8))
Traceback (most recent call last):
...
ValueError: keys.send_size: netperf TCP_RR has no such key (valid: instances, rr_size, ip)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcglab.trace import MAX_CPUS

__all__ = ["ALTERNATIVES", "FAMILIES", "LAYOUTS", "MAX_DEPTH", "MAX_INSTANCES",
           "MAX_TRACE_ROWS", "TEST_ALTERNATIVES", "TEST_DEFAULTS", "Alternative", "BenchmarkSpec",
           "Key", "Machine", "keys_of"]

#: layout -> default depth (the contract's "Cgroup layouts")
LAYOUTS: dict[str, int] = {"lkp": 2, "per-instance": 2, "shared": 1}
MAX_DEPTH = 16
#: the scenario contract's bound on instances (pairs, groups, jobs)
MAX_INSTANCES = 16384
#: the most trace rows a build may make: a few seconds of replay, so a scenario
#: (two kernels, the uncertainty propagation) stays within 30 s on 2 cores
MAX_TRACE_ROWS = 3_000_000
_MIB = 1 << 20

FAMILIES: dict[str, tuple[str, ...]] = {
    "netperf": ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "TCP_RR", "UDP_RR", "SCTP_RR",
                "SCTP_STREAM_MANY"),
    "lmbench": ("bw_unix", "bw_tcp", "lat_tcp", "lat_unix"),
    "hackbench": ("socket", "pipe"),
    "madvise": ("fault_release",),
}
_STREAMS = ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "SCTP_STREAM_MANY")


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


def keys_of(family: str, test: str) -> dict[str, Key]:
    """The contract's keys of ``family``/``test``, in its order, with their defaults."""
    inst = Key(None, 1, MAX_INSTANCES)
    if family == "netperf":
        if test in _STREAMS:
            size = ("send_size", Key(16384, 1, _MIB, unit=" (bytes, netperf -m)"))
        else:
            size = ("rr_size", Key(1, 1, _MIB, unit=" (bytes, netperf -r)"))
        return {"instances": inst, size[0]: size[1], "ip": Key("ipv4", choices=("ipv4", "ipv6"))}
    if family == "lmbench":
        # lmbench3's defaults: XFERSIZE (64 KiB) for the bandwidths, one byte
        # (state.msize = 1) for lat_tcp and lat_unix
        default = 65536 if test.startswith("bw_") else 1
        return {"instances": inst, "message_bytes": Key(default, 1, _MIB, unit=" (bytes)")}
    if family == "hackbench":
        return {"mode": Key("process", choices=("process", "threads")),
                "groups": Key(None, 1, 1024), "fds": Key(20, 1, 1024),
                "datasize": Key(100, 1, 65536, unit=" (bytes)"), "loops": Key(100, 1, 100000)}
    if family == "madvise":
        return {"cgroups": Key(None, 1, 4096), "iterations": Key(50, 1, 10000),
                "pages": Key(256, 1, 1 << 18, unit=" (4 KiB pages per iteration)")}
    raise ValueError(f"family={family!r}: must be one of {', '.join(FAMILIES)}")


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

#: per-test defaults of alternatives that differ from the general one, and why
TEST_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    # sock_alloc_send_pskb blocks at sk_sndbuf (212992 B): about 3 messages of 64 KiB
    # (truesize ~70 KiB each) are in flight, so the reader lags 2 on average
    ("lmbench", "bw_unix"): {"queue_depth": 2},
    # the robot runs 100% and 1600% threads: 40 tasks per group and per CPU and more,
    # so a receiver waits a scheduling round while its 20 senders keep writing; 256
    # messages of 100 B are about 6 pages behind, a few pages past the 2 cached ones
    ("hackbench", "pipe"): {"queue_depth": 256},
    # a receiver's socket takes ~237 such messages before its senders block (the
    # shared end's sk_sndbuf, 212992 B of ~900 B truesize); 16 per wake is a short
    # scheduling round's worth, and the per-instance trace sizes reach several wakes
    ("hackbench", "socket"): {"queue_depth": 16},
}

#: the alternatives each test reads ("placement" too, every one)
_TEST_ALTERNATIVES: dict[tuple[str, str], tuple[str, ...]] = {
    **{("netperf", t): ("server_memcg",) for t in ("TCP_RR", "UDP_RR")},
    ("netperf", "SCTP_RR"): ("server_memcg", "rr_rx"),
    **{("netperf", t): ("server_memcg", "ack", "rx", "segments", "queue_depth")
       for t in ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS")},
    ("netperf", "SCTP_STREAM_MANY"): ("server_memcg", "ack", "rx", "queue_depth"),
    ("lmbench", "bw_tcp"): ("server_memcg", "ack", "rx", "segments", "queue_depth"),
    ("lmbench", "lat_tcp"): ("server_memcg",),
    ("lmbench", "bw_unix"): ("napi_cache", "queue_depth"),
    ("lmbench", "lat_unix"): ("napi_cache",),
    ("hackbench", "socket"): ("napi_cache", "queue_depth"),
    ("hackbench", "pipe"): ("queue_depth",),
    ("madvise", "fault_release"): (),
}
TEST_ALTERNATIVES: dict[tuple[str, str], tuple[str, ...]] = {
    k: ("placement", *v) for k, v in _TEST_ALTERNATIVES.items()}


@dataclass(frozen=True, slots=True)
class Machine:
    """The contract's machine facts: logical CPUs, sockets, SMT threads per core."""

    cpus: int
    sockets: int = 1
    threads_per_core: int = 1

    def __post_init__(self) -> None:
        for name, value, high in (("cpus", self.cpus, MAX_CPUS), ("sockets", self.sockets, 32),
                                  ("threads_per_core", self.threads_per_core, 8)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ValueError(f"machine.{name}: {value!r} is invalid "
                                 f"(valid: an integer from 1 to {high})")
        if self.cpus % (self.sockets * self.threads_per_core):
            raise ValueError(f"machine.cpus: {self.cpus} is not a multiple of sockets x "
                             f"threads_per_core = {self.sockets * self.threads_per_core} "
                             "(valid: every socket has the same cores and threads)")

    @property
    def cores_per_socket(self) -> int:
        """Physical cores in each socket."""
        return self.cpus // (self.sockets * self.threads_per_core)


@dataclass(frozen=True, slots=True)
class BenchmarkSpec:
    """One benchmark run to turn into a trace.

    ``keys`` are the contract's workload keys (defaults filled in by
    :meth:`resolved_keys`); ``layout``/``depth``/``protection`` its ``[cgroups]``;
    ``sk_reclaim`` the design key; ``operations`` the benchmark operations to
    generate per instance (None: the test's default, :func:`build` says which);
    ``alternatives`` overrides the modelling alternatives' defaults.
    """

    family: str
    test: str
    keys: dict[str, Any]
    machine: Machine
    layout: str = "lkp"
    depth: int | None = None
    protection: bool = False
    sk_reclaim: str = "eager"
    seed: int = 0
    operations: int | None = None
    alternatives: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family: {self.family!r} is unknown (valid: {', '.join(FAMILIES)})")
        if self.test not in FAMILIES[self.family]:
            raise ValueError(f"test: {self.test!r} is not a {self.family} test "
                             f"(valid: {', '.join(FAMILIES[self.family])})")
        if not isinstance(self.machine, Machine):
            raise ValueError("machine: must be a Machine(cpus, sockets, threads_per_core)")
        known = keys_of(self.family, self.test)
        for k in self.keys:
            if k not in known:
                raise ValueError(f"keys.{k}: {self.family} {self.test} has no such key "
                                 f"(valid: {', '.join(known)})")
        for k, key in known.items():
            if k in self.keys:
                key.check(k, self.keys[k])
            elif key.default is None:
                raise ValueError(f"keys.{k}: missing (required by {self.family} {self.test}; "
                                 f"valid: {key.valid})")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout: {self.layout!r} is unknown (valid: {', '.join(LAYOUTS)})")
        depth = self.resolved_depth
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth: {depth!r} is invalid (valid: an integer from 1 to "
                             f"{MAX_DEPTH})")
        if self.layout == "per-instance" and depth < 2:
            raise ValueError(f"depth: {depth} leaves no shared parent (valid: 2 or more for "
                             "per-instance, depth - 1 shared ancestors)")
        if not isinstance(self.protection, bool):
            raise ValueError(f"protection: {self.protection!r} is invalid (valid: true, false)")
        if self.sk_reclaim not in ("eager", "lazy"):
            raise ValueError(f"sk_reclaim: {self.sk_reclaim!r} is invalid (valid: eager, lazy)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed: {self.seed!r} is invalid (valid: an integer from 0 to "
                             "2^64-1)")
        if self.operations is not None and (
                isinstance(self.operations, bool) or not isinstance(self.operations, int)
                or not 1 <= self.operations <= 10**7):
            raise ValueError(f"operations: {self.operations!r} is invalid (valid: an integer "
                             "from 1 to 10^7 benchmark operations per instance, or None)")
        reads = TEST_ALTERNATIVES[(self.family, self.test)]
        for k, v in self.alternatives.items():
            if k not in reads:
                raise ValueError(f"alternatives.{k}: {self.family} {self.test} reads no such "
                                 f"alternative (valid: {', '.join(reads) or 'none'})")
            ALTERNATIVES[k].check(k, v)

    def __hash__(self) -> int:
        return hash((self.family, self.test, tuple(sorted(self.keys.items())), self.machine,
                     self.layout, self.depth, self.protection, self.sk_reclaim, self.seed,
                     self.operations, tuple(sorted(self.alternatives.items()))))

    @property
    def resolved_depth(self) -> int:
        """``depth``, or the layout's default when it is None."""
        return LAYOUTS[self.layout] if self.depth is None else self.depth

    def resolved_keys(self) -> dict[str, Any]:
        """Every key of the test, the contract's default where none is given (sorted)."""
        known = keys_of(self.family, self.test)
        return dict(sorted((k, self.keys.get(k, key.default)) for k, key in known.items()))

    def resolved_alternatives(self) -> dict[str, Any]:
        """Every alternative the test reads, its default where none is given (sorted)."""
        reads = TEST_ALTERNATIVES[(self.family, self.test)]
        own = TEST_DEFAULTS.get((self.family, self.test), {})
        return dict(sorted((k, self.alternatives.get(k, own.get(k, ALTERNATIVES[k].default)))
                           for k in reads))
