"""The catalogue's tests: each one's operation, roles, rows, size bound and generator.

>>> TESTS[("netperf", "TCP_RR")].operation
'transaction'
>>> sorted(TESTS[("hackbench", "socket")].roles)
['receiver', 'sender']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from memcglab.workloads.catalogue import costs, local_pipe, local_unix, net_rr, net_stream
from memcglab.workloads.catalogue.costs import CostFamily
from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.knobs import MAX_INSTANCES, Key
from memcglab.workloads.catalogue.local_unix import unix_message
from memcglab.workloads.catalogue.rows import AccountingRow
from memcglab.workloads.catalogue.sizes import PAGE_SIZE, tcp_mss

__all__ = ["TESTS", "TestDef"]

_MIB = 1 << 20


@dataclass(frozen=True)
class TestDef:
    """One benchmark test's record: every per-test fact, and how it becomes a trace.

    ``keys`` are the contract's workload keys of the test, in its order, with their
    defaults; ``contract_order`` the test's place in its family's list in the contract;
    ``reads`` the modelling alternatives the test reads besides "placement" and
    ``defaults`` its own defaults of them (``why`` says why each differs from the
    general one); ``cost`` its cost family and ``unit`` what an operation's size is
    counted in for the per-unit cycles (:mod:`memcglab.scenario.work`). ``roles``
    lists the tasks of one instance in creation order (``members`` of
    each); ``server`` the roles whose memcg is the server daemon's; ``bound(keys)``
    the most trace rows one operation can make, which bounds a trace before it is
    built; ``generate(ev, ninst, nops, keys, alternatives, rng)`` adds the events.
    """

    family: str
    test: str
    operation: str
    counted: str
    roles: dict[str, str]
    rows: Callable[[dict[str, Any]], dict[str, AccountingRow]]
    bound: Callable[[dict[str, Any]], float]
    generate: Callable[..., None]
    #: the key holding the members of each role (hackbench's fds), or None for one
    members_key: str | None = None
    server: tuple[str, ...] = ()
    instances_key: str = "instances"
    min_operations: int | Callable[[dict[str, Any]], int] = 64
    warmup: int | Callable[[dict[str, Any]], int] = 8
    #: ``bound`` holds for every trace (else build also checks the rows it made)
    exact_bound: bool = True
    _: KW_ONLY
    keys: dict[str, Key]
    contract_order: int
    reads: tuple[str, ...]
    cost: CostFamily
    unit: str
    defaults: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    #: rows(keys, era) and generate(..., era=era) take the accounting era
    #: (catalogue.wis.accounting_kernel of the spec's kernel)
    by_kernel: bool = False

    def members(self, keys: dict[str, Any]) -> int:
        """Tasks of each role in one instance (hackbench: ``fds`` senders and receivers)."""
        return 1 if self.members_key is None else int(keys[self.members_key])

    def least(self, keys: dict[str, Any]) -> int:
        """The fewest operations per instance a default build generates."""
        m = self.min_operations
        return m(keys) if callable(m) else m

    def warm(self, keys: dict[str, Any]) -> int:
        """Warm-up operations per instance before the measured ones."""
        w = self.warmup
        return w(keys) if callable(w) else w

    def bytes_per_operation(self, keys: dict[str, Any]) -> int | None:
        """Payload bytes one operation moves (both directions of a transaction), if any."""
        for k in ("send_size", "message_bytes", "datasize"):
            if k in keys:
                return int(keys[k]) * (2 if self.operation == "transaction" else 1)
        if "rr_size" in keys:
            return 2 * int(keys["rr_size"])
        return None


def _rr_bound(test: str) -> Callable[[dict[str, Any]], int]:
    """Per direction: TCP's forced head, its copies, a receive (two calls) and a read
    per skb; UDP's receive and read; SCTP's send, SACK, and a receive and read per chunk."""
    def bound(keys: dict[str, Any]) -> int:
        size = keys.get("rr_size", keys.get("message_bytes", 1))
        ip = keys.get("ip", "ipv4")
        if test == "UDP_RR":
            return 4
        if test == "SCTP_RR":
            return 2 * (2 + 2 * len(net_rr.sctp_chunks(size, ip)))
        return 2 * sum(4 + len(p) for p in net_rr.tcp_skbs(size, ip))
    return bound


def _rr(test: str) -> Callable[..., None]:
    def generate(ev: Events, ninst: int, nops: int, keys: dict, alternatives: dict,
                 rng: np.random.Generator) -> None:
        size = keys.get("rr_size", keys.get("message_bytes"))
        net_rr.rr_events(ev, test, ninst, nops, size, size, keys.get("ip", "ipv4"), rng,
                         rr_rx=alternatives.get("rr_rx", "softirq"))
    return generate


def _stream_bound(keys: dict[str, Any]) -> int:
    size = keys.get("send_size", keys.get("message_bytes"))
    per_skb = -(-size // tcp_mss(keys.get("ip", "ipv4"))) + 1
    return size // 32768 + 2 + 6 * per_skb + 4 * (size // 65000 + 1)


def _stream(test: str) -> Callable[..., None]:
    def generate(ev: Events, ninst: int, nops: int, keys: dict, alternatives: dict,
                 rng: np.random.Generator) -> None:
        size = keys.get("send_size", keys.get("message_bytes"))
        net_stream.stream_events(ev, test, ninst, nops, size, keys.get("ip", "ipv4"),
                                 alternatives, rng)
    return generate


def _unix_bound(messages: int) -> Callable[[dict[str, Any]], int]:
    """Per message and skb: the sk_buff and head charges and frees, two rows per frag."""
    def bound(keys: dict[str, Any]) -> int:
        size = keys.get("message_bytes", keys.get("datasize", 1))
        return messages * sum(4 + 2 * len(frags) for _, frags in unix_message(size))
    return bound


def _unix(test: str) -> Callable[..., None]:
    def generate(ev: Events, ninst: int, nops: int, keys: dict, alternatives: dict,
                 rng: np.random.Generator) -> None:
        size = keys.get("message_bytes", keys.get("datasize"))
        local_unix.unix_events(ev, test, ninst, nops, size, alternatives, rng,
                               fds=keys.get("fds", 1))
    return generate


def _pipe(ev: Events, ninst: int, nops: int, keys: dict, alternatives: dict,
          rng: np.random.Generator) -> None:
    local_pipe.pipe_events(ev, ninst, nops, keys["fds"], keys["datasize"], alternatives, rng)


#: rounds (every sender to every receiver once) a hackbench pipe trace spans at
#: least, and how many of them are warm-up: a receiver drains its pipe every
#: queue_depth messages (256 by default), so each pipe (one message per round per
#: sender) sees a wake every ~13 rounds of 20 senders; 128 rounds give ~10 drains
PIPE_ROUNDS, PIPE_WARMUP_ROUNDS = 128, 16


def _pipe_bound(keys: dict[str, Any]) -> float:
    # A page is charged once and freed once while it holds PAGE_SIZE // datasize
    # messages; writes that fill several pages charge each. Not a worst case (a pipe
    # drained after every message starts a page per message, from its cached
    # pages): build checks the real row count after generating.
    d = keys["datasize"]
    return 2 * -(-d // PAGE_SIZE) / max(1, PAGE_SIZE // d)


def _net_rows(table: dict[str, dict[str, AccountingRow]], test: str):
    return lambda keys: table[test]


def _inst() -> Key:
    return Key(None, 1, MAX_INSTANCES)


def _netperf_keys(size: str) -> dict[str, Key]:
    if size == "send_size":
        k = Key(16384, 1, _MIB, unit=" (bytes, netperf -m)")
    else:
        k = Key(1, 1, _MIB, unit=" (bytes, netperf -r)")
    return {"instances": _inst(), size: k, "ip": Key("ipv4", choices=("ipv4", "ipv6"))}


def _lmbench_keys(default: int) -> dict[str, Key]:
    # lmbench3's defaults: XFERSIZE (64 KiB) for the bandwidths, one byte
    # (state.msize = 1) for lat_tcp and lat_unix
    return {"instances": _inst(), "message_bytes": Key(default, 1, _MIB, unit=" (bytes)")}


def _hackbench_keys() -> dict[str, Key]:
    return {"mode": Key("process", choices=("process", "threads")),
            "groups": Key(None, 1, 1024), "fds": Key(20, 1, 1024),
            "datasize": Key(100, 1, 65536, unit=" (bytes)"), "loops": Key(100, 1, 100000)}


_TCP_STREAM_READS = ("server_memcg", "ack", "rx", "segments", "queue_depth")


def _build_tests() -> dict[tuple[str, str], TestDef]:
    from memcglab.workloads.catalogue.local_madvise import (
        MADVISE_ROWS,
        madvise_bound,
        madvise_events,
    )

    out: dict[tuple[str, str], TestDef] = {}
    net = {"client": "netperf", "server": "a netserver child (netserver -D forks per test)"}
    lm = {"client": "the lmbench client", "server": "a child of the lmbench server daemon"}
    # The records follow the audit page's order (docs/accounting.md prints them so);
    # contract_order is each test's place in the contract's list of its family.
    rr = {"TCP_RR": (3, ("server_memcg",), costs.TCP_RR),
          "UDP_RR": (4, ("server_memcg",), costs.UDP_RR),
          "SCTP_RR": (5, ("server_memcg", "rr_rx"), costs.SCTP_RR)}
    streams = {"TCP_STREAM": (0, _TCP_STREAM_READS, costs.TCP_STREAM),
               "TCP_SENDFILE": (1, _TCP_STREAM_READS, costs.TCP_STREAM),
               "TCP_MAERTS": (2, _TCP_STREAM_READS, costs.TCP_STREAM),
               "SCTP_STREAM_MANY": (6, ("server_memcg", "ack", "rx", "queue_depth"),
                                    costs.SCTP_STREAM)}
    for test, (order, reads, cost) in sorted({**rr, **streams}.items(),
                                             key=lambda kv: kv[1][0]):
        if test in rr:
            out[("netperf", test)] = TestDef(
                "netperf", test, "transaction", "transactions per second", net,
                _net_rows(net_rr.RR_ROWS, test), _rr_bound(test), _rr(test), server=("server",),
                keys=_netperf_keys("rr_size"), contract_order=order, reads=reads, cost=cost,
                unit="byte")
        else:
            out[("netperf", test)] = TestDef(
                "netperf", test, "send", "bytes per second (send_size bytes per send)", net,
                _net_rows(net_stream.STREAM_ROWS, test), _stream_bound, _stream(test),
                server=("server",), keys=_netperf_keys("send_size"), contract_order=order,
                reads=reads, cost=cost, unit="byte")
    out[("lmbench", "lat_tcp")] = TestDef(
        "lmbench", "lat_tcp", "transaction", "round trips (latency, the inverse)", lm,
        _net_rows(net_rr.RR_ROWS, "lat_tcp"), _rr_bound("lat_tcp"), _rr("lat_tcp"),
        server=("server",), keys=_lmbench_keys(1), contract_order=2, reads=("server_memcg",),
        cost=costs.TCP_RR, unit="byte")
    out[("lmbench", "bw_tcp")] = TestDef(
        "lmbench", "bw_tcp", "send", "bytes per second (message_bytes per write)", lm,
        _net_rows(net_stream.STREAM_ROWS, "bw_tcp"), _stream_bound, _stream("bw_tcp"),
        server=("server",), keys=_lmbench_keys(65536), contract_order=1,
        reads=_TCP_STREAM_READS, cost=costs.TCP_STREAM, unit="byte")
    out[("lmbench", "bw_unix")] = TestDef(
        "lmbench", "bw_unix", "message", "bytes per second (message_bytes per write)",
        {"reader": "the benchmp child (reads)", "writer": "its forked child (writes)"},
        _net_rows(local_unix.UNIX_ROWS, "bw_unix"), _unix_bound(1), _unix("bw_unix"),
        keys=_lmbench_keys(65536), contract_order=0, reads=("napi_cache", "queue_depth"),
        cost=costs.UNIX, unit="byte", defaults={"queue_depth": 2},
        why="sock_alloc_send_pskb blocks at sk_sndbuf (212992 B): about 3 messages of 64 KiB "
            "(truesize ~70 KiB each) are in flight, so the reader lags 2 on average")
    out[("lmbench", "lat_unix")] = TestDef(
        "lmbench", "lat_unix", "transaction", "round trips (latency, the inverse)",
        {"parent": "the benchmp child (writes first)", "child": "its forked echo child"},
        _net_rows(local_unix.UNIX_ROWS, "lat_unix"), _unix_bound(2), _unix("lat_unix"),
        keys=_lmbench_keys(1), contract_order=3, reads=("napi_cache",), cost=costs.UNIX_RR,
        unit="byte")
    hb = {"receiver": "receivers (created first, one pipe or socket each)",
          "sender": "senders (write to every receiver of the group)"}
    out[("hackbench", "socket")] = TestDef(
        "hackbench", "socket", "message", "messages per second (the inverse of the run time)",
        hb, _net_rows(local_unix.UNIX_ROWS, "socket"),
        _unix_bound(1), _unix("socket"),
        members_key="fds", instances_key="groups", keys=_hackbench_keys(), contract_order=0,
        reads=("napi_cache", "queue_depth"), cost=costs.HACKBENCH_SOCKET, unit="byte",
        defaults={"queue_depth": 16},
        why="a receiver's socket takes ~237 such messages before its senders block (the "
            "shared end's sk_sndbuf, 212992 B of ~900 B truesize); 16 per wake is a short "
            "scheduling round's worth, and the per-instance trace sizes reach several wakes")
    out[("hackbench", "pipe")] = TestDef(
        "hackbench", "pipe", "message", "messages per second (the inverse of the run time)",
        hb, lambda keys: local_pipe.PIPE_ROWS, _pipe_bound, _pipe,
        members_key="fds", instances_key="groups",
        min_operations=lambda keys: PIPE_ROUNDS * keys["fds"] ** 2,
        warmup=lambda keys: PIPE_WARMUP_ROUNDS * keys["fds"] ** 2, exact_bound=False,
        keys=_hackbench_keys(), contract_order=1, reads=("queue_depth",),
        cost=costs.HACKBENCH_PIPE, unit="byte", defaults={"queue_depth": 256},
        why="the robot runs 100% and 1600% threads: 40 tasks per group and per CPU and more, "
            "so a receiver waits a scheduling round while its 20 senders keep writing; 256 "
            "messages of 100 B are about 6 pages behind, a few pages past the 2 cached ones")
    out[("madvise", "fault_release")] = TestDef(
        "madvise", "fault_release", "iteration", "iterations per second (time per iteration)",
        {"job": "the fault/MADV_DONTNEED loop of one cgroup"}, lambda keys: MADVISE_ROWS,
        madvise_bound, madvise_events, instances_key="cgroups", min_operations=2, warmup=1,
        keys={"cgroups": Key(None, 1, 4096), "iterations": Key(50, 1, 10000),
              "pages": Key(256, 1, 1 << 18, unit=" (4 KiB pages per iteration)")},
        contract_order=0, reads=(), cost=costs.MADVISE, unit="page")
    _add_wis(out)
    return out


def _add_wis(out: dict[tuple[str, str], TestDef]) -> None:
    from memcglab.workloads.catalogue import wis

    what = {"page_fault1": ("fault", "faults per second (one write to a fresh anonymous page)",
                            costs.WIS_PAGE_FAULT, "page"),
            "page_fault2": ("fault", "faults per second (one write to a fresh private file "
                            "page: a COW copy)", costs.WIS_PAGE_FAULT, "page"),
            "page_fault3": ("fault", "faults per second (one write to a shared file page)",
                            costs.WIS_PAGE_FAULT, "page"),
            "malloc1": ("malloc", "malloc(128 MiB) + free pairs per second", costs.WIS_MALLOC,
                        "page"),
            "unix1": ("message", "1-byte write + read pairs per second", costs.WIS_UNIX,
                      "byte"),
            "lock1": ("lock", "fcntl(F_SETLKW) calls per second", costs.WIS_LOCK, "byte")}
    # No will-it-scale test has a size key, so an operation has no units and the
    # per-unit term is 0 (scenario.model reads units from the size keys); the fixed
    # prior covers the whole operation, and one unit per family is what unit_of gives.
    what = {t: (op, counted, cost, "byte") for t, (op, counted, cost, _) in what.items()}
    for order, test in enumerate(wis.WIS_TESTS):
        op, counted, cost, unit = what[test]

        def gen(ev, ninst, nops, keys, alternatives, rng, *, era, _t=test):
            wis.wis_events(_t, era, ev, ninst, nops, keys, alternatives, rng)

        out[("will-it-scale", test)] = TestDef(
            "will-it-scale", test, op, counted,
            {"task": "one will-it-scale task (a forked process, or a thread of one process "
                     "in thread mode)"},
            lambda keys, era="v6.18", _t=test: wis.wis_rows(_t, era), lambda keys, _t=test:
            wis.wis_bound(_t), gen,
            min_operations=64, warmup=8,
            keys={"instances": _inst(), "mode": Key("process", choices=("process", "thread"))},
            contract_order=order, reads=("napi_cache",) if test == "unix1" else (),
            cost=cost, unit=unit, by_kernel=True)


TESTS: dict[tuple[str, str], TestDef] = _build_tests()
