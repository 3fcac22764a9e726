"""loopback_stream: netperf's TCP_STREAM, one memcg per instance (an alias).

A thin alias of the benchmark catalogue: ``loopback_stream(spec)`` is
``build(BenchmarkSpec("netperf", "TCP_STREAM", {"send_size": message_size}, ...)).trace``
in the ``per-instance`` layout. The accounting is the catalogue's
(``docs/accounting.md``): sends coalesce into skbs of one loopback MSS, each copy is
scheduled from ``sk_forward_alloc``, the receive softirq charges the receiver, the
reader and the ACK give the pages back.

>>> from memcglab.workloads.describe import pages_by_memcg
>>> t = loopback_stream(LoopbackStreamSpec(cpus=4, instances=2, messages=40))
>>> sorted(pages_by_memcg(t))
[2, 3]
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.trace import MAX_CPUS, Trace
from memcglab.workloads.catalogue import ALTERNATIVES, BenchmarkSpec, Machine, build
from memcglab.workloads.catalogue.spec import MAX_DEPTH
from memcglab.workloads.common import SEED_MAX, check_choice, check_int
from memcglab.workloads.loopback_rr import _PLACEMENT, PLACEMENTS, alias_operations

__all__ = ["LoopbackStreamSpec", "loopback_stream", "ACKS"]

ACKS = {
    "backlog": "the sender's CPU: a bulk sender holds the socket lock in sendmsg, so the ACK "
               "waits in the backlog until release_sock processes it",
    "softirq": "the receiver's CPU: the ACK is processed in softirq where it was sent",
}


@dataclass(frozen=True, slots=True)
class LoopbackStreamSpec:
    """Parameters of :func:`loopback_stream`; each default says where it comes from."""

    #: CPUs of the machine (one socket, one thread per core): seed 000's 72 CPUs.
    cpus: int = 72
    #: concurrent netperf instances, one memcg each (sender and receiver).
    instances: int = 36
    #: sends in the trace, all instances together, warm-up included.
    messages: int = 100_000
    #: bytes per send (netperf -m): 16 KiB, the contract's default for streams.
    message_size: int = 16 * 1024
    #: mean sends a reader lags behind (the catalogue's queue_depth alternative).
    queue_depth: int = 4
    #: where the sender's ACK processing runs, a key of :data:`ACKS`.
    ack: str = "backlog"
    #: where tasks run, a key of loopback_rr's PLACEMENTS.
    placement: str = "spread"
    #: shared cgroups between the root and the instances' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 2, MAX_CPUS, "two ends need two CPUs")
        check_int("ancestors", self.ancestors, 1, MAX_DEPTH - 1,
                  "the per-instance layout's shared ancestors")
        check_int("instances", self.instances, 1, 16384, "the scenario contract's bound")
        check_int("messages", self.messages, 1, 2**26)
        check_int("message_size", self.message_size, 1, 1 << 20, "bytes")
        check_choice("queue_depth", self.queue_depth, ALTERNATIVES["queue_depth"].values)
        check_choice("ack", self.ack, ACKS)
        check_choice("placement", self.placement, PLACEMENTS)
        check_int("seed", self.seed, 0, SEED_MAX)


def loopback_stream(spec: LoopbackStreamSpec = LoopbackStreamSpec()) -> Trace:
    """The catalogue's TCP_STREAM for ``spec`` (see the module docstring)."""
    return build(BenchmarkSpec(
        "netperf", "TCP_STREAM", {"instances": spec.instances, "send_size": spec.message_size},
        Machine(spec.cpus), layout="per-instance", depth=spec.ancestors + 1, seed=spec.seed,
        operations=alias_operations(spec.messages, spec.instances, 8),
        alternatives={"placement": _PLACEMENT[spec.placement], "ack": spec.ack,
                      "queue_depth": spec.queue_depth, "server_memcg": "instance"})).trace
