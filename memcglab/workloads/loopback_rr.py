"""loopback_rr: netperf's TCP_RR, UDP_RR and SCTP_RR, one memcg per instance (an alias).

A thin alias of the benchmark catalogue (:mod:`memcglab.workloads.catalogue`), kept
for the studies that name it: ``loopback_rr(spec)`` is ``build(BenchmarkSpec(
"netperf", "TCP_RR" | "UDP_RR" | "SCTP_RR", ...)).trace`` in the ``per-instance``
layout with ``ancestors`` shared cgroups. The accounting (which socket event charges
which memcg, on which CPU) is the catalogue's, documented in ``docs/accounting.md``.

>>> from memcglab.workloads.describe import pages_by_memcg
>>> t = loopback_rr(LoopbackRRSpec(cpus=4, instances=2, transactions=20))
>>> sorted(pages_by_memcg(t))
[2, 3]
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.trace import MAX_CPUS, Trace
from memcglab.workloads.catalogue import BenchmarkSpec, Machine, build
from memcglab.workloads.catalogue.spec import MAX_DEPTH
from memcglab.workloads.common import SEED_MAX, check_choice, check_int

__all__ = ["LoopbackRRSpec", "loopback_rr", "PROTOCOLS", "PLACEMENTS", "SERVERS",
           "alias_operations"]

PROTOCOLS = {
    "tcp": "TCP_RR: each side charges its skb on send and gives its reserve back on read",
    "udp": "UDP_RR: receive only, and udp_rmem_release keeps a page in the reserve",
    "sctp": "SCTP_RR: chunk truesize on send, data + sizeof(sk_buff) on receive",
}
#: placement -> the catalogue's placement alternative
PLACEMENTS = {
    "spread": "the scheduler's order: client of instance i on CPU 2i, server on 2i+1 "
              "(one socket, no SMT: the alias's machine)",
    "random": "each task on a uniformly random CPU, the two ends apart",
}
#: server -> the catalogue's server_memcg alternative
SERVERS = {
    "instance": "each netserver child in its instance's memcg (one netserver per instance)",
    "shared": "every server socket in one memcg of its own (one netserver daemon, a sibling "
              "of the instances)",
}
_PLACEMENT = {"spread": "scheduler", "random": "random"}
_SERVER = {"instance": "instance", "shared": "hierarchy"}


def alias_operations(total: int, instances: int, warmup: int) -> int:
    """Operations per instance so that a trace with warm-up holds about ``total``.

    >>> alias_operations(1000, 10, 8)
    92
    """
    return max(1, total // instances - warmup)


@dataclass(frozen=True, slots=True)
class LoopbackRRSpec:
    """Parameters of :func:`loopback_rr`; each default says where it comes from."""

    #: transport, a key of :data:`PROTOCOLS`: TCP_RR is netperf's default RR test.
    protocol: str = "tcp"
    #: CPUs of the machine (one socket, one thread per core): seed 000's 72 CPUs.
    cpus: int = 72
    #: concurrent netperf instances, one memcg each: 36 fills 72 CPUs.
    instances: int = 36
    #: transactions in the trace, all instances together, warm-up included.
    transactions: int = 100_000
    #: request bytes (netperf -r N,N): the catalogue's rr_size.
    request_size: int = 1
    #: response bytes: must equal request_size (the contract has one rr_size).
    response_size: int = 1
    #: where tasks run, a key of :data:`PLACEMENTS`.
    placement: str = "spread"
    #: which memcg server sockets charge, a key of :data:`SERVERS`.
    server: str = "instance"
    #: shared cgroups between the root and the instances' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("protocol", self.protocol, PROTOCOLS)
        check_int("cpus", self.cpus, 2, MAX_CPUS, "two ends need two CPUs")
        check_int("ancestors", self.ancestors, 1, MAX_DEPTH - 1,
                  "the per-instance layout's shared ancestors")
        check_int("instances", self.instances, 1, 16384, "the scenario contract's bound")
        check_int("transactions", self.transactions, 1, 2**28)
        check_int("request_size", self.request_size, 1, 1 << 20, "bytes")
        if self.response_size != self.request_size:
            raise ValueError(f"response_size={self.response_size!r}: must equal request_size "
                             f"({self.request_size}); the catalogue's rr_size is one size")
        check_choice("placement", self.placement, PLACEMENTS)
        check_choice("server", self.server, SERVERS)
        check_int("seed", self.seed, 0, SEED_MAX)


def loopback_rr(spec: LoopbackRRSpec = LoopbackRRSpec()) -> Trace:
    """The catalogue's netperf RR test for ``spec`` (see the module docstring)."""
    test = {"tcp": "TCP_RR", "udp": "UDP_RR", "sctp": "SCTP_RR"}[spec.protocol]
    return build(BenchmarkSpec(
        "netperf", test, {"instances": spec.instances, "rr_size": spec.request_size},
        Machine(spec.cpus), layout="per-instance", depth=spec.ancestors + 1, seed=spec.seed,
        operations=alias_operations(spec.transactions, spec.instances, 8),
        alternatives={"placement": _PLACEMENT[spec.placement],
                      "server_memcg": _SERVER[spec.server]})).trace
