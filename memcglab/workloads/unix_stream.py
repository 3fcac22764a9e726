"""unix_stream: lmbench's bw_unix, one memcg per pair (an alias).

A thin alias of the benchmark catalogue: ``unix_stream(spec)`` is
``build(BenchmarkSpec("lmbench", "bw_unix", ...)).trace`` in the ``per-instance``
layout. Every 64 KiB write is charged to the writer's memcg (``unix_create1`` sets
``sk_allocation = GFP_KERNEL_ACCOUNT``): the skb heads through the obj stock, the
frag pages through ``try_charge_memcg``, freed by the reader (frags as folios,
through ``memcg_uncharge``; heads through the obj stock). See ``docs/accounting.md``.

>>> from memcglab.trace import OP_NAMES
>>> t = unix_stream(UnixStreamSpec(cpus=4, pairs=1, messages=10))
>>> sorted({OP_NAMES[o] for o in t.ops["op"]})
['cgroup', 'charge', 'obj_charge', 'obj_uncharge', 'uncharge_direct']
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.trace import MAX_CPUS, Trace
from memcglab.workloads.catalogue import BenchmarkSpec, Machine, build
from memcglab.workloads.catalogue.spec import MAX_DEPTH
from memcglab.workloads.common import SEED_MAX, check_int
from memcglab.workloads.loopback_rr import alias_operations

__all__ = ["UnixStreamSpec", "unix_stream"]


@dataclass(frozen=True, slots=True)
class UnixStreamSpec:
    """Parameters of :func:`unix_stream`; each default says where it comes from."""

    #: CPUs of the machine (one socket, one thread per core): seed 000's 72 CPUs.
    cpus: int = 72
    #: concurrent bw_unix pairs, one memcg each: 36 fills 72 CPUs.
    pairs: int = 36
    #: 64 KiB writes in the trace, all pairs together, warm-up included.
    messages: int = 20_000
    #: bytes per write: lmbench's XFERSIZE.
    message_bytes: int = 65536
    #: shared cgroups between the root and the pairs' memcgs.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS, "the replay contract's limit")
        check_int("ancestors", self.ancestors, 1, MAX_DEPTH - 1,
                  "the per-instance layout's shared ancestors")
        check_int("pairs", self.pairs, 1, 16384, "the scenario contract's bound")
        check_int("messages", self.messages, 1, 2**26)
        check_int("message_bytes", self.message_bytes, 1, 1 << 20, "bytes")
        check_int("seed", self.seed, 0, SEED_MAX)


def unix_stream(spec: UnixStreamSpec = UnixStreamSpec()) -> Trace:
    """The catalogue's bw_unix for ``spec`` (see the module docstring)."""
    return build(BenchmarkSpec(
        "lmbench", "bw_unix", {"instances": spec.pairs, "message_bytes": spec.message_bytes},
        Machine(spec.cpus), layout="per-instance", depth=spec.ancestors + 1, seed=spec.seed,
        operations=alias_operations(spec.messages, spec.pairs, 8))).trace
